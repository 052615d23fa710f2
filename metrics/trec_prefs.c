/* trec_eval's preference measures of one query (-R prefs, qrels_prefs;
 * form_prefs_counts.c and m_prefs_*.c), counted as it counts them, its
 * quirks included, so that the values agree to the bit.
 *
 * The documents of the query's lines are numbered as trec_eval numbers
 * them: those retrieved (within the depth) in rank order from 0, then the
 * others in byte order of their ids from njr. A preference of a over b is
 * fulfilled when a's number is lower; it is "ret" when both are retrieved,
 * "imp" (implied) when one of them is, "notoccur" when neither is.
 *
 * A judgment group (JG) of one subgroup is counted from its classes of
 * equal level (trec_eval's ECs): every line of a higher class is preferred
 * to every line of a lower one, so a document given twice in a class counts
 * twice. A group of several subgroups is counted from the matrix of its
 * documents' preferences (trec_eval's PA), made transitive. Levels above 0
 * are relevant; 0 is not, and below 0 neither is in a group of several
 * subgroups, while in a group of one, every level not above 0 is
 * non-relevant (as trec_eval counts them). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trec_rel.h"

/* One group's counts. */
struct counts {
  long ful_ret, poss_ret, ful_imp, poss_imp, notoccur;
  long rel, nonrel, rel_ret, nonrel_ret;
  long rn_ful, rn_poss;   /* recounted for prefs_avgjg_Rnonrel when nonrel > rel */
  long rnr_ful, rnr_poss; /* recounted for prefs_avgjg_Rnonrel_ret when nonrel_ret > rel_ret */
};

/* A line with its document's number. */
struct pline {
  const struct rel_line *l;
  size_t id;
};

struct pq {
  const struct rel_query *q;
  struct pline *p;   /* by group, subgroup, level descending, number */
  size_t nj, njr;    /* documents judged; those retrieved */
  uint16_t *pc;      /* nj x nj: groups preferring i to j, wrapping as trec_eval's unsigned short; or NULL */
  struct counts *g;  /* per group, in byte order of their names */
  size_t ng;
  struct evr_error *err;
};

static int oom(struct pq *x) { return evr_error_set(x->err, "out of memory"), -1; }

/* ---- numbering the documents ------------------------------------------------ */

static int line_by_doc(const void *pa, const void *pb) {
  const struct rel_line *a = ((const struct pline *)pa)->l, *b = ((const struct pline *)pb)->l;
  return evr_rel_cmp(a->doc, a->doc_len, b->doc, b->doc_len);
}

struct rank_of {
  const char *id;
  size_t len, rank;
};

static int rank_by_id(const void *pa, const void *pb) {
  const struct rank_of *a = pa, *b = pb;
  return evr_rel_cmp(a->id, a->len, b->id, b->len);
}

/* The rank of the document of l in r[0, n) (sorted by id), or n. */
static size_t rank_in(const struct rank_of *r, size_t n, const struct rel_line *l) {
  struct rank_of key = {l->doc, l->doc_len, 0};
  const struct rank_of *hit = bsearch(&key, r, n, sizeof *r, rank_by_id);
  return hit ? hit->rank : n;
}

/* x->p[k].id for every line (sorted by document), x->nj and x->njr, from
 * rank[u]: the rank of distinct document u (in id order), nr when it is not
 * retrieved. */
static void assign(struct pq *x, const size_t *rank, size_t nu, size_t nr, size_t *at_rank, size_t *num) {
  size_t next = 0;
  for (size_t r = 0; r < nr; r++) at_rank[r] = SIZE_MAX;
  for (size_t u = 0; u < nu; u++)
    if (rank[u] < nr) at_rank[rank[u]] = u;
  for (size_t r = 0; r < nr; r++)
    if (at_rank[r] != SIZE_MAX) num[at_rank[r]] = next++;
  x->njr = next;
  for (size_t u = 0; u < nu; u++)
    if (rank[u] == nr) num[u] = next++;
  x->nj = next;
  for (size_t k = 0, u = 0; k < x->q->n; k++) {
    if (k && line_by_doc(&x->p[k - 1], &x->p[k])) u++;
    x->p[k].id = num[u];
  }
}

