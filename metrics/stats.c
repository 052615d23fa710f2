/* Descriptive statistics: sums, mean, variance, quantiles, stable ordering. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/stats.h"

/* Values whose largest magnitude lies within 2^-400 .. 2^400 are safe: n
 * of their squares or products can neither overflow nor underflow. */
enum { SAFE_EXP = 400 };

double evstats_scale_for(double big) {
  int e;
  if (big == 0 || !isfinite(big)) return 1;
  frexp(big, &e); /* big = f * 2^e, f in [0.5, 1) */
  if (e >= -SAFE_EXP && e <= SAFE_EXP) return 1;
  return ldexp(1, e < -DBL_MAX_EXP + 1 ? DBL_MAX_EXP - 1 : -e); /* subnormals: 2^1023 at most */
}

double evstats_scale(const double *x, size_t n) {
  double big = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(x[i]) > big) big = fabs(x[i]);
  return evstats_scale_for(big);
}

/* Neumaier's sum of x[i] * s; s is a power of two, so the scaling is exact. */
static double scaled_sum(const double *x, size_t n, double s) {
  double sum = 0, c = 0; /* c collects the low-order bits that sum loses */
  for (size_t i = 0; i < n; i++) {
    double xi = x[i] * s, t = sum + xi;
    c += fabs(sum) >= fabs(xi) ? (sum - t) + xi : (xi - t) + sum;
    sum = t;
  }
  return sum + c;
}

double evstats_sum(const double *x, size_t n) {
  double s = evstats_scale(x, n);
  return scaled_sum(x, n, s) / s; /* +-inf only when the true sum is beyond a double */
}

/* The mean of x[i] * s, refined by the residuals' mean (it corrects the
 * rounding of the division, as R's mean does). */
static double scaled_mean(const double *x, size_t n, double s) {
  double m = scaled_sum(x, n, s) / (double)n, r = 0;
  for (size_t i = 0; i < n; i++) r += x[i] * s - m;
  return m + r / (double)n;
}

double evstats_mean(const double *x, size_t n) {
  double s = evstats_scale(x, n);
  return scaled_mean(x, n, s) / s;
}

static int constant(const double *x, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (x[i] != x[0]) return 0;
  return 1;
}

/* The sum of squared deviations from the mean in units of 1/(s[0] s[1])^2:
 * the values are scaled by s[0] (so no deviation overflows), then the
 * deviations by s[1] (so their squares do not underflow). Undo the scales
 * one at a time: their product may be beyond a double. */
static double deviations_from(const double *x, size_t n, double s, double m, double scale[2]) {
  double big = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(x[i] * s - m) > big) big = fabs(x[i] * s - m);
  double t = evstats_scale_for(big), ss = 0, sum = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (x[i] * s - m) * t;
    ss += d * d;
    sum += d;
  }
  scale[0] = s, scale[1] = t;
  /* corrected two-pass formula: sum is the rounding error of m */
  return ss - sum * sum / (double)n;
}

/* ... from the mean m of the values scaled by s (scaled_mean). */
static double squared_deviations(const double *x, size_t n, double scale[2]) {
  double s = evstats_scale(x, n);
  return deviations_from(x, n, s, scaled_mean(x, n, s), scale);
}

/* evstats_sd once n > ddof, given the scale s and scaled mean m. */
static int sd_from(const double *x, size_t n, size_t ddof, double s, double m, double *sd) {
  if (constant(x, n)) {
    *sd = 0;
    return EVSTATS_OK;
  }
  double scale[2], ss = deviations_from(x, n, s, m, scale);
  *sd = sqrt(ss / (double)(n - ddof)) / scale[1] / scale[0];
  return isfinite(*sd) ? EVSTATS_OK : EVSTATS_RANGE;
}

int evstats_sd(const double *x, size_t n, size_t ddof, double *sd) {
  if (n <= ddof) return EVSTATS_UNDEFINED;
  double s = evstats_scale(x, n);
  return sd_from(x, n, ddof, s, scaled_mean(x, n, s), sd);
}

int evstats_mean_sd(const double *x, size_t n, size_t ddof, double *mean, double *sd) {
  double s = evstats_scale(x, n), m = scaled_mean(x, n, s);
  *mean = m / s;
  if (n <= ddof) return EVSTATS_UNDEFINED;
  return sd_from(x, n, ddof, s, m, sd);
}

int evstats_variance(const double *x, size_t n, size_t ddof, double *var) {
  if (n <= ddof) return EVSTATS_UNDEFINED;
  if (constant(x, n)) {
    *var = 0;
    return EVSTATS_OK;
  }
  double scale[2], ss = squared_deviations(x, n, scale);
  *var = ss / (double)(n - ddof) / scale[1] / scale[1] / scale[0] / scale[0];
  /* spread that a double cannot hold: beyond its largest, or below its smallest */
  return isfinite(*var) && *var > 0 ? EVSTATS_OK : EVSTATS_RANGE;
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
  if (isinf(d)) return a * (1 - t) + b * t; /* -1e308 to 1e308: the gap is beyond a double */
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
