/* Between metrics/trec_rel.c, which reads the relevance formats of
 * trec_prefs.h and ranks each query's run, and the measures of one query:
 * trec_prefs.c (prefs, qrels_prefs) and trec_jg.c (qrels_jg). */
#ifndef EVALUA_TREC_REL_H
#define EVALUA_TREC_REL_H

#include <stddef.h>
#include <stdint.h>

#include "evalua/retrieval.h"
#include "evalua/trec_eval.h"

/* One line of a relevance file; jsg is "0" in qrels_prefs and unused in
 * qrels_jg, whose level is the integer grade. */
struct rel_line {
  const char *qid, *jg, *jsg, *doc;
  uint32_t qid_len, jg_len, jsg_len, doc_len;
  double level;
  size_t line;
};

/* A document of the run. */
struct rel_doc {
  const char *id;
  size_t len;
};

/* One query: its lines (prefs: in file order; qrels_jg: by group, then
 * document) and the run's documents in rank order, cut at the depth. */
struct rel_query {
  const char *path; /* the relevance file, for messages */
  const struct rel_line *lines;
  size_t n;
  const struct rel_doc *ranked;
  size_t n_ranked;
};

/* The length of an id quoted in a message, cut at 80 bytes. */
static inline int clip(size_t len) { return (int)(len > 80 ? 80 : len); }

/* strcmp's order of byte strings without terminators. */
int evr_rel_cmp(const char *a, size_t la, const char *b, size_t lb);

/* The values of cols for one query into out (NaN: a column of other
 * judgments). 0, or -1 with err set on judgments trec_eval refuses. */
int evr_prefs_query(const struct rel_query *q, const struct evr_column *cols, size_t nc, double *out,
                    struct evr_error *err);
int evr_jg_query(const struct rel_query *q, const struct evr_column *cols, size_t nc, const struct evr_trec_opts *o,
                 double *out, struct evr_error *err);

#endif
