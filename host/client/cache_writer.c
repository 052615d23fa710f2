/* Judge cache entries journaled at once and written behind (see
 * cache_writer.h). Locks: W.lock guards the queue, the failures and the
 * stores' list and counts; a store's own lock guards its journal segments.
 * Neither is taken while holding the other, but in fork's handlers. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_writer.h"
#include "cache.h"

/* Past this many entries held in memory, or bytes, a queued entry's data
 * is read back from the journal when its turn comes, so a judge faster
 * than the disk never waits for it: the answers it sends are journaled as
 * they come. An entry that could not be journaled waits for room instead,
 * and so does any past MAX_QUEUED in all: memory stays bounded. */
#define MAX_HELD 1024
#define MAX_HELD_BYTES ((size_t)64 << 20)
#define MAX_QUEUED (1 << 17)
/* A segment whose entries are all written is emptied from this size on;
 * past the larger one a new segment is begun while entries still wait. */
#define SEGMENT_EMPTY_AT ((off_t)1 << 20)
#define SEGMENT_MAX ((off_t)8 << 20)

struct segment {
  struct segment *next; /* the store's older segments, waiting for their entries */
  struct journal j;
  long pending;         /* entries journaled here and not yet written */
  int failed;           /* one could not be written: the segment is kept for replay */
};

struct cache_store {
  struct cache_store *next;
  int refs;             /* handles and queued entries (W.lock) */
  int dirfd, nofollow, writable;
  dev_t dev;
  ino_t ino;
  pthread_mutex_t lock; /* the segments */
  struct segment *active, *old;
  struct journal_replay replayed;
  int replay_taken;
  char name[];
};

struct entry {
  struct entry *next;
  struct cache_store *store;
  struct segment *seg; /* NULL when it could not be journaled */
  off_t at;            /* where its data is in seg's journal */
  char *data;          /* in this block, or NULL: read back from the journal */
  int sink;
  int said;            /* its journaling failed and was said: a failed write is not said again */
  size_t len;
  char key[65];
  char held[];
};

/* The queue's head is the entry being written: it stays queued, and so
 * visible to cache_store_get, until its file is in place. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t work, progress;
  struct entry *head, *tail;
  size_t queued, held, bytes; /* entries queued; of them held in memory, and their bytes */
  struct cache_failure *failed, **failed_end;
  struct cache_store *stores;
  int started, stopping, sinks;
  pthread_t thread;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
       .progress = PTHREAD_COND_INITIALIZER, .failed_end = &W.failed};

/* ---- journal segments (the store's lock held) --------------------------- */

static struct segment *segment_new(struct cache_store *s) {
  struct segment *g = calloc(1, sizeof *g);
  if (!g) return errno = ENOMEM, NULL;
  if (journal_create(s->dirfd, s->nofollow, &g->j)) {
    int e = errno;
    free(g);
    return errno = e, NULL;
  }
  return g;
}

/* A segment with nothing left to write: removed when it is not the one
 * being appended to, emptied once large when it is. */
static void segment_settled(struct cache_store *s, struct segment *g) {
  if (g->pending > 0 || g->failed) return;
  if (g == s->active) {
    if (g->j.size >= SEGMENT_EMPTY_AT) journal_truncate(&g->j);
    return;
  }
  for (struct segment **p = &s->old; *p; p = &(*p)->next)
    if (*p == g) {
      *p = g->next;
      journal_close(s->dirfd, s->nofollow, &g->j, 1);
      free(g);
      return;
    }
}

/* Journals an entry's data; 0, or -1 with errno set. */
static int journal_entry(struct cache_store *s, struct entry *e, const char *data) {
  pthread_mutex_lock(&s->lock);
  struct segment *g = s->active;
  if (g && g->j.size >= SEGMENT_MAX && g->pending > 0) { /* begin a new one; this one goes when written */
    g->next = s->old, s->old = g;
    g = s->active = NULL;
  }
  if (!g) g = s->active = segment_new(s);
  int r = g ? journal_append(&g->j, e->key, data, e->len, &e->at) : -1, err = errno;
  if (!r) g->pending++, e->seg = g;
  pthread_mutex_unlock(&s->lock);
  errno = err;
  return r;
}

