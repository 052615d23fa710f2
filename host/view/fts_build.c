/* A run's full-text index built on a thread of its own (fts_build.h). The
 * rows go in chunks of CHUNK, each its own transaction, so that the
 * server's connection waits for one chunk at most when it writes to the
 * cache meanwhile, and a build stopped (the viewer closed) goes on from
 * its last chunk the next time; the index counts as built only once
 * `finish` marks it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fts_build.h"

#define CHUNK 5000
#define BUSY_MS 60000

struct fts_build {
  char *db_path, *report;
  struct fts_build_sql sql; /* copies */
  pthread_t th;
  pthread_mutex_t mu; /* guards the fields below */
  sqlite3 *db;        /* while open, for sqlite3_interrupt */
  int state, stop;
  double t0, t1;
  char why[512];
  /* the thread's own */
  int fd;
  char *buf;
  size_t cap;
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int failed(struct fts_build *b, const char *what, const char *msg) {
  pthread_mutex_lock(&b->mu);
  if (!b->why[0]) snprintf(b->why, sizeof b->why, "%s: %s", what, b->stop ? "stopped" : msg);
  pthread_mutex_unlock(&b->mu);
  return -1;
}

static int stopped(struct fts_build *b) {
  pthread_mutex_lock(&b->mu);
  int stop = b->stop;
  pthread_mutex_unlock(&b->mu);
  return stop;
}

static int run_sql(struct fts_build *b, sqlite3 *db, const char *sql) {
  if (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK) return 0;
  return failed(b, "the search index", sqlite3_errmsg(db));
}

/* The text of the row at the cursor: the cache's row column, else read from the report at its place. */
static const char *row_text(struct fts_build *b, sqlite3_stmt *rows, int *len) {
  if (sqlite3_column_type(rows, 3) != SQLITE_NULL) {
    *len = sqlite3_column_bytes(rows, 3);
    return (const char *)sqlite3_column_text(rows, 3);
  }
  sqlite3_int64 off = sqlite3_column_int64(rows, 1) - 1, n = sqlite3_column_int64(rows, 2);
  if (b->fd < 0 || off < 0 || n < 0 || n > 1 << 30) return NULL;
  if ((size_t)n > b->cap) {
    char *p = realloc(b->buf, (size_t)n);
    if (!p) return NULL;
    b->buf = p, b->cap = (size_t)n;
  }
  ssize_t got;
  do got = pread(b->fd, b->buf, (size_t)n, (off_t)off);
  while (got < 0 && errno == EINTR);
  if (got != n) return NULL;
  *len = (int)n;
  return b->buf;
}

/* One chunk of rows after *last into the index. -> rows done, or -1. */
static int chunk(struct fts_build *b, sqlite3 *db, sqlite3_stmt *rows, sqlite3_stmt *ins, sqlite3_int64 *last) {
  sqlite3_bind_int64(rows, 1, *last);
  sqlite3_bind_int(rows, 2, CHUNK);
  int n = 0, rc;
  while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
    sqlite3_int64 k = sqlite3_column_int64(rows, 0);
    int len = 0;
    const char *text = row_text(b, rows, &len);
    if (!text) {
      sqlite3_reset(rows);
      return failed(b, b->report ? b->report : "the cache", "a row could not be read (the report changed or is gone)");
    }
    sqlite3_bind_int64(ins, 1, k);
    sqlite3_bind_text(ins, 2, text, len, SQLITE_STATIC);
    int done = sqlite3_step(ins);
    sqlite3_reset(ins);
    if (done != SQLITE_DONE) {
      sqlite3_reset(rows);
      return failed(b, "the search index", sqlite3_errmsg(db));
    }
    *last = k, n++;
  }
  sqlite3_reset(rows);
  if (rc != SQLITE_DONE) return failed(b, "the search index", sqlite3_errmsg(db));
  return n;
}

/* The last key of a stopped build to go on from (*last), or -1 when it starts anew; -2 on an error. */
static int resume_at(struct fts_build *b, sqlite3 *db, sqlite3_int64 *last) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, b->sql.resume, -1, &st, NULL) != SQLITE_OK) {
    failed(b, "the search index", sqlite3_errmsg(db));
    return -2;
  }
  int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
  if (found) *last = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (!found && rc != SQLITE_DONE) {
    failed(b, "the search index", sqlite3_errmsg(db));
    return -2;
  }
  return found ? 0 : -1;
}

/* The last key done, recorded in the chunk's transaction. */
static int record(struct fts_build *b, sqlite3 *db, sqlite3_stmt *progress, sqlite3_int64 last) {
  sqlite3_bind_int64(progress, 1, last);
  int rc = sqlite3_step(progress);
  sqlite3_reset(progress);
  return rc == SQLITE_DONE ? 0 : failed(b, "the search index", sqlite3_errmsg(db));
}

