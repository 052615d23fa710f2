/* Measure names to columns (retrieval.h): trec_eval's names with their
 * parameters ("P.5,10", "ndcg.1=3,2=9"), the printed forms ("P_5"), the
 * friendly forms ("precision@5", "mrr") and other tools' variants
 * ("haystack.map", "ragas.id_context_precision"). */
#ifndef EVALUA_MEASURES_H
#define EVALUA_MEASURES_H

#include <stddef.h>

#include "evalua/retrieval.h"

struct evr_measures {
  struct evr_column *cols;
  size_t n, cap;
  struct evr_gains **gains; /* owned gain tables of ndcg columns */
  size_t n_gains;
  double **owned;           /* owned parameter lists (evr_column.params) */
  size_t n_owned;
};

void evr_measures_init(struct evr_measures *m);
void evr_measures_free(struct evr_measures *m);

/* Appends the column(s) of one measure as a user writes it. One column is
 * named spec; a trec_eval cutoff list gives one column per cutoff, in
 * increasing order, named as trec_eval prints them ("P_5"). 0, or -1 with
 * err set ("unknown measure 'x'", "bad cutoff ..."). */
int evr_measures_add(struct evr_measures *m, const char *spec, struct evr_error *err);

/* trec_eval's measures, in the order it prints them. */
/* Parameters: none; cutoffs (a column each, "P_5"); levels (a column
 * each, "Rprec_mult_0.20"); nDCG gains; a list of numbers for one column,
 * named with the list as written ("utility_2,-1,0,0") unless defaulted. */
enum evr_trec_params { EVR_TP_NONE, EVR_TP_CUTOFFS, EVR_TP_LEVELS, EVR_TP_GAINS, EVR_TP_NUMBERS };
#define EVR_TREC_RUNID (-1) /* kinds that only evalua trec prints */
#define EVR_TREC_NUM_Q (-2)
#define EVR_TREC_RELSTRING (-3) /* per query: the grades of the first ranks as text */
struct evr_trec_measure {
  const char *name;
  int kind;               /* enum evr_kind, or one of EVR_TREC_RUNID ... */
  enum evr_trec_params params;
  const char *defaults;   /* parameters when none are given */
  int per_query;          /* printed on per-query lines (-q) */
};
extern const struct evr_trec_measure evr_trec_measures[];
extern const size_t evr_trec_measure_count;
/* What a measure is computed from: qrels (most of them), preferences (-R
 * prefs or qrels_prefs), qrels of several judgment groups (-R qrels_jg), or
 * anything (runid, num_q). evr_measures_add takes those of qrels alone
 * (trec_prefs.h computes those of the other formats). */
enum evr_trec_judgments { EVR_TJ_QRELS, EVR_TJ_PREFS, EVR_TJ_GROUPS, EVR_TJ_ANY };
enum evr_trec_judgments evr_trec_judgments_of(const struct evr_trec_measure *tm);
/* The measure named name[0..len), or NULL. */
const struct evr_trec_measure *evr_trec_find(const char *name, size_t len);
/* Appends the columns of tm with params (NULL: its defaults). 0 or -1. */
int evr_measures_add_trec(struct evr_measures *m, const struct evr_trec_measure *tm,
                          const char *params, struct evr_error *err);

#endif
