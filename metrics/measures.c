/* Measure names to columns (measures.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/measures.h"

#define CUTS "5,10,15,20,30,100,200,500,1000"

const struct evr_trec_measure evr_trec_measures[] = {
  {"runid", EVR_TREC_RUNID, EVR_TP_NONE, NULL, 0},
  {"num_q", EVR_TREC_NUM_Q, EVR_TP_NONE, NULL, 0},
  {"num_ret", EVR_NUM_RET, EVR_TP_NONE, NULL, 1},
  {"num_rel", EVR_NUM_REL, EVR_TP_NONE, NULL, 1},
  {"num_rel_ret", EVR_NUM_REL_RET, EVR_TP_NONE, NULL, 1},
  {"map", EVR_MAP, EVR_TP_NONE, NULL, 1},
  {"gm_map", EVR_GM_MAP, EVR_TP_NONE, NULL, 0},
  {"Rprec", EVR_RPREC, EVR_TP_NONE, NULL, 1},
  {"bpref", EVR_BPREF, EVR_TP_NONE, NULL, 1},
  {"recip_rank", EVR_RECIP_RANK, EVR_TP_NONE, NULL, 1},
  {"iprec_at_recall", EVR_IPREC_AT_RECALL, EVR_TP_LEVELS, "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", 1},
  {"P", EVR_P, EVR_TP_CUTOFFS, CUTS, 1},
  {"relstring", EVR_TREC_RELSTRING, EVR_TP_NUMBERS, "10", 1},
  {"recall", EVR_RECALL, EVR_TP_CUTOFFS, CUTS, 1},
  {"infAP", EVR_INFAP, EVR_TP_NONE, NULL, 1},
  {"gm_bpref", EVR_GM_BPREF, EVR_TP_NONE, NULL, 0},
  {"Rprec_mult", EVR_RPREC_MULT, EVR_TP_LEVELS, "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0", 1},
  {"utility", EVR_UTILITY, EVR_TP_NUMBERS, "1,-1,0,0", 1},
  {"11pt_avg", EVR_11PT_AVG, EVR_TP_NUMBERS, "0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", 1},
  {"binG", EVR_BIN_G, EVR_TP_NONE, NULL, 1},
  {"G", EVR_G, EVR_TP_GAINS, NULL, 1},
  {"ndcg", EVR_NDCG, EVR_TP_GAINS, NULL, 1},
  {"ndcg_rel", EVR_NDCG_REL, EVR_TP_GAINS, NULL, 1},
  {"Rndcg", EVR_RNDCG, EVR_TP_GAINS, NULL, 1},
  {"ndcg_cut", EVR_NDCG_CUT, EVR_TP_CUTOFFS, CUTS, 1},
  {"map_cut", EVR_MAP_CUT, EVR_TP_CUTOFFS, CUTS, 1},
  {"relative_P", EVR_RELATIVE_P, EVR_TP_CUTOFFS, CUTS, 1},
  {"success", EVR_SUCCESS, EVR_TP_CUTOFFS, "1,5,10", 1},
  {"set_P", EVR_SET_P, EVR_TP_NONE, NULL, 1},
  {"set_relative_P", EVR_SET_RELATIVE_P, EVR_TP_NONE, NULL, 1},
  {"set_recall", EVR_SET_RECALL, EVR_TP_NONE, NULL, 1},
  {"set_map", EVR_SET_MAP, EVR_TP_NONE, NULL, 1},
  {"set_F", EVR_SET_F, EVR_TP_NUMBERS, "1", 1},
  {"num_nonrel_judged_ret", EVR_NUM_NONREL_JUDGED_RET, EVR_TP_NONE, NULL, 1},
  {"prefs_num_prefs_poss", EVR_PREFS_NUM_PREFS_POSS, EVR_TP_NONE, NULL, 1},
  {"prefs_num_prefs_ful", EVR_PREFS_NUM_PREFS_FUL, EVR_TP_NONE, NULL, 1},
  {"prefs_num_prefs_ful_ret", EVR_PREFS_NUM_PREFS_FUL_RET, EVR_TP_NONE, NULL, 1},
  {"prefs_simp", EVR_PREFS_SIMP, EVR_TP_NONE, NULL, 1},
  {"prefs_pair", EVR_PREFS_PAIR, EVR_TP_NONE, NULL, 1},
  {"prefs_avgjg", EVR_PREFS_AVGJG, EVR_TP_NONE, NULL, 1},
  {"prefs_avgjg_Rnonrel", EVR_PREFS_AVGJG_RNONREL, EVR_TP_NONE, NULL, 1},
  {"prefs_simp_ret", EVR_PREFS_SIMP_RET, EVR_TP_NONE, NULL, 1},
  {"prefs_pair_ret", EVR_PREFS_PAIR_RET, EVR_TP_NONE, NULL, 1},
  {"prefs_avgjg_ret", EVR_PREFS_AVGJG_RET, EVR_TP_NONE, NULL, 1},
  {"prefs_avgjg_Rnonrel_ret", EVR_PREFS_AVGJG_RNONREL_RET, EVR_TP_NONE, NULL, 1},
  {"prefs_simp_imp", EVR_PREFS_SIMP_IMP, EVR_TP_NONE, NULL, 1},
  {"prefs_pair_imp", EVR_PREFS_PAIR_IMP, EVR_TP_NONE, NULL, 1},
  {"prefs_avgjg_imp", EVR_PREFS_AVGJG_IMP, EVR_TP_NONE, NULL, 1},
  {"map_avgjg", EVR_MAP_AVGJG, EVR_TP_NONE, NULL, 1},
  {"P_avgjg", EVR_P_AVGJG, EVR_TP_CUTOFFS, CUTS, 1},
  {"Rprec_mult_avgjg", EVR_RPREC_MULT_AVGJG, EVR_TP_LEVELS, "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0", 1},
  {"yaap", EVR_YAAP, EVR_TP_NONE, NULL, 1}, /* in no set of trec_eval's, all_trec included */
  {"rbp", EVR_RBP, EVR_TP_GAINS, NULL, 1},
  {"rbp_resid", EVR_RBP_RESID, EVR_TP_GAINS, NULL, 1},
  {"unj", EVR_UNJ, EVR_TP_CUTOFFS, "5,10,20", 1},
};
const size_t evr_trec_measure_count = sizeof evr_trec_measures / sizeof evr_trec_measures[0];

