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
 * one sign: the fraction whose |sum| reaches |observed|. */
static double exact_p(const double *d, size_t k, double observed, double tol) {
  signed char sign[64];
  double s = 0;
  for (size_t i = 0; i < k; i++) sign[i] = 1, s += d[i];
  uint64_t total = (uint64_t)1 << k, hits = 0;
  for (uint64_t g = 0;;) {
    hits += fabs(s) >= fabs(observed) - tol;
    if (++g == total) break;
    size_t j = 0; /* the bit that changes between Gray codes g-1 and g */
    while (!((g >> j) & 1)) j++;
    s -= 2.0 * sign[j] * d[j];
    sign[j] = (signed char)-sign[j];
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

int evstats_paired_permutation(const double *a, const double *b, size_t n, size_t resamples,
                               uint64_t seed, size_t max_exact, evstats_permutation *out) {
  if (n == 0) return EVSTATS_UNDEFINED;
  double *d = malloc(n * sizeof *d);
  if (!d) return EVSTATS_ENOMEM;
  size_t k = 0; /* zero differences never change a sum: leave them out */
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) d[k++] = a[i] - b[i];
  double observed = evstats_sum(d, k), tol = tolerance(d, k);
  out->mean_diff = observed / (double)n;
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
  return EVSTATS_OK;
}

int evstats_paired_ttest(const double *a, const double *b, size_t n, evstats_ttest *out) {
  if (n < 2) return EVSTATS_UNDEFINED;
  double *d = malloc(n * sizeof *d);
  if (!d) return EVSTATS_ENOMEM;
  for (size_t i = 0; i < n; i++) d[i] = a[i] - b[i];
  double var = 0, mean = evstats_mean(d, n);
  evstats_variance(d, n, 1, &var);
  free(d);
  out->mean_diff = mean;
  out->df = (double)(n - 1);
  if (var == 0) { /* no spread: no difference at all, or a certain one */
    out->t = mean == 0 ? 0 : copysign(INFINITY, mean);
    out->p = mean == 0 ? 1 : 0;
    return EVSTATS_OK;
  }
  out->t = mean / sqrt(var / (double)n);
  out->p = evstats_t_two_sided(out->t, out->df);
  return EVSTATS_OK;
}
