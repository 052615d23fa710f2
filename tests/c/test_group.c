/* The aggregates of metrics/group.c on two threads against one: 200,000
 * rows of 3 metrics (some unmeasured, one beyond [0, 1]), 2 systems and a
 * slice of 7 values, with and without intervals, give the same statistics
 * bit for bit; each group's count, mean, min and max equal a plain loop's. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "evalua/group.h"

#define ROWS 200000
#define METRICS 3

static void *run(void *p) {
  void **a = p;
  ((void (*)(void *))a[0])(a[1]);
  return NULL;
}

/* Both jobs at once on two threads. */
static void two_threads(void (*job)(void *), void *args[2]) {
  pthread_t th;
  void *a[2] = {(void *)job, args[1]};
  int started = pthread_create(&th, NULL, run, a) == 0;
  job(args[0]);
  if (started) pthread_join(th, NULL);
  else job(args[1]);
}

static uint64_t rng = 88172645463325252u;
static uint64_t next(void) { return rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; }

static int same_stats(const struct evg_result *a, const struct evg_result *b) {
  if (a->ngroups != b->ngroups) return 0;
  for (size_t k = 0; k < a->ngroups * METRICS; k++) {
    const struct evg_stat *x = &a->stat[k], *y = &b->stat[k];
    if (x->n != y->n || x->measured != y->measured || x->method != y->method || memcmp(&x->mean, &y->mean, 6 * sizeof(double)))
      return 0;
  }
  return 1;
}

int main(void) {
  static double val[METRICS][ROWS];
  static uint8_t miss[METRICS][ROWS];
  static uint32_t sys[ROWS], code[ROWS];
  for (size_t i = 0; i < ROWS; i++) {
    sys[i] = (uint32_t)(next() % 2), code[i] = (uint32_t)(next() % 7);
    for (int j = 0; j < METRICS; j++) {
      miss[j][i] = next() % 10 == 0;
      val[j][i] = miss[j][i] ? 0 : j == 0 ? (double)(next() % 2) : j == 1 ? (double)(next() % 1000) / 999 : (double)(next() % 5000) / 7;
    }
  }
  const double *vp[METRICS] = {val[0], val[1], val[2]};
  const uint8_t *mp[METRICS] = {miss[0], miss[1], miss[2]};
  struct evg_scores sc = {ROWS, METRICS, vp, mp};
  struct evg_dim dim = {code, 7};
  for (int on = 0; on <= 1; on++) {
    struct evg_ci one = {on, 200, 0.95, 1, 2000, 2e7, NULL}, two = one;
    two.parallel = two_threads;
    struct evg_result a, b;
    CHECK(evg_aggregate(&sc, sys, 2, &dim, &one, &a) == 0);
    CHECK(evg_aggregate(&sc, sys, 2, &dim, &two, &b) == 0);
    CHECK(a.ngroups == 14);
    CHECK(same_stats(&a, &b));
    int plain = 1;
    for (size_t k = 0; k < a.ngroups; k++)
      for (int j = 0; j < METRICS; j++) {
        size_t n = 0, got = 0;
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < ROWS; i++) {
          if (sys[i] != b.sys[k] || code[i] != b.value[k]) continue;
          n++;
          if (miss[j][i]) continue;
          got++, sum += val[j][i];
          lo = val[j][i] < lo ? val[j][i] : lo, hi = val[j][i] > hi ? val[j][i] : hi;
        }
        const struct evg_stat *st = &b.stat[k * METRICS + (size_t)j];
        plain &= st->n == n && st->measured == got && fabs(st->mean - sum / (double)got) < 1e-9 * (1 + fabs(st->mean)) &&
                 st->min == lo && st->max == hi;
      }
    CHECK(plain);
    evg_result_free(&a);
    evg_result_free(&b);
  }
  printf("%d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}
