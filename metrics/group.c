/* Grouped statistics and bottom-k over score columns (group.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/group.h"
#include "evalua/stats.h"

/* Rows ordered by group: rows of group g are idx[start[g] .. start[g + 1]),
 * and only groups with rows exist. Group keys are system * nvalues + value,
 * in increasing order. */
struct grouping {
  size_t ngroups;
  size_t *idx, *start;
  uint64_t *key;
};

static uint64_t key_of(const uint32_t *sys, const struct evg_dim *d, size_t i) {
  return (uint64_t)sys[i] * d->nvalues + (d->code ? d->code[i] : 0);
}

static void grouping_free(struct grouping *g) { free(g->idx), free(g->start), free(g->key); }

/* A counting sort when the keys are few next to the rows. */
static int group_dense(size_t n, const uint32_t *sys, const struct evg_dim *d, size_t nkeys, struct grouping *g) {
  size_t *count = calloc(nkeys + 1, sizeof *count);
  g->idx = malloc((n ? n : 1) * sizeof *g->idx);
  if (!count || !g->idx) return free(count), -1;
  for (size_t i = 0; i < n; i++) count[key_of(sys, d, i) + 1]++;
  size_t ng = 0;
  for (size_t k = 0; k < nkeys; k++) ng += count[k + 1] > 0;
  g->start = malloc((ng + 1) * sizeof *g->start), g->key = malloc((ng + 1) * sizeof *g->key);
  if (!g->start || !g->key) return free(count), -1;
  ng = 0;
  g->start[0] = 0;
  for (size_t k = 0; k < nkeys; k++) {
    size_t c = count[k + 1];
    count[k + 1] = count[k] + c; /* count[k]: where key k's rows start */
    if (c) g->key[ng] = k, g->start[ng + 1] = count[k + 1], ng++;
  }
  for (size_t i = 0; i < n; i++) g->idx[count[key_of(sys, d, i)]++] = i;
  g->ngroups = ng;
  free(count);
  return 0;
}

struct keyed { uint64_t key; size_t row; };

static int keyed_cmp(const void *a, const void *b) {
  const struct keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

/* A sort when there are far more possible keys than rows (many systems
 * times many slice values): only groups that have rows cost anything. */
static int group_sparse(size_t n, const uint32_t *sys, const struct evg_dim *d, struct grouping *g) {
  struct keyed *k = malloc((n ? n : 1) * sizeof *k);
  g->idx = malloc((n ? n : 1) * sizeof *g->idx);
  g->start = malloc((n + 1) * sizeof *g->start), g->key = malloc((n + 1) * sizeof *g->key);
  if (!k || !g->idx || !g->start || !g->key) return free(k), -1;
  for (size_t i = 0; i < n; i++) k[i].key = key_of(sys, d, i), k[i].row = i;
  qsort(k, n, sizeof *k, keyed_cmp);
  size_t ng = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || k[i].key != k[i - 1].key) g->key[ng] = k[i].key, g->start[ng++] = i;
    g->idx[i] = k[i].row;
  }
  g->start[ng] = n;
  g->ngroups = ng;
  free(k);
  return 0;
}

static int group_rows(size_t n, const uint32_t *sys, size_t nsys, const struct evg_dim *d, struct grouping *g) {
  memset(g, 0, sizeof *g);
  size_t nkeys = nsys * d->nvalues;
  int rc = nkeys <= 4 * n + 1024 ? group_dense(n, sys, d, nkeys, g) : group_sparse(n, sys, d, g);
  if (rc) grouping_free(g);
  return rc;
}

static int size_cmp(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

static void sort_sizes(size_t *s, size_t n) { qsort(s, n, sizeof *s, size_cmp); }

/* 1 when every measured value of metric j in the run lies in [0, 1]: its
 * groups get the intervals of bounded scores. */
static int metric_bounded(const struct evg_scores *sc, size_t j) {
  for (size_t i = 0; i < sc->n; i++)
    if (!sc->miss[j][i] && !(sc->val[j][i] >= 0 && sc->val[j][i] <= 1)) return 0;
  return 1;
}

/* The measured values of metric j over rows idx[0..n), in row order. */
static size_t measured_values(const struct evg_scores *sc, size_t j, const size_t *idx, size_t n, double *buf) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!sc->miss[j][idx[i]]) buf[k++] = sc->val[j][idx[i]];
  return k;
}

