/* Student's t distribution through the regularized incomplete beta
 * function, which is evaluated by its continued fraction (DLMF 8.17.22)
 * with the modified Lentz algorithm. */
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
