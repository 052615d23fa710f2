-- ev.evaluate and the results object: metric values of every kind,
-- unmeasured items kept out of means, slices, worst slices, bottom items,
-- custom metrics registered by name. Expected means are computed by hand in
-- the comments.
local lu = require "luaunit"
local ev = require "evalua"

local ROWS = {
  { qid = "q1", variant = "A", query_class = "x", query = "one", answer = "a1", v = 1.0 },
  { qid = "q2", variant = "A", query_class = "x", query = "two", answer = "a2", v = 0.5 },
  { qid = "q3", variant = "A", query_class = "y", query = "three", answer = "a3", v = 0.0 },
  { qid = "q4", variant = "A", query_class = "y", query = "four", answer = "a4", v = "skip" },
  { qid = "q1", variant = "B", query_class = "x", query = "one", answer = "b1", v = 0.25 },
  { qid = "q2", variant = "B", query_class = "x", query = "two", answer = "b2", v = "nan" },
  { qid = "q3", variant = "B", query_class = "y", query = "three", answer = "b3", v = "error" },
  { qid = "q4", variant = "B", query_class = "y", query = "four", answer = "b4", v = 0.75 },
}

local value = {
  name = "value",
  fn = function(row)
    if row.v == "skip" then return { unmeasured = true, reason = "judge said nothing" } end
    if row.v == "nan" then return 0 / 0 end
    if row.v == "error" then error("boom in metric") end
    return { score = row.v, reason = "because " .. row.qid }
  end,
}
local long = { name = "long_answer", batch = function(rows)
  local out = {}
  for i, r in ipairs(rows) do out[i] = r.qid == "q1" end -- booleans count as 1 and 0
  return out
end }

local res = ev.evaluate(ROWS, { metrics = { value, long }, system = "variant", slices = { "query_class" },
                                ci = { resamples = 200, seed = 3 }, bottom = 2 })

function test_items_keep_scores_reasons_and_unmeasured_causes()
  local a4, b2, b3 = res.items[4], res.items[6], res.items[7]
  lu.assertEquals(res.items[1].scores.value, 1.0)
  lu.assertEquals(res.items[1].reasons.value, "because q1")
  lu.assertNil(a4.scores.value)
  lu.assertEquals(a4.unmeasured.value, "judge said nothing")
  lu.assertNil(b2.scores.value)
  lu.assertEquals(b2.unmeasured.value, "the metric returned NaN")
  lu.assertNil(b3.scores.value)
  lu.assertStrContains(b3.unmeasured.value, "boom in metric")
  lu.assertEquals(res.items[1].scores.long_answer, 1)
  lu.assertEquals(res.items[2].scores.long_answer, 0)
end

function test_means_leave_unmeasured_items_out_and_report_coverage()
  -- A: (1 + 0.5 + 0) / 3 measured of 4; B: (0.25 + 0.75) / 2 of 4
  local a, b = res:agg("A", "value"), res:agg("B", "value")
  lu.assertAlmostEquals(a.mean, 0.5, 1e-12)
  lu.assertEquals({ a.measured, a.n }, { 3, 4 })
  lu.assertAlmostEquals(b.mean, 0.5, 1e-12)
  lu.assertEquals({ b.measured, b.n }, { 2, 4 })
  -- slices: A x = (1 + 0.5) / 2, A y = 0 / 1 (q4 unmeasured), B y = 0.75 (q3 failed)
  lu.assertAlmostEquals(res:agg("A", "value", "query_class", "x").mean, 0.75, 1e-12)
  lu.assertEquals(res:agg("A", "value", "query_class", "y").mean, 0)
  lu.assertEquals(res:agg("B", "value", "query_class", "y").measured, 1)
  lu.assertEquals(res:agg("B", "long_answer").mean, 0.25)
end

function test_a_slice_with_nothing_measured_has_no_mean()
  local r = ev.evaluate({ { qid = "a", c = "k" } }, { metrics = { { name = "m", fn = function() return nil end } },
                                                     slices = { "c" } })
  local a = r:agg("all", "m")
  lu.assertEquals({ a.n, a.measured }, { 1, 0 })
  lu.assertNil(a.mean)
end

function test_confidence_intervals_contain_the_mean_and_are_reproducible()
  local a = res:agg("A", "value")
  lu.assertTrue(a.lo <= a.mean and a.mean <= a.hi)
  local again = ev.evaluate(ROWS, { metrics = { value, long }, system = "variant", slices = { "query_class" },
                                    ci = { resamples = 200, seed = 3 } })
  lu.assertEquals(again:agg("A", "value").lo, a.lo)
  lu.assertEquals(again:agg("A", "value").hi, a.hi)
  local one = res:agg("A", "value", "query_class", "y") -- a single measured item: no interval
  lu.assertEquals({ one.lo, one.hi, one.ci_method, one.mean }, { nil, nil, nil, 0 })
end

