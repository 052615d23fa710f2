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

double evstats_betainc(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - evstats_betainc(b, a, 1 - x);
  double log_front = a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b));
  return exp(log_front) / (a * beta_fraction(a, b, x));
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

/* A first guess of the beta quantile: the normal approximation, or where it
 * falls outside (0, 1) the leading term of I_x near 0 (x^a / (a B)) or 1. */
static double beta_guess(double p, double a, double b, double lbeta) {
  double mean = a / (a + b), sd = sqrt(a * b / ((a + b) * (a + b) * (a + b + 1)));
  double x = mean + evstats_norm_quantile(p) * sd;
  if (x > 0 && x < 1) return x;
  if (x <= 0) return exp((log(p) + log(a) + lbeta) / a);
  return -expm1((log1p(-p) + log(b) + lbeta) / b);
}

double evstats_beta_quantile(double p, double a, double b) {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  double lbeta = lgamma(a) + lgamma(b) - lgamma(a + b), lo = 0, hi = 1;
  double x = beta_guess(p, a, b, lbeta);
  if (!(x > 0 && x < 1)) x = 0.5;
  /* Newton's steps on I_x - p inside a bracket that every evaluation
   * narrows; a step that would leave the bracket bisects it instead */
  for (int i = 0; i < 300; i++) {
    double f = evstats_betainc(a, b, x) - p;
    if (f == 0) return x;
    if (f < 0) lo = x;
    else hi = x;
    double step = f / exp((a - 1) * log(x) + (b - 1) * log1p(-x) - lbeta);
    if (fabs(step) <= 1e-13 * fmin(x, 1 - x)) return x - step;
    x = x - step > lo && x - step < hi ? x - step : lo + (hi - lo) / 2;
  }
  return x;
}

double evstats_t_quantile(double p, double df) {
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
