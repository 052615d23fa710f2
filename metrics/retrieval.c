/* The formulas of every retrieval measure for one query (retrieval.h).
 * trec_eval's measures follow its source (v10.0) in definition and in the
 * order of floating-point operations, so that values agree to the last bit;
 * docs/retrieval.md states each formula. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "evalua/retrieval.h"

void evr_error_set(struct evr_error *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
}

/* What most measures need, counted once per query. */
struct stats {
  const struct evr_ranking *r;
  double level;
  size_t num_rel;     /* judged with grade >= level */
  size_t num_rel_ret; /* relevant documents retrieved (first copies only) */
  /* Running sums over the first k ranks, k = 0..n_ret, so that the many
   * cutoffs of all_trec cost one pass (NULL when out of memory: loops);
   * each adds in rank order, as the loops they replace. */
  size_t *hits;       /* relevant documents */
  double *apsum;      /* hits(i) / i over the relevant ranks i */
  double *dcg, *idcg; /* DCG and, k = 0..n_judged, ideal DCG with gain = grade (filled when first needed) */
  double *best;       /* the highest hits(j) / j over ranks j >= k (filled when first needed) */
};

static size_t first(size_t k, size_t n) { return k && k < n ? k : n; }

/* Relevant documents among the first k ranks (k = 0: all). */
static size_t rel_in(const struct stats *s, size_t k) {
  size_t n = first(k, s->r->n_ret), c = 0;
  if (s->hits) return s->hits[n];
  for (size_t i = 0; i < n; i++) c += s->r->rel[i] >= s->level;
  return c;
}

/* Sum of precision at each relevant rank among the first n (the running
 * sums when they were made: the same additions in the same order). */
static double precision_sum(const struct stats *s, size_t n) {
  if (s->apsum) return s->apsum[n];
  size_t so_far = 0;
  double sum = 0.0;
  for (size_t i = 0; i < n; i++)
    if (s->r->rel[i] >= s->level) {
      so_far++;
      sum += (double)so_far / (double)(i + 1);
    }
  return sum;
}

/* precision_sum over the first k, over num_rel (0 without a relevant hit). */
static double ap(const struct stats *s, size_t k) {
  double sum = precision_sum(s, first(k, s->r->n_ret));
  return sum > 0.0 ? sum / (double)s->num_rel : 0.0;
}

/* log((1 + S) / (1 + R - S)), S the precision sum over the whole ranking
 * (AP times R): Robertson's "yet another average precision", trec_eval's
 * yaap, which averages better than AP near 0 and 1. */
static double yaap(const struct stats *s) {
  double sum = precision_sum(s, s->r->n_ret);
  return log((1.0 + sum) / (1.0 + (double)s->num_rel - sum));
}

static void sum_hits(struct stats *s) {
  const double *rel = s->r->rel;
  s->hits[0] = 0, s->apsum[0] = 0.0;
  for (size_t i = 0; i < s->r->n_ret; i++) {
    int hit = rel[i] >= s->level;
    s->hits[i + 1] = s->hits[i] + (size_t)hit;
    s->apsum[i + 1] = hit ? s->apsum[i] + (double)s->hits[i + 1] / (double)(i + 1) : s->apsum[i];
  }
}

static double rprec(const struct stats *s) {
  size_t n = first(s->num_rel, s->r->n_ret);
  if (!n || !s->num_rel) return 0.0;
  return (double)rel_in(s, n) / (double)s->num_rel;
}

/* Judged relevant documents ranked above each relevant one are fine;
 * each judged non-relevant one above costs 1/min(R, N) (R relevant and N
 * non-relevant judged documents). Unjudged documents are skipped. */
