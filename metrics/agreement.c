/* Agreement of two raters on the same items: Cohen's kappa (Cohen, 1960)
 * and its weighted form (Cohen, 1968), as kappa = 1 - sum(w O) / sum(w E)
 * over the observed and the chance-expected contingency tables. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/stats.h"

/* The distance of two values over the span of all (span > 0): in [0, 1],
 * so that neither the difference of two values near the
 * largest double nor its square overflows. Kappa is the ratio of two sums of
 * weights, so this scale leaves it as the raw distances give it. */
static double weight(const double *v, double span, size_t i, size_t j, enum evstats_weights w) {
  if (w == EVSTATS_UNWEIGHTED) return i != j;
  double d = fabs(v[i] * 0.5 - v[j] * 0.5) / span;
  return w == EVSTATS_QUADRATIC ? d * d : d;
}

int evstats_cohen_kappa(const size_t *a, const size_t *b, size_t n, size_t k,
                        const double *values, enum evstats_weights w, double *kappa) {
  if (n == 0 || k == 0) return EVSTATS_UNDEFINED;
  double *rows = calloc(2 * k, sizeof *rows);
  if (!rows) return EVSTATS_ENOMEM;
  double *cols = rows + k, observed = 0, expected = 0;
  double lo = values ? values[0] : 0, hi = lo;
  for (size_t i = 1; values && i < k; i++) lo = fmin(lo, values[i]), hi = fmax(hi, values[i]);
  double span = hi > lo ? hi * 0.5 - lo * 0.5 : 1;
  for (size_t i = 0; i < n; i++) {
    rows[a[i]]++;
    cols[b[i]]++;
    observed += weight(values, span, a[i], b[i], w);
  }
  if (w == EVSTATS_UNWEIGHTED) { /* sum over i != j of r_i c_j = n^2 - sum r_i c_i */
    double same = 0;
    for (size_t i = 0; i < k; i++) same += rows[i] * cols[i];
    expected = ((double)n * (double)n - same) / (double)n;
  } else {
    for (size_t i = 0; i < k; i++)
      for (size_t j = 0; j < k; j++)
        if (rows[i] && cols[j]) expected += weight(values, span, i, j, w) * rows[i] * cols[j];
    expected /= (double)n;
  }
  free(rows);
  if (expected == 0) return EVSTATS_UNDEFINED;
  *kappa = 1 - observed / expected;
  return EVSTATS_OK;
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

static size_t find(const double *values, size_t k, double x) {
  size_t lo = 0, hi = k; /* values[lo] <= x < values[hi] */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (values[mid] <= x) lo = mid;
    else hi = mid;
  }
  return lo;
}

int evstats_categories(const double *a, const double *b, size_t n, size_t *ca, size_t *cb,
                       double *values, size_t *k) {
  memcpy(values, a, n * sizeof *values);
  memcpy(values + n, b, n * sizeof *values);
  qsort(values, 2 * n, sizeof *values, cmp_double);
  size_t m = 0;
  for (size_t i = 0; i < 2 * n; i++)
    if (m == 0 || values[i] != values[m - 1]) values[m++] = values[i];
  for (size_t i = 0; i < n; i++) {
    ca[i] = find(values, m, a[i]);
    cb[i] = find(values, m, b[i]);
  }
  *k = m;
  return EVSTATS_OK;
}
