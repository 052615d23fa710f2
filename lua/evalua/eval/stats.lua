-- ev.stats: statistics over lists of numbers, computed in C (metrics/stats.h).
-- The C functions are exported as they are, so an argument error points at
-- the caller's line. Reference: docs/stats.md.
--   sum, mean, variance, sd, min, max, median, percentile(xs, p | {p...})
--   bottom_k(values, ids, k), top_k(values, ids, k)
--   bootstrap_ci(xs [, {resamples=, level=, seed=}]) -> {lo=, hi=, mean=, ...}
--   paired_permutation(a, b [, {resamples=, seed=, exact=}]) -> {p=, mean_diff=, ...}
--   paired_ttest(a, b) -> {t=, df=, p=, mean_diff=, n=}
--   mean_ci(xs [, {level=, resamples=, seed=, bounded=}]), paired_ci(a, b [, same])
--   pearson, spearman, kendall (tau-b), cohen_kappa(a, b [, {weights=}])
--   max_resamples: the most resamples any of them takes
-- Where a statistic is undefined for its input it returns nil and the reason.
local c = require "evalua._stats"

local M = {}
for name, f in pairs(c) do M[name] = f end
return M