void evr_measures_init(struct evr_measures *m) { memset(m, 0, sizeof *m); }

void evr_measures_free(struct evr_measures *m) {
  for (size_t i = 0; i < m->n_gains; i++) {
    free(m->gains[i]->grade);
    free(m->gains[i]->gain);
    free(m->gains[i]);
  }
  free(m->gains);
  for (size_t i = 0; i < m->n_owned; i++) free(m->owned[i]);
  free(m->owned);
  free(m->cols);
  evr_measures_init(m);
}

enum evr_trec_judgments evr_trec_judgments_of(const struct evr_trec_measure *tm) {
  if (tm->kind == EVR_TREC_RUNID || tm->kind == EVR_TREC_NUM_Q) return EVR_TJ_ANY;
  if (tm->kind >= EVR_PREFS_NUM_PREFS_POSS && tm->kind <= EVR_PREFS_AVGJG_IMP) return EVR_TJ_PREFS;
  if (tm->kind >= EVR_MAP_AVGJG && tm->kind <= EVR_RPREC_MULT_AVGJG) return EVR_TJ_GROUPS;
  return EVR_TJ_QRELS;
}

const struct evr_trec_measure *evr_trec_find(const char *name, size_t len) {
  for (size_t i = 0; i < evr_trec_measure_count; i++)
    if (strlen(evr_trec_measures[i].name) == len && !memcmp(evr_trec_measures[i].name, name, len))
      return &evr_trec_measures[i];
  return NULL;
}

static struct evr_column *push(struct evr_measures *m, int kind, struct evr_error *err) {
  if (m->n == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 8;
    struct evr_column *c = realloc(m->cols, cap * sizeof *c);
    if (!c) {
      evr_error_set(err, "out of memory");
      return NULL;
    }
    m->cols = c, m->cap = cap;
  }
  struct evr_column *c = &m->cols[m->n++];
  memset(c, 0, sizeof *c);
  c->kind = (enum evr_kind)kind;
  c->integer = kind == EVR_NUM_RET || kind == EVR_NUM_REL || kind == EVR_NUM_REL_RET ||
               kind == EVR_NUM_NONREL_JUDGED_RET || kind == EVR_PREFS_NUM_PREFS_POSS ||
               kind == EVR_PREFS_NUM_PREFS_FUL || kind == EVR_PREFS_NUM_PREFS_FUL_RET;
  c->agg = c->integer ? EVR_AGG_SUM : kind == EVR_GM_MAP || kind == EVR_GM_BPREF ? EVR_AGG_GEO : EVR_AGG_MEAN;
  return c;
}

/* ---- parameter lists --------------------------------------------------- */

/* Splits "a,b,c" into at most max items; returns the count or -1. */
static int split(const char *s, char items[][32], int max) {
  int n = 0;
  for (const char *p = s;; p++) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (n == max || len >= 32) return -1;
    memcpy(items[n], p, len);
    items[n++][len] = '\0';
    if (!end) return n;
    p = end;
  }
}

