/* Dot product and cosine similarity; expected values worked out by hand. */
#include "check.h"
#include "evalua/vector.h"

int main(void) {
  const double a[] = {1, 2, 3}, b[] = {4, 5, 6}, twice[] = {2, 4, 6};
  CHECK(evvec_dot(a, b, 3) == 32);                     /* 4 + 10 + 18 */
  CHECK_NEAR(evvec_cosine(a, twice, 3), 1, 1e-15);     /* parallel */
  CHECK(evvec_cosine(a, twice, 3) <= 1);               /* never past 1 by rounding */
  const double x[] = {1, 0}, y[] = {0, 1}, minus_x[] = {-1, 0};
  CHECK(evvec_cosine(x, y, 2) == 0);                   /* orthogonal */
  CHECK(evvec_cosine(x, minus_x, 2) == -1);            /* opposite */
  const double p[] = {3, 4}, q[] = {4, 3};
  CHECK_NEAR(evvec_cosine(p, q, 2), 24.0 / 25, 1e-15); /* 24 / (5 * 5) */
  /* a zero vector has no direction: cosine 0, dot 0 */
  const double zero[] = {0, 0, 0};
  CHECK(evvec_cosine(zero, a, 3) == 0 && evvec_cosine(a, zero, 3) == 0);
  CHECK(evvec_dot(zero, a, 3) == 0);
  /* magnitudes whose squares overflow or underflow a double */
  const double big[] = {1e200, 1e200}, big2[] = {2e200, 2e200}, bigm[] = {1e200, -1e200};
  CHECK_NEAR(evvec_cosine(big, big2, 2), 1, 1e-15);
  CHECK(evvec_cosine(big, bigm, 2) == 0);
  CHECK(evvec_dot(big, bigm, 2) == 0);  /* inf - inf avoided: 1e400 - 1e400 */
  CHECK(evvec_dot(big, big, 2) > 1e308); /* 2e400 is beyond the range: +inf, not NaN */
  const double t1[] = {1e-200, 0}, t2[] = {1e-200, 1e-200};
  CHECK_NEAR(evvec_cosine(t1, t2, 2), 1 / sqrt(2.0), 1e-15); /* 45 degrees */
  return check_report();
}
