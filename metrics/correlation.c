/* Correlation of two paired lists: Pearson's r, Spearman's rho (Pearson's r
 * of average ranks) and Kendall's tau-b by Knight's O(n log n) algorithm
 * (Knight, JASA 61, 1966), with scipy.stats.kendalltau's tie terms. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/stats.h"

static int constant(const double *x, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (x[i] != x[0]) return 0;
  return 1;
}

int evstats_ranks(const double *x, size_t n, double *ranks) {
  size_t *idx = malloc((n ? n : 1) * sizeof *idx);
  if (!idx || evstats_order(x, n, 0, idx)) {
    free(idx);
    return EVSTATS_ENOMEM;
  }
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && x[idx[j + 1]] == x[idx[i]]) j++;
    double r = (double)(i + j) / 2 + 1; /* the mean of ranks i+1 .. j+1 */
    for (size_t t = i; t <= j; t++) ranks[idx[t]] = r;
    i = j + 1;
  }
  free(idx);
  return EVSTATS_OK;
}

/* d[i] = (x[i] - mean) scaled by powers of two so that the largest |d[i]|
 * is near 1: r is the same for any positive scale of x, and sums of
 * products of such deviations neither overflow (x at 1e160) nor
 * underflow (x at 1e-200). */
static void deviations(const double *x, size_t n, double *d) {
  double s = evstats_scale(x, n), big = 0;
  for (size_t i = 0; i < n; i++) d[i] = x[i] * s;
  double m = evstats_mean(d, n);
  for (size_t i = 0; i < n; i++) {
    d[i] -= m;
    if (fabs(d[i]) > big) big = fabs(d[i]);
  }
  double t = evstats_scale_for(big);
  for (size_t i = 0; i < n; i++) d[i] *= t;
}

int evstats_pearson(const double *x, const double *y, size_t n, double *r) {
  if (n < 2 || constant(x, n) || constant(y, n)) return EVSTATS_UNDEFINED;
  double *dx = malloc(2 * n * sizeof *dx), sxx = 0, syy = 0, sxy = 0;
  if (!dx) return EVSTATS_ENOMEM;
  double *dy = dx + n;
  deviations(x, n, dx);
  deviations(y, n, dy);
  for (size_t i = 0; i < n; i++) {
    sxx += dx[i] * dx[i];
    syy += dy[i] * dy[i];
    sxy += dx[i] * dy[i];
  }
  free(dx);
  double v = sxy / (sqrt(sxx) * sqrt(syy));
  *r = v > 1 ? 1 : v < -1 ? -1 : v; /* rounding can step just outside */
  return EVSTATS_OK;
}

int evstats_spearman(const double *x, const double *y, size_t n, double *rho) {
  if (n < 2 || constant(x, n) || constant(y, n)) return EVSTATS_UNDEFINED;
  double *rx = malloc(2 * n * sizeof *rx);
  if (!rx) return EVSTATS_ENOMEM;
  double *ry = rx + n;
  int rc = evstats_ranks(x, n, rx);
  if (!rc) rc = evstats_ranks(y, n, ry);
  if (!rc) rc = evstats_pearson(rx, ry, n, rho);
  free(rx);
  return rc;
}

/* Stable merge sort of idx by (x, y). */
static void sort_pairs(size_t *idx, size_t *tmp, size_t n, const double *x, const double *y) {
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        size_t a = idx[i], b = idx[j];
        int right_first = x[b] < x[a] || (x[b] == x[a] && y[b] < y[a]);
        tmp[k++] = right_first ? idx[j++] : idx[i++];
      }
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, n * sizeof *idx);
  }
}

/* Sorts v ascending and returns the number of strictly inverted pairs. */
static uint64_t count_swaps(double *v, double *tmp, size_t n) {
  uint64_t swaps = 0;
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (v[j] < v[i]) {
          swaps += mid - i; /* v[j] jumps over every element left in the left run */
          tmp[k++] = v[j++];
        } else {
          tmp[k++] = v[i++];
        }
      }
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    memcpy(v, tmp, n * sizeof *v);
  }
  return swaps;
}

/* Pairs within runs of equal values: sum of t(t-1)/2. */
static uint64_t tied_pairs(size_t run, uint64_t acc) { return acc + (uint64_t)run * (run - 1) / 2; }

int evstats_kendall(const double *x, const double *y, size_t n, double *tau) {
  if (n < 2) return EVSTATS_UNDEFINED;
  size_t *idx = malloc(2 * n * sizeof *idx);
  double *v = malloc(2 * n * sizeof *v);
  if (!idx || !v) {
    free(idx);
    free(v);
    return EVSTATS_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) idx[i] = i;
  sort_pairs(idx, idx + n, n, x, y);
  uint64_t xtie = 0, ntie = 0, ytie = 0;
  size_t xrun = 1, nrun = 1;
  for (size_t i = 1; i <= n; i++) {
    int same_x = i < n && x[idx[i]] == x[idx[i - 1]];
    int same_xy = same_x && y[idx[i]] == y[idx[i - 1]];
    if (same_x) xrun++;
    else xtie = tied_pairs(xrun, xtie), xrun = 1;
    if (same_xy) nrun++;
    else ntie = tied_pairs(nrun, ntie), nrun = 1;
  }
  for (size_t i = 0; i < n; i++) v[i] = y[idx[i]];
  uint64_t swaps = count_swaps(v, v + n, n);
  size_t yrun = 1;
  for (size_t i = 1; i <= n; i++) {
    if (i < n && v[i] == v[i - 1]) yrun++;
    else ytie = tied_pairs(yrun, ytie), yrun = 1;
  }
  free(idx);
  free(v);
  uint64_t total = (uint64_t)n * (n - 1) / 2;
  if (total == xtie || total == ytie) return EVSTATS_UNDEFINED;
  /* concordant - discordant = pairs tied in neither - 2 * discordant */
  double untied = (double)(total + ntie - xtie - ytie);
  *tau = (untied - 2.0 * (double)swaps) / sqrt((double)(total - xtie)) / sqrt((double)(total - ytie));
  return EVSTATS_OK;
}