/* A cutoff as trec_eval reads it (atol): digits, and any decimals dropped. */
static int parse_cutoff(const char *s, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || !isdigit((unsigned char)*s) || errno) return -1;
  if (*end == '.') {
    for (end++; isdigit((unsigned char)*end); end++) {}
  }
  if (*end) return -1;
  *out = v;
  return 0;
}

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return end != s && !*end && !errno && *out == *out ? 0 : -1;
}

static int parse_grade(const char *s, long *out) {
  char *end;
  errno = 0;
  *out = strtol(s, &end, 10);
  return end == s || *end || errno ? -1 : 0;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define MAX_PARAMS 64

static int add_cutoffs(struct evr_measures *m, const struct evr_trec_measure *tm, const char *params,
                       struct evr_error *err) {
  char items[MAX_PARAMS][32];
  long cut[MAX_PARAMS];
  int n = split(params, items, MAX_PARAMS);
  if (n < 0) return evr_error_set(err, "%s: too many or too long cutoffs in '%s'", tm->name, params), -1;
  for (int i = 0; i < n; i++)
    if (parse_cutoff(items[i], &cut[i]) || cut[i] <= 0)
      return evr_error_set(err, "%s: cutoff '%s' is not a positive integer", tm->name, items[i]), -1;
  qsort(cut, (size_t)n, sizeof *cut, cmp_long);
  for (int i = 1; i < n; i++)
    if (cut[i] == cut[i - 1]) return evr_error_set(err, "%s: cutoff %ld given twice", tm->name, cut[i]), -1;
  for (int i = 0; i < n; i++) {
    struct evr_column *c = push(m, tm->kind, err);
    if (!c) return -1;
    c->k = (size_t)cut[i];
    snprintf(c->name, sizeof c->name, "%s_%ld", tm->name, cut[i]);
  }
  return 0;
}

static int add_levels(struct evr_measures *m, const struct evr_trec_measure *tm, const char *params,
                      struct evr_error *err) {
  char items[MAX_PARAMS][32];
  double x[MAX_PARAMS];
  int n = split(params, items, MAX_PARAMS);
  if (n < 0) return evr_error_set(err, "%s: too many or too long levels in '%s'", tm->name, params), -1;
  for (int i = 0; i < n; i++)
    if (parse_double(items[i], &x[i]))
      return evr_error_set(err, "%s: level '%s' is not a number", tm->name, items[i]), -1;
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  for (int i = 1; i < n; i++)
    if (x[i] == x[i - 1]) return evr_error_set(err, "%s: level %g given twice", tm->name, x[i]), -1;
  for (int i = 0; i < n; i++) {
    struct evr_column *c = push(m, tm->kind, err);
    if (!c) return -1;
    c->x = x[i];
    snprintf(c->name, sizeof c->name, "%s_%3.2f", tm->name, x[i]);
  }
  return 0;
}

static int keep_gains(struct evr_measures *m, struct evr_gains *g, struct evr_error *err) {
  struct evr_gains **all = realloc(m->gains, (m->n_gains + 1) * sizeof *all);
  if (!all) {
    free(g->grade), free(g->gain), free(g);
    return evr_error_set(err, "out of memory"), -1;
  }
  m->gains = all;
  all[m->n_gains++] = g;
  return 0;
}

/* "1=3,2=9": grade 1 gains 3, grade 2 gains 9, other grades their value. */
static int add_gains(struct evr_measures *m, const struct evr_trec_measure *tm, const char *params,
                     struct evr_error *err) {
  char items[MAX_PARAMS][32];
  int n = split(params, items, MAX_PARAMS);
  if (n < 0) return evr_error_set(err, "%s: too many or too long gains in '%s'", tm->name, params), -1;
  struct evr_gains *g = calloc(1, sizeof *g);
  if (!g || !(g->grade = malloc((size_t)n * sizeof(double))) || !(g->gain = malloc((size_t)n * sizeof(double)))) {
    if (g) free(g->grade), free(g);
    return evr_error_set(err, "out of memory"), -1;
  }
  if (keep_gains(m, g, err)) return -1;
  int rbp = tm->kind == EVR_RBP || tm->kind == EVR_RBP_RESID;
  double persistence = 0.9;
  for (int i = 0; i < n; i++) {
    char *eq = strchr(items[i], '=');
    long grade;
    if (eq) *eq = '\0';
    if (eq && rbp && !strcmp(items[i], "p") && !parse_double(eq + 1, &persistence)) continue;
    if (!eq || parse_grade(items[i], &grade) || parse_double(eq + 1, &g->gain[g->n]))
      return evr_error_set(err, rbp ? "%s: '%s' is not a list of p=PERSISTENCE or GRADE=GAIN"
                                    : "%s: '%s' is not a list of GRADE=GAIN", tm->name, params), -1;
    g->grade[g->n++] = (double)grade;
  }
  if (rbp && !(persistence >= 0 && persistence < 1))
    return evr_error_set(err, "%s: the persistence p must be at least 0 and below 1", tm->name), -1;
  struct evr_column *c = push(m, tm->kind, err);
  if (!c) return -1;
  c->gains = g->n ? g : NULL;
  c->x = persistence;
  snprintf(c->name, sizeof c->name, "%s_%s", tm->name, params);
  return 0;
}

/* A list of numbers for one column, kept by m; utility takes exactly four
 * (trec_eval gives no value with others). */
static int add_numbers(struct evr_measures *m, const struct evr_trec_measure *tm, const char *params,
                       struct evr_error *err) {
  char items[MAX_PARAMS][32];
  int n = split(params ? params : tm->defaults, items, MAX_PARAMS);
  if (n < 0) return evr_error_set(err, "%s: too many or too long numbers in '%s'", tm->name, params), -1;
  if (tm->kind == EVR_UTILITY && n != 4)
    return evr_error_set(err, "utility: '%s' is not four coefficients", params), -1;
  double **owned = realloc(m->owned, (m->n_owned + 1) * sizeof *owned), *x;
  if (!owned) return evr_error_set(err, "out of memory"), -1;
  m->owned = owned;
  if (!(x = owned[m->n_owned] = malloc((size_t)n * sizeof *x))) return evr_error_set(err, "out of memory"), -1;
  m->n_owned++;
  for (int i = 0; i < n; i++)
    if (parse_double(items[i], &x[i]))
      return evr_error_set(err, "%s: '%s' is not a number", tm->name, items[i]), -1;
  struct evr_column *c = push(m, tm->kind, err);
  if (!c) return -1;
  c->params = x, c->n_params = (size_t)n;
  if (params) snprintf(c->name, sizeof c->name, "%s_%s", tm->name, params);
  else snprintf(c->name, sizeof c->name, "%s", tm->name);
  return 0;
}

int evr_measures_add_trec(struct evr_measures *m, const struct evr_trec_measure *tm, const char *params,
                          struct evr_error *err) {
  if (tm->kind < 0) return evr_error_set(err, "%s is a line of evalua trec's report, not a measure", tm->name), -1;
  if (tm->params == EVR_TP_NUMBERS) return add_numbers(m, tm, params, err);
  if (!params) params = tm->defaults;
  if (tm->params == EVR_TP_CUTOFFS) return add_cutoffs(m, tm, params, err);
  if (tm->params == EVR_TP_LEVELS) return add_levels(m, tm, params, err);
  if (tm->params == EVR_TP_GAINS && params) return add_gains(m, tm, params, err);
  if (tm->kind == EVR_RBP || tm->kind == EVR_RBP_RESID) { /* persistence 0.9 */
    struct evr_column *c = push(m, tm->kind, err);
    if (!c) return -1;
    c->x = 0.9;
    snprintf(c->name, sizeof c->name, "%s", tm->name);
    return 0;
  }
  if (params) return evr_error_set(err, "%s takes no parameters", tm->name), -1;
  struct evr_column *c = push(m, tm->kind, err);
  if (!c) return -1;
  snprintf(c->name, sizeof c->name, "%s", tm->name);
  return 0;
}

/* ---- the other spellings ----------------------------------------------- */

struct alias {
  const char *name;
  int kind;
  int cut; /* takes @k */
};

static const struct alias aliases[] = {
  {"precision", EVR_P, 1},      {"recall", EVR_RECALL, 1},       {"success", EVR_SUCCESS, 1},
  {"hit_rate", EVR_SUCCESS, 1}, {"ndcg", EVR_NDCG_CUT, 1},       {"ndcg_exp", EVR_NDCG_EXP, 1},
  {"mrr", EVR_RR_CUT, 1},       {"rr", EVR_RR_CUT, 1},           {"map", EVR_MAP_CUT, 1},
  {"ap", EVR_MAP_CUT, 1},       {"rprec", EVR_RPREC, 0},         {"r_precision", EVR_RPREC, 0},
  {"haystack.map", EVR_MAP, 0}, {"haystack.mrr", EVR_RECIP_RANK, 0},
  {"haystack.recall_single_hit", EVR_SUCCESS, 0}, {"haystack.recall_multi_hit", EVR_RECALL, 0},
  {"haystack.ndcg", EVR_NDCG, 0},
  {"llamaindex.hit_rate", EVR_LI_HIT_RATE, 0}, {"llamaindex.hit_rate_granular", EVR_LI_HIT_RATE_GRANULAR, 0},
  {"llamaindex.mrr", EVR_LI_MRR, 0},           {"llamaindex.mrr_granular", EVR_LI_MRR_GRANULAR, 0},
  {"ragas.id_context_precision", EVR_RAGAS_ID_PRECISION, 0},
  {"ragas.id_context_recall", EVR_RAGAS_ID_RECALL, 0},
  /* ranx's names */
  {"hits", EVR_HITS, 1},        {"f1", EVR_F1, 1},               {"dcg", EVR_DCG, 1},
  {"dcg_burges", EVR_DCG_EXP, 1}, {"ndcg_burges", EVR_NDCG_EXP, 1},
};

/* Without "@k" the cutoff kinds cover the whole ranking. */
static int plain_kind(int kind) {
  return kind == EVR_RR_CUT ? EVR_RECIP_RANK : kind == EVR_MAP_CUT ? EVR_MAP
       : kind == EVR_NDCG_CUT ? EVR_NDCG : kind;
}

static int add_alias(struct evr_measures *m, const char *spec, struct evr_error *err) {
  const char *at = strchr(spec, '@');
  size_t len = at ? (size_t)(at - spec) : strlen(spec);
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
    const struct alias *a = &aliases[i];
    if (strlen(a->name) != len || memcmp(a->name, spec, len)) continue;
    long k = 0;
    if (at && (!a->cut || strspn(at + 1, "0123456789") != strlen(at + 1) || !at[1] ||
               (k = strtol(at + 1, NULL, 10)) <= 0))
      return evr_error_set(err, a->cut ? "measure '%s': the cutoff after '@' must be a positive integer"
                                       : "measure '%s' takes no cutoff", spec), -1;
    struct evr_column *c = push(m, at ? a->kind : plain_kind(a->kind), err);
    if (!c) return -1;
    c->k = (size_t)k;
    snprintf(c->name, sizeof c->name, "%s", spec);
    return 0;
  }
  return 1;
}

