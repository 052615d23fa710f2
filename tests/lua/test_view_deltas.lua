-- The viewer's paired deltas between two runs (lua/evalua/view/runs.lua):
-- the mean difference over the items both runs measured and Student's t
-- 95% interval, worked out by hand; not the normal approximation, which at
-- small n would claim far more than the pairs show.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local source = require "evalua.view.source"
local runs = require "evalua.view.runs"

local dir

local function append(hist, label, scores)
  local rows = {}
  for i, s in ipairs(scores) do rows[i] = { qid = "q" .. i, s = s } end
  local res = ev.evaluate(rows, { metrics = { { name = "m", fn = function(r) return r.s end } }, ci = false })
  hist:append(res, { label = label, dashboard = false, git_commit = false })
end

TestDeltas = {}

function TestDeltas:setUp()
  dir = h.tmpdir()
  local hist = ev.history.open(dir)
  append(hist, "a", { 0.2, 0.4, 0.5 })
  append(hist, "b", { 0.3, 0.6, 0.5 }) -- differences 0.1, 0.2, 0
  append(hist, "c", { 0.3 })             -- one pair only
  hist:close()
end

function TestDeltas:tearDown() h.sh("rm -rf " .. dir) end

function TestDeltas:test_three_pairs_get_students_t()
  local src = source.history(dir)
  local d = runs.compare(src, runs.find(src, "a"), runs.find(src, "b"), 0.5).deltas[1]
  lu.assertEquals(d.n, 3)
  lu.assertAlmostEquals(d.delta, 0.1, 1e-12)
  lu.assertEquals(d.method, "Student's t")
  -- sd of 0.1, 0.2, 0 is 0.1; t(0.975, 2) = 4.302653; half = 4.302653 * 0.1 / sqrt(3) = 0.248414
  lu.assertAlmostEquals(d.lo, 0.1 - 0.2484138, 1e-6)
  lu.assertAlmostEquals(d.hi, 0.1 + 0.2484138, 1e-6)
end

function TestDeltas:test_one_pair_has_no_interval()
  local src = source.history(dir)
  local d = runs.compare(src, runs.find(src, "a"), runs.find(src, "c"), 0.5).deltas[1]
  lu.assertEquals(d.n, 1)
  lu.assertAlmostEquals(d.delta, 0.1, 1e-12)
  lu.assertNil(d.lo)
  lu.assertNil(d.hi)
end

function test_t_quantile_values_and_errors()
  -- scipy.stats.t.ppf(0.975, df) for df = 1, 2, 9
  lu.assertAlmostEquals(ev.stats.t_quantile(0.975, 1), 12.706204736174698, 1e-9)
  lu.assertAlmostEquals(ev.stats.t_quantile(0.975, 2), 4.302652729749464, 1e-9)
  lu.assertAlmostEquals(ev.stats.t_quantile(0.975, 9), 2.2621571628540993, 1e-9)
  lu.assertErrorMsgContains("p must be between 0 and 1", ev.stats.t_quantile, 1, 3)
  lu.assertErrorMsgContains("df must be a finite number > 0", ev.stats.t_quantile, 0.5, 0)
end

os.exit(lu.LuaUnit.run(), true)
