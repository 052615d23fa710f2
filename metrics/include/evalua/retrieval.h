/* Retrieval measures of one query, with trec_eval's definitions, and the
 * named variants of other tools. The input is a judged ranking: the grade of
 * the document at each rank plus the grades of every judged document (see
 * ranking.h for building one from ids, scores and judgments). */
#ifndef EVALUA_RETRIEVAL_H
#define EVALUA_RETRIEVAL_H

#include <stddef.h>

/* A message naming file/line or row and field; empty when nothing failed. */
struct evr_error {
  char msg[512];
};
void evr_error_set(struct evr_error *e, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;

/* The grade of a retrieved document that has no judgment, and of every
 * later copy of a document already retrieved at a better rank; and of one
 * judged with a negative grade, which trec_eval reads as "in the pool but
 * unjudged" (only infAP tells the two apart). */
#define EVR_UNJUDGED (-1.0)
#define EVR_POOL_UNJUDGED (-2.0)

struct evr_ranking {
  size_t n_ret;          /* documents retrieved (after any depth cut) */
  const double *rel;     /* rel[i]: grade of the document at rank i+1 */
  const double *rel_all; /* as rel, but repeats keep their document's grade */
  size_t n_repeats;      /* ranks holding a repeat of a better-ranked id */
  size_t n_judged;
  const double *judged;  /* grades (>= 0) of all judged documents, descending */
};

enum evr_kind {
  EVR_NUM_RET, EVR_NUM_REL, EVR_NUM_REL_RET,
  EVR_MAP, EVR_GM_MAP, EVR_RPREC, EVR_BPREF, EVR_RECIP_RANK,
  EVR_IPREC_AT_RECALL, EVR_P, EVR_RECALL, EVR_NDCG, EVR_NDCG_CUT, EVR_MAP_CUT,
  EVR_SUCCESS,
  EVR_RR_CUT,         /* reciprocal rank counting only the first k ranks */
  EVR_NDCG_EXP,       /* nDCG with gain 2^grade - 1; k = 0: whole ranking */
  EVR_HITS, EVR_F1,   /* ranx: relevant retrieved in the first k; F1 of P@k and recall@k */
  EVR_DCG, EVR_DCG_EXP, /* ranx: DCG with gain = grade (Jarvelin), 2^grade - 1 (Burges) */
  EVR_LI_HIT_RATE_GRANULAR, EVR_LI_MRR_GRANULAR, /* LlamaIndex granular forms */
  EVR_LI_HIT_RATE, EVR_LI_MRR,                   /* LlamaIndex: undefined on empty input */
  EVR_RAGAS_ID_PRECISION, EVR_RAGAS_ID_RECALL,
  /* trec_eval's set measures: the retrieved documents as a set */
  EVR_SET_P, EVR_SET_RECALL, EVR_SET_MAP, EVR_SET_F, EVR_SET_RELATIVE_P,
  EVR_RELATIVE_P, EVR_NUM_NONREL_JUDGED_RET, EVR_RPREC_MULT, EVR_UTILITY, EVR_11PT_AVG,
  /* trec_eval's gain measures (gains as nDCG's) and judgment-sampling ones */
  EVR_G, EVR_BIN_G, EVR_NDCG_REL, EVR_RNDCG, EVR_GM_BPREF, EVR_INFAP,
  EVR_RBP, EVR_RBP_RESID, /* x: persistence p */
  EVR_UNJ,                /* unjudged documents among the first k, over k */
  EVR_YAAP,               /* Robertson's yet another average precision */
  /* trec_eval's measures of other relevance formats (trec_prefs.h), which
   * evr_eval leaves NaN: preferences (-R prefs, qrels_prefs) ... */
  EVR_PREFS_NUM_PREFS_POSS, EVR_PREFS_NUM_PREFS_FUL, EVR_PREFS_NUM_PREFS_FUL_RET,
  EVR_PREFS_SIMP, EVR_PREFS_PAIR, EVR_PREFS_AVGJG, EVR_PREFS_AVGJG_RNONREL,
  EVR_PREFS_SIMP_RET, EVR_PREFS_PAIR_RET, EVR_PREFS_AVGJG_RET, EVR_PREFS_AVGJG_RNONREL_RET,
  EVR_PREFS_SIMP_IMP, EVR_PREFS_PAIR_IMP, EVR_PREFS_AVGJG_IMP,
  /* ... and judgment groups (-R qrels_jg) */
  EVR_MAP_AVGJG, EVR_P_AVGJG, EVR_RPREC_MULT_AVGJG,
};

/* How a column's values combine over queries. */
enum evr_agg { EVR_AGG_MEAN, EVR_AGG_SUM, EVR_AGG_GEO };

/* trec_eval's explicit nDCG gains (-m ndcg.1=3,2=9): grade -> gain. */
struct evr_gains {
  size_t n;
  double *grade, *gain;
};

struct evr_column {
  enum evr_kind kind;
  size_t k;      /* cutoff; 0 = the whole ranking */
  double x;      /* recall level of iprec_at_recall, multiple of Rprec_mult, rbp's p */
  const struct evr_gains *gains; /* nDCG, G, ndcg_rel, Rndcg; NULL = gain is the grade */
  const double *params;  /* set_F's beta, utility's four coefficients, 11pt_avg's levels */
  size_t n_params;
  double n_docs;         /* utility: documents in the collection (trec_eval's -N) */
  enum evr_agg agg;
  int integer;   /* a count: trec_eval prints it as an integer */
  char name[64];
};

/* Values of cols[0..n) for one query into out[0..n). level: the least grade
 * that counts as relevant (trec_eval's -l). A value that the column's
 * definition leaves undefined (LlamaIndex and RAGAS on empty input) is NaN:
 * never average it, count it as unmeasured. */
void evr_eval(const struct evr_column *cols, size_t n, const struct evr_ranking *r, double level,
              double *out);

/* Running summary of one column over queries, as trec_eval's "all" line:
 * mean, sum for counts, geometric mean (floor 1e-5) for gm_map. NaN values
 * are skipped and not counted. */
struct evr_acc {
  double sum;
  size_t n;
};
void evr_acc_add(struct evr_acc *a, const struct evr_column *c, double v);
/* The summary value; NaN when no query was measured. */
double evr_acc_value(const struct evr_acc *a, const struct evr_column *c);

#endif
