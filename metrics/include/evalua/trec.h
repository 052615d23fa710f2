/* TREC qrels ("QID ITER DOCNO REL") and run ("QID Q0 DOCNO RANK SCORE RUNID")
 * files, read whole (mapped when possible) with ids interned in hash tables:
 * no allocation per line and no search per lookup. Lines may come in any
 * order; '#' lines and blank lines are skipped; fields are separated by
 * spaces or tabs; a run's rank column and any field after RUNID are ignored.
 * Errors name the file, the line and the problem. */
#ifndef EVALUA_TREC_H
#define EVALUA_TREC_H

#include <stddef.h>
#include <stdint.h>

#include "evalua/ranking.h"
#include "evalua/retrieval.h"

struct evr_trec;

/* 16 bytes, as qrels run to tens of millions of lines: the docno's length
 * is not kept, as a field of the qrels line it ends at a space or tab
 * (evr_trec_doc_len). */
struct evr_trec_judgment {
  const char *doc;
  int32_t grade;
  uint32_t q; /* query index (insertion order) */
};

struct evr_trec_result {
  const char *doc;
  double score;
  uint32_t len;
  uint32_t q;
};

struct evr_trec_query {
  const char *qid;
  size_t qid_len;
  const struct evr_trec_judgment *judged; /* in no particular order */
  size_t n_judged;
  const struct evr_trec_result *results;  /* in no particular order */
  size_t n_results;
  int in_qrels, in_run;
};

/* The length of a judged docno. */
size_t evr_trec_doc_len(const struct evr_trec_judgment *j);

struct evr_trec *evr_trec_new(void);
void evr_trec_free(struct evr_trec *t);

/* Runs job(args[0]) and job(args[1]) and returns when both are done. A
 * host with threads runs them at once; the library has none of its own. */
typedef void (*evr_parallel_fn)(void (*job)(void *), void *args[2]);
/* Lets evr_trec_read_run read a run in two halves at once. */
void evr_trec_set_parallel(struct evr_trec *t, evr_parallel_fn fn);
/* The host's way of running two jobs, or NULL. */
evr_parallel_fn evr_trec_parallel(const struct evr_trec *t);

/* Read one qrels file and one run file ("-": standard input), each at most
 * once. 0, or -1 with err set ("FILE:LINE: problem" or "FILE: problem"). */
int evr_trec_read_qrels(struct evr_trec *t, const char *path, struct evr_error *err);
int evr_trec_read_run(struct evr_trec *t, const char *path, struct evr_error *err);
/* The same from a file already open (the caller closes fd); name is how
 * messages call it. */
int evr_trec_read_qrels_fd(struct evr_trec *t, int fd, const char *name, struct evr_error *err);
int evr_trec_read_run_fd(struct evr_trec *t, int fd, const char *name, struct evr_error *err);

/* Queries seen in either file, in byte order of their ids (trec_eval's). */
size_t evr_trec_count(const struct evr_trec *t);
void evr_trec_query(const struct evr_trec *t, size_t i, struct evr_trec_query *q);
/* The RUNID of the run's last line ("" when there is none). */
const char *evr_trec_runid(const struct evr_trec *t, size_t *len);

/* The judged ranking of query i, ordered by score as trec_eval orders it
 * and cut at depth (0 = all). A document judged twice in the qrels or
 * retrieved twice within the depth is an error naming both lines. */
int evr_trec_rank(const struct evr_trec *t, size_t i, struct evr_ranker *r, size_t depth,
                  struct evr_ranking *out, struct evr_error *err);
/* The same with the results of query i given: n results, in no particular
 * order (the lines of a streamed query). */
int evr_trec_rank_results(const struct evr_trec *t, size_t i, const struct evr_trec_result *results, size_t n,
                          struct evr_ranker *r, size_t depth, struct evr_ranking *out, struct evr_error *err);

/* Streaming a run grouped by query (every query's lines together, queries
 * in any order), as most tools write runs: after the qrels are read, the
 * run at path is read one query at a time in two halves (two threads when
 * the host has them), its pages handed back as it goes, so that memory
 * holds the qrels and a few megabytes of the run. fn gets each query of
 * the qrels that the run has, as its place i in qid order (as
 * evr_trec_query) with its results, from the thread of half h with ctx[h];
 * queries the qrels lack are read past. The results are valid during the
 * call only; fn returns 0 or -1 with err set (which ends the reading).
 * Returns 0 when the run was streamed; 1, with the run left unread, when it
 * cannot be: standard input or a pipe (not read twice), or a run that is
 * not grouped (a query met again after another), which evr_trec_read_run
 * then reads whole; -1 with err set on bad input. */
typedef int (*evr_trec_group_fn)(void *ctx, size_t i, const struct evr_trec_result *results, size_t n,
                                 struct evr_error *err);
int evr_trec_stream_run(struct evr_trec *t, const char *path, evr_trec_group_fn fn, void *ctx[2],
                        struct evr_error *err);

#endif
