-- The deterministic agent metrics against the peers' own cases and the
-- edges docs/agents.md decides. The cases are data (tests/data/agent/
-- cases_*.jsonl), each naming the peer file (and test) it came from; where
-- evalua differs from the peer's code, peer_score (or peer_error) says what
-- the peer gives and note says why.
local lu = require "luaunit"
local ev = require "evalua"
local cjson = require "cjson"
local h = require "tests.lua.helpers"

local FILES = { "cases_deepeval", "cases_ragas", "cases_agentevals", "cases_edges" }

-- The Lua forms of the functions the peers' tests pass as overrides.
local FUNCTIONS = {
  -- agentevals test_trajectory_match_with_langchain_messages_and_override's lambda
  sf_either_way = function(x, y)
    return (x.city == "SF" or x.city == "San Francisco") and (y.city == "SF" or y.city == "San Francisco")
  end,
  -- agentevals test_trajectory_match_with_overrides' lookup_policy_query_matcher
  upgrade_query = function(args, ref)
    if type(ref.query) == "string" and ref.query:find("upgrade", 1, true) then
      return type(args.query) == "string" and args.query:find("upgrade", 1, true) ~= nil
    end
    return true
  end,
}

local function with_functions(o)
  local ov = o and o.tool_args_match_overrides
  for k, v in pairs(ov or {}) do
    if type(v) == "string" and v:sub(1, 3) == "fn:" then ov[k] = assert(FUNCTIONS[v:sub(4)], v) end
  end
  return o
end

local function cases(name)
  local out = {}
  local path = "tests/data/agent/" .. name .. ".jsonl"
  local n = 0
  for line in io.lines(path) do
    n = n + 1
    local c = cjson.decode(line)
    c.where = ("%s:%d (%s)"):format(path, n, c.from)
    out[#out + 1] = c
  end
  return out
end

function test_every_ported_case_scores_as_its_file_says()
  local total = 0
  for _, f in ipairs(FILES) do
    for _, c in ipairs(cases(f)) do
      lu.assertIsString(c.from, c.where)
      lu.assertIsFunction(getmetatable(ev.agent[c.metric]).__call, c.where)
      local r = ev.agent[c.metric](c.actual, c.reference, with_functions(c.options) or {})
      if c.score == cjson.null then
        lu.assertTrue(r.unmeasured, c.where)
        lu.assertIsString(r.reason, c.where)
      else
        lu.assertNotNil(r.score, c.where .. ": " .. tostring(r.reason))
        lu.assertAlmostEquals(r.score, c.score, 1e-12, c.where .. ": " .. tostring(r.reason))
      end
      if c.peer_score ~= nil or c.peer_error ~= nil then lu.assertIsString(c.note or c.peer_error, c.where) end
      total = total + 1
    end
  end
  lu.assertTrue(total >= 140, "cases: " .. total)
end

function test_a_registered_metric_reads_the_rows_messages_and_expected_calls()
  local rows = {}
  for _, c in ipairs(cases("cases_ragas")) do
    if c.metric == "tool_call_accuracy" and c.options == nil then
      local msgs = { { role = "user", content = "q" } }
      local calls = {}
      for i, x in ipairs(c.actual) do
        calls[i] = { id = "c" .. i, type = "function", ["function"] = { name = x.name, arguments = cjson.encode(x.arguments) } }
      end
      if #calls > 0 then msgs[2] = { role = "assistant", tool_calls = calls } else msgs[2] = { role = "assistant", content = "no" } end
      rows[#rows + 1] = { qid = #rows + 1, messages = msgs, expected_tool_calls = c.reference, want = c.score }
    end
  end
  local res = ev.evaluate(rows, { metrics = { "tool_call_accuracy" }, ci = false })
  for i, r in ipairs(rows) do lu.assertAlmostEquals(res.scores:get(i, 1), r.want, 1e-12, "row " .. i) end
end

function test_turns_are_scored_one_by_one()
  local turns = ev.dataset.load("tests/data/agent/conversations.jsonl"):turns()
  local res = ev.evaluate(turns, { metrics = { "tool_call_f1", "tool_correctness" }, ci = false })
  lu.assertEquals(res.scores:get(1, 1), 1)
  -- turn 2 made get_policy and an extra lookup_order: precision 1/2, recall 1
  lu.assertAlmostEquals(res.scores:get(2, 1), 2 * 0.5 / 1.5, 1e-12)
  lu.assertNil(res.scores:get(3, 1)) -- nothing expected and nothing made: 0/0
  lu.assertEquals(res.scores:get(3, 2), 1) -- DeepEval: both empty is 1
end

function test_a_row_without_the_fields_is_unmeasured_with_the_reason()
  local res = ev.evaluate({ { qid = "a", query = "x" }, { qid = "b", messages = { { role = "user", content = "x" } } } },
    { metrics = { "tool_call_f1", "trajectory_match" }, ci = false })
  local _, why = res.scores:get(1, 1)
  lu.assertEquals(why, "the row has no messages (the calls made are read from them)")
  _, why = res.scores:get(2, 1)
  lu.assertEquals(why, "the row has no expected_tool_calls")
  _, why = res.scores:get(2, 2)
  lu.assertEquals(why, "the row has no reference_messages")
end

function test_a_configured_metric_keeps_its_name_and_options()
  local m = ev.agent.tool_call_accuracy { name = "tca_any_order", strict_order = false }
  lu.assertEquals(m.name, "tca_any_order")
  local calls = { { name = "b" }, { name = "a" } }
  lu.assertEquals(m(calls, { { name = "a" }, { name = "b" } }).score, 1)
  lu.assertEquals(ev.agent.tool_call_accuracy(calls, { { name = "a" }, { name = "b" } }).score, 0)
  -- options given to a call win over the metric's own
  lu.assertEquals(m(calls, { { name = "a" }, { name = "b" } }, { strict_order = true }).score, 0)
end

local function raises(want, f, ...)
  local ok, err = pcall(f, ...)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), want)