/* The entry's write is over (failed or not). */
static void entry_written(struct entry *e, int failed) {
  struct cache_store *s = e->store;
  if (!e->seg) return;
  pthread_mutex_lock(&s->lock);
  e->seg->pending--;
  e->seg->failed |= failed;
  segment_settled(s, e->seg);
  pthread_mutex_unlock(&s->lock);
}

/* Closes a store's segments; those with nothing left to write are removed. */
static void close_segments(struct cache_store *s) {
  pthread_mutex_lock(&s->lock);
  for (struct segment *g = s->old, *next; g; g = next) {
    next = g->next;
    journal_close(s->dirfd, s->nofollow, &g->j, !g->pending && !g->failed);
    free(g);
  }
  s->old = NULL;
  if (s->active) journal_close(s->dirfd, s->nofollow, &s->active->j, !s->active->pending && !s->active->failed);
  free(s->active);
  s->active = NULL;
  pthread_mutex_unlock(&s->lock);
}

/* ---- stores ----------------------------------------------------------------- */

struct cache_store *cache_store_open(int dirfd, const char *name, int nofollow, int write) {
  struct stat st;
  if (fstat(dirfd, &st)) {
    int e = errno;
    close(dirfd);
    return errno = e, NULL;
  }
  pthread_mutex_lock(&W.lock);
  struct cache_store *s = W.stores;
  while (s && !(s->dev == st.st_dev && s->ino == st.st_ino)) s = s->next;
  int replay = 0;
  if (s) {
    close(dirfd);
    s->refs++;
    s->nofollow |= nofollow;
    replay = write && !s->writable;
    s->writable |= write;
  } else if ((s = calloc(1, sizeof *s + strlen(name) + 1))) {
    s->refs = 1, s->dirfd = dirfd, s->nofollow = nofollow, s->writable = write;
    s->dev = st.st_dev, s->ino = st.st_ino;
    strcpy(s->name, name);
    pthread_mutex_init(&s->lock, NULL);
    s->next = W.stores, W.stores = s;
    replay = write;
  } else {
    close(dirfd);
    errno = ENOMEM;
  }
  pthread_mutex_unlock(&W.lock);
  if (replay) journal_replay_dead(s->dirfd, s->nofollow, &s->replayed);
  return s;
}

/* Called with W.lock held; the store leaves the list when its last
 * reference goes, and is then freed by the caller (store_free). */