static double bpref(const struct stats *s) {
  const struct evr_ranking *r = s->r;
  size_t num_nonrel = r->n_judged - s->num_rel, nonrel = 0, R = s->num_rel;
  double sum = 0.0;
  for (size_t i = 0; i < r->n_ret; i++) {
    double g = r->rel[i];
    if (g < 0) continue;
    if (g < s->level) {
      nonrel++;
    } else if (nonrel > 0) {
      sum += 1.0 - (double)(nonrel < R ? nonrel : R) / (double)(num_nonrel < R ? num_nonrel : R);
    } else {
      sum += 1.0;
    }
  }
  return R ? sum / (double)R : sum;
}

static double recip_rank(const struct stats *s, size_t k) {
  size_t n = first(k, s->r->n_ret);
  for (size_t i = 0; i < n; i++)
    if (s->r->rel[i] >= s->level) return 1.0 / (double)(i + 1);
  return 0.0;
}

/* Interpolated precision at recall x: the best precision at any rank where
 * at least round(x * R) relevant documents have been retrieved; 0 when the
 * ranking never gets there. */
static void sum_best(struct stats *s, double *best) {
  size_t n = s->r->n_ret;
  best[n] = n ? (double)s->hits[n] / (double)n : 0.0;
  for (size_t i = n - 1; n && i > 0; i--) {
    double p = (double)s->hits[i] / (double)i;
    best[i] = p > best[i + 1] ? p : best[i + 1];
  }
  s->best = best;
}

static double iprec_at_recall(const struct stats *s, double x) {
  long need = lround(x * (double)s->num_rel);
  if (!s->r->n_ret || need > (long)s->num_rel_ret) return 0.0;
  if (s->best) { /* from the first rank that has need relevant documents */
    size_t lo = 1, hi = s->r->n_ret;
    while (need > 0 && lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if ((long)s->hits[mid] >= need) hi = mid;
      else lo = mid + 1;
    }
    return s->best[lo];
  }
  size_t so_far = s->num_rel_ret;
  double best = 0.0;
  for (size_t i = s->r->n_ret; i > 0 && (long)so_far >= need; i--) {
    double p = (double)so_far / (double)i;
    if (p > best) best = p;
    if (s->r->rel[i - 1] >= s->level) so_far--;
  }
  return best;
}

static double precision(const struct stats *s, size_t k) {
  if (!k) return s->r->n_ret ? (double)s->num_rel_ret / (double)s->r->n_ret : 0.0;
  return (double)rel_in(s, k) / (double)k;
}

static double recall(const struct stats *s, size_t k) {
  return s->num_rel ? (double)rel_in(s, k) / (double)s->num_rel : 0.0;
}

/* ---- trec_eval's set measures and their kin ---------------------------- */

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* (beta + 1) P R / (beta P + R): trec_eval's set_F weighs with beta, not
 * its square. */
static double set_f(const struct stats *s, double beta) {
  if (!s->num_rel_ret) return 0.0;
  double p = (double)s->num_rel_ret / (double)s->r->n_ret, r = (double)s->num_rel_ret / (double)s->num_rel;
  return (beta + 1.0) * p * r / (beta * p + r);
}

/* hits(k) / min(k, R): precision against the best possible at k. */
static double relative_p(const struct stats *s, size_t k) {
  if (!s->num_rel) return 0.0;
  return (double)rel_in(s, k) / (double)min_size(k, s->num_rel);
}

/* Precision at rank c = (long)(x R + 0.9); 0 when c is 0. */
static double rprec_mult(const struct stats *s, double x) {
  long c = (long)(x * (double)s->num_rel + 0.9);
  return c > 0 ? (double)rel_in(s, (size_t)c) / (double)c : 0.0;
}

static size_t nonrel_judged_ret(const struct stats *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->r->n_ret; i++) n += s->r->rel[i] >= 0 && s->r->rel[i] < s->level;
  return n;
}

/* a rel_ret + b nonrel_ret + c rel_not_ret + d nonrel_not_ret, with the
 * collection's size n_docs (0 unless given). */
