/* The judge cache's writer thread (host/cache_writer.h), without Lua: every
 * queued entry is readable at any moment, from the queue or the disk; the
 * newest of two writes wins; memory waiting is bounded; a failed write
 * reaches its sink; one nobody collected is said on stderr at exit, in a
 * forked child too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_writer.h"
#include "check.h"
#include "judge_cache.h"

/* What a reader gets: the queued entry, or else the one on disk. */
static char *read_through(const char *dir, const char *key) {
  size_t len;
  int not_regular;
  char *got = cache_writer_pending(dir, key, &len);
  return got ? got : judge_cache_get(dir, key, &len, &not_regular);
}

static void key_of(int i, char hex[65]) {
  char text[32];
  snprintf(text, sizeof text, "entry %d", i);
  judge_cache_key(text, strlen(text), hex);
}

static void test_every_entry_is_readable_while_queued(const char *dir) {
  enum { N = 3000 }; /* past the queue's bound, so puts also wait */
  char hex[65], want[64];
  int unreadable = 0;
  for (int i = 0; i < N; i++) {
    key_of(i, hex);
    snprintf(want, sizeof want, "{\"answer\":%d}", i);
    CHECK(cache_writer_put(dir, hex, want, strlen(want), 1) == 0);
    char *got = read_through(dir, hex);
    if (!got || strcmp(got, want)) unreadable++;
    free(got);
  }
  CHECK(unreadable == 0);
  cache_writer_settle();
  size_t len;
  key_of(N - 1, hex);
  CHECK(cache_writer_pending(dir, hex, &len) == NULL); /* all on disk now */
  char cmd[600];
  snprintf(cmd, sizeof cmd, "test \"$(find %s -name '*.json' | wc -l)\" -eq %d", dir, N);
  CHECK(system(cmd) == 0);
  snprintf(cmd, sizeof cmd, "test -z \"$(find %s -name '*.tmp.*')\"", dir);
  CHECK(system(cmd) == 0);
  CHECK(cache_writer_failures() == NULL);
}

static void test_the_newest_write_wins(const char *dir) {
  char hex[65];
  key_of(-1, hex);
  CHECK(cache_writer_put(dir, hex, "old", 3, 1) == 0);
  CHECK(cache_writer_put(dir, hex, "new", 3, 1) == 0);
  char *got = read_through(dir, hex);
  CHECK_STR(got, "new");
  free(got);
  cache_writer_settle();
  got = read_through(dir, hex);
  CHECK_STR(got, "new");
  free(got);
}

/* Entries past the 64 MB bound wait their turn, and one larger than the
 * bound is still taken when the queue is empty. */
static void test_big_entries_pass_the_byte_bound(const char *dir) {
  size_t n = (size_t)40 << 20;
  char *big = malloc(n), hex[65];
  if (!big) return;
  for (int i = 0; i < 3; i++) {
    memset(big, 'a' + i, n);
    key_of(1000000 + i, hex);
    CHECK(cache_writer_put(dir, hex, big, n, 1) == 0);
  }
  free(big);
  cache_writer_settle();
  size_t len = 0;
  int not_regular;
  char *got = judge_cache_get(dir, hex, &len, &not_regular);
  CHECK(got && len == n && got[0] == 'c' && got[n - 1] == 'c');
  free(got);
  CHECK(cache_writer_failures() == NULL);
}

/* The entry folder is a file: the write fails behind the caller's back. */
static void test_a_failed_write_reaches_its_sink(const char *dir) {
  char hex[65], folder[600], want[800];
  key_of(-2, hex);
  snprintf(folder, sizeof folder, "%s/bad", dir);
  CHECK(mkdir(folder, 0755) == 0);
  snprintf(want, sizeof want, "%s/%.2s", folder, hex);
  FILE *f = fopen(want, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  CHECK(cache_writer_put(folder, hex, "x", 1, 42) == 0);
  CHECK(cache_writer_put(folder, "not a key", "x", 1, 42) == -1 && errno == EINVAL);
  cache_writer_settle();
  struct cache_failure *failed = cache_writer_failures();
  CHECK(failed != NULL);
  if (!failed) return;
  snprintf(want, sizeof want, "cannot write judge cache entry in '%s': Not a directory", folder);
  CHECK(failed->sink == 42);
  CHECK_STR(failed->message, want);
  CHECK(failed->next == NULL);
  free(failed);
  CHECK(cache_writer_failures() == NULL); /* handed over once */
}

/* A child forked while the parent's writer runs: its own failed write,
 * never collected, is said on its stderr when it exits. */
static void test_uncollected_failures_are_said_at_exit(const char *dir) {
  char hex[65], folder[600], err[600];
  key_of(-2, hex);
  snprintf(folder, sizeof folder, "%s/bad", dir);
  snprintf(err, sizeof err, "%s/child.err", dir);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(err, "w", stderr)) _exit(127);
    cache_writer_put(folder, hex, "x", 1, 7);
    exit(0);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char said[1024] = "", want[1024];
  FILE *f = fopen(err, "r");
  if (f) {
    size_t n = fread(said, 1, sizeof said - 1, f);
    said[n] = '\0';
    fclose(f);
  }
  snprintf(want, sizeof want, "evalua: judge cache: cannot write judge cache entry in '%s': Not a directory\n",
           folder);
  /* strstr: LeakSanitizer may note the parent's thread in a forked child */
  char *at = strstr(said, want);
  CHECK(at != NULL);
  CHECK(at && !strstr(at + 1, "evalua: judge cache:")); /* said once */
}

int main(void) {
  char dir[] = "/tmp/evalua-writer-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char entries[64];
  snprintf(entries, sizeof entries, "%s/entries", dir);
  test_every_entry_is_readable_while_queued(entries);
  test_the_newest_write_wins(entries);
  test_big_entries_pass_the_byte_bound(entries);
  test_a_failed_write_reaches_its_sink(dir);
  test_uncollected_failures_are_said_at_exit(dir);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) {}
  return check_report();
}
