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

/* Acklam's rational approximation of the standard normal quantile
 * (relative error below 1.2e-9), for the large-group interval. */
static double probit(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double q, r;
  if (p < 0.02425) {
    q = sqrt(-2 * log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - 0.02425) return -probit(1 - p);
  q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* Plain statistics of metric j over rows idx[0..n); buf has room for n. */
static void describe(const struct evg_scores *sc, size_t j, const size_t *idx, size_t n, double *buf,
                     struct evg_stat *st) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!sc->miss[j][idx[i]]) buf[k++] = sc->val[j][idx[i]];
  memset(st, 0, sizeof *st);
  st->n = n, st->measured = k;
  if (!k) return;
  st->mean = evstats_mean(buf, k);
  double var = 0;
  st->sd = evstats_sd(buf, k, 1, &var) == EVSTATS_OK ? var : 0;
  st->min = st->max = buf[0];
  for (size_t i = 1; i < k; i++) {
    if (buf[i] < st->min) st->min = buf[i];
    if (buf[i] > st->max) st->max = buf[i];
  }
  st->lo = st->hi = st->mean;
}

/* The normal interval of the bootstrap distribution of the mean: its
 * variance is the plug-in variance over n. */
static void normal_ci(const struct evg_ci *ci, struct evg_stat *st) {
  size_t k = st->measured;
  double half = probit((1 + ci->level) / 2) * st->sd * sqrt((double)(k - 1) / (double)k) / sqrt((double)k);
  st->lo = st->mean - half, st->hi = st->mean + half;
  st->normal = 1;
}

/* Scratch memory of one thread's bootstraps, kept across groups. */
struct boot_mem {
  double *pack, *means, *sum;
  size_t *cnt, *got;
  size_t cap_rows;
};

static void boot_mem_free(struct boot_mem *b) {
  free(b->pack), free(b->means), free(b->sum), free(b->cnt), free(b->got);
  memset(b, 0, sizeof *b);
}

static int boot_mem_fit(struct boot_mem *b, size_t n, size_t m, size_t R) {
  if (!b->means) {
    b->means = malloc(R * m * sizeof *b->means), b->sum = malloc(m * sizeof *b->sum);
    b->cnt = malloc(m * sizeof *b->cnt), b->got = malloc(m * sizeof *b->got);
    if (!b->means || !b->sum || !b->cnt || !b->got) return -1;
  }
  if (n > b->cap_rows) {
    double *p = realloc(b->pack, n * m * sizeof *p);
    if (!p) return -1;
    b->pack = p, b->cap_rows = n;
  }
  return 0;
}

/* One percentile bootstrap shared by all metrics of a group: each resample
 * draws n rows; a metric's resample mean is over the drawn rows it
 * measured. With every row measured this is exactly evstats_bootstrap_mean_ci. */
static int bootstrap(const struct evg_scores *sc, const size_t *idx, size_t n, const struct evg_ci *ci,
                     struct evg_stat *st, struct boot_mem *b) {
  size_t m = sc->m, R = ci->resamples;
  if (boot_mem_fit(b, n, m, R)) return -1;
  double *pack = b->pack, *means = b->means, *sum = b->sum;
  size_t *cnt = b->cnt, *got = b->got;
  memset(got, 0, m * sizeof *got);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < m; j++) pack[i * m + j] = sc->miss[j][idx[i]] ? NAN : sc->val[j][idx[i]];
  int full = 1; /* every row measured: no count to keep per draw */
  for (size_t j = 0; j < m; j++) full &= st[j].measured == n;
  evstats_rng rng;
  evstats_rng_seed(&rng, ci->seed);
  for (size_t r = 0; r < R; r++) {
    memset(sum, 0, m * sizeof *sum), memset(cnt, 0, m * sizeof *cnt);
    if (full) {
      for (size_t i = 0; i < n; i++) {
        const double *row = pack + evstats_rng_below(&rng, n) * m;
        for (size_t j = 0; j < m; j++) sum[j] += row[j];
      }
      for (size_t j = 0; j < m; j++) cnt[j] = n;
    } else {
      for (size_t i = 0; i < n; i++) {
        const double *row = pack + evstats_rng_below(&rng, n) * m;
        for (size_t j = 0; j < m; j++)
          if (row[j] == row[j]) sum[j] += row[j], cnt[j]++;
      }
    }
    for (size_t j = 0; j < m; j++)
      if (cnt[j]) means[j * R + got[j]++] = sum[j] / (double)cnt[j];
  }
  for (size_t j = 0; j < m; j++) {
    if (st[j].measured < 2 || !got[j]) continue;
    evstats_sort(means + j * R, got[j]);
    st[j].lo = evstats_quantile_sorted(means + j * R, got[j], (1 - ci->level) / 2);
    st[j].hi = evstats_quantile_sorted(means + j * R, got[j], (1 + ci->level) / 2);
  }
  return 0;
}

