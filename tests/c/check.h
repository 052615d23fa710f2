/* A few assertion macros for the plain-C unit tests: no framework, no
 * dependency, and nothing between a failure and the sanitizers. A test
 * program runs its checks, prints "N passed, N failed" and exits non-zero on
 * any failure. */
#ifndef EVALUA_CHECK_H
#define EVALUA_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (cond) check_passed++;                                                        \
    else {                                                                           \
      check_failed++;                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
    }                                                                                \
  } while (0)

#define CHECK_NEAR(got, want, tol)                                                   \
  do {                                                                               \
    double g_ = (got), w_ = (want);                                                  \
    if (fabs(g_ - w_) <= (tol)) check_passed++;                                      \
    else {                                                                           \
      check_failed++;                                                                \
      fprintf(stderr, "%s:%d: %s = %.10g, want %.10g\n", __FILE__, __LINE__, #got, g_, w_); \
    }                                                                                \
  } while (0)

#define CHECK_STR(got, want)                                                         \
  do {                                                                               \
    const char *g_ = (got), *w_ = (want);                                            \
    if (g_ && w_ && strcmp(g_, w_) == 0) check_passed++;                             \
    else {                                                                           \
      check_failed++;                                                                \
      fprintf(stderr, "%s:%d: %s = \"%s\", want \"%s\"\n", __FILE__, __LINE__, #got,  \
              g_ ? g_ : "(null)", w_ ? w_ : "(null)");                               \
    }                                                                                \
  } while (0)

static inline int check_report(void) {
  printf("%d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}

#endif