/* A measure computed from qrels; the others need evalua trec's other
 * relevance formats. */
static int add_from_qrels(struct evr_measures *m, const struct evr_trec_measure *tm, const char *params,
                          struct evr_error *err) {
  enum evr_trec_judgments j = evr_trec_judgments_of(tm);
  if (j == EVR_TJ_PREFS)
    return evr_error_set(err, "%s is computed from preferences, not qrels (evalua trec -R prefs)", tm->name), -1;
  if (j == EVR_TJ_GROUPS)
    return evr_error_set(err, "%s is computed from judgment groups, not qrels (evalua trec -R qrels_jg)", tm->name),
           -1;
  return evr_measures_add_trec(m, tm, params, err);
}

/* "P_5", "iprec_at_recall_0.10": trec_eval's printed names. */
static int add_printed(struct evr_measures *m, const char *spec, struct evr_error *err) {
  const char *us = strrchr(spec, '_');
  if (!us) return 1;
  const struct evr_trec_measure *tm = evr_trec_find(spec, (size_t)(us - spec));
  if (!tm || (tm->params != EVR_TP_CUTOFFS && tm->params != EVR_TP_LEVELS) || !us[1]) return 1;
  return add_from_qrels(m, tm, us + 1, err);
}

static int add_any(struct evr_measures *m, const char *spec, struct evr_error *err) {
  int r = add_alias(m, spec, err);
  if (r <= 0) return r;
  const char *dot = strchr(spec, '.');
  const struct evr_trec_measure *tm = evr_trec_find(spec, dot ? (size_t)(dot - spec) : strlen(spec));
  if (tm) return add_from_qrels(m, tm, dot ? dot + 1 : NULL, err);
  r = add_printed(m, spec, err);
  if (r <= 0) return r;
  return evr_error_set(err, "unknown measure '%s'", spec), -1;
}

/* A measure that gives one column keeps the name it was asked by; a list
 * of cutoffs gives columns named as trec_eval prints them. */
int evr_measures_add(struct evr_measures *m, const char *spec, struct evr_error *err) {
  if (strlen(spec) >= sizeof m->cols->name)
    return evr_error_set(err, "unknown measure '%.60s...'", spec), -1;
  size_t before = m->n;
  if (add_any(m, spec, err)) return -1;
  if (m->n == before + 1) snprintf(m->cols[before].name, sizeof m->cols->name, "%s", spec);
  return 0;
}