static double utility(const struct stats *s, const struct evr_column *c) {
  const double *p = c->params;
  double rr = (double)s->num_rel_ret, ret = (double)s->r->n_ret, rel = (double)s->num_rel;
  return p[0] * rr + p[1] * (ret - rr) + p[2] * (rel - rr) + p[3] * (c->n_docs + rr - ret - rel);
}

/* The mean over the levels x of the interpolated precision at recall x
 * (at c = round(x R) relevant documents; 0 when fewer are retrieved), in
 * trec_eval's single backward pass over the levels in the order given. */
static double pt11_avg(const struct stats *s, const struct evr_column *c) {
  size_t n = c->n_params, ret = s->r->n_ret, so_far = s->num_rel_ret;
  if (!ret) return 0.0;
  long cut = (long)n - 1;
  double sum = 0.0, best = (double)so_far / (double)ret;
  while (cut >= 0 && lround(c->params[cut] * (double)s->num_rel) > (long)so_far) cut--;
  for (size_t i = ret; i > 0 && so_far > 0; i--) {
    double p = (double)so_far / (double)i;
    if (best < p) best = p;
    if (s->r->rel[i - 1] >= s->level) {
      while (cut >= 0 && (long)so_far == lround(c->params[cut] * (double)s->num_rel)) sum += best, cut--;
      so_far--;
    }
  }
  for (; cut >= 0; cut--) sum += best;
  return sum / (double)n;
}

/* ---- nDCG ------------------------------------------------------------ */

enum gain_rule { GAIN_GRADE, GAIN_EXP, GAIN_TABLE };

static double gain_of(double g, enum gain_rule rule, const struct evr_gains *t) {
  if (rule == GAIN_TABLE)
    for (size_t i = 0; i < t->n; i++)
      if (t->grade[i] == g) return t->gain[i];
  if (g < 0) return 0.0;
  return rule == GAIN_EXP ? exp2(g) - 1.0 : g;
}

static int desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* DCG of the best possible ranking of the judged documents, cut at k. */
static double ideal_dcg(const struct evr_ranking *r, size_t k, enum gain_rule rule,
                        const struct evr_gains *t) {
  const double *g = r->judged;
  double *tmp = NULL, sum = 0.0;
  if (rule == GAIN_TABLE) { /* explicit gains may reorder the grades */
    tmp = malloc((r->n_judged + 1) * sizeof *tmp);
    if (!tmp) return NAN;
    for (size_t i = 0; i < r->n_judged; i++) tmp[i] = gain_of(r->judged[i], rule, t);
    qsort(tmp, r->n_judged, sizeof *tmp, desc);
    g = tmp;
    rule = GAIN_GRADE; /* tmp already holds gains */
  }
  size_t n = first(k, r->n_judged);
  for (size_t i = 0; i < n && g[i] > 0; i++) sum += gain_of(g[i], rule, t) / log2((double)(i + 2));
  free(tmp);
  return sum;
}

/* DCG and ideal DCG with gain = grade at every cutoff. */
static void sum_dcg(struct stats *s, double *dcg, double *idcg) {
  const struct evr_ranking *r = s->r;
  dcg[0] = idcg[0] = 0.0;
  for (size_t i = 0; i < r->n_ret; i++) {
    double g = r->rel[i] < 0 ? 0.0 : r->rel[i];
    dcg[i + 1] = g != 0 ? dcg[i] + g / log2((double)(i + 2)) : dcg[i];
  }
  for (size_t i = 0; i < r->n_judged; i++)
    idcg[i + 1] = r->judged[i] > 0 ? idcg[i] + r->judged[i] / log2((double)(i + 2)) : idcg[i];
  s->dcg = dcg, s->idcg = idcg;
}

/* DCG of the first k ranks (k = 0: all), as ranx's dcg and dcg_burges. */
static double dcg_of(const struct stats *s, size_t k, enum gain_rule rule) {
  size_t n = first(k, s->r->n_ret);
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    double g = gain_of(s->r->rel[i], rule, NULL);
    if (g != 0) sum += g / log2((double)(i + 2));
  }
  return sum;
}

