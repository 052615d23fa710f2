/* Student's t distribution through the regularized incomplete beta
 * function, which is evaluated by its continued fraction (DLMF 8.17.22)
 * with the modified Lentz algorithm; the quantiles of the beta, t and
 * standard normal distributions for confidence intervals. */
#include <float.h>
#include <math.h>

#include "evalua/stats.h"

/* 1 + d1/(1 + d2/(1 + ...)), the denominator of DLMF 8.17.22; converges
 * fast for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int m = 0; m < 100000; m++) {
    for (int odd = 1; odd >= 0; odd--) {
      double coef;
      if (odd) /* d_{2m+1} */
        coef = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
      else { /* d_{2m+2} */
        double k = m + 1;
        coef = (k * (b - k) * x) / ((a + 2 * k - 1) * (a + 2 * k));
      }
      d = 1 + coef * d;
      if (fabs(d) < tiny) d = tiny;
      c = 1 + coef / c;
      if (fabs(c) < tiny) c = tiny;
      d = 1 / d;
      double delta = c * d;
      f *= delta;
      if (fabs(delta - 1) < 2 * DBL_EPSILON) return f;
    }
  }
  return f;
}

/* I_x(a, b) given lbeta = log B(a, b), which is symmetric in a and b. */
static double betainc(double a, double b, double x, double lbeta) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - betainc(b, a, 1 - x, lbeta);
  double log_front = a * log(x) + b * log1p(-x) - lbeta;
  return exp(log_front) / (a * beta_fraction(a, b, x));
}

/* lgamma_r, since lgamma writes the global signgam: groups' intervals are
 * computed on two threads (metrics/group.c). */
static double log_gamma(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

static double log_beta(double a, double b) { return log_gamma(a) + log_gamma(b) - log_gamma(a + b); }

double evstats_betainc(double a, double b, double x) {
  return x <= 0 ? 0 : x >= 1 ? 1 : betainc(a, b, x, log_beta(a, b));
}

double evstats_t_two_sided(double t, double df) {
  if (isinf(t)) return 0;
  /* P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) */
  return evstats_betainc(df / 2, 0.5, df / (df + t * t));
}

double evstats_t_cdf(double t, double df) {
  double tail = evstats_t_two_sided(t, df) / 2;
  return t < 0 ? tail : 1 - tail;
}

/* Acklam's rational approximation of the standard normal quantile (relative
 * error below 1.2e-9), polished by one Halley step on erfc to full
 * precision. */
static double t_quantile(double p, double df);

double evstats_norm_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  if (p > 0.5) return -evstats_norm_quantile(1 - p);
  double x;
  if (p < 0.02425) {
    double q = sqrt(-2 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double e = 0.5 * erfc(-x / sqrt(2)) - p, u = e * sqrt(2 * M_PI) * exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

/* x with I_x(a, b) = p for p <= 1/2, by Newton's method on log I_x as a
 * function of log x, which is nearly a straight line (slope a) where the
 * quantile is small: tails of any shape converge in a few steps. Every
 * evaluation narrows a bracket; a step that would leave it bisects it
 * instead (in log x). For large a and b, I_x carries lgamma's rounding
 * (about 1e-10 at 10^5): once a Newton step no longer shrinks the error, x
 * is as good as that. */
static double lower_quantile(double p, double a, double b, double guess) {
  double lbeta = log_beta(a, b), logp = log(p), lo = -INFINITY, hi = 0;
  if (!(guess > 0 && guess < 1)) {
    double mean = a / (a + b), sd = sqrt(a * b / ((a + b) * (a + b) * (a + b + 1)));
    guess = mean + evstats_norm_quantile(p) * sd; /* the normal approximation, */
    if (!(guess > 0 && guess < 1)) guess = exp((logp + log(a) + lbeta) / a); /* or I_x ~ x^a / (a B) */
    if (!(guess > 0 && guess < 1)) guess = 0.5;
  }
  double t = log(guess), best = guess, best_err = INFINITY;
  int newton = 0;
  for (int i = 0; i < 200; i++) {
    double x = exp(t), in = betainc(a, b, x, lbeta);
    double err = in > 0 ? log(in) - logp : -INFINITY;
    if (fabs(err) < best_err) best = x, best_err = fabs(err);
    else if (newton) return best;
    if (err == 0) return x;
    if (err < 0) lo = t;
    else hi = t;
    double step = err / exp(a * t + (b - 1) * log1p(-x) - lbeta - log(in)); /* d log I / d log x */
    double tol = 1e-14 * fmax(1, fabs(t)); /* log x to 1e-14: x to a relative 1e-14 */
    if (isfinite(step) && fabs(step) <= tol) return exp(t - step);
    if (hi - lo <= tol) return best;
    newton = isfinite(step) && t - step > lo && t - step < hi;
    t = newton ? t - step : lo == -INFINITY ? 2 * hi - 1 : lo + (hi - lo) / 2;
  }
  return best;
}

double evstats_beta_quantile(double p, double a, double b) { return evstats_beta_quantile_near(p, a, b, -1); }

double evstats_beta_quantile_near(double p, double a, double b, double guess) {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  /* the upper half through I_x(a, b) = 1 - I_{1-x}(b, a): 1 - x keeps its digits */
  if (p > 0.5) return 1 - lower_quantile(1 - p, b, a, guess > 0 && guess < 1 ? 1 - guess : -1);
  return lower_quantile(p, a, b, guess);
}

double evstats_t_quantile(double p, double df) {
  /* intervals ask for the same quantile group after group */
  static _Thread_local double last_p = -1, last_df = -1, last_t = 0;
  if (p == last_p && df == last_df) return last_t;
  last_p = p, last_df = df, last_t = t_quantile(p, df);
  return last_t;
}

static double t_quantile(double p, double df) {
  if (p == 0.5) return 0;
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  if (df > 1e5) { /* Cornish-Fisher in 1/df (A&S 26.7.5): its next term is below 1e-15 */
    double z = evstats_norm_quantile(p), z2 = z * z;
    return z + z * (z2 + 1) / (4 * df) + z * ((5 * z2 + 16) * z2 + 3) / (96 * df * df);
  }
  /* P(|T| <= t) = I_y(1/2, df/2) with y = t^2 / (df + t^2): y is small where
   * t is, so it keeps its precision for any df */
  double central = p > 0.5 ? 2 * p - 1 : 1 - 2 * p;
  double y = evstats_beta_quantile(central, 0.5, df / 2);
  double t = sqrt(df * y / (1 - y));
  return p > 0.5 ? t : -t;
}
