/* Dot product and cosine similarity (evalua/vector.h). Sums run in index
 * order, so results are the same on every platform. */
#include <math.h>

#include "evalua/vector.h"

static double max_abs(const double *x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(x[i]) > m) m = fabs(x[i]);
  return m;
}

/* sum (a[i] / sa) (b[i] / sb): every term at most 1 in magnitude */
static double scaled_dot(const double *a, double sa, const double *b, double sb, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += (a[i] / sa) * (b[i] / sb);
  return s;
}

/* Plain sums this small may have lost terms to underflow. */
static const double tiny = 1e-280;

double evvec_dot(const double *a, const double *b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  if (isfinite(s) && fabs(s) >= tiny) return s;
  double sa = max_abs(a, n), sb = max_abs(b, n);
  if (sa == 0 || sb == 0) return 0;
  return scaled_dot(a, sa, b, sb, n) * sa * sb;
}

double evvec_cosine(const double *a, const double *b, size_t n) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; i++) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  if (!(isfinite(dot) && isfinite(aa) && isfinite(bb) && aa >= tiny && bb >= tiny)) {
    double sa = max_abs(a, n), sb = max_abs(b, n);
    if (sa == 0 || sb == 0) return 0; /* no direction to compare */
    dot = scaled_dot(a, sa, b, sb, n); /* scaled, nothing overflows or vanishes */
    aa = scaled_dot(a, sa, a, sa, n);
    bb = scaled_dot(b, sb, b, sb, n);
  }
  double c = dot / (sqrt(aa) * sqrt(bb));
  return c > 1 ? 1 : c < -1 ? -1 : c;
}