/* Every chunk (after the last one a stopped build committed), then finish. -> 0 or -1. */
static int build(struct fts_build *b, sqlite3 *db) {
  sqlite3_stmt *rows = NULL, *ins = NULL, *progress = NULL;
  sqlite3_int64 last = 0;
  int n = CHUNK, rc = resume_at(b, db, &last);
  if (rc == -2) return -1;
  int fresh = rc == -1;
  rc = 0;
  if (sqlite3_prepare_v2(db, b->sql.rows, -1, &rows, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, b->sql.progress, -1, &progress, NULL) != SQLITE_OK)
    rc = failed(b, "the search index", sqlite3_errmsg(db));
  for (int first = 1; rc == 0 && n == CHUNK && !b->why[0]; first = 0) {
    if (stopped(b) ? failed(b, "the search index", "stopped") : run_sql(b, db, "BEGIN IMMEDIATE")) break;
    rc = first && fresh ? run_sql(b, db, b->sql.setup) : 0;
    if (rc == 0 && !ins && sqlite3_prepare_v2(db, b->sql.insert, -1, &ins, NULL) != SQLITE_OK)
      rc = failed(b, "the search index", sqlite3_errmsg(db));
    if (rc == 0) n = chunk(b, db, rows, ins, &last), rc = n < 0 ? -1 : 0;
    if (rc == 0) rc = record(b, db, progress, last);
    if (rc == 0) rc = run_sql(b, db, "COMMIT");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  }
  sqlite3_finalize(rows);
  sqlite3_finalize(ins);
  sqlite3_finalize(progress);
  if (rc || b->why[0]) return -1;
  if (run_sql(b, db, "BEGIN IMMEDIATE")) return -1;
  if (run_sql(b, db, b->sql.finish) || run_sql(b, db, "COMMIT")) {
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
  }
  return 0;
}

static void *build_main(void *arg) {
  struct fts_build *b = arg;
  sqlite3 *db = NULL;
  int rc = -1;
  if (sqlite3_open_v2(b->db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
    failed(b, b->db_path, db ? sqlite3_errmsg(db) : "out of memory");
  } else {
    sqlite3_busy_timeout(db, BUSY_MS);
    pthread_mutex_lock(&b->mu);
    b->db = db;
    pthread_mutex_unlock(&b->mu);
    if (!stopped(b) && run_sql(b, db, "PRAGMA synchronous = OFF") == 0) rc = build(b, db);
    else failed(b, "the search index", "stopped");
  }
  pthread_mutex_lock(&b->mu);
  b->db = NULL;
  b->state = rc == 0 ? 1 : -1;
  b->t1 = now_s();
  pthread_mutex_unlock(&b->mu);
  sqlite3_close(db);
  return NULL;
}

static char *copy_of(const char *s) {
  return s ? strdup(s) : NULL;
}

static void free_fields(struct fts_build *b) {
  free(b->db_path), free(b->report), free(b->buf);
  const char *sql[] = {b->sql.resume, b->sql.setup, b->sql.rows, b->sql.insert, b->sql.progress, b->sql.finish};
  for (size_t i = 0; i < sizeof sql / sizeof *sql; i++) free((char *)sql[i]);
  if (b->fd >= 0) close(b->fd);
}

struct fts_build *fts_build_start(const char *db_path, const char *report, const struct fts_build_sql *sql,
                                  char *err, size_t errlen) {
  struct fts_build *b = calloc(1, sizeof *b);
  if (!b) return snprintf(err, errlen, "out of memory"), NULL;
  b->fd = report ? open(report, O_RDONLY | O_CLOEXEC) : -1;
  b->db_path = copy_of(db_path), b->report = copy_of(report);
  b->sql = (struct fts_build_sql){copy_of(sql->resume), copy_of(sql->setup), copy_of(sql->rows),
                                  copy_of(sql->insert), copy_of(sql->progress), copy_of(sql->finish)};
  b->t0 = now_s();
  int ok = b->db_path && (!report || b->report) && b->sql.resume && b->sql.setup && b->sql.rows && b->sql.insert &&
           b->sql.progress && b->sql.finish;
  if (ok && report && b->fd < 0) {
    snprintf(err, errlen, "%s: %s", report, strerror(errno));
    ok = 0;
  } else if (!ok) {
    snprintf(err, errlen, "out of memory");
  }
  if (ok && pthread_mutex_init(&b->mu, NULL) != 0) ok = 0, snprintf(err, errlen, "no mutex");
  else if (ok && pthread_create(&b->th, NULL, build_main, b) != 0) {
    pthread_mutex_destroy(&b->mu);
    ok = 0, snprintf(err, errlen, "no thread could start");
  }
  if (!ok) {
    free_fields(b);
    free(b);
    return NULL;
  }
  return b;
}

int fts_build_state(struct fts_build *b, const char **why, double *secs) {
  pthread_mutex_lock(&b->mu);
  int state = b->state;
  *secs = (state ? b->t1 : now_s()) - b->t0;
  *why = b->why;
  pthread_mutex_unlock(&b->mu);
  return state;
}

void fts_build_free(struct fts_build *b) {
  if (!b) return;
  pthread_mutex_lock(&b->mu);
  b->stop = 1;
  if (b->db) sqlite3_interrupt(b->db);
  pthread_mutex_unlock(&b->mu);
  pthread_join(b->th, NULL);
  pthread_mutex_destroy(&b->mu);
  free_fields(b);
  free(b);
}