/* Plain statistics of metric j over rows idx[0..n) and, when ci is on, its
 * interval where no resampling is needed; buf has room for n. A group
 * whose interval needs the bootstrap is left with method BOOTSTRAP_T. */
static void describe(const struct evg_scores *sc, size_t j, int bounded, const size_t *idx, size_t n,
                     const struct evg_ci *ci, double *buf, struct evg_stat *st) {
  size_t k = measured_values(sc, j, idx, n, buf);
  evstats_summary s;
  evstats_summarize(buf, k, bounded, &s);
  memset(st, 0, sizeof *st);
  st->n = n, st->measured = k;
  if (!k) return;
  st->mean = s.mean, st->sd = s.sd, st->min = s.min, st->max = s.max;
  st->lo = st->hi = st->mean;
  if (!ci->on) return;
  evstats_ci c;
  st->method = (uint8_t)evstats_mean_ci_summary(&s, ci->level, &c);
  st->lo = c.lo, st->hi = c.hi;
}

/* Scratch memory of one thread's bootstraps, kept across groups. */
struct boot_mem {
  double *pack, *tstar, *sum, *sumsq, *se0, *vals, *dev;
  size_t *cnt, *got, *which;
  size_t cap_rows;
};

static void boot_mem_free(struct boot_mem *b) {
  free(b->pack), free(b->tstar), free(b->sum), free(b->sumsq), free(b->se0), free(b->vals), free(b->dev);
  free(b->cnt), free(b->got), free(b->which);
  memset(b, 0, sizeof *b);
}

static int grow(double **p, size_t n) {
  double *q = realloc(*p, n * sizeof *q);
  if (!q) return -1;
  *p = q;
  return 0;
}

static int boot_mem_fit(struct boot_mem *b, size_t n, size_t m, size_t R) {
  if (!b->tstar) {
    b->tstar = malloc(R * m * sizeof *b->tstar), b->sum = malloc(m * sizeof *b->sum);
    b->sumsq = malloc(m * sizeof *b->sumsq), b->se0 = malloc(m * sizeof *b->se0);
    b->cnt = malloc(m * sizeof *b->cnt), b->got = malloc(m * sizeof *b->got);
    b->which = malloc(m * sizeof *b->which);
    if (!b->tstar || !b->sum || !b->sumsq || !b->se0 || !b->cnt || !b->got || !b->which) return -1;
  }
  if (n > b->cap_rows) {
    if (grow(&b->pack, n * m) || grow(&b->vals, n) || grow(&b->dev, n)) return -1;
    b->cap_rows = n;
  }
  return 0;
}

/* Packs the scaled deviations (evstats_bootstrap_t_prepare) of the w
 * metrics that resample, row by row; NaN where a row is unmeasured. */
static void pack_deviations(const struct evg_scores *sc, const size_t *idx, size_t n, const struct evg_stat *st,
                            struct boot_mem *b, size_t w) {
  for (size_t jj = 0; jj < w; jj++) {
    size_t j = b->which[jj], k = measured_values(sc, j, idx, n, b->vals);
    b->se0[jj] = evstats_bootstrap_t_prepare(b->vals, k, st[j].mean, b->dev);
    for (size_t i = 0, t = 0; i < n; i++) b->pack[i * w + jj] = sc->miss[j][idx[i]] ? NAN : b->dev[t++];
  }
}

/* One studentized bootstrap shared by the metrics of a group that need it:
 * each resample draws n rows; a metric's t* is over the drawn rows it
 * measured. With every row measured this is exactly evstats_mean_ci. */
