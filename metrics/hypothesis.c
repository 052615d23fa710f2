/* Paired significance tests between two systems' per-item scores: the
 * randomisation (sign-flip permutation) test and Student's paired t-test. */
#include <math.h>
#include <stdlib.h>

#include "evalua/stats.h"

/* Sums within tol of the observed one count as "as extreme": sums reached
 * by different sign patterns can differ in their last bits. */
static double tolerance(const double *d, size_t k) {
  double s = 0;
  for (size_t i = 0; i < k; i++) s += fabs(d[i]);
  return 1e-9 * s;
}

/* Every sign pattern of d[0..k), in Gray-code order so that each step flips
 * one sign: the fraction whose |sum| reaches |observed|. The observed
 * pattern itself (the first) always counts, so p is at least 2^-k. */
static double exact_p(const double *d, size_t k, double observed, double tol) {
  signed char sign[64];
  double s = 0;
  for (size_t i = 0; i < k; i++) sign[i] = 1, s += d[i];
  uint64_t total = (uint64_t)1 << k, hits = 1;
  for (uint64_t g = 1; g < total; g++) {
    size_t j = 0; /* the bit that changes between Gray codes g-1 and g */
    while (!((g >> j) & 1)) j++;
    s -= 2.0 * sign[j] * d[j];
    sign[j] = (signed char)-sign[j];
    hits += fabs(s) >= fabs(observed) - tol;
  }
  return (double)hits / (double)total;
}

/* Random sign patterns; the observed pattern counts once more, so p is
 * never 0 (Phipson and Smyth, 2010). */
static double monte_carlo_p(const double *d, size_t k, double observed, double tol,
                            size_t resamples, uint64_t seed) {
  evstats_rng rng;
  evstats_rng_seed(&rng, seed);
  size_t hits = 0;
  for (size_t r = 0; r < resamples; r++) {
    double s = 0;
    uint64_t bits = 0;
    for (size_t i = 0; i < k; i++) {
      if (i % 64 == 0) bits = evstats_rng_next(&rng);
      s += (bits & 1) ? d[i] : -d[i];
      bits >>= 1;
    }
    hits += fabs(s) >= fabs(observed) - tol;
  }
  return (double)(hits + 1) / (double)(resamples + 1);
}

/* d[i] = (a[i] - b[i]) * s[0] * s[1] for the n pairs, with powers of two
 * such that no difference overflows (s[0]) and their sums and squares
 * neither overflow nor underflow (s[1]). */
static void scaled_differences(const double *a, const double *b, size_t n, double *d, double s[2]) {
  double big = 0;
  for (size_t i = 0; i < n; i++) {
    if (fabs(a[i]) > big) big = fabs(a[i]);
    if (fabs(b[i]) > big) big = fabs(b[i]);
  }
  s[0] = evstats_scale_for(big);
  for (size_t i = 0; i < n; i++) d[i] = a[i] * s[0] - b[i] * s[0];
  s[1] = evstats_scale(d, n);
  for (size_t i = 0; i < n; i++) d[i] *= s[1];
}

/* A mean of scaled differences in the units of a and b (the scales are
 * undone one at a time: their product may be beyond a double). */
static double unscale(double v, const double s[2]) { return v / s[1] / s[0]; }

int evstats_paired_permutation(const double *a, const double *b, size_t n, size_t resamples,
                               uint64_t seed, size_t max_exact, evstats_permutation *out) {
  if (n == 0) return EVSTATS_UNDEFINED;
  double *d = malloc(n * sizeof *d);
  if (!d) return EVSTATS_ENOMEM;
  double scale[2];
  scaled_differences(a, b, n, d, scale);
  size_t k = 0; /* zero differences never change a sum: leave them out */
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) d[k++] = d[i];
  double observed = evstats_sum(d, k), tol = tolerance(d, k);
  out->mean_diff = unscale(observed / (double)n, scale);
  if (max_exact > 30) max_exact = 30;
  if (k <= max_exact) {
    out->exact = 1;
    out->patterns = (size_t)1 << k;
    out->p = exact_p(d, k, observed, tol);
  } else {
    out->exact = 0;
    out->patterns = resamples;
    out->p = monte_carlo_p(d, k, observed, tol, resamples, seed);
  }
  free(d);
  return isfinite(out->mean_diff) ? EVSTATS_OK : EVSTATS_RANGE;
}

int evstats_paired_ttest(const double *a, const double *b, size_t n, evstats_ttest *out) {
  if (n < 2) return EVSTATS_UNDEFINED;
  double *d = malloc(n * sizeof *d);
  if (!d) return EVSTATS_ENOMEM;
  double scale[2], sd = 0;
  scaled_differences(a, b, n, d, scale);
  double mean = evstats_mean(d, n);
  evstats_sd(d, n, 1, &sd); /* finite: the differences are scaled */
  free(d);
  out->mean_diff = unscale(mean, scale);
  out->df = (double)(n - 1);
  if (sd == 0) { /* no spread: no difference at all, or a certain one */
    out->t = mean == 0 ? 0 : copysign(INFINITY, mean);
    out->p = mean == 0 ? 1 : 0;
  } else {
    out->t = mean / (sd / sqrt((double)n));
    out->p = evstats_t_two_sided(out->t, out->df);
  }
  return isfinite(out->mean_diff) ? EVSTATS_OK : EVSTATS_RANGE;
}
