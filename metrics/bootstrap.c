/* Percentile bootstrap confidence interval of a mean (Efron and Tibshirani,
 * An Introduction to the Bootstrap, 1993, ch. 13), seeded and reproducible. */
#include <stdlib.h>

#include "evalua/stats.h"

int evstats_bootstrap_mean_ci(const double *x, size_t n, size_t resamples, double level,
                              uint64_t seed, double *lo, double *hi) {
  if (n == 0 || resamples == 0) return EVSTATS_UNDEFINED;
  if (resamples > SIZE_MAX / sizeof(double)) return EVSTATS_ENOMEM;
  double *means = malloc(resamples * sizeof *means);
  if (!means) return EVSTATS_ENOMEM;
  evstats_rng rng;
  evstats_rng_seed(&rng, seed);
  double scale = evstats_scale(x, n); /* 1e308s resample without overflow */
  for (size_t b = 0; b < resamples; b++) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[evstats_rng_below(&rng, n)] * scale;
    means[b] = s / (double)n;
  }
  evstats_sort(means, resamples);
  *lo = evstats_quantile_sorted(means, resamples, (1 - level) / 2) / scale;
  *hi = evstats_quantile_sorted(means, resamples, (1 + level) / 2) / scale;
  free(means);
  return EVSTATS_OK;
}