static int number_docs(struct pq *x) {
  const struct rel_query *q = x->q;
  size_t nr = q->n_ranked, nu = 0;
  for (size_t k = 0; k < q->n; k++) x->p[k] = (struct pline){&q->lines[k], 0};
  qsort(x->p, q->n, sizeof *x->p, line_by_doc);
  struct rank_of *r = malloc((nr + 1) * sizeof *r);
  size_t *rank = malloc((2 * q->n + nr + 1) * sizeof *rank);
  if (!r || !rank) return free(r), free(rank), oom(x);
  for (size_t i = 0; i < nr; i++) r[i] = (struct rank_of){q->ranked[i].id, q->ranked[i].len, i};
  qsort(r, nr, sizeof *r, rank_by_id);
  for (size_t k = 0; k < q->n; k++)
    if (!k || line_by_doc(&x->p[k - 1], &x->p[k])) rank[nu++] = rank_in(r, nr, x->p[k].l);
  assign(x, rank, nu, nr, rank + q->n, rank + q->n + nr);
  free(r), free(rank);
  return 0;
}

/* trec_eval's order of a query's lines: group, subgroup, level descending,
 * document number (then line, for stable messages). */
static int by_group(const void *pa, const void *pb) {
  const struct pline *x = pa, *y = pb;
  const struct rel_line *a = x->l, *b = y->l;
  int c = evr_rel_cmp(a->jg, a->jg_len, b->jg, b->jg_len);
  if (!c) c = evr_rel_cmp(a->jsg, a->jsg_len, b->jsg, b->jsg_len);
  if (!c) c = (a->level < b->level) - (a->level > b->level);
  if (!c) c = (x->id > y->id) - (x->id < y->id);
  return c ? c : (a->line > b->line) - (a->line < b->line);
}

static int same_group(const struct rel_line *a, const struct rel_line *b) {
  return !evr_rel_cmp(a->jg, a->jg_len, b->jg, b->jg_len);
}

static int same_subgroup(const struct rel_line *a, const struct rel_line *b) {
  return same_group(a, b) && !evr_rel_cmp(a->jsg, a->jsg_len, b->jsg, b->jsg_len);
}

/* A preference of document i over document j. */
static void classify(size_t i, size_t j, size_t njr, struct counts *c) {
  if (i < j) {
    if (j < njr) c->ful_ret++;
    else if (i < njr) c->ful_imp++;
    else c->notoccur++;
  } else {
    if (i < njr) c->poss_ret++;
    else if (j < njr) c->poss_imp++;
    else c->notoccur++;
  }
}

/* The recount of the Rnonrel measures: a preference of i over j is
 * fulfilled when i is retrieved and numbered lower. */
static void recount(size_t i, size_t j, size_t njr, long *ful, long *poss) {
  if (i < j && i < njr) ++*ful;
  else ++*poss;
}

static int twice(struct pq *x, const struct rel_line *a, const struct rel_line *b, const char *problem) {
  if (a->line > b->line) {
    const struct rel_line *t = a;
    a = b, b = t;
  }
  evr_error_set(x->err, "%s:%zu: document '%.*s' %s in group '%.*s' of query '%.*s' (first at line %zu)", x->q->path,
                b->line, clip(b->doc_len), b->doc, problem, clip(b->jg_len), b->jg, clip(b->qid_len), b->qid,
                a->line);
  return -1;
}

/* ---- a group of one subgroup: classes of equal level ----------------------- */

/* Lines x->p[at, at + n) of one level, by document number. */
struct ec {
  size_t at, n;
};

static int ec_pairs(struct pq *x, const struct ec *hi, const struct ec *lo, struct counts *c) {
  for (size_t a = hi->at; a < hi->at + hi->n; a++)
    for (size_t b = lo->at; b < lo->at + lo->n; b++) {
      size_t i = x->p[a].id, j = x->p[b].id;
      if (x->pc) x->pc[i * x->nj + j]++;
      if (i == j) return twice(x, x->p[a].l, x->p[b].l, "has two relevance levels");
      classify(i, j, x->njr, c);
    }
  return 0;
}

/* trec_eval's pairs of a recount; with ret, retrieved documents only. */
static void ec_recount_pairs(const struct pq *x, const struct ec *hi, const struct ec *lo, int ret, long *ful,
                             long *poss) {
  for (size_t a = hi->at; a < hi->at + hi->n && !(ret && x->p[a].id >= x->njr); a++)
    for (size_t b = lo->at; b < lo->at + lo->n && !(ret && x->p[b].id >= x->njr); b++)
      recount(x->p[a].id, x->p[b].id, x->njr, ful, poss);
}