/* ranx's f1: P@k (k = 0: all retrieved) and recall@k. */
static double f1_at(const struct stats *s, size_t k) {
  size_t kk = k ? k : s->r->n_ret;
  if (!s->num_rel || !kk) return 0.0;
  double hits = (double)rel_in(s, k), p = hits / (double)kk, r = hits / (double)s->num_rel;
  return p + r > 0 ? 2.0 * p * r / (p + r) : 0.0;
}

static double ndcg(const struct stats *s, size_t k, enum gain_rule rule, const struct evr_gains *t) {
  const struct evr_ranking *r = s->r;
  size_t n = first(k, r->n_ret);
  double dcg = 0.0;
  if (rule == GAIN_GRADE && s->dcg) {
    double ideal = s->idcg[first(k, r->n_judged)];
    return ideal > 0.0 ? s->dcg[n] / ideal : 0.0;
  }
  for (size_t i = 0; i < n; i++) {
    double g = gain_of(r->rel[i], rule, t);
    if (g != 0) dcg += g / log2((double)(i + 2));
  }
  double ideal = ideal_dcg(r, k, rule, t);
  return ideal > 0.0 ? dcg / ideal : 0.0;
}

/* ---- trec_eval's other gain measures --------------------------------------- */

/* The gains of the judged documents, best first (the ideal ranking): the
 * grades themselves unless a table maps them (*owned is then to be freed);
 * NULL when out of memory. */
static const double *ideal_gains(const struct evr_ranking *r, const struct evr_gains *t, double **owned) {
  *owned = NULL;
  if (!t) return r->judged;
  double *g = malloc((r->n_judged + 1) * sizeof *g);
  if (!g) return NULL;
  for (size_t i = 0; i < r->n_judged; i++) g[i] = gain_of(r->judged[i], GAIN_TABLE, t);
  qsort(g, r->n_judged, sizeof *g, desc);
  return *owned = g;
}

/* The ideal gain at rank i+1: 0 past the judged documents. */
static double ideal_at(const double *g, size_t n, size_t i) { return i < n ? g[i] : 0.0; }

static double gain_at(const struct evr_ranking *r, size_t i, const struct evr_gains *t) {
  return gain_of(r->rel[i], t ? GAIN_TABLE : GAIN_GRADE, t);
}

/* G: each retrieved document's gain over log2(2 + cost - gained so far),
 * where cost adds the ideal gain at each rank (at least 1), over the sum
 * of the positive ideal gains. Loops as trec_eval's: while the ideal gain
 * is positive, then the rest of the ranking, then the rest of the ideal. */
static double g_measure(const struct stats *s, const struct evr_gains *t) {
  const struct evr_ranking *r = s->r;
  double *owned, got = 0, sum_res = 0, sum_ideal = 0, cost = 0;
  const double *ideal = ideal_gains(r, t, &owned);
  if (!ideal) return NAN;
  size_t nj = r->n_judged, i = 0;
  double prev = ideal_at(ideal, nj, 0);
  for (; i < r->n_ret && prev > 0.0; i++) {
    double g = gain_at(r, i, t), id = ideal_at(ideal, nj, i);
    sum_res += g;
    if (id > 0.0) sum_ideal += id;
    cost += id >= 1.0 ? id : 1.0;
    if (g != 0) got += g / log2(2 + cost - sum_res);
    prev = id;
  }
  for (; i < r->n_ret; i++) {
    double g = gain_at(r, i, t);
    sum_res += g;
    cost += 1.0;
    if (g != 0) got += g / log2(2 + cost - sum_res);
  }
  for (; prev > 0.0; i++)
    if ((prev = ideal_at(ideal, nj, i)) > 0.0) sum_ideal += prev;
  free(owned);
  return sum_ideal > 0.0 ? got / sum_ideal : 0.0;
}

/* binG: over the relevant retrieved documents, 1 / log2(2 + the documents
 * not relevant above each), divided by R. */