/* The largest group size whose groups (and all smaller ones) can be
 * bootstrapped within the budget. */
static size_t boot_limit(const size_t *start, size_t ngroups, const struct evg_ci *ci) {
  size_t *sizes = malloc((ngroups ? ngroups : 1) * sizeof *sizes), k = 0;
  if (!sizes) return 0;
  for (size_t g = 0; g < ngroups; g++)
    if (start[g + 1] - start[g] >= 2) sizes[k++] = start[g + 1] - start[g];
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
    int need = 0;
    for (size_t j = 0; j < b->sc->m; j++) need |= st[j].measured >= 2 && !st[j].normal;
    if (need && n <= b->limit) b->rc = bootstrap(b->sc, b->idx + b->start[g], n, b->ci, st, &mem);
  }
  boot_mem_free(&mem);
}

int evg_aggregate(const struct evg_scores *sc, const uint32_t *sys, size_t nsys, const struct evg_dim *dim,
                  const struct evg_ci *ci, struct evg_result *res) {
  memset(res, 0, sizeof *res);
  struct grouping g;
  if (group_rows(sc->n, sys, nsys, dim, &g)) return -1;
  size_t ng = g.ngroups;
  double *buf = malloc((sc->n ? sc->n : 1) * sizeof *buf);
  res->stat = calloc(ng * sc->m + 1, sizeof *res->stat);
  res->sys = malloc((ng + 1) * sizeof *res->sys), res->value = malloc((ng + 1) * sizeof *res->value);
  if (!buf || !res->stat || !res->sys || !res->value) return free(buf), grouping_free(&g), evg_result_free(res), -1;
  res->ngroups = ng;
  size_t limit = ci->on ? boot_limit(g.start, ng, ci) : 0;
  for (size_t k = 0; k < ng; k++) {
    size_t n = g.start[k + 1] - g.start[k];
    res->sys[k] = (uint32_t)(g.key[k] / dim->nvalues), res->value[k] = (uint32_t)(g.key[k] % dim->nvalues);
    for (size_t j = 0; j < sc->m; j++) {
      struct evg_stat *st = &res->stat[k * sc->m + j];
      describe(sc, j, g.idx + g.start[k], n, buf, st);
      if (ci->on && st->measured >= 2 && n > limit) normal_ci(ci, st);
    }
  }
  free(buf);
  /* the bootstrap: groups split in two halves of about equal draws */
  size_t total = 0, half = 0, mid = 0;
  for (size_t k = 0; k < ng; k++) total += g.start[k + 1] - g.start[k] <= limit ? g.start[k + 1] - g.start[k] : 0;
  while (mid < ng && 2 * half < total) half += g.start[mid + 1] - g.start[mid] <= limit ? g.start[mid + 1] - g.start[mid] : 0, mid++;
  struct boot_job jobs[2] = {{sc, g.idx, g.start, 0, mid, limit, ci, res->stat, 0},
                             {sc, g.idx, g.start, mid, ng, limit, ci, res->stat, 0}};
  if (ci->on && ci->parallel) ci->parallel(boot_groups, (void *[]){&jobs[0], &jobs[1]});
  else if (ci->on) boot_groups(&jobs[0]), boot_groups(&jobs[1]);
  grouping_free(&g);
  if (jobs[0].rc || jobs[1].rc) return evg_result_free(res), -1;
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
