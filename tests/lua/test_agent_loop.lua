-- ev.generate's agent loop (lua/evalua/agent/loop.lua): an offline scripted
-- policy, and the openai provider against the mock server with scripted
-- tool-calling answers: a normal run, an unknown tool, arguments that are
-- not JSON, a model that loops past max_steps, a failing step, replayed
-- multi-turn conversations and the per-step cache.
local lu = require "luaunit"
local ev = require "evalua"
local cjson = require "cjson"
local h = require "tests.lua.helpers"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()

local LOOKUP = { name = "lookup_order", description = "Status of an order",
                 parameters = { type = "object", properties = { order_id = { type = "string" } }, required = { "order_id" } } }

local seen = {}
local function tools()
  local t = {}
  for k, v in pairs(LOOKUP) do t[k] = v end
  t.run = function(args)
    seen[#seen + 1] = args.order_id
    return { order_id = args.order_id, status = "packed" }
  end
  return { t }
end

local function directive(steps) return "<<mock " .. cjson.encode { steps = steps } .. ">>" end

local function agent(opts)
  local o = { base_url = mock.url, model = "m", cache = false, api_key_env = false, max_retries = 0, tools = tools() }
  for k, v in pairs(opts or {}) do o[k] = v end
  return ev.provider.openai(o)
end

local function generate(rows, provider)
  return ev.generate(rows, { prompts = { bot = "You are the support agent." }, providers = { provider }, quiet = true })
end

TestLoop = {}
function TestLoop:setUp() mock:reset(); seen = {} end

function TestLoop:test_a_call_answered_by_its_tool_then_a_reply()
  local out = generate({ { qid = "q1", query = "Where is A17? " .. directive {
    { tool_calls = { { name = "lookup_order", arguments = { order_id = "A17" } } } }, { content = "It is packed." } } } },
    agent())
  local r = out.rows[1]
  lu.assertEquals(r.answer, "It is packed.")
  lu.assertEquals({ r.steps, r.stop_reason }, { 2, "final" })
  lu.assertEquals(seen, { "A17" })
  local m = r.messages
  lu.assertEquals(#m, 5)
  lu.assertEquals({ m[1].role, m[1].content }, { "system", "You are the support agent." })
  lu.assertEquals({ m[3].tool_calls[1].id, m[3].tool_calls[1]["function"].name }, { "call_1_1", "lookup_order" })
  lu.assertEquals({ m[4].role, m[4].tool_call_id }, { "tool", "call_1_1" })
  lu.assertEquals(cjson.decode(m[4].content), { order_id = "A17", status = "packed" })
  -- the second request carried the tools and the tool's answer
  local reqs = mock:requests()
  lu.assertEquals(#reqs, 2)
  local body = type(reqs[2].body) == "string" and cjson.decode(reqs[2].body) or reqs[2].body
  lu.assertEquals(body.tools[1]["function"].name, "lookup_order")
  lu.assertEquals(body.messages[4].role, "tool")
  -- the trajectory is a row of the format: the metrics read it
  local res = ev.evaluate(out, { metrics = { "tool_call_f1" }, ci = false })
  lu.assertNil(res.scores:get(1, 1)) -- no expected calls in the row
end

function TestLoop:test_a_tool_without_parameters_is_offered_with_an_empty_object_schema()
  generate({ { qid = "q", query = "Hi " .. directive { { content = "Hello." } } } },
    agent { tools = { { name = "ping", run = function() return "pong" end } } })
  local reqs = mock:requests()
  local body = type(reqs[1].body) == "string" and cjson.decode(reqs[1].body) or reqs[1].body
  lu.assertEquals(body.tools[1]["function"].parameters.type, "object")
  -- {} on the wire, not []: an OpenAI server refuses "properties": []
  lu.assertEquals(require("evalua.judge.json").encode(setmetatable({}, { __jsontype = "object" })), "{}")
  lu.assertEquals(require("evalua.judge.json").encode({ p = setmetatable({}, { __jsontype = "object" }), l = {} }),
    '{"l":[],"p":{}}')
end

function TestLoop:test_an_unknown_tool_is_told_to_the_model_and_recorded()
  local out = generate({ { qid = "q", query = "Refund me " .. directive {
    { tool_calls = { { name = "refund_everything", arguments = {} } } }, { content = "I cannot." } },
    expected_tool_calls = { { name = "lookup_order", arguments = { order_id = "A17" } } } } }, agent())
  local r = out.rows[1]
  lu.assertEquals(r.tool_errors, { { id = "call_1_1", error = "no tool named 'refund_everything' (the tools: lookup_order)" } })
  lu.assertEquals(r.messages[4].content, "error: no tool named 'refund_everything' (the tools: lookup_order)")
  lu.assertEquals(r.answer, "I cannot.")
  local res = ev.evaluate(out, { metrics = { "tool_call_f1", ev.assertions.metric { { type = "is-valid-openai-tools-call",
    value = { { type = "function", ["function"] = LOOKUP } } } } }, ci = false })
  lu.assertEquals(res.scores:get(1, 1), 0)
  local s, why = res.scores:get(1, 2)
  lu.assertEquals(s, 0)
  lu.assertStrContains(why, "refund_everything, which is not an offered tool")
end

function TestLoop:test_arguments_that_are_not_json_are_kept_as_sent_and_recorded()
  local out = generate({ { qid = "q", query = "Where is A17? " .. directive {
    { tool_calls = { { name = "lookup_order", arguments = "{order_id: A17" } } }, { content = "Sorry." } } } }, agent())
  local r = out.rows[1]
  lu.assertEquals(r.messages[3].tool_calls[1]["function"].arguments, "{order_id: A17")
  lu.assertStrContains(r.tool_errors[1].error, "the arguments are not JSON: not JSON (")
  lu.assertStrContains(r.messages[4].content, "error: the arguments are not JSON")
  lu.assertEquals(seen, {}) -- the tool never ran
  -- a recorded failure is data: the row loads, and the schema check fails on it
  local c = assert(ev.assertions.compile({ type = "is-valid-openai-tools-call", value = { { type = "function", ["function"] = LOOKUP } } }, "a"))
  local result = ev.assertions.run(c, r)
  lu.assertFalse(result.pass)
  lu.assertStrContains(result.reason, "call 1 (lookup_order): the arguments are not JSON")
end

function TestLoop:test_a_model_that_keeps_calling_stops_at_max_steps()
  local out = generate({ { qid = "q", query = "Where is A17? " .. directive {
    { tool_calls = { { name = "lookup_order", arguments = { order_id = "A17" } } } } } } }, agent { max_steps = 3 })
  local r = out.rows[1]
  lu.assertEquals({ r.steps, r.stop_reason }, { 3, "max_steps" })
  lu.assertNil(r.answer)
  lu.assertNil(r.output_error)
  lu.assertEquals(#r.messages, 8) -- system, user, three calls and their answers
  lu.assertEquals(#seen, 3)
  lu.assertEquals(mock:stats().requests, 3)
end

function TestLoop:test_a_failing_step_keeps_the_trajectory_so_far()
  local out = generate({ { qid = "q", query = "Where is A17? " .. directive {
    { tool_calls = { { name = "lookup_order", arguments = { order_id = "A17" } } } }, { content = "ok" } } } },
    agent())
  mock:reset()
  mock:config { fail_status = 500 }
  local failed = generate({ { qid = "q", query = "Where is B2?" } }, agent())
  mock:config {}
  local r = failed.rows[1]
  lu.assertStrContains(r.output_error, "step 1: HTTP 500")
  lu.assertEquals(#r.messages, 2) -- the system prompt and the user turn
  lu.assertEquals(out.rows[1].stop_reason, "final")
end

function TestLoop:test_each_user_turn_of_a_conversation_is_replayed()
  local rows = { { qid = "c", messages = {
    { role = "user", content = "Where is A17?" },
    { role = "assistant", content = "(an old reply)" },
    { role = "user", content = "And B22?" } } } }
  local out = generate(rows, agent()) -- no script: the mock's policy calls the tool, then replies with its answer
  local r = out.rows[1]
  local roles = {}
  for i, m in ipairs(r.messages) do roles[i] = m.role end
  lu.assertEquals(roles, { "system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant" })
  lu.assertEquals(seen, { "A17", "B22" })
  lu.assertEquals(r.input_messages[2].content, "(an old reply)")
  lu.assertEquals(r.steps, 4)
  local turns = out:turns()
  lu.assertEquals(turns.n, 2)
  lu.assertStrContains(turns.rows[2].answer, "B22")
end

function TestLoop:test_every_step_is_cached()
  local dir = h.tmpdir()
  local row = { qid = "q", query = "Where is A17? " .. directive {
    { tool_calls = { { name = "lookup_order", arguments = { order_id = "A17" } } } }, { content = "It is packed." } } }
  local first = generate({ row }, agent { cache = dir })
  lu.assertEquals(mock:stats().requests, 2)
  lu.assertFalse(first.rows[1].cached)
  require("evalua.client.cache").collect(true)
  local again = generate({ row }, agent { cache = dir })
  lu.assertEquals(mock:stats().requests, 2) -- nothing sent again
  lu.assertTrue(again.rows[1].cached)
  lu.assertEquals(again.rows[1].answer, "It is packed.")
  lu.assertEquals(#seen, 2) -- the tools ran both times: they are Lua, not requests
  h.sh("rm -rf " .. dir)
end

function TestLoop:test_an_offline_policy_plays_the_model()
  local policy = function(state)
    local last = state.messages[#state.messages]
    if last.role == "tool" then return { content = "Status: " .. cjson.decode(last.content).status } end
    return { tool_calls = { { name = "lookup_order", arguments = { order_id = state.row.order } } } }
  end
  local p = ev.provider.offline { tools = tools(), policy = policy }
  local out = generate({ { qid = "a", query = "Where is it?", order = "Z9" } }, p)
  lu.assertEquals(out.rows[1].answer, "Status: packed")
  lu.assertEquals(seen, { "Z9" })
  -- fixtures answer a tool without run: by name and equal arguments
  local fx = ev.provider.offline { tools = { LOOKUP }, policy = policy,
                                   fixtures = { { name = "lookup_order", arguments = { order_id = "Z9" }, output = { status = "lost" } } } }
  lu.assertEquals(generate({ { qid = "a", query = "Where?", order = "Z9" } }, fx).rows[1].answer, "Status: lost")
  local miss = generate({ { qid = "a", query = "Where?", order = "Y1" } }, fx).rows[1]
  lu.assertEquals(miss.tool_errors[1].error, 'no recorded answer for lookup_order {"order_id":"Y1"}')
  -- a policy that raises fails the row, not the run
  local bad = ev.provider.offline { tools = tools(), policy = function() error("no rule") end }
  lu.assertStrContains(generate({ { qid = "a", query = "x" } }, bad).rows[1].output_error, "step 1: the policy raised: ")
end

function TestLoop:test_options_that_cannot_work_are_refused()
  local function refused(want, f, o)
    local ok, err = pcall(f, o)
    lu.assertFalse(ok)
    lu.assertStrContains(err, want, false)
  end
  refused("ev.provider.openai: with tools the rendered prompt is the system message; leave system out",
    ev.provider.openai, { model = "m", base_url = mock.url, tools = tools(), system = "x" })
  refused("ev.provider.openai: max_steps needs tools", ev.provider.openai, { model = "m", base_url = mock.url, max_steps = 2 })
  refused("max_steps must be a whole number >= 1", ev.provider.offline, { tools = tools(), policy = print, max_steps = 0 })
  refused("with tools, give policy = function(state) -> message", ev.provider.offline, { tools = tools() })
  refused("fixtures: 'refund' is not one of the tools (lookup_order)", ev.provider.offline,
    { tools = { LOOKUP }, policy = print, fixtures = { { name = "refund", output = "x" } } })
  refused("'lookup_order' has a run function too", ev.provider.offline,
    { tools = tools(), policy = print, fixtures = { { name = "lookup_order", output = "x" } } })
  refused("tools[1]: unknown key 'fn'", ev.provider.offline, { tools = { { name = "x", fn = print } }, policy = print })
  -- a row with nothing to say is an output error, not a crash
  local out = generate({ { qid = "a" } }, ev.provider.offline { tools = tools(), policy = print })
  lu.assertEquals(out.rows[1].output_error, "the row has no user turn (messages with a user message, or a query)")
end

function TestLoop:test_a_bad_conversation_stops_generate_before_any_request()
  local r = h.run_script(([[
    local ev = require "evalua"
    local ds = ev.dataset.load(%q)
    ev.generate(ds, { prompts = { p = "x" }, providers = { ev.provider.openai {
      model = "m", base_url = %q, api_key_env = false, cache = false,
      tools = { { name = "lookup_order", run = function() return "x" end } } } } })
  ]]):format((os.getenv("EVALUA_SRC") or ".") .. "/tests/data/agent/bad_arguments.jsonl", mock.url))
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "bad_arguments.jsonl:2: field 'messages[2].tool_calls[1].function.arguments': not JSON")
  lu.assertEquals(mock:stats().requests, 0)
end

os.exit(lu.LuaUnit.run(), true)
