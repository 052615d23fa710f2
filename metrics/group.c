/* Grouped statistics and bottom-k over score columns (group.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/group.h"
#include "evalua/stats.h"

/* Rows ordered by group (counting sort): rows of group g are
 * idx[start[g] .. start[g + 1]). */
static int buckets(size_t n, const uint32_t *sys, const struct evg_dim *d, size_t ngroups, size_t **idx,
                   size_t **start) {
  *idx = malloc((n ? n : 1) * sizeof **idx);
  *start = calloc(ngroups + 1, sizeof **start);
  if (!*idx || !*start) return free(*idx), free(*start), -1;
  for (size_t i = 0; i < n; i++) (*start)[(size_t)sys[i] * d->nvalues + (d->code ? d->code[i] : 0) + 1]++;
  for (size_t g = 0; g < ngroups; g++) (*start)[g + 1] += (*start)[g];
  size_t *fill = malloc((ngroups ? ngroups : 1) * sizeof *fill);
  if (!fill) return free(*idx), free(*start), -1;
  memcpy(fill, *start, ngroups * sizeof *fill);
  for (size_t i = 0; i < n; i++) (*idx)[fill[(size_t)sys[i] * d->nvalues + (d->code ? d->code[i] : 0)]++] = i;
  free(fill);
  return 0;
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
  st->sd = evstats_variance(buf, k, 1, &var) == EVSTATS_OK ? sqrt(var) : 0;
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

/* One percentile bootstrap shared by all metrics of a group: each resample
 * draws n rows; a metric's resample mean is over the drawn rows it
 * measured. With every row measured this is exactly evstats_bootstrap_mean_ci. */
static int bootstrap(const struct evg_scores *sc, const size_t *idx, size_t n, const struct evg_ci *ci,
                     struct evg_stat *st) {
  size_t m = sc->m, R = ci->resamples;
  double *pack = malloc(n * m * sizeof *pack), *means = malloc(R * m * sizeof *means);
  double *sum = malloc(m * sizeof *sum);
  size_t *cnt = malloc(m * sizeof *cnt), *got = calloc(m, sizeof *got);
  if (!pack || !means || !sum || !cnt || !got) return free(pack), free(means), free(sum), free(cnt), free(got), -1;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < m; j++) pack[i * m + j] = sc->miss[j][idx[i]] ? NAN : sc->val[j][idx[i]];
  evstats_rng rng;
  evstats_rng_seed(&rng, ci->seed);
  for (size_t r = 0; r < R; r++) {
    memset(sum, 0, m * sizeof *sum), memset(cnt, 0, m * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
      const double *row = pack + evstats_rng_below(&rng, n) * m;
      for (size_t j = 0; j < m; j++)
        if (row[j] == row[j]) sum[j] += row[j], cnt[j]++;
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
  free(pack), free(means), free(sum), free(cnt), free(got);
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
  for (size_t g = b->g0; g < b->g1 && !b->rc; g++) {
    size_t n = b->start[g + 1] - b->start[g];
    struct evg_stat *st = b->out + g * b->sc->m;
    int need = 0;
    for (size_t j = 0; j < b->sc->m; j++) need |= st[j].measured >= 2 && !st[j].normal;
    if (need && n <= b->limit) b->rc = bootstrap(b->sc, b->idx + b->start[g], n, b->ci, st);
  }
}

int evg_aggregate(const struct evg_scores *sc, const uint32_t *sys, size_t nsys, const struct evg_dim *dim,
                  const struct evg_ci *ci, struct evg_stat *out) {
  size_t ngroups = nsys * dim->nvalues, *idx, *start;
  if (buckets(sc->n, sys, dim, ngroups, &idx, &start)) return -1;
  double *buf = malloc((sc->n ? sc->n : 1) * sizeof *buf);
  if (!buf) return free(idx), free(start), -1;
  size_t limit = ci->on ? boot_limit(start, ngroups, ci) : 0;
  for (size_t g = 0; g < ngroups; g++) {
    size_t n = start[g + 1] - start[g];
    for (size_t j = 0; j < sc->m; j++) {
      struct evg_stat *st = &out[g * sc->m + j];
      describe(sc, j, idx + start[g], n, buf, st);
      if (ci->on && st->measured >= 2 && n > limit) normal_ci(ci, st);
    }
  }
  free(buf);
  /* the bootstrap: groups split in two halves of about equal draws */
  size_t total = 0, half = 0, mid = 0;
  for (size_t g = 0; g < ngroups; g++) total += start[g + 1] - start[g] <= limit ? start[g + 1] - start[g] : 0;
  while (mid < ngroups && 2 * half < total) half += start[mid + 1] - start[mid] <= limit ? start[mid + 1] - start[mid] : 0, mid++;
  struct boot_job jobs[2] = {{sc, idx, start, 0, mid, limit, ci, out, 0}, {sc, idx, start, mid, ngroups, limit, ci, out, 0}};
  if (ci->on && ci->parallel) ci->parallel(boot_groups, (void *[]){&jobs[0], &jobs[1]});
  else if (ci->on) boot_groups(&jobs[0]), boot_groups(&jobs[1]);
  free(idx), free(start);
  return jobs[0].rc || jobs[1].rc ? -1 : 0;
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
