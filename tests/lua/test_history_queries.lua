-- ev.history's queries over the store (issue 29, part 1): one item's scores
-- across runs, the items that flip, the first run where a metric fell
-- below its gate; over runs appended to the store and runs imported from
-- a folder of the older format. Expected values are worked by hand below.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

-- A run of items q1.. with scores s, gated at s >= gate when gate is given.
local function run(scores, gate, extra)
  local rows = {}
  for i, s in ipairs(scores) do rows[i] = { qid = "q" .. i, s = s } end
  local res = ev.evaluate(rows, { metrics = { { name = "s", fn = function(r)
    if r.s == false then return { unmeasured = true, reason = "no answer" } end
    return { score = r.s, reason = "because " .. r.s }
  end } }, ci = false })
  if gate then res.gates = ev.gate.check(res, { thresholds = { s = { all = gate } } }) end
  return res
end

local dir, hist
TestQueries = {}
function TestQueries:setUp()
  dir = h.tmpdir()
  hist = ev.history.open(dir .. "/h")
  -- means: r1 (0.9 + 0.4 + 0.7) / 3 = 0.6667, r2 (0.3 + 0.6) / 2 = 0.45 (q3 unmeasured),
  -- r3 (0.8 + 0.6 + 0.2) / 3 = 0.5333, r4 (0.9 + 0.9 + 0.9) / 3 = 0.9
  hist:append(run({ 0.9, 0.4, 0.7 }, 0.6), { label = "r1", dashboard = false })
  hist:append(run({ 0.3, 0.6, false }, 0.6), { label = "r2", dashboard = false })
  hist:append(run({ 0.8, 0.6, 0.2 }, 0.6), { label = "r3", dashboard = false })
  hist:append(run({ 0.9, 0.9, 0.9 }), { label = "r4", dashboard = false }) -- no gate recorded
end
function TestQueries:tearDown()
  hist:close()
  h.sh("rm -rf " .. dir)
end

local function pluck(rows, ...)
  local keys, out = { ... }, {}
  for i, r in ipairs(rows) do
    out[i] = {}
    for k, key in ipairs(keys) do out[i][k] = r[key] end
  end
  return out
end

function TestQueries:test_one_items_scores_across_runs()
  lu.assertEquals(pluck(hist:item_scores("q1"), "label", "system", "metric", "value", "reason"), {
    { "r1", "all", "s", 0.9, "because 0.9" }, { "r2", "all", "s", 0.3, "because 0.3" },
    { "r3", "all", "s", 0.8, "because 0.8" }, { "r4", "all", "s", 0.9, "because 0.9" } })
  -- unmeasured in r2: no value, the reason why
  lu.assertEquals(pluck(hist:item_scores("q3", { metric = "s" }), "label", "value", "reason"), {
    { "r1", 0.7, "because 0.7" }, { "r2", nil, "no answer" }, { "r3", 0.2, "because 0.2" }, { "r4", 0.9, "because 0.9" } })
  lu.assertEquals(hist:item_scores("q9"), {})
  lu.assertEquals(hist:item_scores("q1", { system = "other" }), {})
end

-- pass at 0.5: q1 0.9 P, 0.3 F, 0.8 P, 0.9 P -> flips in r2 (fail) and r3 (pass);
-- q2 0.4 F, 0.6 P, 0.6, 0.9 -> r2 (pass); q3 0.7 P, -, 0.2 F, 0.9 P -> r3
-- (fail, against r1: r2 did not measure it) and r4 (pass).
function TestQueries:test_items_that_flip()
  local flips = hist:flips("s")
  lu.assertEquals(pluck(flips, "id", "label", "before", "after", "to"), {
    { "q1", "r2", 0.9, 0.3, "fail" }, { "q2", "r2", 0.4, 0.6, "pass" },
    { "q1", "r3", 0.3, 0.8, "pass" }, { "q3", "r3", 0.7, 0.2, "fail" },
    { "q3", "r4", 0.2, 0.9, "pass" } })
  lu.assertEquals(flips[4].from, hist:find("r1").run_id)
  -- pass at 0.65: q1 as before; q2 0.4 F, 0.6 F, 0.6 F, 0.9 P -> r4 alone; q3 as before
  lu.assertEquals(pluck(hist:flips("s", { pass = 0.65 }), "id", "label"),
    { { "q1", "r2" }, { "q1", "r3" }, { "q3", "r3" }, { "q2", "r4" }, { "q3", "r4" } })
  lu.assertEquals(hist:flips("none"), {})