/* trec_eval's recount for a group with more non-relevant lines than
 * relevant ones: the lowest class keeps its first keep lines, and is
 * paired with every class, itself included, as trec_eval pairs it. When
 * the lowest class has fewer lines than that (a level below 0 beside 0),
 * trec_eval reads past them into memory it does not own; the lines there
 * are take part. */
static void ec_recount(const struct pq *x, const struct ec *ec, size_t ne, long keep, int ret, long *ful,
                       long *poss) {
  struct ec low = {ec[ne - 1].at, (size_t)keep < ec[ne - 1].n ? (size_t)keep : ec[ne - 1].n};
  *ful = *poss = 0;
  for (size_t e1 = 0; e1 < ne; e1++) {
    for (size_t e2 = e1 + 1; e2 + 1 < ne; e2++) ec_recount_pairs(x, &ec[e1], &ec[e2], ret, ful, poss);
    ec_recount_pairs(x, &ec[e1], &low, ret, ful, poss);
  }
  *poss += *ful;
}

static int ec_group(struct pq *x, size_t a, size_t b, struct counts *c) {
  struct ec *ec = malloc((b - a) * sizeof *ec);
  size_t ne = 0;
  if (!ec) return oom(x);
  for (size_t k = a; k < b; k++) {
    if (k == a || x->p[k].l->level != x->p[k - 1].l->level) ec[ne++] = (struct ec){k, 0};
    ec[ne - 1].n++;
  }
  for (size_t e1 = 0; e1 < ne; e1++) {
    long ret = 0;
    while ((size_t)ret < ec[e1].n && x->p[ec[e1].at + (size_t)ret].id < x->njr) ret++;
    if (x->p[ec[e1].at].l->level > 0) c->rel_ret += ret, c->rel += (long)ec[e1].n;
    else c->nonrel_ret += ret, c->nonrel += (long)ec[e1].n;
    for (size_t e2 = e1 + 1; e2 < ne; e2++)
      if (ec_pairs(x, &ec[e1], &ec[e2], c)) return free(ec), -1;
  }
  c->poss_ret += c->ful_ret, c->poss_imp += c->ful_imp;
  if (c->nonrel > c->rel) ec_recount(x, ec, ne, c->rel, 0, &c->rn_ful, &c->rn_poss);
  if (c->nonrel_ret > c->rel_ret) ec_recount(x, ec, ne, c->rel_ret, 1, &c->rnr_ful, &c->rnr_poss);
  free(ec);
  return 0;
}

/* ---- a group of several subgroups: a preference matrix ---------------------- */

struct pa {
  size_t m, w;         /* the group's documents; 64-bit words per row */
  size_t *doc;         /* their numbers, ascending */
  size_t *loc;         /* per line of the group: its document's place in doc */
  const struct rel_line **last; /* per document: its last line in the group's order */
  uint64_t *bits;      /* m x m: bit j of row i when i is preferred to j */
};

/* A document's class is its last line's level (trec_eval's rel_array). */
static int relevant(const struct pa *pa, size_t u) { return pa->last[u]->level > 0; }
static int nonrelevant(const struct pa *pa, size_t u) { return pa->last[u]->level == 0; }

static int has(const struct pa *pa, size_t i, size_t j) {
  return (int)(pa->bits[i * pa->w + j / 64] >> (j % 64) & 1);
}

