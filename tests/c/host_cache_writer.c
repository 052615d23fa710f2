/* The judge cache's stores, journal and writer thread (host/client/cache_writer.h,
 * host/client/cache_journal.h), without Lua: every queued entry is readable at any
 * moment, from the queue or the disk; the newest of two writes wins; memory
 * waiting is bounded; a failed write reaches its sink; one nobody collected
 * is said on stderr at exit, in a forked child too. Every put is in the
 * journal when it returns; a dead process's journal is replayed into
 * entries, a torn last record skipped, a live one left alone; a write that
 * does not fit is cut back off the journal. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_journal.h"
#include "cache_writer.h"
#include "check.h"
#include "cache.h"

static struct cache_store *store_of(const char *dir) {
  mkdir(dir, 0777);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return fd < 0 ? NULL : cache_store_open(fd, dir, 1, 1);
}

static char *read_through(struct cache_store *s, const char *key) {
  size_t len;
  int not_regular;
  return cache_store_get(s, key, &len, &not_regular);
}

static void key_of(int i, char hex[65]) {
  char text[32];
  snprintf(text, sizeof text, "entry %d", i);
  client_cache_key(text, strlen(text), hex);
}

static int count(const char *dir, const char *find_args) {
  char cmd[700];
  snprintf(cmd, sizeof cmd, "find %s %s | wc -l", dir, find_args);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p) {
    if (fscanf(p, "%d", &n) != 1) n = -1;
    pclose(p);
  }
  return n;
}

static void test_every_entry_is_readable_while_queued(struct cache_store *s, const char *dir) {
  enum { N = 3000 }; /* past the queue's bound, so puts also wait */
  char hex[65], want[64];
  int unreadable = 0;
  for (int i = 0; i < N; i++) {
    key_of(i, hex);
    snprintf(want, sizeof want, "{\"answer\":%d}", i);
    CHECK(cache_writer_put(s, hex, want, strlen(want), 1) == 0);
    char *got = read_through(s, hex);
    if (!got || strcmp(got, want)) unreadable++;
    free(got);
  }
  CHECK(unreadable == 0);
  cache_writer_settle();
  CHECK(count(dir, "-name '*.json'") == N);
  CHECK(count(dir, "-name '*.tmp.*'") == 0);
  CHECK(cache_writer_failures() == NULL);
}

static void test_the_newest_write_wins(struct cache_store *s) {
  char hex[65];
  key_of(-1, hex);
  CHECK(cache_writer_put(s, hex, "old", 3, 1) == 0);
  CHECK(cache_writer_put(s, hex, "new", 3, 1) == 0);
  char *got = read_through(s, hex);
  CHECK_STR(got, "new");
  free(got);
  cache_writer_settle();
  got = read_through(s, hex);
  CHECK_STR(got, "new");
  free(got);
}

/* Entries past the 64 MB bound wait their turn, and one larger than the
 * bound is still taken when the queue is empty. */
static void test_big_entries_pass_the_byte_bound(struct cache_store *s) {
  size_t n = (size_t)40 << 20;
  char *big = malloc(n), hex[65];
  if (!big) return;
  for (int i = 0; i < 3; i++) {
    memset(big, 'a' + i, n);
    key_of(1000000 + i, hex);
    CHECK(cache_writer_put(s, hex, big, n, 1) == 0);
  }
  free(big);
  cache_writer_settle();
  size_t len = 0;
  int not_regular;
  char *got = cache_store_get(s, hex, &len, &not_regular);
  CHECK(got && len == n && got[0] == 'c' && got[n - 1] == 'c');
  free(got);
  CHECK(cache_writer_failures() == NULL);
}

