-- ev.stats from Lua: values, nil-with-reason where a statistic is undefined,
-- reproducible seeds and argument errors. Expected numbers: by hand, or
-- numpy 1.24 / scipy 1.10 / scikit-learn 1.2 on the same input (see the
-- derivations in tests/c/test_stats.c).
local lu = require "luaunit"
local ev = require "evalua"
local s = ev.stats

local A = { 0.62, 0.81, 0.44, 0.90, 0.57, 0.73, 0.68, 0.51, 0.79, 0.66 }
local B = { 0.55, 0.78, 0.47, 0.81, 0.50, 0.69, 0.70, 0.42, 0.74, 0.60 }

function test_descriptive()
  local x = { 2, 4, 4, 4, 5, 5, 7, 9 }
  lu.assertEquals(s.mean(x), 5.0)
  lu.assertEquals(s.sum(x), 40.0)
  lu.assertEquals(s.sd(x, { population = true }), 2.0)
  lu.assertAlmostEquals(s.variance(x), 32 / 7, 1e-15)
  lu.assertAlmostEquals(s.sd(x), math.sqrt(32 / 7), 1e-15)
  lu.assertEquals(s.mean { 0.1, 0.1, 0.1 }, 0.1)
  lu.assertEquals({ s.min { 3, 1, 2, 1 } }, { 1.0, 2 })   -- value and first index
  lu.assertEquals({ s.max { 3, 1, 2, 3 } }, { 3.0, 1 })
  lu.assertEquals(s.median { 5, 1, 3, 2 }, 2.5)
  lu.assertEquals(s.percentile({ 1, 2, 3, 4 }, 25), 1.75)      -- type 7: h = 0.75
  lu.assertEquals(s.percentile({ 15, 20, 35, 40, 50 }, { 5, 40, 50 }), { 16.0, 29.0, 35.0 })
  lu.assertEquals(s.sd({ 7 }, { population = true }), 0.0)
end

function test_undefined_statistics_return_nil_and_a_reason()
  lu.assertEquals({ s.sd { 7 } }, { nil, "needs at least 2 values" })
  lu.assertEquals({ s.paired_ttest({ 1 }, { 2 }) }, { nil, "needs at least 2 pairs" })
  lu.assertEquals({ s.pearson({ 1, 1, 1 }, { 1, 2, 3 }) }, { nil, "x is constant" })
  lu.assertEquals({ s.spearman({ 1, 2, 3 }, { 4, 4, 4 }) }, { nil, "y is constant" })
  lu.assertEquals({ s.kendall({ 1 }, { 2 }) }, { nil, "needs at least 2 pairs" })
  local k, why = s.cohen_kappa({ "a", "a" }, { "a", "a" })
  lu.assertNil(k)
  lu.assertStrContains(why, "both raters used one and the same category")
end