static int unref(struct cache_store *s) {
  if (--s->refs > 0) return 0;
  for (struct cache_store **p = &W.stores; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  return 1;
}

static void store_free(struct cache_store *s) {
  close_segments(s);
  close(s->dirfd);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

void cache_store_release(struct cache_store *s) {
  if (!s) return;
  pthread_mutex_lock(&W.lock);
  int last = unref(s);
  pthread_mutex_unlock(&W.lock);
  if (last) store_free(s);
}

int cache_store_take_replay(struct cache_store *s, struct journal_replay *r) {
  pthread_mutex_lock(&W.lock);
  int first = !s->replay_taken;
  s->replay_taken = 1;
  pthread_mutex_unlock(&W.lock);
  if (first) *r = s->replayed;
  return first;
}

/* ---- the writer thread -------------------------------------------------------- */

/* Called with the lock held. */
static void keep_failure(const struct entry *e, int err) {
  const char *fmt = "cannot write judge cache entry in '%s': %s";
  const char *why = err == ELOOP ? "a symbolic link on the way (not followed under --sandbox)" : strerror(err);
  int n = snprintf(NULL, 0, fmt, e->store->name, why);
  struct cache_failure *f = n < 0 ? NULL : malloc(sizeof *f + (size_t)n + 1);
  if (!f) {
    fprintf(stderr, "evalua: judge cache: out of memory noting a failed write in '%s'\n", e->store->name);
    return;
  }
  f->next = NULL;
  f->sink = e->sink;
  snprintf(f->message, (size_t)n + 1, fmt, e->store->name, why);
  *W.failed_end = f;
  W.failed_end = &f->next;
}

/* Writes e's file; with the lock held on entry and on return. A segment
 * lives while it has entries pending, so its journal can be read unlocked. */
static void write_entry(struct entry *e) {
  pthread_mutex_unlock(&W.lock);
  char *data = e->data ? e->data : journal_read(&e->seg->j, e->at, e->len);
  int failed = !data || client_cache_put(e->store->dirfd, e->store->nofollow, e->key, data, e->len), err = errno;
  if (data != e->data) free(data);
  entry_written(e, failed != 0);
  pthread_mutex_lock(&W.lock);
  if (failed && !e->said) keep_failure(e, err);
}

/* The writer yields the CPU to the thread that reads answers: entries are
 * safe in the journal, while an answer not yet read is not (Linux: a
 * thread's own nice value, tid = 0 meaning the caller). */
#define WRITER_NICE 10

static void *write_queue(void *unused) {
  (void)unused;
  if (setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + WRITER_NICE)) {} /* at worst it competes */
  pthread_mutex_lock(&W.lock);
  for (;;) {
    while (!W.head && !W.stopping) pthread_cond_wait(&W.work, &W.lock);
    struct entry *e = W.head;
    if (!e) break;
    write_entry(e);
    W.head = e->next;
    if (!W.head) W.tail = NULL;
    W.queued--;
    if (e->data) W.held--, W.bytes -= e->len;
    struct cache_store *last = unref(e->store) ? e->store : NULL;
    free(e);
    pthread_cond_broadcast(&W.progress);
    if (last) {
      pthread_mutex_unlock(&W.lock);
      store_free(last);
      pthread_mutex_lock(&W.lock);
    }
  }
  pthread_mutex_unlock(&W.lock);
  return NULL;
}

/* At exit: what is queued is written, journals with nothing left to write
 * are removed, and failures nobody collected are said rather than lost. */
static void stop_writer(void) {
  pthread_mutex_lock(&W.lock);
  int started = W.started;
  W.stopping = 1;
  pthread_cond_broadcast(&W.work);
  pthread_mutex_unlock(&W.lock);
  if (started) pthread_join(W.thread, NULL);
  W.started = 0; /* stopping stays set: a later put writes at once */
  for (struct cache_store *s = W.stores; s; s = s->next) close_segments(s);
  for (struct cache_failure *f = cache_writer_failures(), *next; f; f = next) {
    next = f->next;
    fprintf(stderr, "evalua: judge cache: %s\n", f->message);
    free(f);
  }
}

/* A fork copies the queue and the journals' descriptors but not the
 * thread: the parent writes what is queued and keeps its journals (and
 * their locks); a child that writes begins journals and a writer of its own. */
static void before_fork(void) {
  pthread_mutex_lock(&W.lock);
  for (struct cache_store *s = W.stores; s; s = s->next) pthread_mutex_lock(&s->lock);
}

static void after_fork_parent(void) {
  for (struct cache_store *s = W.stores; s; s = s->next) pthread_mutex_unlock(&s->lock);
  pthread_mutex_unlock(&W.lock);
}

static void after_fork_child(void) {
  for (struct entry *e = W.head, *next; e; e = next) {
    next = e->next;
    e->store->refs--;
    free(e);
  }
  for (struct cache_failure *f = W.failed, *next; f; f = next) {
    next = f->next;
    free(f);
  }
  for (struct cache_store *s = W.stores; s; s = s->next) {
    struct segment *all[] = {s->active, NULL};
    for (struct segment *g = s->old, *next; g; g = next) { /* closed, never removed: the parent's */
      next = g->next;
      close(g->j.fd);
      free(g);
    }
    for (struct segment **g = all; *g; g++) {
      close((*g)->j.fd);
      free(*g);
    }
    s->old = s->active = NULL;
    pthread_mutex_unlock(&s->lock);
  }
  W.head = W.tail = NULL;
  W.queued = W.held = W.bytes = 0;
  W.failed = NULL;
  W.failed_end = &W.failed;
  W.started = W.stopping = 0;
  /* the parent's writer may have been waiting on them: their state is not the child's */
  pthread_cond_init(&W.work, NULL);
  pthread_cond_init(&W.progress, NULL);
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

/* Whether an entry of len bytes is held in memory, else read back from
 * the journal; called with the lock held, waiting for room as needed. */
static int hold(size_t len, int journaled) {
  for (;;) {
    int room = W.held == 0 || (W.held < MAX_HELD && W.bytes + len <= MAX_HELD_BYTES);
    if (room || (journaled && W.queued < MAX_QUEUED)) return room;
    pthread_cond_wait(&W.progress, &W.lock);
  }
}

int cache_writer_put(struct cache_store *s, const char *key, const char *data, size_t len, int sink) {
  if (client_cache_check(key)) return -1;
  pthread_mutex_lock(&W.lock);
  int behind = !W.stopping && !start_writer();
  pthread_mutex_unlock(&W.lock);
  if (!behind) /* at exit, or no thread: written at once, no journal needed */
    return client_cache_put(s->dirfd, s->nofollow, key, data, len);
  struct entry e0 = {.store = s, .sink = sink, .len = len};
  memcpy(e0.key, key, 65);
  int journaled = journal_entry(s, &e0, data) == 0, jerr = errno;
  e0.said = !journaled; /* one problem said once per answer */
  pthread_mutex_lock(&W.lock);
  int held = hold(len, journaled);
  if (held) W.held++, W.bytes += len; /* reserved before the copy, made unlocked */
  W.queued++;
  pthread_mutex_unlock(&W.lock);
  struct entry *e = malloc(sizeof *e + (held ? len + 1 : 0));
  if (e) {
    *e = e0;
    if (held) e->data = memcpy(e->held, data, len), e->held[len] = '\0';
  }
  pthread_mutex_lock(&W.lock);
  if (!e) {
    W.queued--;
    if (held) W.held--, W.bytes -= len;
    pthread_cond_broadcast(&W.progress);
    pthread_mutex_unlock(&W.lock);
    if (journaled) entry_written(&e0, 1); /* kept in the journal for the next run */
    return errno = ENOMEM, -1;
  }
  s->refs++;
  if (W.tail) W.tail->next = e;
  else W.head = e;
  W.tail = e;
  pthread_cond_signal(&W.work);
  pthread_mutex_unlock(&W.lock);
  return journaled ? 0 : (errno = jerr, -2);
}

char *cache_store_get(struct cache_store *s, const char *key, size_t *len, int *not_regular) {
  char *copy = NULL;
  *not_regular = 0;
  if (client_cache_check(key)) return NULL;
  pthread_mutex_lock(&W.lock);
  const struct entry *found = NULL;
  for (const struct entry *e = W.head; e; e = e->next)
    if (e->store == s && !memcmp(e->key, key, 65)) found = e;
  if (found && found->data && (copy = malloc(found->len + 1))) memcpy(copy, found->data, found->len + 1);
  if (found && !found->data) { /* read back while its segment cannot go */
    pthread_mutex_lock(&s->lock);
    copy = journal_read(&found->seg->j, found->at, found->len);
    pthread_mutex_unlock(&s->lock);
  }
  if (copy) *len = found->len;
  pthread_mutex_unlock(&W.lock);
  return copy ? copy : client_cache_get(s->dirfd, s->nofollow, key, len, not_regular);
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
