/* Opening folders beneath a root with no symbolic link on the way: the
 * sandbox's check and open in one step (see evalua_at in runtime.h). */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.h"

/* One name at a time from dirfd, each folder opened with O_NOFOLLOW (a
 * symbolic link fails with ELOOP or ENOTDIR); mkdirs creates missing ones. */
static int walk_nofollow(int dirfd, const char *rel, int mkdirs) {
  int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  char name[NAME_MAX + 1];
  for (const char *p = rel; fd >= 0 && *p;) {
    size_t n = strcspn(p, "/");
    if (n > NAME_MAX || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
      close(fd);
      errno = EACCES;
      return -1;
    }
    memcpy(name, p, n);
    name[n] = '\0';
    p += n + (p[n] == '/');
    if (!n) continue;
    if (mkdirs && mkdirat(fd, name, 0777) && errno != EEXIST) {
      int e = errno;
      close(fd);
      errno = e;
      return -1;
    }
    int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    close(fd);
    errno = e;
    fd = next;
  }
  return fd;
}

int evalua_open_dir_beneath(int rootfd, const char *rel, int mkdirs, int use_openat2) {
  if (!*rel) return fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
  if (use_openat2 && !mkdirs) {
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
    long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS) return (int)fd;
  }
  return walk_nofollow(rootfd, rel, mkdirs);
}