static int bootstrap(const struct evg_scores *sc, const size_t *idx, size_t n, const struct evg_ci *ci,
                     struct evg_stat *st, struct boot_mem *b) {
  size_t m = sc->m, R = ci->resamples, w = 0;
  if (boot_mem_fit(b, n, m, R)) return -1;
  int full = 1; /* every row measured: no count to keep per draw */
  for (size_t j = 0; j < m; j++)
    if (st[j].method == EVSTATS_CI_BOOTSTRAP_T) b->which[w++] = j, full &= st[j].measured == n;
  pack_deviations(sc, idx, n, st, b, w);
  double *pack = b->pack, *sum = b->sum, *sumsq = b->sumsq;
  size_t *cnt = b->cnt;
  memset(b->got, 0, w * sizeof *b->got);
  evstats_rng rng;
  evstats_rng_seed(&rng, ci->seed);
  for (size_t r = 0; r < R; r++) {
    memset(sum, 0, w * sizeof *sum), memset(sumsq, 0, w * sizeof *sumsq), memset(cnt, 0, w * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
      const double *row = pack + evstats_rng_below(&rng, n) * w;
      for (size_t jj = 0; jj < w; jj++)
        if (full || row[jj] == row[jj]) sum[jj] += row[jj], sumsq[jj] += row[jj] * row[jj], cnt[jj]++;
    }
    for (size_t jj = 0; jj < w; jj++)
      if (cnt[jj]) b->tstar[jj * R + b->got[jj]++] = evstats_studentized(sum[jj], sumsq[jj], cnt[jj], b->se0[jj]);
  }
  for (size_t jj = 0; jj < w; jj++) {
    struct evg_stat *t = &st[b->which[jj]];
    evstats_ci c;
    evstats_bootstrap_t_bounds(b->tstar + jj * R, b->got[jj], t->mean, t->sd / sqrt((double)t->measured),
                               ci->level, &c);
    t->lo = c.lo, t->hi = c.hi;
  }
  return 0;
}

static int needs_bootstrap(const struct evg_stat *st, size_t m) {
  for (size_t j = 0; j < m; j++)
    if (st[j].method == EVSTATS_CI_BOOTSTRAP_T) return 1;
  return 0;
}

/* The largest group size whose groups that need the bootstrap (and all
 * smaller ones) can be bootstrapped within the budget. */
static size_t boot_limit(const size_t *start, const struct evg_stat *stat, size_t m, size_t ngroups,
                         const struct evg_ci *ci) {
  size_t *sizes = malloc((ngroups ? ngroups : 1) * sizeof *sizes), k = 0;
  if (!sizes) return 0;
  for (size_t g = 0; g < ngroups; g++)
    if (needs_bootstrap(stat + g * m, m)) sizes[k++] = start[g + 1] - start[g];
  sort_sizes(sizes, k);
  double spent = 0;
  size_t limit = 1;
  for (size_t i = 0; i < k && sizes[i] <= ci->bootstrap_max; i++) {
    /* groups of equal size go in together or not at all */
    size_t j = i;
    double cost = 0;
    while (j < k && sizes[j] == sizes[i]) cost += (double)sizes[j++] * (double)ci->resamples;
    if (spent + cost > ci->draw_budget) break;
    spent += cost, limit = sizes[i], i = j - 1;
  }
  free(sizes);
  return limit;
}

/* Groups past the limit settle for Student's t interval. */
static void student_t_beyond(const struct grouping *g, struct evg_stat *stat, size_t m, size_t limit,
                             const struct evg_ci *ci) {
  for (size_t k = 0; k < g->ngroups; k++) {
    if (g->start[k + 1] - g->start[k] <= limit) continue;
    for (size_t j = 0; j < m; j++) {
      struct evg_stat *st = &stat[k * m + j];
      if (st->method != EVSTATS_CI_BOOTSTRAP_T) continue;
      evstats_summary s = {st->measured, st->mean, st->sd, st->min, st->max, 0, 0};
      evstats_ci c;
      evstats_student_t_ci(&s, ci->level, &c);
      st->lo = c.lo, st->hi = c.hi, st->method = EVSTATS_CI_STUDENT_T;
    }
  }
}

struct boot_job {
  const struct evg_scores *sc;
  const size_t *idx, *start;
  size_t g0, g1, limit;
  const struct evg_ci *ci;
  struct evg_stat *out;
  int rc;
};

