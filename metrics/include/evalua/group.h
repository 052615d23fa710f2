/* Aggregates of score columns per system and slice, in one pass per slice
 * dimension: count, coverage, mean, sd, min, max and a confidence interval
 * of the mean; and the k lowest items per system and metric. Unmeasured
 * values never enter a statistic. docs/stats.md states the CI method. */
#ifndef EVALUA_GROUP_H
#define EVALUA_GROUP_H

#include <stddef.h>
#include <stdint.h>

struct evg_scores {
  size_t n, m;                  /* rows, metrics */
  const double *const *val;     /* val[j][i]: metric j of row i */
  const uint8_t *const *miss;   /* miss[j][i]: 1 when unmeasured */
};

struct evg_dim {
  const uint32_t *code; /* value of each row, 0..nvalues-1; NULL: every row 0 */
  size_t nvalues;
};

/* Runs job(args[0]) and job(args[1]), at once where the host can. */
typedef void (*evg_parallel_fn)(void (*job)(void *), void *args[2]);

struct evg_ci {
  int on;
  size_t resamples;
  double level;
  uint64_t seed;
  size_t bootstrap_max;    /* larger groups beyond [0, 1] use Student's t */
  double draw_budget;      /* resamples x rows bootstrapped per call, at most */
  evg_parallel_fn parallel; /* NULL: one thread */
};

struct evg_stat {
  size_t n, measured;
  double mean, sd, min, max, lo, hi;
  uint8_t method; /* EVSTATS_CI_* of the interval [lo, hi]; NONE: no interval */
};

/* The groups that have rows, in order of (system, value): stat[k * m + j]
 * is metric j of group k. */
struct evg_result {
  size_t ngroups;
  uint32_t *sys, *value;
  struct evg_stat *stat;
};

/* Statistics of every (system, value of d) group with rows and metric.
 * The interval's method follows the values (evstats_mean_ci_summary): a
 * metric whose every value in the run lies in [0, 1] gets Wilson's interval
 * where a group's values are 0/1 and Korn and Graubard's otherwise; other
 * metrics the studentized bootstrap for groups of at most bootstrap_max
 * rows, smallest groups first while their draws fit draw_budget, and
 * Student's t for the rest. Cost: linear in the rows (a sort when systems
 * x values far exceeds them), never in systems x values. 0, or -1 when out
 * of memory. */
int evg_aggregate(const struct evg_scores *sc, const uint32_t *sys, size_t nsys, const struct evg_dim *dim,
                  const struct evg_ci *ci, struct evg_result *res);
void evg_result_free(struct evg_result *r);

/* The k lowest measured rows of metric j per system (highest when
 * lower_is_better), ties in row order: out[s * k ...], count[s] of them. */
int evg_bottom(const struct evg_scores *sc, size_t j, const uint32_t *sys, size_t nsys, size_t k,
               int lower_is_better, size_t *out, size_t *count);

#endif
