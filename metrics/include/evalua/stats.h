/* Statistics over arrays of finite doubles: descriptive statistics,
 * bootstrap confidence intervals, paired significance tests, rank
 * correlations and rater agreement. Callers pass finite values only (the
 * Lua bindings reject NaN and infinities with a message naming the index).
 * Functions that can be undefined for an input (a variance of one value, a
 * correlation with a constant list) return EVSTATS_UNDEFINED rather than a
 * NaN; a result that a double cannot hold although the input is finite
 * (the sum of 1e308 and 1e308) is EVSTATS_RANGE. Every other result of
 * finite input is finite: values are scaled by powers of two where their
 * sums, squares or products could overflow or underflow. Definitions and
 * references: docs/stats.md. */
#ifndef EVALUA_STATS_H
#define EVALUA_STATS_H

#include <stddef.h>
#include <stdint.h>

enum { EVSTATS_OK = 0, EVSTATS_ENOMEM = -1, EVSTATS_UNDEFINED = -2, EVSTATS_RANGE = -3 };

/* ---- descriptive (stats.c) ------------------------------------------------ */

/* A power of two s such that n values x[i] * s, their squares and their
 * products cannot overflow or underflow: 1 when the largest |x[i]| (big)
 * is within 2^-400 .. 2^400, so ordinary data are computed unscaled. */
double evstats_scale(const double *x, size_t n);
double evstats_scale_for(double big);
/* Compensated (Neumaier) sum; +-inf only when the true sum is beyond a
 * double. */
double evstats_sum(const double *x, size_t n);
/* Mean with one refinement pass over the residuals (as R's mean); n > 0.
 * Always finite for finite x. */
double evstats_mean(const double *x, size_t n);
/* Variance with divisor n - ddof; UNDEFINED when n <= ddof, RANGE when a
 * non-zero variance is beyond a double or below its smallest value. */
int evstats_variance(const double *x, size_t n, size_t ddof, double *var);
/* Its square root, computed without forming the variance: RANGE only
 * beyond a double (the sd of -1e308 and 1e308 is 1.41e308). */
int evstats_sd(const double *x, size_t n, size_t ddof, double *sd);
/* evstats_mean and evstats_sd at once (n > 0), the same values from fewer
 * passes: they share the scaling and the mean. Returns evstats_sd's code. */
int evstats_mean_sd(const double *x, size_t n, size_t ddof, double *mean, double *sd);
/* Sorts x ascending in place. */
void evstats_sort(double *x, size_t n);
/* Quantile q in [0, 1] of sorted data by linear interpolation between
 * order statistics: Hyndman and Fan's type 7, numpy's and R's default. */
double evstats_quantile_sorted(const double *sorted, size_t n, double q);
/* idx[0..n) = 0..n-1 ordered by x (descending if asked), ties in index
 * order. */
int evstats_order(const double *x, size_t n, int descending, size_t *idx);

/* ---- random numbers (rng.c): xoshiro256** seeded by splitmix64 ------------ */

typedef struct {
  uint64_t s[4];
} evstats_rng;

void evstats_rng_seed(evstats_rng *r, uint64_t seed);

static inline uint64_t evstats_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t evstats_rng_next(evstats_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = evstats_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = evstats_rotl(s[3], 45);
  return out;
}

/* Uniform on [0, n) without modulo bias; n > 0: Lemire's multiply-and-
 * reject for n < 2^32 (one multiplication, rarely a division), plain
 * rejection above. */
static inline uint64_t evstats_rng_below(evstats_rng *r, uint64_t n) {
  if (n <= UINT32_MAX) {
    uint32_t n32 = (uint32_t)n;
    uint64_t m = (evstats_rng_next(r) >> 32) * n32;
    if ((uint32_t)m < n32) {
      uint32_t threshold = (uint32_t)(-n32) % n32; /* 2^32 mod n */
      while ((uint32_t)m < threshold) m = (evstats_rng_next(r) >> 32) * n32;
    }
    return m >> 32;
  }
  uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* multiples of n below 2^64 */
  uint64_t x;
  do x = evstats_rng_next(r);
  while (x >= limit);
  return x % n;
}