static double bin_g(const struct stats *s) {
  size_t so_far = 0;
  double sum = 0.0;
  for (size_t i = 0; i < s->r->n_ret; i++)
    if (s->r->rel[i] >= s->level) {
      so_far++;
      sum += 1.0 / log2((double)(3 + i - so_far));
    }
  return so_far ? sum / (double)s->num_rel : 0.0;
}

/* ndcg_rel: nDCG at the rank of each retrieved document of positive gain,
 * and nDCG of the whole ranking for each such document not retrieved,
 * averaged over the documents of positive ideal gain. */
static double ndcg_rel(const struct stats *s, const struct evr_gains *t) {
  const struct evr_ranking *r = s->r;
  double *owned, dcg = 0, idcg = 0, sum = 0;
  const double *ideal = ideal_gains(r, t, &owned);
  if (!ideal) return NAN;
  size_t nj = r->n_judged, i = 0, n_pos = 0, n_pos_ret = 0;
  double prev = ideal_at(ideal, nj, 0);
  for (; i < r->n_ret && prev > 0.0; i++) {
    double g = gain_at(r, i, t), id = ideal_at(ideal, nj, i);
    if (g != 0) dcg += g / log2((double)(i + 2));
    if (id > 0.0) n_pos++, idcg += id / log2((double)(i + 2));
    if (g > 0) sum += dcg / idcg, n_pos_ret++;
    prev = id;
  }
  for (; i < r->n_ret; i++) {
    double g = gain_at(r, i, t);
    if (g != 0) dcg += g / log2((double)(i + 2));
    if (g > 0) sum += dcg / idcg, n_pos_ret++;
  }
  for (; prev > 0.0; i++)
    if ((prev = ideal_at(ideal, nj, i)) > 0.0) n_pos++, idcg += prev / log2((double)(i + 2));
  free(owned);
  if (!(idcg > 0.0)) return 0.0;
  sum += ((double)n_pos - (double)n_pos_ret) * dcg / idcg;
  return sum > 0.0 ? sum / (double)n_pos : 0.0;
}

/* Rndcg: nDCG at each rank where the ideal gain changes (the R levels of
 * each gain), and at the end of the ranking when the ideal ends first,
 * averaged; 0 when there is no relevant document. */
static double rndcg(const struct stats *s, const struct evr_gains *t) {
  const struct evr_ranking *r = s->r;
  if (!s->num_rel) return 0.0;
  double *owned, dcg = 0, idcg = 0, sum = 0;
  const double *ideal = ideal_gains(r, t, &owned);
  if (!ideal) return NAN;
  size_t nj = r->n_judged, i = 0, changes = 0;
  double prev = ideal_at(ideal, nj, 0), old = prev;
  for (; i < r->n_ret && prev > 0.0; i++) {
    double g = gain_at(r, i, t), id = ideal_at(ideal, nj, i);
    if (old != id) {
      if (idcg > 0.0) sum += dcg / idcg, changes++;
      old = id;
    }
    if (g != 0) dcg += g / log2((double)(i + 2));
    if (id > 0.0) idcg += id / log2((double)(i + 2));
    prev = id;
  }
  if (i < r->n_ret) {
    for (; i < r->n_ret; i++) {
      double g = gain_at(r, i, t);
      if (g != 0) dcg += g / log2((double)(i + 2));
    }
    if (idcg > 0.0) sum += dcg / idcg, changes++;
  }
  for (; prev > 0.0; i++) {
    double id = prev = ideal_at(ideal, nj, i);
    if (old != id) {
      if (idcg > 0.0) sum += dcg / idcg, changes++;
      old = id;
    }
    if (id > 0.0) idcg += id / log2((double)(i + 2));
  }
  free(owned);
  return changes ? sum / (double)changes : 0.0;
}

/* rbp's gains: nDCG's, scaled to [0, 1] by the least and greatest gain of
 * the grades 0 to the highest judged one and of the table's when any lies
 * outside [0, 1]; a document without a judgment gains 0 in any case. */