static void boot_groups(void *p) {
  struct boot_job *b = p;
  struct boot_mem mem = {0};
  for (size_t g = b->g0; g < b->g1 && !b->rc; g++) {
    size_t n = b->start[g + 1] - b->start[g];
    struct evg_stat *st = b->out + g * b->sc->m;
    if (n <= b->limit && needs_bootstrap(st, b->sc->m))
      b->rc = bootstrap(b->sc, b->idx + b->start[g], n, b->ci, st, &mem);
  }
  boot_mem_free(&mem);
}

/* The bootstrap of the groups that need it, on two threads: the groups
 * split in two runs of about equal draws. */
static int boot_all(const struct evg_scores *sc, const struct grouping *g, size_t limit, const struct evg_ci *ci,
                    struct evg_stat *stat) {
  size_t total = 0, half = 0, mid = 0, m = sc->m;
  for (size_t k = 0; k < g->ngroups; k++) {
    size_t n = g->start[k + 1] - g->start[k];
    total += n <= limit && needs_bootstrap(stat + k * m, m) ? n : 0;
  }
  if (!total) return 0;
  while (mid < g->ngroups && 2 * half < total) {
    size_t n = g->start[mid + 1] - g->start[mid];
    half += n <= limit && needs_bootstrap(stat + mid * m, m) ? n : 0, mid++;
  }
  struct boot_job jobs[2] = {{sc, g->idx, g->start, 0, mid, limit, ci, stat, 0},
                             {sc, g->idx, g->start, mid, g->ngroups, limit, ci, stat, 0}};
  if (ci->parallel) ci->parallel(boot_groups, (void *[]){&jobs[0], &jobs[1]});
  else boot_groups(&jobs[0]), boot_groups(&jobs[1]);
  return jobs[0].rc || jobs[1].rc ? -1 : 0;
}

/* describe() of the (group, metric) pairs [p0, p1), pair k * m + j being
 * metric j of group k; buf has room for the largest group's rows. */
struct describe_job {
  const struct evg_scores *sc;
  const struct grouping *g;
  const int *bounded;
  const struct evg_ci *ci;
  struct evg_stat *out;
  size_t p0, p1;
  double *buf;
};

static void describe_pairs(void *p) {
  const struct describe_job *d = p;
  size_t m = d->sc->m;
  for (size_t q = d->p0; q < d->p1; q++) {
    size_t k = q / m, j = q % m, first = d->g->start[k];
    describe(d->sc, j, d->bounded[j], d->g->idx + first, d->g->start[k + 1] - first, d->ci, d->buf, &d->out[q]);
  }
}

/* Below this many values the second thread costs more than it saves. */
#define DESCRIBE_SPLIT 65536

/* Every pair described, on two threads when there are many values: the
 * pairs split where about half the values have been read (a pair costs its
 * group's rows). The gathers by group were a fifth of the evaluate phase,
 * on one thread. */
static int describe_all(const struct evg_scores *sc, const struct grouping *g, const int *bounded,
                        const struct evg_ci *ci, struct evg_stat *stat) {
  size_t m = sc->m, pairs = g->ngroups * m, mid = 0, done = 0;
  double *buf = malloc((sc->n ? sc->n : 1) * sizeof *buf), *buf2 = NULL;
  if (!buf) return -1;
  struct describe_job jobs[2] = {{sc, g, bounded, ci, stat, 0, pairs, buf}, {sc, g, bounded, ci, stat, pairs, pairs, NULL}};
  if (ci->parallel && sc->n * m >= DESCRIBE_SPLIT && (buf2 = malloc(sc->n * sizeof *buf2))) {
    while (mid < pairs && 2 * done < sc->n * m) done += g->start[mid / m + 1] - g->start[mid / m], mid++;
    jobs[0].p1 = jobs[1].p0 = mid, jobs[1].buf = buf2;
    ci->parallel(describe_pairs, (void *[]){&jobs[0], &jobs[1]});
  } else {
    describe_pairs(&jobs[0]);
  }
  free(buf), free(buf2);
  return 0;
}