function test_bottom_and_top_k_keep_ties_in_input_order()
  local v, ids = { 0.5, 0.1, 0.5, 0.1, 0.9 }, { "q1", "q2", "q3", "q4", "q5" }
  lu.assertEquals(s.bottom_k(v, ids, 3), {
    { index = 2, id = "q2", value = 0.1 }, { index = 4, id = "q4", value = 0.1 },
    { index = 1, id = "q1", value = 0.5 } })
  lu.assertEquals(s.top_k(v, ids, 2), { { index = 5, id = "q5", value = 0.9 }, { index = 1, id = "q1", value = 0.5 } })
  lu.assertEquals(#s.bottom_k(v, nil, 10), 5)      -- k beyond n: all of them
  lu.assertEquals(s.bottom_k(v, nil, 1)[1].id, 2)  -- no ids: the index stands in
  lu.assertEquals(s.bottom_k(v, ids, 0), {})
end

function test_bootstrap_is_seeded_and_reproducible()
  -- values of an independent transcription of the algorithm (docs/stats.md)
  local c = s.bootstrap_ci(A)
  lu.assertAlmostEquals(c.lo, 0.5880000000000001, 1e-15)
  lu.assertAlmostEquals(c.hi, 0.7480249999999999, 1e-15)
  lu.assertAlmostEquals(c.mean, 0.671, 1e-15)
  lu.assertEquals({ c.level, c.resamples, c.seed }, { 0.95, 1000, 1 })
  lu.assertEquals(s.bootstrap_ci(A, { seed = 1 }), c)
  local d = s.bootstrap_ci(A, { resamples = 200, level = 0.9, seed = 99 })
  lu.assertAlmostEquals(d.lo, 0.6069, 1e-15)
  lu.assertAlmostEquals(d.hi, 0.7372, 1e-15)
  lu.assertNotEquals(s.bootstrap_ci(A, { seed = 2 }).lo, c.lo)
end

function test_paired_tests()
  -- scipy: permutation_test(..., permutation_type='samples', n_resamples=inf) and ttest_rel
  local p = s.paired_permutation(A, B)
  lu.assertEquals({ p.p, p.exact, p.patterns, p.n }, { 0.015625, true, 1024, 10 })
  lu.assertAlmostEquals(p.mean_diff, 0.045, 1e-15)
  local mc = s.paired_permutation(A, B, { exact = false, resamples = 999, seed = 5 })
  lu.assertEquals({ mc.p, mc.exact, mc.patterns }, { 0.018, false, 999 })
  local t = s.paired_ttest(A, B)
  lu.assertAlmostEquals(t.t, 3.412530939367525, 1e-12)
  lu.assertAlmostEquals(t.p, 0.007718628398093086, 1e-14)
  lu.assertEquals({ t.df, t.n }, { 9.0, 10 })
  lu.assertEquals(s.paired_ttest(A, A).p, 1.0)
end

function test_correlations_and_kappa()
  local x, y = { 1, 2, 2, 3, 3, 3, 4, 5, 5, 6 }, { 2, 2, 1, 3, 4, 4, 4, 6, 5, 5 }
  lu.assertAlmostEquals(s.pearson(x, y), 0.875, 1e-14)
  lu.assertAlmostEquals(s.spearman(x, y), 0.9182389937106918, 1e-14)
  lu.assertAlmostEquals(s.kendall(x, y), 0.8, 1e-14)
  -- 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> 0.4 (by hand)
  local a, b = {}, {}
  for i = 1, 50 do
    a[i] = i <= 25 and "yes" or "no"
    b[i] = (i <= 20 or (i > 25 and i <= 35)) and "yes" or "no"
  end
  lu.assertAlmostEquals(s.cohen_kappa(a, b), 0.4, 1e-15)
  local r1, r2 = { 1, 2, 3, 4, 5, 3, 2, 4, 5, 1, 3, 4 }, { 1, 2, 2, 4, 4, 3, 3, 5, 5, 2, 3, 3 }
  lu.assertAlmostEquals(s.cohen_kappa(r1, r2), 0.368421052631579, 1e-14)
  lu.assertAlmostEquals(s.cohen_kappa(r1, r2, { weights = "linear" }), 0.6470588235294117, 1e-14)
  lu.assertAlmostEquals(s.cohen_kappa(r1, r2, { weights = "quadratic" }), 0.8414096916299559, 1e-14)
  -- 1 and 1.0 are one category; booleans are labels too
  lu.assertEquals(s.cohen_kappa({ 1, 2.0, true }, { 1.0, 2, true }), 1.0)
  -- weighted, on values near the largest double: the same as on -1, 0, 1
  -- (by hand: linear 1 - 4/3.5, quadratic 1 - 8/5.5), not NaN
  local big, small = { 1e308, -1e308, 1e308, 0 }, { 1e308, 1e308, -1e308, 0 }
  lu.assertAlmostEquals(s.cohen_kappa(big, small, { weights = "linear" }), 1 - 8 / 7, 1e-14)
  lu.assertAlmostEquals(s.cohen_kappa(big, small, { weights = "quadratic" }), 1 - 16 / 11, 1e-14)
end

-- Issue 25, point 10: finite input never gives NaN, infinity or a silent 0
-- (expected values by hand; the C tests hold the derivations).
function test_extreme_magnitudes_give_finite_correct_results()
  lu.assertEquals(s.mean { 1e308, 1e308 }, 1e308)
  lu.assertEquals({ s.sum { 1e308, 1e308 } }, { nil, "the sum is beyond the range of a double" })
  lu.assertEquals(s.sum { 1e308, 1e308, -1e308 }, 1e308)
  lu.assertAlmostEquals(s.sd { -1e308, 1e308 } / 1e308, math.sqrt(2), 1e-15)
  lu.assertAlmostEquals(s.sd { 1e-200, 2e-200, 3e-200 } / 1e-200, 1, 1e-15)
  lu.assertEquals({ s.variance { 1e-200, 2e-200, 3e-200 } },
                  { nil, "the variance is outside the range of a double (sd gives its square root)" })
  lu.assertEquals(s.percentile({ -1.7e308, 1.7e308 }, 50), 0.0)
  for _, k in ipairs { 1e-200, 1e160 } do
    local x, y = {}, {}
    for i, v in ipairs { 2, 1, 4, 3, 5 } do x[i], y[i] = i * k, v * k end
    lu.assertAlmostEquals(s.pearson(x, y), 0.8, 1e-15)
    lu.assertAlmostEquals(s.spearman(x, y), 0.8, 1e-15)
  end
  -- the bootstrap of x * 2^1023 is the bootstrap of x times 2^1023, bit for
  -- bit (scaling by a power of two is exact); it was NaN
  local c, u = s.bootstrap_ci { 2 ^ 1023, 2 ^ 1023, 1.5 * 2 ^ 1023 }, s.bootstrap_ci { 1, 1, 1.5 }
  lu.assertEquals({ c.lo, c.hi, c.mean }, { u.lo * 2 ^ 1023, u.hi * 2 ^ 1023, u.mean * 2 ^ 1023 })
  lu.assertTrue(u.lo < u.hi)
  c, u = s.mean_ci { 2 ^ 1000, 3 * 2 ^ 1000 }, s.mean_ci({ 1, 3 }, { bounded = false })
  lu.assertEquals({ c.method, c.lo, c.hi }, { "student_t", u.lo * 2 ^ 1000, u.hi * 2 ^ 1000 })
  local p = s.paired_permutation({ 1e308, 1e308, 1e308 }, { 0, 0, 0 })
  lu.assertEquals({ p.p, p.mean_diff, p.exact }, { 0.25, 1e308, true })
  lu.assertEquals({ s.paired_permutation({ 1e308, 1.2e308 }, { -1e308, -1e308 }) },
                  { nil, "the mean difference is beyond the range of a double" })
  local t = s.paired_ttest({ 1e-200, 2e-200, 4e-200 }, { 0, 0, 0 })
  lu.assertAlmostEquals(t.t, math.sqrt(7), 1e-14)
  lu.assertAlmostEquals(t.p, 1 - math.sqrt(7) / 3, 1e-14)
end

-- Issue 25, point 9: the interval a slice gets follows what its scores are
-- (expected values: closed forms, or the independent computations of
-- tests/c/test_stats.c).
function test_mean_ci_chooses_the_method_by_the_values()
  local ones, frac = {}, { 0.2, 0.5, 0.9, 1.0, 0.7, 0.6 }
  for i = 1, 13 do ones[i] = 1 end
  local c = s.mean_ci(ones) -- 13 of 13: not [1, 1], but Clopper-Pearson's [0.025^(1/13), 1]
  lu.assertEquals({ c.method, c.hi, c.n, c.level, c.mean }, { "clopper_pearson", 1.0, 13, 0.95, 1.0 })
  lu.assertAlmostEquals(c.lo, 0.025 ^ (1 / 13), 1e-15)
  c = s.mean_ci(frac)
  lu.assertEquals(c.method, "korn_graubard")
  lu.assertAlmostEquals(c.lo, 0.29595284578256176, 1e-13)
  lu.assertAlmostEquals(c.hi, 0.9113329141867723, 1e-13)
  lu.assertEquals(s.mean_ci({ 0.7, 0.7 }), { lo = 0.7, hi = 0.7, mean = 0.7, method = "constant", level = 0.95, n = 2 })
  c = s.mean_ci { 3, 7, 1, 12, 5, 2, 30, 4 }
  lu.assertEquals(c.method, "bootstrap_t")
  lu.assertAlmostEquals(c.lo, 2.339208210725503, 1e-13)
  lu.assertEquals(s.mean_ci({ 0.5, 1 }, { bounded = false }).method, "student_t") -- fewer than 8 values
  lu.assertEquals({ s.mean_ci { 0.5 } }, { nil, "needs at least 2 values" })
  lu.assertErrorMsgContains("option 'bounded' is true but a value of xs is outside [0, 1]",
                            s.mean_ci, { 0.5, 2 }, { bounded = true })
end

function test_paired_ci_is_mover_for_scores_in_unit_range()
  local c = s.paired_ci({ 1, 1, 0, 1, 0, 1, 1, 1, 1, 0 }, { 1, 1, 1, 1, 0, 1, 1, 1, 1, 1 })
  lu.assertEquals(c.method, "mover")
  lu.assertAlmostEquals(c.delta, 0.2, 1e-15)
  lu.assertAlmostEquals(c.lo, -0.06442085610807952, 1e-14)
  lu.assertAlmostEquals(c.hi, 0.47079352078172393, 1e-14)
  -- beyond [0, 1]: the differences as one sample (here all 2: constant)
  lu.assertEquals(s.paired_ci({ 10, 20, 30 }, { 12, 22, 32 }).method, "constant")
  lu.assertEquals({ s.paired_ci({ 1 }, { 0 }) }, { nil, "needs at least 2 pairs" })
end

function test_a_slice_of_13_successes_is_not_certain()
  -- the bundled report printed 1.000 [1.000, 1.000] (13/15)
  local rows = {}
  for i = 1, 15 do rows[i] = { qid = "q" .. i, ok = i <= 13 } end
  local res = ev.evaluate(rows, { quiet = true, metrics = { { name = "ok", fn = function(r)
    if r.ok then return 1 end
    return { unmeasured = true, reason = "no answer" }
  end } } })
  local a = res:agg("all", "ok")
  lu.assertEquals({ a.measured, a.ci_method, a.hi }, { 13, "clopper_pearson", 1.0 })
  lu.assertAlmostEquals(a.lo, 0.025 ^ (1 / 13), 1e-15)
  local md = ev.report.render(res, "md")
  lu.assertStrContains(md, "1.000 [0.753, 1.000] (13/15)")
  lu.assertStrContains(md, "95% confidence intervals: Clopper-Pearson for 0/1 scores")
end

-- A comparison row's interval as the reports print it: with the paired
-- difference it surrounds where that differs from the row's delta (an item
-- measured on one side only), and the methods named once under the table.
function test_comparison_intervals_as_reports_print_them()
  local results, num = require "evalua.eval.results", require("evalua.report.common").num
  local row = { delta = 0.1, ci = { lo = -0.1, hi = 0.3, method = "mover", level = 0.95, delta = 0.1 } }
  lu.assertEquals(results.paired_text(row, num), "[-0.100, 0.300]")
  row.ci.delta = 0.12
  lu.assertEquals(results.paired_text(row, num), "[-0.100, 0.300] (paired: 0.120)")
  lu.assertEquals(results.paired_text({ delta = 0.1 }, num), "-") -- one pair: no interval
  local same = { delta = 0, ci = { lo = 0, hi = 0, method = "constant", level = 0.95 } }
  lu.assertEquals(results.paired_text(same, num), "[all equal]")
  lu.assertEquals(results.paired_note { row, same, { delta = 0 } },
    "95% interval of the mean paired difference over the items matched by id: MOVER from each system's own "
    .. "interval for scores in [0, 1]; none where every difference is equal (docs/stats.md)")
  lu.assertNil(results.paired_note { { delta = 0 } })
