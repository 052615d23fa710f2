/* trec_eval's evaluation of TREC files, one path for `evalua trec` and
 * ev.metrics alike: which queries count (those of the qrels that the run
 * has; with complete, as -c, every query of the qrels, a missing one
 * retrieving nothing), each query's values, and the summary ("all") values,
 * added up in qid order as trec_eval adds them. */
#ifndef EVALUA_TREC_EVAL_H
#define EVALUA_TREC_EVAL_H

#include <stddef.h>

#include "evalua/retrieval.h"
#include "evalua/trec.h"

/* trec_eval's -Z file: lines "QID MEASURE MEAN STDDEV", MEASURE as printed
 * ("P_5"). Each value of a listed query and column becomes
 * (value - MEAN) / STDDEV before the summaries are made (0 when STDDEV is 0
 * and the value is MEAN); a pair the file lacks, or a STDDEV of 0 with
 * another value, becomes -1000000. */
struct evr_zscores;
/* NULL with err set ("FILE:LINE: problem") when the file cannot be read. */
struct evr_zscores *evr_zscores_read(const char *path, struct evr_error *err);
void evr_zscores_free(struct evr_zscores *z);

struct evr_trec_opts {
  double level; /* least grade that is relevant (-l) */
  size_t depth; /* ranks kept (-M); 0 = all */
  int complete; /* -c */
  /* trec_eval's -c summary of num_rel: the judged documents of grade > 0
   * of every query, whatever the level (else: the sum of num_rel) */
  int positive_num_rel;
  int judged_only; /* -J: rank only the documents with a judgment */
  size_t relstring; /* > 0: keep each query's first grades as text, this many */
  const struct evr_zscores *z; /* -Z, or NULL */
  /* BEIR's ignore_identical_ids: a retrieved document whose id is the
   * query's id is dropped before anything else (-M included); a query left
   * with no results is evaluated as retrieving nothing, as BEIR counts it */
  int drop_query_id;
};

/* A query of the report. */
struct evr_trec_row {
  const char *qid;
  size_t len;
  const char *skipped; /* NULL when evaluated, else why not */
};

struct evr_trec_report {
  size_t nc, n;
  struct evr_trec_row *rows; /* n, in qid byte order */
  double *values;            /* row k's nc values at values + k * nc; NaN when skipped */
  size_t n_evaluated;        /* num_q */
  double *summary;           /* nc "all" values; NaN when no query was measured */
  size_t *measured;          /* nc: the number of queries each summary covers */
  int streamed;              /* the run was read one query at a time */
  /* With opts.relstring = k: row r's grades of ranks 1..k (fewer when fewer
   * were retrieved) at relstrings + r * (k + 1), a string, one character a
   * rank: the grade 0-9, '>' above 9, '-' no judgment, '.' judged with a
   * negative grade (trec_eval's relstring). */
  char *relstrings;
};

/* Evaluates cols[0..nc) over t, whose qrels and run were read. Rows: every
 * query of either file, those left out with the reason "not in the run" or
 * "not in the qrels". 0, or -1 with err
 * set (a document judged or retrieved twice); free rep either way. */
int evr_trec_evaluate(const struct evr_trec *t, const struct evr_column *cols, size_t nc,
                      const struct evr_trec_opts *o, struct evr_trec_report *rep, struct evr_error *err);

/* Reads the run at path against the qrels read into t and evaluates it:
 * streamed when the run is a regular file grouped by query (see
 * evr_trec_stream_run), else read whole. Rows: the queries of the qrels.
 * The values are the same either way. */
int evr_trec_evaluate_run(struct evr_trec *t, const char *path, const struct evr_column *cols, size_t nc,
                          const struct evr_trec_opts *o, struct evr_trec_report *rep, struct evr_error *err);

/* The summaries of rep, whose rows and values are filled in by another
 * evaluator (trec_prefs.h), as the two above make them: each row's values
 * turned into z-scores first with o->z, then the "all" values and num_q. */
int evr_trec_report_summarize(struct evr_trec_report *rep, const struct evr_column *cols,
                              const struct evr_trec_opts *o, struct evr_error *err);

void evr_trec_report_free(struct evr_trec_report *rep);

#endif