end

function test_options_that_cannot_decide_are_errors_at_the_callers_line()
  local A = ev.agent
  raises("test_agent_metrics.lua:", A.tool_call_accuracy, { strict_ordr = false })
  raises("tool_call_accuracy: unknown option 'strict_ordr' (did you mean 'strict_order'?)", A.tool_call_accuracy, { strict_ordr = false })
  raises("trajectory_match: trajectory_match_mode must be strict, unordered, subset or superset, got loose",
    A.trajectory_match, { trajectory_match_mode = "loose" })
  raises("trajectory_match: tool_args_match_mode must be exact, ignore, subset or superset, got partial",
    A.trajectory_match, { tool_args_match_mode = "partial" })
  raises("trajectory_match: tool_args_match_overrides[\"lookup\"]: unknown mode 'igore' (exact, ignore, subset or superset)",
    A.trajectory_match, { tool_args_match_overrides = { lookup = "igore" } })
  raises("tool_args_match_overrides[\"lookup\"][1]: expected a key path", A.trajectory_match,
    { tool_args_match_overrides = { lookup = { "a..b" } } })
  raises("available_tools asks DeepEval's judge", A.tool_correctness, { available_tools = {} })
  raises("evaluation_params[1] must be \"input_parameters\" or \"output\", got INPUT", A.tool_correctness,
    { evaluation_params = { "INPUT" } })
  raises("tool_call_f1: field 'actual[1].arguments': not JSON", A.tool_call_f1, { { name = "f", arguments = "{x" } }, {})
end

function test_an_override_function_must_say_true_or_false()
  local m = ev.agent.trajectory_match { tool_args_match_overrides = { f = function() return 1 end } }
  local msgs = { { role = "user", content = "q" },
                 { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "f", arguments = "{}" } } } } }
  raises("tool_args_match_overrides[\"f\"] returned number, not true or false", m, msgs, msgs)
  local res = ev.evaluate({ { qid = 1, messages = msgs, reference_messages = msgs } }, { metrics = { m }, ci = false })
  local s, why = res.scores:get(1, 1)
  lu.assertNil(s)
  lu.assertStrContains(why, "returned number, not true or false")
end

function test_a_bad_row_stops_evaluate_with_exit_status_3_before_any_metric()
  local src = os.getenv("EVALUA_SRC") or "."
  local r = h.run_script(([[
    local ev = require "evalua"
    local ds = ev.dataset.load(%q)
    ev.evaluate(ds, { metrics = { "tool_call_f1", { name = "seen", fn = function() print("RAN") return 1 end } } })
  ]]):format(src .. "/tests/data/agent/bad_tool_message.jsonl"))
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "bad_tool_message.jsonl:3: field 'messages[3].tool_call_id': 'c9' answers no call made before it")
  lu.assertNotStrContains(r.stdout, "RAN")
  lu.assertNotStrContains(r.stderr, "traceback")
end

function test_the_best_pairing_is_found_whatever_the_order_of_either_list()
  local assign = require "evalua.agent.assign"
  -- weights where greedy row by row gives 1 + 0 and the best is 0.9 + 0.9
  local w = { { 1, 0.9 }, { 0.9, 0 } }
  local pairs_, total = assign.max(function(i, j) return w[i][j] end, 2, 2)
  lu.assertAlmostEquals(total, 1.8, 1e-12)
  lu.assertEquals(#pairs_, 2)
  -- more rows than columns, and a zero row
  pairs_, total = assign.max(function(i, j) return ({ { 0 }, { 0.5 }, { 0.7 } })[i][j] end, 3, 1)
  lu.assertEquals(total, 0.7)
  lu.assertEquals(pairs_, { { 3, 1, 0.7 } })
  lu.assertEquals(assign.matching(function(i, j) return i == j end, 3, 5), 3)
end

os.exit(lu.LuaUnit.run(), true)