/* The entry folder is a file: the write fails behind the caller's back. */
static void test_a_failed_write_reaches_its_sink(const char *dir) {
  char hex[65], folder[600], want[800];
  key_of(-2, hex);
  snprintf(folder, sizeof folder, "%s/bad", dir);
  struct cache_store *s = store_of(folder);
  snprintf(want, sizeof want, "%s/%.2s", folder, hex);
  FILE *f = fopen(want, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  CHECK(cache_writer_put(s, hex, "x", 1, 42) == 0);
  CHECK(cache_writer_put(s, "not a key", "x", 1, 42) == -1 && errno == EINVAL);
  cache_writer_settle();
  struct cache_failure *failed = cache_writer_failures();
  CHECK(failed != NULL);
  cache_store_release(s);
  if (!failed) return;
  snprintf(want, sizeof want, "cannot write judge cache entry in '%s': Not a directory", folder);
  CHECK(failed->sink == 42);
  CHECK_STR(failed->message, want);
  CHECK(failed->next == NULL);
  free(failed);
  CHECK(cache_writer_failures() == NULL); /* handed over once */
  /* its journal is kept for the next run to try again */
  CHECK(count(folder, "-path '*/journal/*' -size +0") == 1);
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
    cache_writer_put(store_of(folder), hex, "x", 1, 7);
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

/* The journal's text (all segments), for looking at what is in it. */
static char *journal_text(const char *dir) {
  char cmd[700];
  snprintf(cmd, sizeof cmd, "cat %s/journal/* 2>/dev/null", dir);
  FILE *p = popen(cmd, "r");
  size_t cap = 1 << 20, n = 0;
  char *text = malloc(cap);
  while (p && text && (n += fread(text + n, 1, cap - n - 1, p)) == cap - 1) {
    char *more = realloc(text, cap *= 2);
    if (!more) break;
    text = more;
  }
  if (p) pclose(p);
  if (text) text[n] = '\0';
  return text;
}

/* Issue 26, item 8: a kill lost every answer still queued. When put
 * returns, the answer is in the journal, whole; a normal end removes it. */
static void test_a_put_is_journaled_before_it_returns(const char *dir) {
  char folder[600], hex[65];
  snprintf(folder, sizeof folder, "%s/journaled", dir);
  pid_t pid = fork();
  if (pid == 0) {
    struct cache_store *s = store_of(folder);
    key_of(77, hex);
    if (cache_writer_put(s, hex, "{\"answer\":77}", 13, 1)) _exit(2);
    kill(getpid(), SIGKILL); /* before the writer, if it has not written yet */
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
  char *text = journal_text(folder);
  key_of(77, hex);
  char want[300];
  snprintf(want, sizeof want, "evj1 %s 000000000000000d ", hex);
  CHECK(text && strstr(text, want) && strstr(text, "\n{\"answer\":77}\n"));
  free(text);
  /* the next store to open the folder for writing replays it and removes it */
  struct cache_store *s = store_of(folder);
  struct journal_replay r;
  CHECK(cache_store_take_replay(s, &r) == 1);
  CHECK(r.journals == 1 && r.entries == 1 && r.torn == 0 && r.failed == 0);
  CHECK(cache_store_take_replay(s, &r) == 0); /* said once */
  char *got = read_through(s, hex);
  CHECK_STR(got, "{\"answer\":77}");
  free(got);
  CHECK(count(folder, "-path '*/journal/*' -type f") == 0);
  /* this process's own journal goes at a normal end (here: the store's) */
  key_of(78, hex);
  CHECK(cache_writer_put(s, hex, "{}", 2, 1) == 0);
  CHECK(count(folder, "-path '*/journal/*' -type f") == 1);
  cache_writer_settle();
  cache_store_release(s);
  CHECK(count(folder, "-path '*/journal/*' -type f") == 0);
}

/* A dead process's journal with a torn last record (a kill inside its
 * write): the whole records become entries, the torn one is skipped. A
 * journal whose owner lives (holds its lock) is left alone. */
static void test_replay_skips_torn_records_and_live_journals(const char *dir) {
  char folder[600], hex[65];
  snprintf(folder, sizeof folder, "%s/torn", dir);
  mkdir(folder, 0777);
  int fd = open(folder, O_RDONLY | O_DIRECTORY);
  int ready[2], go[2];
  CHECK(pipe(ready) == 0 && pipe(go) == 0);
  pid_t pid = fork();
  if (pid == 0) { /* the live owner of one journal */
    struct journal j;
    key_of(5, hex);
    if (journal_create(fd, 1, &j) || journal_append(&j, hex, "live", 4, NULL)) _exit(2);
    if (write(ready[1], "r", 1) != 1) _exit(2);
    char c;
    if (read(go[0], &c, 1) < 0) _exit(2);
    _exit(0);
  }
  char c;
  CHECK(read(ready[0], &c, 1) == 1);
  pid_t dead = fork();
  if (dead == 0) { /* a dead one: two whole records and half a third */
    struct journal j;
    if (journal_create(fd, 1, &j)) _exit(2);
    for (int i = 1; i <= 2; i++) {
      key_of(i, hex);
      if (journal_append(&j, hex, i == 1 ? "one" : "two", 3, NULL)) _exit(2);
    }
    key_of(3, hex);
    char head[200];
    int n = snprintf(head, sizeof head, "evj1 %s 0000000000000005 00000000", hex);
    if (write(j.fd, head, (size_t)n) != n) _exit(2);
    _exit(0);
  }
  int status;
  CHECK(waitpid(dead, &status, 0) == dead && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  struct journal_replay r;
  journal_replay_dead(fd, 1, &r);
  CHECK(r.journals == 1 && r.entries == 2 && r.torn == 1 && r.failed == 0);
  size_t len;
  int not_regular;
  for (int i = 1; i <= 3; i++) {
    key_of(i, hex);
    char *got = client_cache_get(fd, 1, hex, &len, &not_regular);
    CHECK(i == 3 ? got == NULL : got && !strcmp(got, i == 1 ? "one" : "two"));
    free(got);
  }
  key_of(5, hex);
  CHECK(client_cache_get(fd, 1, hex, &len, &not_regular) == NULL); /* the live journal's */
  CHECK(count(folder, "-path '*/journal/*' -type f") == 1);
  CHECK(write(go[1], "g", 1) == 1);
  CHECK(waitpid(pid, &status, 0) == pid);
  journal_replay_dead(fd, 1, &r); /* now its owner is gone */
  CHECK(r.journals == 1 && r.entries == 1);
  close(fd);
}

/* A full disk: a record that does not fit is cut back off the journal,
 * so no torn record is left between whole ones (RLIMIT_FSIZE stands in
 * for the disk, in a child). */
static void test_a_write_that_does_not_fit_leaves_the_journal_whole(const char *dir) {
  char folder[600];
  snprintf(folder, sizeof folder, "%s/full", dir);
  mkdir(folder, 0777);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    int fd = open(folder, O_RDONLY | O_DIRECTORY);
    struct journal j;
    char hex[65], big[4096];
    memset(big, 'x', sizeof big);
    key_of(1, hex);
    if (journal_create(fd, 1, &j) || journal_append(&j, hex, "fits", 4, NULL)) _exit(2);
    off_t size = j.size;
    struct rlimit lim = {(rlim_t)size + 1000, (rlim_t)size + 1000};
    if (setrlimit(RLIMIT_FSIZE, &lim)) _exit(3);
    key_of(2, hex);
    if (journal_append(&j, hex, big, sizeof big, NULL) == 0) _exit(4);
    struct stat st;
    if (fstat(j.fd, &st) || st.st_size != size || j.size != size) _exit(5);
    _exit(0);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int fd = open(folder, O_RDONLY | O_DIRECTORY);
  struct journal_replay r;
  journal_replay_dead(fd, 1, &r);
  CHECK(r.entries == 1 && r.torn == 0);
  close(fd);
}

int main(void) {
  char dir[] = "/tmp/evalua-writer-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char entries[64];
  snprintf(entries, sizeof entries, "%s/entries", dir);
  struct cache_store *s = store_of(entries);
  CHECK(s != NULL);
  test_every_entry_is_readable_while_queued(s, entries);
  test_the_newest_write_wins(s);
  test_big_entries_pass_the_byte_bound(s);
  cache_store_release(s);
  test_a_failed_write_reaches_its_sink(dir);
  test_uncollected_failures_are_said_at_exit(dir);
  test_a_put_is_journaled_before_it_returns(dir);
  test_replay_skips_torn_records_and_live_journals(dir);
  test_a_write_that_does_not_fit_leaves_the_journal_whole(dir);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) {}
  return check_report();
}
