-- The viewer's paired deltas between two runs (lua/evalua/view/runs.lua):
-- the mean difference over the items both runs measured, with the interval
-- ev.compare reports (ev.stats.paired_ci) on the same pairs. An interval
-- from the differences alone said [0, 0] when no 0/1 item changed.
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

function TestDeltas:test_three_pairs_get_the_interval_diff_gives()
  local src = source.history(dir)
  local d = runs.compare(src, runs.find(src, "a"), runs.find(src, "b"), 0.5).deltas[1]
  lu.assertEquals(d.n, 3)
  lu.assertAlmostEquals(d.delta, 0.1, 1e-12)
  local ci = ev.stats.paired_ci({ 0.2, 0.4, 0.5 }, { 0.3, 0.6, 0.5 })
  lu.assertEquals(d.method, "mover")
  lu.assertEquals(d.method, ci.method)
  lu.assertAlmostEquals(d.lo, ci.lo, 1e-12)
  lu.assertAlmostEquals(d.hi, ci.hi, 1e-12)
  lu.assertTrue(d.lo < 0.1 and d.hi > 0.1)
end

function TestDeltas:test_unchanged_binary_items_are_not_certain()
  local hist = ev.history.open(dir)
  append(hist, "d", { 1, 0, 1 })
  append(hist, "e", { 1, 0, 1 })
  hist:close()
  local src = source.history(dir)
  local d = runs.compare(src, runs.find(src, "d"), runs.find(src, "e"), 0.5).deltas[1]
  lu.assertEquals(d.n, 3)
  lu.assertEquals(d.delta, 0)
  -- three unchanged items do not show that nothing changed: the interval
  -- straddles 0 with room on both sides
  lu.assertTrue(d.lo < -0.1, tostring(d.lo))
  lu.assertTrue(d.hi > 0.1, tostring(d.hi))
end

function TestDeltas:test_one_pair_has_no_interval()
  local src = source.history(dir)
  local d = runs.compare(src, runs.find(src, "a"), runs.find(src, "c"), 0.5).deltas[1]
  lu.assertEquals(d.n, 1)
  lu.assertAlmostEquals(d.delta, 0.1, 1e-12)
  lu.assertNil(d.lo)
  lu.assertNil(d.hi)
end

function TestDeltas:test_a_damaged_json_column_is_said_not_hidden()
  local src = source.history(dir)
  src.db:exec("UPDATE runs SET gates = '{not json' WHERE label = 'b'")
  lu.assertErrorMsgContains("the store's runs.gates is not JSON", runs.list, src, {})
  lu.assertErrorMsgContains("the store is damaged", runs.list, src, {})
end

os.exit(lu.LuaUnit.run(), true)