/* ---- bootstrap (bootstrap.c) ---------------------------------------------- */

/* The most resamples (bootstraps, Monte Carlo permutation tests) a caller
 * may ask for: 80 MB of resampled statistics, Monte Carlo error far below
 * any reported digit; past it a typo (1e10) would run for hours or fail. */
#define EVSTATS_MAX_RESAMPLES 10000000

/* Percentile bootstrap interval of the mean: resamples means of n draws
 * with replacement, cut at (1 - level) / 2 and (1 + level) / 2 (type 7). */
int evstats_bootstrap_mean_ci(const double *x, size_t n, size_t resamples, double level,
                              uint64_t seed, double *lo, double *hi);

/* ---- intervals of a mean (interval.c) --------------------------------------- */

enum {
  EVSTATS_CI_NONE,         /* fewer than 2 values */
  EVSTATS_CI_CONSTANT,     /* every value equal (not 0/1 in [0, 1]): lo = hi = the value */
  EVSTATS_CI_CLOPPER_PEARSON, /* 0/1 values: the exact binomial interval */
  EVSTATS_CI_KORN_GRAUBARD, /* other values in [0, 1]: Clopper-Pearson at the effective size */
  EVSTATS_CI_BOOTSTRAP_T,  /* values beyond [0, 1]: the studentized bootstrap */
  EVSTATS_CI_STUDENT_T,    /* the same where resampling is not affordable */
  EVSTATS_CI_MOVER         /* a paired difference from the two means' intervals */
};

typedef struct {
  double lo, hi;
  int method; /* EVSTATS_CI_* */
} evstats_ci;

/* What chooses the method: n values, their mean, sample sd, min and max;
 * binary: every value is 0 or 1; bounded: the metric's values lie in
 * [0, 1] (for ev.evaluate: every value of the metric in the run). */
typedef struct {
  size_t n;
  double mean, sd, min, max;
  int binary, bounded;
} evstats_summary;

/* Fewer values beyond [0, 1] get Student's t: n values have only
 * C(2n - 1, n) distinct resamples (1716 for 7), too few for the tails of
 * the bootstrap's t distribution. */
#define EVSTATS_BOOTSTRAP_MIN 8

/* The stable name of a method ("clopper_pearson", ...), NULL for NONE. */
const char *evstats_ci_name(int method);
void evstats_summarize(const double *x, size_t n, int bounded, evstats_summary *s);
/* The analytic methods; returns the method, BOOTSTRAP_T when the values
 * are beyond [0, 1] and at least EVSTATS_BOOTSTRAP_MIN (the caller
 * resamples, or takes evstats_student_t_ci). */
int evstats_mean_ci_summary(const evstats_summary *s, double level, evstats_ci *ci);
void evstats_student_t_ci(const evstats_summary *s, double level, evstats_ci *ci);
/* Wilson's score interval for a share of n 0/1 values (MOVER's sides). */
void evstats_wilson(double share, double n, double level, double *lo, double *hi);
/* Clopper-Pearson for x of n, both real (effective sizes). */
void evstats_clopper_pearson(double x, double n, double level, double *lo, double *hi);

/* The studentized bootstrap, in parts that ev.evaluate's grouped resampling
 * shares: y[i], the deviations x[i] - mean scaled by powers of two (largest
 * near 1), and the returned se of the mean in those units; the t* of a
 * resample from its sum, sum of squares and count (a resample without
 * spread is divided by se0); the bounds from the t* (sorted in place) and
 * the sample's se. */
double evstats_bootstrap_t_prepare(const double *x, size_t n, double mean, double *y);
void evstats_deviation_scale(const double *x, size_t n, double mean, double scale[2]);
double evstats_studentized(double sum, double sumsq, size_t count, double se0);
void evstats_bootstrap_t_bounds(double *tstar, size_t count, double mean, double se, double level,
                                evstats_ci *ci);

