/* Confidence intervals of a mean, the method chosen by what the values are
 * (docs/stats.md, "Intervals of a mean"): Clopper-Pearson for 0/1 values;
 * Clopper-Pearson at the effective sample size (Korn and Graubard 1998)
 * for other scores in [0, 1]; the studentized bootstrap for values beyond
 * [0, 1], or Student's t where it is not affordable; and for a difference
 * of two paired means, MOVER (Zou and Donner 2008; Newcombe 1998, method
 * 10) from the intervals of the two means. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "evalua/stats.h"

const char *evstats_ci_name(int method) {
  switch (method) {
  case EVSTATS_CI_CONSTANT: return "constant";
  case EVSTATS_CI_CLOPPER_PEARSON: return "clopper_pearson";
  case EVSTATS_CI_KORN_GRAUBARD: return "korn_graubard";
  case EVSTATS_CI_BOOTSTRAP_T: return "bootstrap_t";
  case EVSTATS_CI_STUDENT_T: return "student_t";
  case EVSTATS_CI_MOVER: return "mover";
  default: return NULL;
  }
}

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

void evstats_wilson(double share, double n, double level, double *lo, double *hi) {
  double z = evstats_norm_quantile((1 + level) / 2), z2n = z * z / n;
  double center = (share + z2n / 2) / (1 + z2n);
  double half = z / (1 + z2n) * sqrt(share * (1 - share) / n + z2n / (4 * n));
  /* at share 0 or 1 the bound at that end is exact, not off by rounding */
  *lo = share <= 0 ? 0 : clamp01(center - half);
  *hi = share >= 1 ? 1 : clamp01(center + half);
}

/* Above this size the beta quantiles lose digits to lgamma's cancellation
 * and the continued fraction grows long, while Clopper-Pearson's ends and
 * those of Wilson's interval with continuity correction differ by less
 * than 1e-6 (5e-7 at a share of 0.95 and n = 1e6). */
#define CP_EXACT_MAX 1e6

static void wilson_cc(double x, double n, double level, double *lo, double *hi) {
  /* Newcombe (1998), method 4 */
  double z = evstats_norm_quantile((1 + level) / 2), p = x / n, z2 = z * z, den = 2 * (n + z2);
  double dl = z2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1), du = z2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1);
  *lo = x <= 0 ? 0 : clamp01((2 * n * p + z2 - 1 - z * sqrt(fmax(dl, 0))) / den);
  *hi = x >= n ? 1 : clamp01((2 * n * p + z2 + 1 + z * sqrt(fmax(du, 0))) / den);
}

void evstats_clopper_pearson(double x, double n, double level, double *lo, double *hi) {
  if (n > CP_EXACT_MAX) {
    wilson_cc(x, n, level, lo, hi);
    return;
  }
  double alpha = 1 - level, lo_guess, hi_guess; /* Wilson's corrected ends are close: Newton starts there */
  wilson_cc(x, n, level, &lo_guess, &hi_guess);
  *lo = x <= 0 ? 0 : evstats_beta_quantile_near(alpha / 2, x, n - x + 1, lo_guess);
  *hi = x >= n ? 1 : evstats_beta_quantile_near(1 - alpha / 2, x + 1, n - x, hi_guess);
}

/* Korn and Graubard (1998): Clopper-Pearson for the mean m of scores in
 * [0, 1] at the effective sample size n* = m(1 - m) / (sd^2 / k), the size
 * of a 0/1 sample with the same variance of its mean, shrunk by (z / t)^2
 * for the k - 1 degrees of freedom of the estimated sd. */
static void korn_graubard(size_t k, double mean, double sd, double level, double *lo, double *hi) {
  double z = evstats_norm_quantile((1 + level) / 2), t = evstats_t_quantile((1 + level) / 2, (double)(k - 1));
  /* m/sd and (1-m)/sd apart: sd^2 underflows for scores at 1e-200 */
  double n_eff = (mean / sd) * ((1 - mean) / sd) * (double)k * (z / t) * (z / t);
  evstats_clopper_pearson(mean * n_eff, n_eff, level, lo, hi);
}

