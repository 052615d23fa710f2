/* evalua_open_dir_beneath: the sandbox's one-step open of a folder beneath
 * a root (issue 13, item 6), through openat2 and through the O_NOFOLLOW
 * walk used where the kernel lacks it. */
#define _GNU_SOURCE /* O_PATH, mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "runtime.h"

static char base[64];

static void path_of(char *out, size_t n, const char *rel) { snprintf(out, n, "%s/%s", base, rel); }

static void make(const char *rel) {
  char p[256];
  path_of(p, sizeof p, rel);
  CHECK(mkdir(p, 0777) == 0);
}

static void link_to(const char *target, const char *rel) {
  char p[256];
  path_of(p, sizeof p, rel);
  CHECK(symlink(target, p) == 0);
}

static int opens(int root, const char *rel, int mkdirs, int use_openat2) {
  int fd = evalua_open_dir_beneath(root, rel, mkdirs, use_openat2);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

static void check_both_ways(int root) {
  for (int use = 0; use <= 1; use++) {
    CHECK(opens(root, "", 0, use));
    CHECK(opens(root, "a/b", 0, use));
    CHECK(!opens(root, "missing", 0, use) && errno == ENOENT);
    CHECK(!opens(root, "outside", 0, use)); /* a link to a folder outside the root */
    CHECK(!opens(root, "inside", 0, use));  /* a link, even to a folder inside */
    CHECK(!opens(root, "a/../..", 0, use));
    CHECK(!opens(root, "/etc", 0, use));
  }
}

int main(void) {
  snprintf(base, sizeof base, "/tmp/evalua-beneath-XXXXXX");
  if (!mkdtemp(base)) return 1;
  make("root");
  make("root/a");
  make("root/a/b");
  make("elsewhere");
  link_to("../elsewhere", "root/outside");
  link_to("a", "root/inside");
  char p[256];
  path_of(p, sizeof p, "root");
  int root = open(p, O_PATH | O_DIRECTORY);
  CHECK(root >= 0);
  check_both_ways(root);
  /* the walk creates missing folders, and refuses links on the way */
  CHECK(opens(root, "new/x/y", 1, 0));
  path_of(p, sizeof p, "root/new/x/y");
  struct stat st;
  CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(!opens(root, "outside/made", 1, 0));
  path_of(p, sizeof p, "elsewhere/made");
  CHECK(stat(p, &st) != 0);
  close(root);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  CHECK(system(cmd) == 0);
  return check_report();
}