end

function TestQueries:test_the_first_run_below_a_gate()
  -- the recorded gate s >= 0.6: r1 0.667 meets it, r2 0.45 misses
  local rec, why = hist:first_below("s")
  lu.assertEquals(rec.label, "r2")
  lu.assertAlmostEquals(why.mean, 0.45, 1e-12)
  lu.assertEquals(why.threshold, 0.6)
  lu.assertEquals(why.previous.label, "r1")
  -- after r2: r3 0.533 misses the gate it recorded (r4 recorded none)
  lu.assertEquals(hist:first_below("s", { since = "r2" }).label, "r3")
  lu.assertNil(hist:first_below("s", { since = "r3" }))
  -- a threshold given: 0.5 is first missed by r2; as a maximum (lower is
  -- better) 0.5 is first passed over by r1's 0.667
  lu.assertEquals(hist:first_below("s", { threshold = 0.5 }).label, "r2")
  local first, w = hist:first_below("s", { threshold = 0.5, higher_is_better = false })
  lu.assertEquals(first.label, "r1")
  lu.assertNil(w.previous)
  lu.assertNil(hist:first_below("s", { threshold = 0.1 }))
  local ok, err = pcall(hist.first_below, hist, "s", { since = "r9" })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "history:first_below: no run r9 in " .. dir .. "/h/history.db")
  ok, err = pcall(hist.first_below, hist, "s", { treshold = 1 })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "treshold")
end

-- A folder of the older format: imported on first use, its item files when
-- first read; the queries span imported and appended runs alike.
function TestQueries:test_an_older_folder_is_imported()
  local old = ev.history.open(dir .. "/old", { jsonl = true })
  old:append(run({ 0.9, 0.4 }, 0.6), { label = "o1", dashboard = false })
  old:append(run({ 0.2, 0.8 }, 0.6), { label = "o2", dashboard = false })
  old:close()
  os.remove(dir .. "/old/history.db")
  h.write(dir .. "/old/runs/x.jsonl", "") -- a stray file is not a run
  local again = ev.history.open(dir .. "/old")
  lu.assertEquals(pluck(again:records(), "label"), { { "o1" }, { "o2" } })
  again:append(run({ 0.7, 0.1 }), { label = "n3", dashboard = false })
  -- a folder with history.jsonl goes on getting it (kept in git); {jsonl = false} stops that
  local function jsonl_lines() return select(2, h.read(dir .. "/old/history.jsonl"):gsub("\n", "")) end
  lu.assertEquals(jsonl_lines(), 3)
  local stop = ev.history.open(dir .. "/old", { jsonl = false })
  local extra = stop:append(run({ 0.7, 0.1 }), { label = "n4", dashboard = false })
  lu.assertEquals(jsonl_lines(), 3)
  stop:close()
  local db = require("evalua._sqlite").open(dir .. "/old/history.db")
  db:run("DELETE FROM runs WHERE run_id = ?", extra.run_id) -- its items, scores and aggregates go with it
  lu.assertEquals(db:rows("SELECT count(*) AS n FROM scores WHERE run NOT IN (SELECT seq FROM runs)")[1].n, 0)
  db:close()
  lu.assertEquals(pluck(again:item_scores("q2"), "label", "value"), { { "o1", 0.4 }, { "o2", 0.8 }, { "n3", 0.1 } })
  lu.assertEquals(pluck(again:flips("s"), "id", "label"), { { "q1", "o2" }, { "q2", "o2" }, { "q1", "n3" }, { "q2", "n3" } })
  lu.assertEquals(again:first_below("s").label, "o2")
  -- records an older evalua appends to history.jsonl later are imported too
  local older = ev.history.open(dir .. "/older", { jsonl = true })
  local rec = older:append(run({ 0.5 }), { label = "late", dashboard = false })
  local f = assert(io.open(dir .. "/old/history.jsonl", "ab"))
  f:write(h.read(dir .. "/older/history.jsonl"))
  f:close()
  os.rename(dir .. "/older/runs/" .. rec.run_id .. ".jsonl", dir .. "/old/runs/" .. rec.run_id .. ".jsonl")
  lu.assertEquals(again:latest().label, "late")
  lu.assertEquals(again:items(again:latest()).all.q1.scores.s, 0.5)
  again:close()
  older:close()
end

os.exit(lu.LuaUnit.run(), true)