static size_t place(const struct pa *pa, size_t id) {
  size_t lo = 0, hi = pa->m;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pa->doc[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int cmp_size(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  return (a > b) - (a < b);
}

static void pa_free(struct pa *pa) { free(pa->doc), free(pa->loc), free(pa->last), free(pa->bits); }

static int pa_docs(struct pq *x, size_t a, size_t b, struct pa *pa) {
  size_t n = b - a, m = 0;
  if (!(pa->doc = malloc(n * sizeof *pa->doc)) || !(pa->loc = malloc(n * sizeof *pa->loc))) return oom(x);
  for (size_t k = 0; k < n; k++) pa->doc[k] = x->p[a + k].id;
  qsort(pa->doc, n, sizeof *pa->doc, cmp_size);
  for (size_t k = 0; k < n; k++)
    if (!m || pa->doc[m - 1] != pa->doc[k]) pa->doc[m++] = pa->doc[k];
  pa->m = m, pa->w = (m + 63) / 64;
  for (size_t k = 0; k < n; k++) pa->loc[k] = place(pa, x->p[a + k].id);
  pa->last = calloc(m, sizeof *pa->last);
  pa->bits = calloc(m * pa->w, sizeof *pa->bits);
  return pa->last && pa->bits ? 0 : oom(x);
}

/* Each document's class, from its lines in the group's order: a level 0
 * right after one above 0, or the reverse, is an error (trec_eval checks
 * each line against the document's level so far). */
static int pa_levels(struct pq *x, size_t a, size_t b, struct pa *pa) {
  for (size_t k = a; k < b; k++) {
    const struct rel_line *l = x->p[k].l, **last = &pa->last[pa->loc[k - a]];
    if (*last && (((*last)->level > 0 && l->level == 0) || ((*last)->level == 0 && l->level > 0)))
      return twice(x, *last, l, "is judged both 0 and above 0");
    *last = l;
  }
  return 0;
}

/* Within each subgroup, every line over every line of a lower level. */
static void pa_prefs(const struct pq *x, size_t a, size_t b, struct pa *pa) {
  for (size_t s = a, e; s < b; s = e) {
    for (e = s + 1; e < b && same_subgroup(x->p[e].l, x->p[s].l); e++) {}
    for (size_t i = s; i < e; i++) {
      size_t j = i + 1, u = pa->loc[i - a];
      while (j < e && x->p[j].l->level == x->p[i].l->level) j++;
      for (; j < e; j++) {
        size_t v = pa->loc[j - a];
        pa->bits[u * pa->w + v / 64] |= (uint64_t)1 << (v % 64);
      }
    }
  }
}

/* The transitive closure (Warshall's), without a document over itself. */
static void pa_close(struct pa *pa) {
  for (size_t k = 0; k < pa->m; k++)
    for (size_t i = 0; i < pa->m; i++)
      if (has(pa, i, k))
        for (size_t t = 0; t < pa->w; t++) pa->bits[i * pa->w + t] |= pa->bits[k * pa->w + t];
  for (size_t i = 0; i < pa->m; i++) pa->bits[i * pa->w + i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* Two documents each preferred to the other: an error naming the last
 * line of the group that gives either. */
static int pa_conflict(struct pq *x, size_t a, size_t b, const struct pa *pa) {
  for (size_t i = 0; i < pa->m; i++)
    for (size_t j = i + 1; j < pa->m; j++) {
      if (!has(pa, i, j) || !has(pa, j, i)) continue;
      const struct rel_line *di = pa->last[i], *dj = pa->last[j], *l = di;
      for (size_t k = a; k < b; k++)
        if ((pa->loc[k - a] == i || pa->loc[k - a] == j) && x->p[k].l->line > l->line) l = x->p[k].l;
      evr_error_set(x->err,
                    "%s:%zu: the preferences of group '%.*s' of query '%.*s' contradict each other: "
                    "'%.*s' and '%.*s' are each preferred to the other",
                    x->q->path, l->line, clip(l->jg_len), l->jg, clip(l->qid_len), l->qid, clip(di->doc_len), di->doc,
                    clip(dj->doc_len), dj->doc);
      return -1;
    }
  return 0;
}

static void pa_count(struct pq *x, const struct pa *pa, struct counts *c) {
  for (size_t u = 0; u < pa->m; u++) {
    long ret = pa->doc[u] < x->njr;
    if (relevant(pa, u)) c->rel++, c->rel_ret += ret;
    else if (nonrelevant(pa, u)) c->nonrel++, c->nonrel_ret += ret;
  }
  for (size_t u = 0; u < pa->m; u++)
    for (size_t v = 0; v < pa->m; v++) {
      if (!has(pa, u, v)) continue;
      if (x->pc) x->pc[pa->doc[u] * x->nj + pa->doc[v]]++;
      classify(pa->doc[u], pa->doc[v], x->njr, c);
    }
  c->poss_ret += c->ful_ret, c->poss_imp += c->ful_imp;
}

/* trec_eval's recount for a group with more non-relevant documents than
 * relevant ones: non-relevant documents numbered from the (rel + 1)-th
 * one on (among the retrieved, with ret) are left out. */
static void pa_recount(const struct pq *x, const struct pa *pa, long rel, int ret, long *ful, long *poss) {
  size_t cut = ret ? x->njr : x->nj;
  long seen = 0;
  for (size_t u = 0; u < pa->m && !(ret && pa->doc[u] >= x->njr); u++)
    if (nonrelevant(pa, u) && ++seen == rel + 1) {
      cut = pa->doc[u];
      break;
    }
  *ful = *poss = 0;
  for (size_t u = 0; u < pa->m; u++)
    for (size_t v = 0; v < pa->m; v++) {
      size_t i = pa->doc[u], j = pa->doc[v];
      if (!has(pa, u, v) || (nonrelevant(pa, u) && i >= cut) || (nonrelevant(pa, v) && j >= cut)) continue;
      if (!ret || (i < x->njr && j < x->njr)) recount(i, j, x->njr, ful, poss);
    }
  *poss += *ful;
}

static int pa_group(struct pq *x, size_t a, size_t b, struct counts *c) {
  struct pa pa = {0, 0, NULL, NULL, NULL, NULL};
  int r = pa_docs(x, a, b, &pa) || pa_levels(x, a, b, &pa) ? -1 : 0;
  if (!r) pa_prefs(x, a, b, &pa), pa_close(&pa), r = pa_conflict(x, a, b, &pa);
  if (!r) {
    pa_count(x, &pa, c);
    if (c->nonrel > c->rel) pa_recount(x, &pa, c->rel, 0, &c->rn_ful, &c->rn_poss);
    if (c->nonrel_ret > c->rel_ret) pa_recount(x, &pa, c->rel, 1, &c->rnr_ful, &c->rnr_poss);
  }
  pa_free(&pa);
  return r;
}

/* ---- the query ----------------------------------------------------------------- */

/* The counts of every group, in order of their names. */
static int count_groups(struct pq *x) {
  size_t n = x->q->n;
  if (!(x->g = calloc(n, sizeof *x->g))) return oom(x);
  for (size_t a = 0, b; a < n; a = b) {
    size_t subgroups = 1;
    for (b = a + 1; b < n && same_group(x->p[b].l, x->p[a].l); b++)
      subgroups += !same_subgroup(x->p[b].l, x->p[b - 1].l);
    struct counts *c = &x->g[x->ng++];
    if (subgroups > 1 ? pa_group(x, a, b, c) : ec_group(x, a, b, c)) return -1;
  }
  return 0;
}

/* f / p where trec_eval divides 0 by 0 (p is 0 only when f is): the NaN
 * keeps the group's sum from being above 0, so the query's value is 0. */
static double ratio_or_nan(long f, long p) { return p ? (double)f / (double)p : NAN; }

/* prefs_avgjg_Rnonrel: as if the group had as many non-relevant documents
 * as relevant ones (its recount when it has more). */
static double rnonrel(const struct counts *c) {
  long r = c->rel, n = c->nonrel;
  if (r < n) return ratio_or_nan(c->rn_ful, c->rn_poss);
  return ratio_or_nan(c->ful_ret + c->ful_imp + c->rel_ret * (r - n),
                      c->poss_ret + c->poss_imp + c->notoccur + c->rel * (r - n));
}

/* prefs_avgjg_Rnonrel_ret: the same among the retrieved (trec_eval's
 * denominator counts all relevant documents). */
static double rnonrel_ret(const struct counts *c) {
  long r = c->rel_ret, n = c->nonrel_ret;
  if (r < n) return ratio_or_nan(c->rnr_ful, c->rnr_poss);
  return ratio_or_nan(c->ful_ret + c->rel_ret * (r - n), c->poss_ret + c->rel * (r - n));
}

/* The mean over groups of a group's fraction fulfilled; 0 unless the sum
 * is above 0. */
static double avgjg(const struct pq *x, enum evr_kind kind) {
  double sum = 0.0;
  for (size_t k = 0; k < x->ng; k++) {
    const struct counts *c = &x->g[k];
    long f = c->ful_ret, p = c->poss_ret;
    if (kind == EVR_PREFS_AVGJG_RNONREL) sum += rnonrel(c);
    else if (kind == EVR_PREFS_AVGJG_RNONREL_RET) sum += rnonrel_ret(c);
    else {
      if (kind != EVR_PREFS_AVGJG_RET) f += c->ful_imp, p += c->poss_imp;
      if (kind == EVR_PREFS_AVGJG) p += c->notoccur;
      if (p) sum += (double)f / (double)p;
    }
  }
  return sum > 0.0 ? sum / (double)x->ng : 0.0;
}

/* Over document pairs with a preference either way: the mean fraction of
 * groups agreeing with the ranking. Pairs of two unretrieved documents
 * count (as 0) for prefs_pair only; pair_ret takes both retrieved. */
static double pairs(const struct pq *x, enum evr_kind kind) {
  const uint16_t *c = x->pc;
  size_t nj = x->nj, njr = x->njr, ends[2] = {njr, kind == EVR_PREFS_PAIR_RET ? njr : nj};
  long n = 0;
  double sum = 0.0;
  for (int part = 0; part < 2; part++)
    for (size_t i = 0; i < njr; i++)
      for (size_t j = part ? njr : i + 1; j < ends[part]; j++)
        if (c[i * nj + j] || c[j * nj + i])
          n++, sum += (double)c[i * nj + j] / (double)(c[i * nj + j] + c[j * nj + i]);
  for (size_t i = njr; kind == EVR_PREFS_PAIR && i < nj; i++)
    for (size_t j = i + 1; j < nj; j++) n += c[i * nj + j] || c[j * nj + i];
  return n ? sum / (double)n : 0.0;
}

/* Preferences over all groups, fulfilled (f) and possible (p): those of
 * two retrieved documents, plus with imp the implied ones, plus with
 * notoccur those of two unretrieved documents (never fulfilled). */
static void totals(const struct pq *x, int imp, int notoccur, long *f, long *p) {
  *f = *p = 0;
  for (size_t k = 0; k < x->ng; k++) {
    const struct counts *c = &x->g[k];
    *f += c->ful_ret + (imp ? c->ful_imp : 0);
    *p += c->poss_ret + (imp ? c->poss_imp : 0) + (notoccur ? c->notoccur : 0);
  }
}

static double fraction(const struct pq *x, int imp, int notoccur) {
  long f, p;
  totals(x, imp, notoccur, &f, &p);
  return p ? (double)f / (double)p : 0.0;
}

static double count(const struct pq *x, int imp, int possible) {
  long f, p;
  totals(x, imp, 1, &f, &p);
  return (double)(possible ? p : f);
}

static double value(const struct pq *x, enum evr_kind kind) {
  switch (kind) {
  case EVR_PREFS_NUM_PREFS_POSS: return count(x, 1, 1);
  case EVR_PREFS_NUM_PREFS_FUL: return count(x, 1, 0);
  case EVR_PREFS_NUM_PREFS_FUL_RET: return count(x, 0, 0);
  case EVR_PREFS_SIMP: return fraction(x, 1, 1);
  case EVR_PREFS_SIMP_RET: return fraction(x, 0, 0);
  case EVR_PREFS_SIMP_IMP: return fraction(x, 1, 0);
  case EVR_PREFS_PAIR: case EVR_PREFS_PAIR_RET: case EVR_PREFS_PAIR_IMP: return pairs(x, kind);
  case EVR_PREFS_AVGJG: case EVR_PREFS_AVGJG_RNONREL: case EVR_PREFS_AVGJG_RET: case EVR_PREFS_AVGJG_RNONREL_RET:
  case EVR_PREFS_AVGJG_IMP: return avgjg(x, kind);
  default: return NAN;
  }
}

static int wants_pairs(const struct evr_column *cols, size_t nc) {
  for (size_t c = 0; c < nc; c++)
    if (cols[c].kind == EVR_PREFS_PAIR || cols[c].kind == EVR_PREFS_PAIR_RET || cols[c].kind == EVR_PREFS_PAIR_IMP)
      return 1;
  return 0;
}

int evr_prefs_query(const struct rel_query *q, const struct evr_column *cols, size_t nc, double *out,
                    struct evr_error *err) {
  struct pq x = {q, malloc((q->n + 1) * sizeof *x.p), 0, 0, NULL, NULL, 0, err};
  int r = x.p ? number_docs(&x) : oom(&x);
  if (!r) qsort(x.p, q->n, sizeof *x.p, by_group);
  if (!r && wants_pairs(cols, nc) && !(x.pc = calloc(x.nj * x.nj + 1, sizeof *x.pc))) r = oom(&x);
  if (!r) r = count_groups(&x);
  for (size_t c = 0; !r && c < nc; c++) out[c] = value(&x, cols[c].kind);
  free(x.p), free(x.pc), free(x.g);
  return r;
}