int evstats_mean_ci_summary(const evstats_summary *s, double level, evstats_ci *out) {
  out->lo = out->hi = s->mean;
  out->method = EVSTATS_CI_NONE;
  if (s->n < 2) return out->method;
  if (s->bounded && s->binary) {
    double n = (double)s->n, x = round(s->mean * n); /* the count of 1s, exact */
    evstats_clopper_pearson(x, n, level, &out->lo, &out->hi);
    out->method = EVSTATS_CI_CLOPPER_PEARSON;
  } else if (s->min == s->max) {
    out->method = EVSTATS_CI_CONSTANT; /* no spread to estimate an interval from */
  } else if (s->bounded) {
    korn_graubard(s->n, s->mean, s->sd, level, &out->lo, &out->hi);
    out->method = EVSTATS_CI_KORN_GRAUBARD;
  } else if (s->n < EVSTATS_BOOTSTRAP_MIN) {
    evstats_student_t_ci(s, level, out);
  } else {
    out->method = EVSTATS_CI_BOOTSTRAP_T; /* the caller resamples, or settles for Student's t */
  }
  return out->method;
}

static double within_range(double x) { return x > DBL_MAX ? DBL_MAX : x < -DBL_MAX ? -DBL_MAX : x; }

void evstats_student_t_ci(const evstats_summary *s, double level, evstats_ci *out) {
  double t = evstats_t_quantile((1 + level) / 2, (double)(s->n - 1));
  double half = t * (s->sd / sqrt((double)s->n));
  out->lo = within_range(s->mean - half), out->hi = within_range(s->mean + half);
  out->method = EVSTATS_CI_STUDENT_T;
}

void evstats_summarize(const double *x, size_t n, int bounded, evstats_summary *s) {
  s->n = n, s->bounded = bounded, s->binary = 1;
  s->mean = s->sd = 0;
  if (n && evstats_mean_sd(x, n, 1, &s->mean, &s->sd) != EVSTATS_OK) s->sd = 0;
  s->min = s->max = n ? x[0] : 0;
  for (size_t i = 0; i < n; i++) {
    if (x[i] < s->min) s->min = x[i];
    if (x[i] > s->max) s->max = x[i];
    s->binary &= x[i] == 0 || x[i] == 1;
  }
}

void evstats_deviation_scale(const double *x, size_t n, double mean, double scale[2]) {
  double big = fabs(mean);
  for (size_t i = 0; i < n; i++)
    if (fabs(x[i]) > big) big = fabs(x[i]);
  scale[0] = evstats_scale_for(big), big = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs(x[i] * scale[0] - mean * scale[0]);
    if (d > big) big = d;
  }
  /* the largest deviation near 1: squares of deviations cannot underflow */
  int e = 0;
  frexp(big, &e);
  scale[1] = big > 0 ? ldexp(1, -e) : 1;
}

double evstats_studentized(double sum, double sumsq, size_t count, double se0) {
  double m = sum / (double)count, ss = sumsq - sum * m;
  /* count equal values leave rounding of about count ulps of sumsq in ss,
   * which must not pass for spread: it would make t* huge */
  if (count >= 2 && ss > 4 * (double)count * DBL_EPSILON * sumsq) return m / sqrt(ss / (double)(count - 1) / (double)count);
  return m / se0; /* a resample without spread: judged by the sample's own */
}

void evstats_bootstrap_t_bounds(double *tstar, size_t count, double mean, double se, double level,
                                evstats_ci *out) {
  evstats_sort(tstar, count);
  double t_lo = evstats_quantile_sorted(tstar, count, (1 - level) / 2);
  double t_hi = evstats_quantile_sorted(tstar, count, (1 + level) / 2);
  out->lo = within_range(mean - t_hi * se), out->hi = within_range(mean - t_lo * se);
  out->method = EVSTATS_CI_BOOTSTRAP_T;
}

double evstats_bootstrap_t_prepare(const double *x, size_t n, double mean, double *y) {
  double scale[2], ss = 0;
  evstats_deviation_scale(x, n, mean, scale);
  for (size_t i = 0; i < n; i++) {
    y[i] = (x[i] * scale[0] - mean * scale[0]) * scale[1];
    ss += y[i] * y[i];
  }
  return sqrt(ss / (double)(n - 1) / (double)n);
}

/* The studentized bootstrap of one sample: t* = mean* / se* of resampled
 * scaled deviations, bounds mean - t*_hi se and mean - t*_lo se. */