end

local fails = require("tests.lua.helpers").fails_with_argument_error

function test_bad_input_names_argument_and_index()
  fails(1, "xs is empty)", s.mean, {})
  fails(1, "xs[2] is NaN)", s.mean, { 1, 0 / 0 })
  fails(1, "xs[3] is -inf)", s.sd, { 1, 2, -math.huge })
  fails(1, "xs[2] is a string, expected a number)", s.percentile, { 1, "2" }, 50)
  fails(1, "table expected, got nil)", s.median, nil)
  fails(2, "a percentile must be between 0 and 100, got 101.0)", s.percentile, { 1 }, 101)
  fails(2, "option 'level' must be between 0 and 1, got 1.0)", s.bootstrap_ci, { 1 }, { level = 1 })
  fails(2, "option 'resamples' must be from 1 to 10000000, got 0)", s.bootstrap_ci, { 1 }, { resamples = 0 })
  fails(2, "unknown option 'sead' (known: resamples, level, seed))", s.bootstrap_ci, { 1 }, { sead = 3 })
  fails(2, "#b is 1 but #a is 2)", s.paired_ttest, { 1, 2 }, { 1 })
  fails(2, "b[2] is NaN)", s.paired_permutation, { 1, 2 }, { 1, 0 / 0 })
  fails(1, "a is empty)", s.paired_permutation, {}, {})
  fails(2, "#y is 3 but #x is 2)", s.pearson, { 1, 2 }, { 1, 2, 3 })
  fails(1, "a[2] is a table, expected a category (string, number or boolean))", s.cohen_kappa, { 1, {} }, { 1, 2 })
  fails(2, "b[1] is a string, expected a number)", s.cohen_kappa, { 1 }, { "x" }, { weights = "linear" })
  fails(3, "option 'weights' must be \"linear\" or \"quadratic\", got \"cubic\")", s.cohen_kappa, { 1 }, { 2 }, { weights = "cubic" })
  fails(2, "#ids is 1 but #values is 2)", s.bottom_k, { 1, 2 }, { "a" }, 1)
  fails(3, "k must not be negative)", s.top_k, { 1, 2 }, nil, -1)