function test_worst_slice_and_bottom_items()
  lu.assertEquals(res.worst.A.value, { dim = "query_class", value = "y", mean = 0, measured = 1 })
  lu.assertEquals(res.worst.B.value.value, "x")
  local bottom = res.bottom.A.value
  lu.assertEquals(#bottom, 2)
  lu.assertEquals({ bottom[1].id, bottom[1].score, bottom[1].reason, bottom[1].query, bottom[1].answer },
                  { "q3", 0.0, "because q3", "three", "a3" })
  lu.assertEquals(bottom[2].id, "q2")
end

function test_slices_by_function_and_several_dimensions()
  local r = ev.evaluate(ROWS, { metrics = { value }, system = "variant",
    slices = { "query_class", parity = function(row) return tonumber(row.qid:sub(2)) % 2 == 0 and "even" or "odd" end } })
  lu.assertEquals(r.dims, { "all", "query_class", "parity" })
  lu.assertEquals(r.slice_values.parity, { "even", "odd" })
  -- A odd: q1 (1.0), q3 (0.0) -> 0.5
  lu.assertEquals(r:agg("A", "value", "parity", "odd").mean, 0.5)
end

function test_registered_metrics_resolve_by_name()
  ev.register("qid_length", function(row) return #row.qid end, { description = "characters in qid" })
  local r = ev.evaluate({ { qid = "abc" }, { qid = "abcdef" } }, { metrics = { "qid_length" } })
  lu.assertEquals(r:agg("all", "qid_length").mean, 4.5)
  lu.assertEquals(r:metric("qid_length").description, "characters in qid")
  lu.assertErrorMsgContains("unknown metric 'no_such_metric'", ev.evaluate, { { qid = "a" } }, { metrics = { "no_such_metric" } })
end

-- registry.resolve looks at the answer and retrieval built-ins before the
-- judged and agent modules; that is the same answer for every name only
-- while no judged or agent metric has a built-in's name.
function test_judged_and_agent_metrics_have_no_builtin_name()
  local registry = require "evalua.core.registry"
  local retrieval = require "evalua.eval.metrics"
  local n = 0
  for _, mod in ipairs { "evalua.judged.rag", "evalua.agent" } do
    for name, m in pairs(require(mod).metrics) do
      n = n + 1
      lu.assertFalse(pcall(retrieval.columns, { name }), name .. " parses as a retrieval measure")
      lu.assertIs(registry.resolve(name), m, name)
    end
  end
  lu.assertTrue(n >= 20)
  for _, name in ipairs { "exact_match", "exact_match_norm", "token_f1", "rouge_l", "edit_similarity" } do
    lu.assertEquals(registry.resolve(name).builtin, "answer", name)
  end
end

-- A run of built-in metrics does not load (compile) the judged and agent modules.
function test_builtin_metrics_load_no_judged_module()
  local H = require "tests.lua.helpers"
  local r = H.run_script([[
    local ev = require "evalua"
    ev.evaluate({ { qid = "q", answer = "a b", gold_answers = { "a" }, retrieved = { "d" }, gold_doc_ids = { "d" } } },
      { metrics = { "token_f1", "exact_match", "mrr", "ndcg@10" } })
    print(package.loaded["evalua.agent"], package.loaded["evalua.judged.rag"])
    ev.evaluate({ { qid = "q", answer = "a" } }, { metrics = { "tool_call_f1" } })
    print(package.loaded["evalua.agent"] ~= nil)
  ]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "nil\tnil\ntrue\n")
end

function test_compare_two_systems_of_one_run()
  local xs = {}
  for i = 1, 12 do xs[i] = { qid = "q" .. i, variant = "A", s = 0.2 } end
  for i = 1, 12 do xs[12 + i] = { qid = "q" .. i, variant = "B", s = 0.9 } end
  local r = ev.evaluate(xs, { metrics = { { name = "s", fn = function(row) return row.s end } }, system = "variant" })
  local c = r:compare("A", "B", "s", { resamples = 2000 })
  lu.assertEquals(c.n, 12)
  lu.assertAlmostEquals(c.delta, 0.7, 1e-12)
  -- every pair differs the same way: only 2 of the 2^12 sign flips are as extreme
  lu.assertTrue(c.p < 0.01)
end

-- Sections come through res:attach: named once per owner, never over the
-- fields evaluate computes, and listed in res.sections.
function test_sections_are_attached_by_their_owner()
  local r = ev.evaluate(ROWS, { metrics = { value }, ci = false })
  local gates = ev.gate.check(r, { thresholds = { value = { all = 0.1 } } })
  lu.assertIs(r.gates, gates)
  lu.assertEquals(r.sections, { gates = "ev.gate" })
  lu.assertEquals(r:attach("mine", { note = "x" }).note, "x")
  lu.assertEquals(r.sections.mine, "script")
  lu.assertEquals(r:attach("mine", { note = "y" }).note, "y") -- the owner may replace its own
  local ok, err = pcall(r.attach, r, "gates", {})
  lu.assertFalse(ok)
  lu.assertStrContains(err, "res:attach: section 'gates' belongs to ev.gate, not script")
  ok, err = pcall(r.attach, r, "aggregates", {})
  lu.assertStrContains(err, "res:attach: 'aggregates' is computed by ev.evaluate and cannot be replaced")
  ok, err = pcall(r.attach, r, "", {})
  lu.assertStrContains(err, "res:attach: a section needs a name")
end

os.exit(lu.LuaUnit.run(), true)