/* The interval of the mean of x that ev.evaluate reports for a group with
 * these values (bounded as above; beyond [0, 1] the bootstrap is seeded). */
int evstats_mean_ci(const double *x, size_t n, int bounded, size_t resamples, double level, uint64_t seed,
                    evstats_ci *ci);
/* The interval of mean(b - a) over n pairs: MOVER from the two means'
 * intervals when both lie in [0, 1] (bounded), else the interval of the
 * differences as one sample. */
int evstats_paired_ci(const double *a, const double *b, size_t n, int bounded, size_t resamples, double level,
                      uint64_t seed, evstats_ci *ci);

/* ---- paired tests (hypothesis.c) ------------------------------------------ */

typedef struct {
  double p;         /* two-sided p-value */
  double mean_diff; /* mean of a[i] - b[i] */
  int exact;        /* 1: all 2^k sign patterns enumerated */
  size_t patterns;  /* patterns enumerated, or Monte Carlo resamples */
} evstats_permutation;

/* Paired randomisation test of the mean difference by sign flips. With at
 * most max_exact non-zero differences every pattern is enumerated (exact
 * p); otherwise p = (1 + hits) / (1 + resamples) over random patterns. */
int evstats_paired_permutation(const double *a, const double *b, size_t n, size_t resamples,
                               uint64_t seed, size_t max_exact, evstats_permutation *out);

typedef struct {
  double t, df, p, mean_diff;
} evstats_ttest;

/* Paired Student t-test, two-sided; UNDEFINED when n < 2. All-zero
 * differences give t = 0, p = 1; constant non-zero ones t = +-inf, p = 0. */
int evstats_paired_ttest(const double *a, const double *b, size_t n, evstats_ttest *out);

/* ---- distributions (distributions.c) ------------------------------------- */

/* Regularized incomplete beta function I_x(a, b); a, b > 0, x in [0, 1]. */
double evstats_betainc(double a, double b, double x);
/* P(|T| >= |t|) for Student's t with df degrees of freedom. */
double evstats_t_two_sided(double t, double df);
/* P(T <= t). */
double evstats_t_cdf(double t, double df);
/* Quantiles (inverse distribution functions) for p in (0, 1); to about
 * 1e-14 relative: the standard normal, the beta (a, b > 0) and Student's t
 * (df > 0). */
double evstats_norm_quantile(double p);
double evstats_beta_quantile(double p, double a, double b);
/* The same, Newton's iteration started at guess in (0, 1). */
double evstats_beta_quantile_near(double p, double a, double b, double guess);
double evstats_t_quantile(double p, double df);

/* ---- correlation (correlation.c) ------------------------------------------ */

/* Ranks 1..n, ties given the average of the ranks they span. */
int evstats_ranks(const double *x, size_t n, double *ranks);
/* UNDEFINED when n < 2 or either list is constant. */
int evstats_pearson(const double *x, const double *y, size_t n, double *r);
int evstats_spearman(const double *x, const double *y, size_t n, double *rho);
/* Kendall's tau-b in O(n log n) (Knight's algorithm). */
int evstats_kendall(const double *x, const double *y, size_t n, double *tau);

/* ---- agreement (agreement.c) ---------------------------------------------- */

enum evstats_weights { EVSTATS_UNWEIGHTED, EVSTATS_LINEAR, EVSTATS_QUADRATIC };

/* Cohen's kappa of two raters' categories a[i], b[i] in [0, k). Weighted
 * forms weigh a disagreement by |v_i - v_j| or (v_i - v_j)^2 of the
 * categories' values (ignored when unweighted). UNDEFINED when the chance
 * agreement leaves nothing to improve on (both raters always used one and
 * the same category). */
int evstats_cohen_kappa(const size_t *a, const size_t *b, size_t n, size_t k,
                        const double *values, enum evstats_weights w, double *kappa);

/* Maps numeric ratings to categories: values gets the k distinct values of
 * a and b in ascending order (room for 2n), ca and cb their indices. */
int evstats_categories(const double *a, const double *b, size_t n, size_t *ca, size_t *cb,
                       double *values, size_t *k);

#endif
