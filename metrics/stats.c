/* Descriptive statistics: sums, mean, variance, quantiles, stable ordering. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/stats.h"

double evstats_sum(const double *x, size_t n) {
  double s = 0, c = 0; /* c collects the low-order bits that s loses */
  for (size_t i = 0; i < n; i++) {
    double t = s + x[i];
    c += fabs(s) >= fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
    s = t;
  }
  return s + c;
}

double evstats_mean(const double *x, size_t n) {
  double m = evstats_sum(x, n) / (double)n;
  double r = 0; /* the residuals' mean corrects the rounding of the division */
  for (size_t i = 0; i < n; i++) r += x[i] - m;
  return m + r / (double)n;
}

static int constant(const double *x, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (x[i] != x[0]) return 0;
  return 1;
}

int evstats_variance(const double *x, size_t n, size_t ddof, double *var) {
  if (n <= ddof) return EVSTATS_UNDEFINED;
  if (constant(x, n)) {
    *var = 0;
    return EVSTATS_OK;
  }
  double m = evstats_mean(x, n), ss = 0, s = 0;
  for (size_t i = 0; i < n; i++) {
    double d = x[i] - m;
    ss += d * d;
    s += d;
  }
  /* corrected two-pass formula: s is the rounding error of m */
  *var = (ss - s * s / (double)n) / (double)(n - ddof);
  return EVSTATS_OK;
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

void evstats_sort(double *x, size_t n) { qsort(x, n, sizeof *x, cmp_double); }

double evstats_quantile_sorted(const double *s, size_t n, double q) {
  if (n == 1 || q <= 0) return s[0];
  double h = (double)(n - 1) * q;
  size_t lo = (size_t)floor(h);
  if (lo >= n - 1) return s[n - 1];
  double t = h - (double)lo, a = s[lo], b = s[lo + 1], d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t; /* numpy's interpolation */
}

/* Stable merge sort of idx by key (ascending, or descending when desc). */
static void merge_sort(size_t *idx, size_t *tmp, size_t n, const double *key, int desc) {
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        double a = key[idx[i]], b = key[idx[j]];
        int take_right = desc ? b > a : b < a; /* equal keys keep their order */
        tmp[k++] = take_right ? idx[j++] : idx[i++];
      }
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, n * sizeof *idx);
  }
}

int evstats_order(const double *x, size_t n, int descending, size_t *idx) {
  for (size_t i = 0; i < n; i++) idx[i] = i;
  if (n < 2) return EVSTATS_OK;
  size_t *tmp = malloc(n * sizeof *tmp);
  if (!tmp) return EVSTATS_ENOMEM;
  merge_sort(idx, tmp, n, x, descending);
  free(tmp);
  return EVSTATS_OK;
}
