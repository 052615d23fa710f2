/* A run's full-text index built on a thread of its own, over a second
 * connection to the viewer's cache (WAL: the server's connection reads on,
 * and writes between the builder's chunks), so that the app is served
 * while FTS5 works (7-8 s on 100,000 rows, docs/view.md#speed). The SQL is
 * the caller's (evalua.view.index); the rows' texts are read here, from the
 * report at their places or from the cache's row column. */
#ifndef EVALUA_VIEW_FTS_BUILD_H
#define EVALUA_VIEW_FTS_BUILD_H

#include <stddef.h>

struct fts_build;

struct fts_build_sql {
  const char *resume;   /* -> the last key a stopped build did, when it can go on from there (else no row) */
  const char *setup;    /* run first unless resumed, in the first chunk's transaction (creates the index) */
  const char *rows;     /* ?1 = the last key done, ?2 = rows a chunk -> k, off, len, row, in key order */
  const char *insert;   /* ?1 = k, ?2 = the row's JSON */
  const char *progress; /* ?1 = the last key done, in each chunk's transaction (what resume reads) */
  const char *finish;   /* run last, in a transaction of its own (merges, marks the index built) */
};

/* Starts building into the database at db_path, reading texts from report (may be NULL when every row
 * has its row column). NULL, with why in err, when no thread could start. */
struct fts_build *fts_build_start(const char *db_path, const char *report, const struct fts_build_sql *sql,
                                  char *err, size_t errlen);

/* 0 while building, 1 when built, -1 when it failed (*why says why); *secs: seconds since the start
 * (to the end, once ended). */
int fts_build_state(struct fts_build *b, const char **why, double *secs);

/* Stops a build still running (its chunk is rolled back; the index is not marked built, and the next
 * build resumes after the last chunk committed), waits for the thread and frees. */
void fts_build_free(struct fts_build *b);

#endif