end

-- resamples are bounded (2^62 ran for hours or failed to allocate) and the
-- options of ev.evaluate's intervals are checked before any metric runs,
-- with ev.evaluate's name, not as an argument error of the C aggregation
function test_resampling_options_are_bounded_and_checked_up_front()
  lu.assertEquals(s.max_resamples, 10000000)
  local huge = { resamples = 2 ^ 62 }
  fails(2, "option 'resamples' must be from 1 to 10000000, got 4611686018427387904)", s.bootstrap_ci, { 1, 2 }, huge)
  fails(2, "option 'resamples' must be from 1 to 10000000, got 10000001)", s.mean_ci, { 1, 2 },
        { resamples = 10000001 })
  fails(3, "option 'resamples' must be from 1 to 10000000, got 4611686018427387904)", s.paired_permutation,
        { 1, 2 }, { 2, 3 }, { resamples = 2 ^ 62, exact = false })
  fails(3, "option 'resamples' must be from 1 to 10000000, got 0)", s.paired_ci, { 1, 2 }, { 2, 3 }, { resamples = 0 })
  lu.assertEquals(s.bootstrap_ci({ 1, 2 }, { resamples = 10000000 // 1000 }).resamples, 10000)

  local ran, line = 0, nil
  local rows = { { qid = "a", v = 0.5 }, { qid = "b", v = 0.7 } }
  local metric = { name = "v", fn = function(r) ran = ran + 1 return r.v end }
  local function evaluate(ci)
    line = debug.getinfo(1, "l").currentline + 1 -- the errors name the caller's line
    local res = ev.evaluate(rows, { quiet = true, metrics = { metric }, ci = ci })
    return res
  end
  for _, case in ipairs {
    { { resamples = 2 ^ 62 }, "ci.resamples must be a whole number from 1 to 10000000 (got 4.6116860184274e+18)" },
    { { resamples = 1.5 }, "ci.resamples must be a whole number from 1 to 10000000 (got 1.5)" },
    { { resamples = "100" }, "ci.resamples must be a whole number from 1 to 10000000 (got '100')" },
    { { level = 95 }, "ci.level must be a number between 0 and 1, exclusive (got 95)" },
    { { level = "0.9" }, "ci.level must be a number between 0 and 1, exclusive (got '0.9')" },
    { { seed = 0.5 }, "ci.seed must be a whole number (got 0.5)" },
    { { bootstrap_max = -1 }, "ci.bootstrap_max must be a whole number of rows, at least 0 (got -1)" },
    { { draw_budget = math.huge }, "ci.draw_budget must be a finite number of draws, at least 0 (got inf)" },
    { { draw_budget = 0 / 0 }, "ci.draw_budget must be a finite number of draws, at least 0 (got NaN)" },
    { 5, "ci must be a table or false (got 5)" },
  } do
    local ok, err = pcall(function() return evaluate(case[1]) end)
    lu.assertFalse(ok)
    lu.assertEquals(err, ("tests/lua/test_stats.lua:%d: ev.evaluate: %s"):format(line, case[2]))
  end
  lu.assertEquals(ran, 0) -- refused before the metric ran
  local res = evaluate { resamples = 3.0, seed = 2.0, bootstrap_max = 0, level = 0.9 }
  lu.assertEquals(res.ci, { resamples = 3, seed = 2, bootstrap_max = 0, level = 0.9, draw_budget = 2e7 })
  lu.assertEquals(math.type(res.ci.resamples), "integer")

  local two = ev.evaluate({ { qid = "a", s = "x", v = 0.5 }, { qid = "a", s = "y", v = 0.7 } },
                          { quiet = true, system = "s", metrics = { metric } })
  lu.assertErrorMsgContains("ev.compare.systems: resamples must be a whole number from 1 to 10000000 (got 0)",
                            ev.compare.systems, two, { resamples = 0 })
  lu.assertErrorMsgContains("ev.compare.systems: seed must be a whole number (got 'x')",
                            ev.compare.systems, two, { seed = "x" })
end

os.exit(lu.LuaUnit.run(), true)
