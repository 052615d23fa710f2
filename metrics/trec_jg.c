/* trec_eval's measures of qrels judged by several groups (-R qrels_jg):
 * map, P and Rprec_mult of each judgment group's qrels, added up over the
 * groups in byte order of their names and divided by their number
 * (m_map_avgjg.c, m_P_avgjg.c, m_Rprec_mult_avgjg.c). */
#include <math.h>
#include <stdlib.h>

#include "trec_rel.h"

/* One group's judged ranking: the grade at each rank (-1: the group did
 * not judge the document, -2: it judged it with a negative grade; with -J,
 * only the ranks it judged >= 0) and its relevant documents. */
struct group {
  double *rel;
  size_t n_ret, num_rel;
};

/* The grade of d among lines [0, n), sorted by document. */
static double grade_of(const struct rel_line *l, size_t n, const struct rel_doc *d) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = evr_rel_cmp(l[mid].doc, l[mid].doc_len, d->id, d->len);
    if (!c) return l[mid].level >= 0 ? l[mid].level : -2.0;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1.0;
}

static void make_group(const struct rel_query *q, const struct rel_line *l, size_t n, const struct evr_trec_opts *o,
                       struct group *g) {
  g->n_ret = g->num_rel = 0;
  for (size_t i = 0; i < n; i++) g->num_rel += l[i].level >= 0 && l[i].level >= o->level;
  for (size_t i = 0; i < q->n_ranked; i++) {
    double r = grade_of(l, n, &q->ranked[i]);
    if (!o->judged_only || r >= 0) g->rel[g->n_ret++] = r;
  }
}

/* Relevant documents among the first k ranks. */
static size_t hits(const struct group *g, size_t k, double level) {
  size_t h = 0;
  for (size_t i = 0; i < k && i < g->n_ret; i++) h += g->rel[i] >= level;
  return h;
}

static double ap(const struct group *g, double level) {
  size_t found = 0;
  double sum = 0.0;
  for (size_t i = 0; i < g->n_ret; i++)
    if (g->rel[i] >= level) found++, sum += (double)found / (double)(i + 1);
  return found ? sum / (double)g->num_rel : 0.0;
}

/* Precision at c = x R ranks, c rounded as trec_eval rounds it; 0 when c
 * is not positive. */
static double rprec_mult(const struct group *g, double x, double level) {
  long c = (long)(x * (double)g->num_rel + 0.9);
  return c > 0 ? (double)hits(g, (size_t)c, level) / (double)c : 0.0;
}

static double value(const struct evr_column *c, const struct group *g, double level) {
  switch (c->kind) {
  case EVR_MAP_AVGJG: return ap(g, level);
  case EVR_P_AVGJG: return (double)hits(g, c->k, level) / (double)c->k;
  case EVR_RPREC_MULT_AVGJG: return rprec_mult(g, c->x, level);
  default: return NAN;
  }
}

int evr_jg_query(const struct rel_query *q, const struct evr_column *cols, size_t nc, const struct evr_trec_opts *o,
                 double *out, struct evr_error *err) {
  struct group g = {malloc((q->n_ranked + 1) * sizeof *g.rel), 0, 0};
  size_t n_groups = 0;
  if (!g.rel) return evr_error_set(err, "out of memory"), -1;
  for (size_t c = 0; c < nc; c++)
    out[c] = cols[c].kind >= EVR_MAP_AVGJG && cols[c].kind <= EVR_RPREC_MULT_AVGJG ? 0.0 : NAN;
  for (size_t a = 0, b; a < q->n; a = b, n_groups++) {
    const struct rel_line *l = &q->lines[a];
    for (b = a + 1; b < q->n && !evr_rel_cmp(q->lines[b].jg, q->lines[b].jg_len, l->jg, l->jg_len); b++) {}
    make_group(q, l, b - a, o, &g);
    for (size_t c = 0; c < nc; c++) out[c] += value(&cols[c], &g, o->level);
  }
  for (size_t c = 0; n_groups > 1 && c < nc; c++) out[c] /= (double)n_groups;
  free(g.rel);
  return 0;
}