static int bootstrap_t(const double *x, const evstats_summary *s, size_t resamples, double level,
                       uint64_t seed, evstats_ci *out) {
  size_t n = s->n;
  double *y = malloc((n + resamples) * sizeof *y);
  if (!y) return EVSTATS_ENOMEM;
  double *tstar = y + n, se0 = evstats_bootstrap_t_prepare(x, n, s->mean, y);
  evstats_rng rng;
  evstats_rng_seed(&rng, seed);
  for (size_t r = 0; r < resamples; r++) {
    double sum = 0, sumsq = 0;
    for (size_t i = 0; i < n; i++) {
      double v = y[evstats_rng_below(&rng, n)];
      sum += v, sumsq += v * v;
    }
    tstar[r] = evstats_studentized(sum, sumsq, n, se0);
  }
  evstats_bootstrap_t_bounds(tstar, resamples, s->mean, s->sd / sqrt((double)n), level, out);
  free(y);
  return EVSTATS_OK;
}

int evstats_mean_ci(const double *x, size_t n, int bounded, size_t resamples, double level, uint64_t seed,
                    evstats_ci *out) {
  evstats_summary s;
  evstats_summarize(x, n, bounded, &s);
  if (evstats_mean_ci_summary(&s, level, out) != EVSTATS_CI_BOOTSTRAP_T) return EVSTATS_OK;
  return bootstrap_t(x, &s, resamples, level, seed, out);
}

/* The interval of one side of a paired difference: Wilson's for 0/1
 * scores, as Newcombe's method 10 (Clopper-Pearson's conservatism would
 * add up over the two sides), else the interval of its mean. */
static void margin(const evstats_summary *s, double level, evstats_ci *c) {
  if (s->n >= 2 && s->binary) {
    evstats_wilson(s->mean, (double)s->n, level, &c->lo, &c->hi);
    c->method = EVSTATS_CI_MOVER;
    return;
  }
  evstats_mean_ci_summary(s, level, c);
}

/* sqrt(x^2 - 2 r x y + y^2) for distances x, y >= 0 and |r| <= 1, scaled
 * by the larger so that distances of 1e-200 do not square to 0. */
static double mover_half(double x, double y, double r) {
  double big = fmax(x, y);
  if (big == 0) return 0;
  x /= big, y /= big;
  return big * sqrt(fmax(0, x * x - 2 * r * x * y + y * y));
}

int evstats_paired_ci(const double *a, const double *b, size_t n, int bounded, size_t resamples, double level,
                      uint64_t seed, evstats_ci *out) {
  if (!bounded) { /* the differences as one sample */
    double *d = malloc((n ? n : 1) * sizeof *d), scale[2];
    if (!d) return EVSTATS_ENOMEM;
    double big = 0;
    for (size_t i = 0; i < n; i++) big = fmax(big, fmax(fabs(a[i]), fabs(b[i])));
    scale[0] = evstats_scale_for(big);
    for (size_t i = 0; i < n; i++) d[i] = b[i] * scale[0] - a[i] * scale[0];
    int rc = evstats_mean_ci(d, n, 0, resamples, level, seed, out);
    out->lo = within_range(out->lo / scale[0]), out->hi = within_range(out->hi / scale[0]);
    free(d);
    return rc;
  }
  /* MOVER: each end of the difference's interval from the two means'
   * distances to their own ends, with the correlation of the pairs
   * (Newcombe 1998, method 10, for 0/1 scores) */
  evstats_summary sa, sb;
  evstats_ci ca, cb;
  evstats_summarize(a, n, 1, &sa), evstats_summarize(b, n, 1, &sb);
  margin(&sa, level, &ca), margin(&sb, level, &cb);
  double r = 0, delta = sb.mean - sa.mean;
  int rc = evstats_pearson(a, b, n, &r);
  if (rc == EVSTATS_ENOMEM) return rc;
  if (rc) r = 0; /* a constant side: no correlation to use */
  double el = sb.mean - cb.lo, eu = cb.hi - sb.mean, dl = sa.mean - ca.lo, du = ca.hi - sa.mean;
  out->lo = fmax(-1, delta - mover_half(el, du, r));
  out->hi = fmin(1, delta + mover_half(eu, dl, r));
  out->method = ca.method == EVSTATS_CI_NONE ? EVSTATS_CI_NONE
                : ca.method == EVSTATS_CI_CONSTANT && cb.method == EVSTATS_CI_CONSTANT ? EVSTATS_CI_CONSTANT
                                                                                        : EVSTATS_CI_MOVER;
  return EVSTATS_OK;
}