static double rbp_gain(double g, double lo, double hi, const struct evr_gains *t) {
  if (g < 0 && !t) return 0.0;
  double v = gain_of(g, t ? GAIN_TABLE : GAIN_GRADE, t);
  if (g < 0 && v == 0.0) return 0.0;
  return lo < 0 || hi > 1 ? (v - lo) / (hi - lo) : v;
}

/* Rank-biased precision (Moffat and Zobel): (1 - p) sum over ranks i of
 * gain(i) p^(i-1). */
static double rbp(const struct stats *s, const struct evr_column *c) {
  const struct evr_ranking *r = s->r;
  const struct evr_gains *t = c->gains;
  double lo = 0, hi = 0, sum = 0, w = 1.0;
  double top = r->n_judged ? floor(r->judged[0]) : -1;
  for (double l = 0; l <= top; l++) {
    double v = gain_of(l, t ? GAIN_TABLE : GAIN_GRADE, t);
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  for (size_t i = 0; t && i < t->n; i++) {
    if (t->gain[i] < lo) lo = t->gain[i];
    if (t->gain[i] > hi) hi = t->gain[i];
  }
  for (size_t i = 0; i < r->n_ret; i++) {
    double g = rbp_gain(r->rel[i], lo, hi, t);
    if (g != 0) sum += g * w;
    w = w * c->x;
  }
  return (1.0 - c->x) * sum;
}

/* What the unjudged documents could add to rbp: p^n + (1 - p) sum over
 * their ranks i of p^(i-1); 0 when there is none. */
static double rbp_resid(const struct stats *s, double p) {
  size_t unjudged = 0;
  double sum = 0, w = 1.0;
  for (size_t i = 0; i < s->r->n_ret; i++) {
    if (s->r->rel[i] < 0) unjudged++, sum += w;
    w = w * p;
  }
  return unjudged ? w + (1 - p) * sum : 0.0;
}

static double unjudged_at(const struct stats *s, size_t k) {
  size_t n = first(k, s->r->n_ret), c = 0;
  for (size_t i = 0; i < n; i++) c += s->r->rel[i] < 0;
  return (double)c / (double)k;
}

#define INFAP_EPSILON 0.00001 /* trec_eval's */

/* infAP (Yilmaz and Aslam): at each relevant document, precision above it
 * estimated from the judged documents, documents outside the pool counting
 * as not relevant and unjudged ones of the pool skipped; over R. */
static double inf_ap(const struct stats *s) {
  const struct evr_ranking *r = s->r;
  size_t nonrel = 0, rel = 0, unjudged = 0;
  double sum = 0.0;
  for (size_t j = 0; j < r->n_ret; j++) {
    double g = r->rel[j];
    if (g == EVR_POOL_UNJUDGED) unjudged++;
    if (g < 0) continue;
    if (g < s->level) {
      nonrel++;
      continue;
    }
    rel++;
    if (!j) {
      sum += 1.0;
      continue;
    }
    double fj = (double)j, above = (double)(rel - 1 + nonrel + unjudged);
    sum += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (above / fj) *
           (((double)(rel - 1) + INFAP_EPSILON) / ((double)(rel - 1 + nonrel) + 2 * INFAP_EPSILON));
  }
  return s->num_rel ? sum / (double)s->num_rel : sum;
}

/* ---- other tools' definitions ------------------------------------------ */

/* LlamaIndex (use_granular_hit_rate): every rank holding a relevant id,
 * repeats included, over the number of relevant ids. */
static double li_hit_rate_granular(const struct stats *s) {
  size_t hits = 0;
  for (size_t i = 0; i < s->r->n_ret; i++) hits += s->r->rel_all[i] >= s->level;
  return (double)hits / (double)s->num_rel;
}

/* LlamaIndex (use_granular_mrr): mean of 1/rank over the ranks holding a
 * relevant id, repeats included. */
static double li_mrr_granular(const struct stats *s) {
  size_t hits = 0;
  double sum = 0.0;
  for (size_t i = 0; i < s->r->n_ret; i++)
    if (s->r->rel_all[i] >= s->level) hits++, sum += 1.0 / (double)(i + 1);
  return hits ? sum / (double)hits : 0.0;
}

/* lazy: room for dcg (n_ret + 1), idcg (n_judged + 1) and best (n_ret + 1), or NULL */
static double eval_one(const struct evr_column *c, struct stats *s, double *lazy) {
  const struct evr_ranking *r = s->r;
  int empty = !r->n_ret || !s->num_rel; /* LlamaIndex raises on either */
  switch (c->kind) {
  case EVR_NUM_RET: return (double)r->n_ret;
  case EVR_NUM_REL: return (double)s->num_rel;
  case EVR_NUM_REL_RET: return (double)s->num_rel_ret;
  case EVR_MAP: case EVR_GM_MAP: return ap(s, 0);
  case EVR_MAP_CUT: return s->num_rel ? ap(s, c->k) : 0.0;
  case EVR_RPREC: return rprec(s);
  case EVR_BPREF: return bpref(s);
  case EVR_RECIP_RANK: return recip_rank(s, 0);
  case EVR_RR_CUT: return recip_rank(s, c->k);
  case EVR_IPREC_AT_RECALL:
    if (!s->best && lazy) sum_best(s, lazy + r->n_ret + 1 + r->n_judged + 1);
    return iprec_at_recall(s, c->x);
  case EVR_P: return precision(s, c->k);
  case EVR_RECALL: return recall(s, c->k);
  case EVR_SUCCESS: return rel_in(s, c->k) ? 1.0 : 0.0;
  case EVR_NDCG:
    if (!c->gains && !s->dcg && lazy) sum_dcg(s, lazy, lazy + r->n_ret + 1);
    return ndcg(s, 0, c->gains ? GAIN_TABLE : GAIN_GRADE, c->gains);
  case EVR_NDCG_CUT:
    if (!s->dcg && lazy) sum_dcg(s, lazy, lazy + r->n_ret + 1);
    return ndcg(s, c->k, GAIN_GRADE, NULL);
  case EVR_NDCG_EXP: return ndcg(s, c->k, GAIN_EXP, NULL);
  case EVR_HITS: return (double)rel_in(s, c->k);
  case EVR_F1: return f1_at(s, c->k);
  case EVR_DCG: return dcg_of(s, c->k, GAIN_GRADE);
  case EVR_DCG_EXP: return dcg_of(s, c->k, GAIN_EXP);
  case EVR_LI_HIT_RATE: return empty ? NAN : s->num_rel_ret ? 1.0 : 0.0;
  case EVR_LI_MRR: return empty ? NAN : recip_rank(s, 0);
  case EVR_LI_HIT_RATE_GRANULAR: return empty ? NAN : li_hit_rate_granular(s);
  case EVR_LI_MRR_GRANULAR: return empty ? NAN : li_mrr_granular(s);
  case EVR_RAGAS_ID_PRECISION: {
    size_t unique = r->n_ret - r->n_repeats;
    return unique ? (double)s->num_rel_ret / (double)unique : NAN;
  }
  case EVR_RAGAS_ID_RECALL: return s->num_rel ? (double)s->num_rel_ret / (double)s->num_rel : NAN;
  case EVR_SET_P: return r->n_ret ? (double)s->num_rel_ret / (double)r->n_ret : 0.0;
  case EVR_SET_RECALL: return s->num_rel ? (double)s->num_rel_ret / (double)s->num_rel : 0.0;
  case EVR_SET_MAP:
    return r->n_ret && s->num_rel ? (double)s->num_rel_ret * (double)s->num_rel_ret / ((double)r->n_ret * (double)s->num_rel)
                                  : 0.0;
  case EVR_SET_F: return set_f(s, c->params[0]);
  case EVR_SET_RELATIVE_P:
    return r->n_ret && s->num_rel ? (double)s->num_rel_ret / (double)min_size(r->n_ret, s->num_rel) : 0.0;
  case EVR_RELATIVE_P: return relative_p(s, c->k);
  case EVR_NUM_NONREL_JUDGED_RET: return (double)nonrel_judged_ret(s);
  case EVR_RPREC_MULT: return rprec_mult(s, c->x);
  case EVR_UTILITY: return utility(s, c);
  case EVR_11PT_AVG: return pt11_avg(s, c);
  case EVR_G: return g_measure(s, c->gains);
  case EVR_BIN_G: return bin_g(s);
  case EVR_NDCG_REL: return ndcg_rel(s, c->gains);
  case EVR_RNDCG: return rndcg(s, c->gains);
  case EVR_GM_BPREF: return bpref(s);
  case EVR_INFAP: return inf_ap(s);
  case EVR_RBP: return rbp(s, c);
  case EVR_RBP_RESID: return rbp_resid(s, c->x);
  case EVR_UNJ: return unjudged_at(s, c->k);
  case EVR_YAAP: return yaap(s);
  case EVR_PREFS_NUM_PREFS_POSS: case EVR_PREFS_NUM_PREFS_FUL: case EVR_PREFS_NUM_PREFS_FUL_RET:
  case EVR_PREFS_SIMP: case EVR_PREFS_PAIR: case EVR_PREFS_AVGJG: case EVR_PREFS_AVGJG_RNONREL:
  case EVR_PREFS_SIMP_RET: case EVR_PREFS_PAIR_RET: case EVR_PREFS_AVGJG_RET: case EVR_PREFS_AVGJG_RNONREL_RET:
  case EVR_PREFS_SIMP_IMP: case EVR_PREFS_PAIR_IMP: case EVR_PREFS_AVGJG_IMP:
  case EVR_MAP_AVGJG: case EVR_P_AVGJG: case EVR_RPREC_MULT_AVGJG: break; /* not from qrels */
  }
  return NAN;
}

void evr_eval(const struct evr_column *cols, size_t n, const struct evr_ranking *r, double level,
              double *out) {
  struct stats s = {r, level, 0, 0, NULL, NULL, NULL, NULL, NULL};
  while (s.num_rel < r->n_judged && r->judged[s.num_rel] >= level) s.num_rel++;
  /* room for the running sums: hits, apsum, dcg, best (n_ret + 1 each), idcg */
  size_t nr = r->n_ret + 1, bytes = nr * (sizeof(size_t) + 3 * sizeof(double)) + (r->n_judged + 1) * sizeof(double);
  double local[128]; /* a short ranking (some 30 documents) needs no malloc */
  char *room = bytes <= sizeof local ? (char *)local : malloc(bytes);
  if (room) {
    s.hits = (size_t *)(void *)room, s.apsum = (double *)(void *)(room + nr * sizeof(size_t));
    sum_hits(&s);
  }
  s.num_rel_ret = rel_in(&s, 0);
  for (size_t i = 0; i < n; i++) out[i] = eval_one(&cols[i], &s, room ? s.apsum + nr : NULL);
  if (room != (char *)local) free(room);
}

#define GEO_FLOOR 0.00001 /* trec_eval's MIN_GEO_MEAN */

void evr_acc_add(struct evr_acc *a, const struct evr_column *c, double v) {
  if (isnan(v)) return;
  a->sum += c->agg == EVR_AGG_GEO ? log(v > GEO_FLOOR ? v : GEO_FLOOR) : v;
  a->n++;
}

double evr_acc_value(const struct evr_acc *a, const struct evr_column *c) {
  if (!a->n) return NAN;
  switch (c->agg) {
  case EVR_AGG_SUM: return a->sum;
  case EVR_AGG_GEO: return exp(a->sum / (double)a->n);
  default: return a->sum / (double)a->n;
  }
}
