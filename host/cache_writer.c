/* Judge cache entries written behind (see cache_writer.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_writer.h"
#include "judge_cache.h"

/* Past this many queued entries, or bytes, a caller waits for the writer,
 * so a slow disk bounds the memory held rather than letting it grow. */
#define MAX_QUEUED 1024
#define MAX_QUEUED_BYTES ((size_t)64 << 20)

struct entry {
  struct entry *next;
  int sink;
  size_t len;
  char key[65];
  char *dir; /* in the same block, after data */
  char data[];
};

/* The queue's head is the entry being written: it stays queued, and so
 * visible to cache_writer_pending, until its file is in place. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t work, progress;
  struct entry *head, *tail;
  size_t queued, bytes;
  struct cache_failure *failed, **failed_end;
  int started, stopping, sinks;
  pthread_t thread;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
       .progress = PTHREAD_COND_INITIALIZER, .failed_end = &W.failed};

/* Called with the lock held. */
static void keep_failure(const struct entry *e, int err) {
  const char *fmt = "cannot write judge cache entry in '%s': %s";
  int n = snprintf(NULL, 0, fmt, e->dir, strerror(err));
  struct cache_failure *f = n < 0 ? NULL : malloc(sizeof *f + (size_t)n + 1);
  if (!f) {
    fprintf(stderr, "evalua: judge cache: out of memory noting a failed write in '%s'\n", e->dir);
    return;
  }
  f->next = NULL;
  f->sink = e->sink;
  snprintf(f->message, (size_t)n + 1, fmt, e->dir, strerror(err));
  *W.failed_end = f;
  W.failed_end = &f->next;
}

static void *write_queue(void *unused) {
  (void)unused;
  pthread_mutex_lock(&W.lock);
  for (;;) {
    while (!W.head && !W.stopping) pthread_cond_wait(&W.work, &W.lock);
    struct entry *e = W.head;
    if (!e) break;
    pthread_mutex_unlock(&W.lock);
    int failed = judge_cache_put(e->dir, e->key, e->data, e->len), err = errno;
    pthread_mutex_lock(&W.lock);
    if (failed) keep_failure(e, err);
    W.head = e->next;
    if (!W.head) W.tail = NULL;
    W.queued--;
    W.bytes -= e->len;
    free(e);
    pthread_cond_broadcast(&W.progress);
  }
  pthread_mutex_unlock(&W.lock);
  return NULL;
}

/* At exit: what is queued is written, and failures nobody collected are
 * said rather than lost. */
static void stop_writer(void) {
  pthread_mutex_lock(&W.lock);
  if (!W.started) {
    pthread_mutex_unlock(&W.lock);
    return;
  }
  W.stopping = 1;
  pthread_cond_signal(&W.work);
  pthread_mutex_unlock(&W.lock);
  pthread_join(W.thread, NULL);
  W.started = 0; /* stopping stays set: a later put writes at once */
  for (struct cache_failure *f = cache_writer_failures(), *next; f; f = next) {
    next = f->next;
    fprintf(stderr, "evalua: judge cache: %s\n", f->message);
    free(f);
  }
}

/* A fork copies the queue but not the thread: the parent writes what is
 * queued, and a child that writes starts a writer of its own. */
static void before_fork(void) { pthread_mutex_lock(&W.lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&W.lock); }
static void after_fork_child(void) {
  for (struct entry *e = W.head, *next; e; e = next) {
    next = e->next;
    free(e);
  }
  for (struct cache_failure *f = W.failed, *next; f; f = next) {
    next = f->next;
    free(f);
  }
  W.head = W.tail = NULL;
  W.queued = W.bytes = 0;
  W.failed = NULL;
  W.failed_end = &W.failed;
  W.started = W.stopping = 0;
  pthread_mutex_unlock(&W.lock);
}

/* Called with the lock held; 0 once the thread runs. */
static int start_writer(void) {
  static int registered;
  if (W.started) return 0;
  if (!registered) {
    if (pthread_atfork(before_fork, after_fork_parent, after_fork_child) || atexit(stop_writer)) return -1;
    registered = 1;
  }
  if (pthread_create(&W.thread, NULL, write_queue, NULL)) return -1;
  W.started = 1;
  return 0;
}

int cache_writer_put(const char *dir, const char *key, const char *data, size_t len, int sink) {
  if (judge_cache_check(dir, key)) return -1;
  size_t dir_len = strlen(dir);
  struct entry *e = malloc(sizeof *e + len + dir_len + 2);
  if (!e) {
    errno = ENOMEM;
    return -1;
  }
  e->next = NULL;
  e->sink = sink;
  e->len = len;
  memcpy(e->key, key, 65);
  memcpy(e->data, data, len);
  e->data[len] = '\0';
  e->dir = e->data + len + 1;
  memcpy(e->dir, dir, dir_len + 1);
  pthread_mutex_lock(&W.lock);
  if (W.stopping || start_writer()) {
    pthread_mutex_unlock(&W.lock);
    int r = judge_cache_put(dir, key, data, len), err = errno;
    free(e);
    errno = err;
    return r;
  }
  while (W.queued >= MAX_QUEUED || (W.queued && W.bytes + len > MAX_QUEUED_BYTES))
    pthread_cond_wait(&W.progress, &W.lock);
  if (W.tail) W.tail->next = e;
  else W.head = e;
  W.tail = e;
  W.queued++;
  W.bytes += len;
  pthread_cond_signal(&W.work);
  pthread_mutex_unlock(&W.lock);
  return 0;
}

char *cache_writer_pending(const char *dir, const char *key, size_t *len) {
  char *copy = NULL;
  pthread_mutex_lock(&W.lock);
  const struct entry *found = NULL;
  for (const struct entry *e = W.head; e; e = e->next)
    if (!strcmp(e->key, key) && !strcmp(e->dir, dir)) found = e;
  if (found && (copy = malloc(found->len + 1))) {
    memcpy(copy, found->data, found->len + 1);
    *len = found->len;
  }
  pthread_mutex_unlock(&W.lock);
  return copy;
}

int cache_writer_new_sink(void) {
  pthread_mutex_lock(&W.lock);
  int sink = ++W.sinks;
  pthread_mutex_unlock(&W.lock);
  return sink;
}

void cache_writer_settle(void) {
  pthread_mutex_lock(&W.lock);
  while (W.head) pthread_cond_wait(&W.progress, &W.lock);
  pthread_mutex_unlock(&W.lock);
}

struct cache_failure *cache_writer_failures(void) {
  pthread_mutex_lock(&W.lock);
  struct cache_failure *f = W.failed;
  W.failed = NULL;
  W.failed_end = &W.failed;
  pthread_mutex_unlock(&W.lock);
  return f;
}