int evg_aggregate(const struct evg_scores *sc, const uint32_t *sys, size_t nsys, const struct evg_dim *dim,
                  const struct evg_ci *ci, struct evg_result *res) {
  memset(res, 0, sizeof *res);
  struct grouping g;
  if (group_rows(sc->n, sys, nsys, dim, &g)) return -1;
  size_t ng = g.ngroups, m = sc->m;
  int *bounded = malloc((m ? m : 1) * sizeof *bounded);
  res->stat = calloc(ng * m + 1, sizeof *res->stat);
  res->sys = malloc((ng + 1) * sizeof *res->sys), res->value = malloc((ng + 1) * sizeof *res->value);
  if (!bounded || !res->stat || !res->sys || !res->value)
    return free(bounded), grouping_free(&g), evg_result_free(res), -1;
  res->ngroups = ng;
  for (size_t j = 0; j < m; j++) bounded[j] = metric_bounded(sc, j);
  for (size_t k = 0; k < ng; k++)
    res->sys[k] = (uint32_t)(g.key[k] / dim->nvalues), res->value[k] = (uint32_t)(g.key[k] % dim->nvalues);
  int rc = describe_all(sc, &g, bounded, ci, res->stat);
  free(bounded);
  if (rc) return grouping_free(&g), evg_result_free(res), -1;
  if (ci->on) {
    size_t limit = boot_limit(g.start, res->stat, m, ng, ci);
    student_t_beyond(&g, res->stat, m, limit, ci);
    rc = boot_all(sc, &g, limit, ci, res->stat);
  }
  grouping_free(&g);
  if (rc) return evg_result_free(res), -1;
  return 0;
}

void evg_result_free(struct evg_result *r) {
  free(r->stat), free(r->sys), free(r->value);
  memset(r, 0, sizeof *r);
}

/* (value, row) ordering of bottom-k: 1 when a is worse than b. */
static int worse(double va, size_t a, double vb, size_t b, int lower_is_better) {
  if (va != vb) return lower_is_better ? va > vb : va < vb;
  return a < b;
}

static void sift_down(size_t *h, size_t n, size_t i, const double *v, int lib) {
  for (;;) {
    size_t l = 2 * i + 1, big = i;
    /* a max-heap of "least worse" at the top: the first to be replaced */
    if (l < n && worse(v[h[big]], h[big], v[h[l]], h[l], lib)) big = l;
    if (l + 1 < n && worse(v[h[big]], h[big], v[h[l + 1]], h[l + 1], lib)) big = l + 1;
    if (big == i) return;
    size_t t = h[i]; h[i] = h[big]; h[big] = t;
    i = big;
  }
}

static void sift_up(size_t *h, size_t i, const double *v, int lib) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!worse(v[h[p]], h[p], v[h[i]], h[i], lib)) return;
    size_t t = h[i]; h[i] = h[p]; h[p] = t;
    i = p;
  }
}

int evg_bottom(const struct evg_scores *sc, size_t j, const uint32_t *sys, size_t nsys, size_t k,
               int lower_is_better, size_t *out, size_t *count) {
  const double *v = sc->val[j];
  memset(count, 0, nsys * sizeof *count);
  if (k == 0) return 0;
  for (size_t i = 0; i < sc->n; i++) {
    if (sc->miss[j][i]) continue;
    size_t *h = out + (size_t)sys[i] * k, *c = &count[sys[i]];
    if (*c < k) {
      h[*c] = i;
      sift_up(h, (*c)++, v, lower_is_better);
    } else if (worse(v[i], i, v[h[0]], h[0], lower_is_better)) {
      h[0] = i;
      sift_down(h, k, 0, v, lower_is_better);
    }
  }
  for (size_t s = 0; s < nsys; s++) { /* heap -> worst first */
    size_t *h = out + s * k;
    for (size_t n = count[s]; n > 1; n--) {
      size_t t = h[0]; h[0] = h[n - 1]; h[n - 1] = t;
      sift_down(h, n - 1, 0, v, lower_is_better);
    }
  }
  return 0;
}
