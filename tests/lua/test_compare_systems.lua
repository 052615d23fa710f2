-- The systems of one run against a baseline system (ev.compare.systems),
-- and the warnings of a comparison with an unlike baseline, in every
-- report format that has a place for them.
local lu = require "luaunit"
local cjson = require "cjson"
local ev = require "evalua"

-- Six queries; system "new" scores lower than "old" on every one, except
-- q7, which "old" has no row for, and q6, which "new" could not measure.
local OLD = { q1 = 0.9, q2 = 0.8, q3 = 0.7, q4 = 0.6, q5 = 0.5, q6 = 0.9 }
local NEW = { q1 = 0.5, q2 = 0.5, q3 = 0.4, q4 = 0.3, q5 = 0.1, q7 = 0.2 }

local function run()
  local rows = {}
  for _, qid in ipairs { "q1", "q2", "q3", "q4", "q5", "q6" } do rows[#rows + 1] = { qid = qid, variant = "old" } end
  -- the other system's rows in another order
  for _, qid in ipairs { "q7", "q5", "q4", "q3", "q2", "q1", "q6" } do rows[#rows + 1] = { qid = qid, variant = "new" } end
  local m = { name = "m", fn = function(r)
    local s = (r.variant == "old" and OLD or NEW)[r.qid]
    if s == nil then return { unmeasured = true, reason = "no score" } end
    return s
  end }
  return ev.evaluate(rows, { metrics = { m }, system = "variant", ci = false })
end

function test_paired_on_the_ids_both_measured_with_an_exact_p()
  local res = run()
  local sc = ev.compare.systems(res, { baseline = "old" })
  lu.assertIs(res.system_comparison, sc)
  lu.assertEquals(#sc.rows, 1)
  local r = sc.rows[1]
  -- pairs q1..q5: old 0.9 0.8 0.7 0.6 0.5 (mean 0.7), new 0.5 0.5 0.4 0.3 0.1 (mean 0.36);
  -- five differences of one sign: 2 of 32 sign patterns reach |sum|, p = 1/16
  lu.assertEquals({ r.system, r.metric, r.n }, { "new", "m", 5 })
  lu.assertAlmostEquals(r.base, 0.7, 1e-12)
  lu.assertAlmostEquals(r.mean, 0.36, 1e-12)
  lu.assertAlmostEquals(r.delta, -0.34, 1e-12)
  lu.assertEquals(r.p, 0.0625)
  lu.assertFalse(r.significant)
  -- the interval of the difference: ev.stats.paired_ci of the same pairs (its
  -- values are checked in tests/lua/test_stats.lua)
  local ci = ev.stats.paired_ci({ 0.9, 0.8, 0.7, 0.6, 0.5 }, { 0.5, 0.5, 0.4, 0.3, 0.1 })
  lu.assertEquals({ r.ci.method, r.ci.level }, { "mover", 0.95 })
  lu.assertAlmostEquals(r.ci.lo, ci.lo, 1e-15) -- the pairs in another order: sums round otherwise
  lu.assertAlmostEquals(r.ci.hi, ci.hi, 1e-15)
  lu.assertFalse(r.worse)
  -- res:compare pairs the same way
  local c = res:compare("old", "new", "m")
  lu.assertEquals({ c.n, c.p }, { 5, 0.0625 })
  -- at alpha 0.1 it is significant and worse
  local sc2 = ev.compare.systems(res, { baseline = "old", alpha = 0.1 })
  lu.assertTrue(sc2.rows[1].worse)
  lu.assertFalse(sc2.rows[1].better)
end

function test_unknown_baseline_or_option()
  local res = run()
  local ok, err = pcall(ev.compare.systems, res, { baseline = "nosuch" })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "ev.compare.systems: no system 'nosuch' in this run (systems: old, new)")
  ok, err = pcall(function() ev.compare.systems(res, { basline = "old" }) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "test_compare_systems.lua:")
  lu.assertStrContains(err, "ev.compare.systems: unknown option 'basline' (did you mean 'baseline'?)")
end

function test_every_format_shows_the_systems()
  local res = run()
  ev.compare.systems(res, { baseline = "old", alpha = 0.1 })
  lu.assertStrContains(ev.report.render(res, "terminal", { color = false }),
    "systems against old (paired by id, permutation test, alpha 0.1; means over the n items both measured):\n  new  m  0.700 -> 0.360  ▼ -0.340  n=5  p=0.0625  WORSE\n")
  lu.assertStrContains(ev.report.render(res, "md"),
    "## Systems against old\n\n| system | metric | paired | old | system | delta | interval | p |  |\n"
    .. "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"
    .. "| new | m | 5 | 0.700 | 0.360 | ▼ -0.340 | [-0.405, -0.261] | 0.0625 | **worse** |\n\n"
    .. "Means over the items both systems measured (matched by id); 95% interval of the mean paired difference over "
    .. "the items matched by id: MOVER from each system's own interval for scores in \\[0, 1\\] (docs/stats.md); "
    .. "p: paired permutation test, significant when p < 0.1.\n")
  local doc = cjson.decode(ev.report.render(res, "json"))
  lu.assertEquals(doc.system_comparison.baseline, "old")
  lu.assertEquals(doc.system_comparison.rows[1].p, 0.0625)
  lu.assertStrContains(ev.report.render(res, "html"),
    '<tr class="fail"><td>new</td><td>m</td><td class=num>5</td><td class=num>0.700</td><td class=num>0.360</td><td class=num>▼ -0.340</td><td class=num>[-0.405, -0.261]</td><td class=num>0.0625</td></tr>')
  lu.assertStrContains(ev.report.render(res, "junit"),
    '<testcase classname="evalua.new" name="versus old"><system-out>new m: 0.700 -&gt; 0.360  ▼ -0.340  n=5  p=0.0625 WORSE</system-out></testcase>')
end

-- A baseline judged by another model, on other data, with m defined
-- otherwise: every format says so before anything else.
function test_an_unlike_baseline_is_announced_at_the_top()
  local res = run()
  res.meta.judge = { model = "judge-2" }
  res.meta.dataset = { path = "rows.jsonl", hash = ("b"):rep(64), rows = 13, skipped = 0 }
  local baseline = { run_id = "r1", label = "v1", time = "2026-01-01T00:00:00Z", aggregates = {},
                     judge = { model = "judge-1" }, dataset = { hash = ("a"):rep(64), rows = 12 },
                     metric_definitions = { m = "0000000000000000" } }
  local cmp = ev.compare(res, { items = function() return {} end }, baseline)
  local want = {
    "judge model changed: judge-1 in the baseline, judge-2 now; judged scores are not comparable",
    "data set changed: sha256 aaaaaaaaaaaa (12 rows) in the baseline, bbbbbbbbbbbb (13 rows) now",
    "metric m is defined differently from the baseline (description or options changed)",
  }
  lu.assertEquals(cmp.warnings, want)
  local text = ev.report.render(res, "terminal", { color = false })
  lu.assertStrContains(text, "\nwarning: " .. want[1] .. "\nwarning: " .. want[2] .. "\nwarning: " .. want[3] .. "\n\nsystem")
  local md = ev.report.render(res, "md")
  lu.assertStrContains(md, "> **Warning:** judge model changed: judge-1 in the baseline, judge-2 now; judged scores are not comparable\n")
  lu.assertTrue(md:find("Warning", 1, true) < md:find("## Compared with", 1, true))
  local html = ev.report.render(res, "html")
  lu.assertStrContains(html, '<div class="warn"><strong>These runs are not alike:</strong><ul><li>judge model changed')
  lu.assertTrue(html:find('class="warn"', 1, true) < html:find("<h2>", 1, true))
  lu.assertStrContains(ev.report.render(res, "junit"), '<property name="warning" value="data set changed: sha256 aaaaaaaaaaaa')
  lu.assertEquals(cjson.decode(ev.report.render(res, "json")).comparison.warnings, want)
  -- the same judge, data and definition: no warning
  local same = run()
  local again = ev.compare(same, { items = function() return {} end }, { run_id = "r", aggregates = {} })
  lu.assertEquals(again.warnings, {})
  lu.assertNotStrContains(ev.report.render(same, "md"), "Warning")
end

function test_fingerprints_compare_as_sets_and_a_new_metric_is_named()
  local res = run()
  res.meta.judge = { model = "judge-1", system_fingerprints = { "fp_2", "fp_1" } }
  local function cmp(before) return ev.compare(res, { items = function() return {} end }, before).warnings end
  lu.assertEquals(cmp { run_id = "r", judge = { model = "judge-1", system_fingerprints = { "fp_1", "fp_2" } } }, {})
  lu.assertEquals(cmp { run_id = "r", judge = { model = "judge-1", system_fingerprints = { "fp_1" } },
                        metric_definitions = { other = "x" } }, {
    "judge fingerprint changed: fp_1 in the baseline, fp_1, fp_2 now (the served model was updated)",
    "metric m is not in the baseline" })
end

-- A metric's definition hash: the same for the same description and
-- options, another when either changes; objects among the options (a
-- judge, with counters that change as it runs) do not count.
function test_definition_follows_description_and_options()
  local def = ev.history.definition
  local judge = setmetatable({ requests = 1 }, {})
  local a = def { name = "m", description = "d", higher_is_better = true, options = { k = 3, judge = judge } }
  judge.requests = 99
  lu.assertEquals(def { name = "m", description = "d", higher_is_better = true, options = { k = 3, judge = judge } }, a)
  lu.assertEquals(#a, 16)
  lu.assertNotEquals(def { name = "m", description = "d", higher_is_better = true, options = { k = 4 } }, a)
  lu.assertNotEquals(def { name = "m", description = "e", higher_is_better = true, options = { k = 3 } }, a)
end

-- alpha is a significance level: anything else is an error, not a verdict
-- that says "significant" for every p (alpha = 5) or for none (alpha = 0).
function test_alpha_outside_zero_one_is_an_error()
  local res = run()
  for _, a in ipairs { 5, 0, 1, -0.1, "0.05", 0 / 0 } do
    local shown = a ~= a and "NaN" or type(a) == "string" and "'0.05'" or tostring(a)
    lu.assertErrorMsgContains(("ev.compare.systems: alpha must be a number between 0 and 1 (a significance level such as 0.05) (got %s)"):format(shown),
      ev.compare.systems, res, { baseline = "old", alpha = a })
  end
  lu.assertTrue(ev.compare.systems(res, { baseline = "old", alpha = 0.1 }).rows[1].significant)
end

os.exit(lu.LuaUnit.run(), true)
