-- promptfoo's tool-call and trajectory assertion types in ev.assertions,
-- against promptfoo's own cases (tests/data/agent/cases_promptfoo.jsonl,
-- each naming the file and test it came from).
local lu = require "luaunit"
local ev = require "evalua"
local cjson = require "cjson"

local function cases()
  local out, n = {}, 0
  for line in io.lines("tests/data/agent/cases_promptfoo.jsonl") do
    n = n + 1
    local c = cjson.decode(line)
    c.where = ("cases_promptfoo.jsonl:%d (%s)"):format(n, c.from)
    out[#out + 1] = c
  end
  return out
end

function test_every_promptfoo_case_passes_fails_or_is_refused_as_its_file_says()
  local n = 0
  for _, c in ipairs(cases()) do
    local compiled, why = ev.assertions.compile(c.assert, "assert")
    if c.error ~= nil then
      lu.assertNil(compiled, c.where)
      lu.assertStrContains(why, c.error, false, c.where)
    else
      lu.assertNotNil(compiled, c.where .. ": " .. tostring(why))
      local r = ev.assertions.run(compiled, { messages = c.messages, tools = c.tools })
      lu.assertIsString(r.reason, c.where)
      if c.pass == cjson.null then
        lu.assertNil(r.pass, c.where .. ": " .. r.reason)
      else
        lu.assertEquals(r.pass, c.pass, c.where .. ": " .. r.reason)
      end
    end
    n = n + 1
  end
  lu.assertTrue(n >= 50)
end

function test_trajectory_assertions_run_as_metrics_over_rows_and_their_own_lists()
  local msgs = { { role = "user", content = "Where is A17?" },
                 { role = "assistant", tool_calls = { { id = "c", type = "function",
                   ["function"] = { name = "lookup_order", arguments = '{"order_id": "A17"}' } } } },
                 { role = "tool", tool_call_id = "c", content = "packed" },
                 { role = "assistant", content = "It is packed." } }
  local rows = {
    { qid = "1", messages = msgs, assert = { { type = "trajectory:tool-args-match",
                                              value = { name = "lookup_order", args = { order_id = "A17" } } } } },
    { qid = "2", messages = msgs, assert = { { type = "trajectory:step-count", value = { max = 1 } } } },
    { qid = "3", query = "no trajectory" },
  }
  local m = ev.assertions.metric { { type = "trajectory:tool-used", value = "lookup_*" } }
  local res = ev.evaluate(rows, { metrics = { m }, ci = false })
  lu.assertEquals(res.scores:get(1, 1), 1)
  local s, why = res.scores:get(2, 1)
  lu.assertEquals(s, 0)
  lu.assertStrContains(why, "2 steps (expected at most 1)")
  s, why = res.scores:get(3, 1)
  lu.assertNil(s)
  lu.assertStrContains(why, "the row has no messages (a trajectory)")
end

function test_a_threshold_stays_required_where_a_type_has_no_default()
  local _, why = ev.assertions.compile({ type = "latency" }, "assert")
  lu.assertStrContains(why, "'latency' needs a threshold")
  local c = assert(ev.assertions.compile({ type = "tool-call-f1", value = { "a" } }, "assert"))
  lu.assertEquals(c.threshold, 1)
  _, why = ev.assertions.compile({ type = "tool-call-f1", value = { "a" }, threshold = 2 }, "assert")
  lu.assertStrContains(why, "threshold: expected a number from 0 to 1")
end

function test_a_schema_keyword_the_checker_lacks_leaves_the_call_unmeasured()
  local tools = { { type = "function", ["function"] = { name = "f", parameters = { type = "object",
    properties = { x = { ["$ref"] = "other.json#/x" } } } } } }
  local msgs = { { role = "user", content = "q" },
                 { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "f", arguments = '{"x": "1"}' } } } } }
  local r = ev.assertions.run(assert(ev.assertions.compile({ type = "is-valid-openai-tools-call" }, "assert")),
    { messages = msgs, tools = tools })
  lu.assertNil(r.pass)
  lu.assertStrContains(r.reason, "cannot check: tool f's parameters.properties.x.$ref: 'other.json#/x' names nothing "
    .. "in this schema (references to other documents are not read)")
end

function test_a_recorded_bad_call_fails_the_schema_check_with_its_error()
  local msgs = { { role = "user", content = "q" },
                 { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "f", arguments = "{x" } } } } }
  local tools = { { type = "function", ["function"] = { name = "f" } } }
  local r = ev.assertions.run(assert(ev.assertions.compile({ type = "is-valid-openai-tools-call" }, "assert")),
    { messages = msgs, tools = tools, tool_errors = { { id = "a", error = "the arguments are not JSON" } } })
  lu.assertFalse(r.pass)
  lu.assertEquals(r.reason, "call 1 (f): the arguments are not JSON")
end

os.exit(lu.LuaUnit.run(), true)
