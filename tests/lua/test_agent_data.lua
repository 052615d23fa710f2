-- Conversations and tool calls in rows (lua/evalua/agent/data.lua): what a
-- loaded conversation holds, the per-turn views, and every bad input as a
-- FILE:LINE: field ... error raised before any metric runs.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local data = require "evalua.agent.data"

local GOOD = "tests/data/agent/conversations.jsonl"

function test_a_loaded_conversation_has_its_calls_in_order_with_their_answers()
  local ds = ev.dataset.load(GOOD)
  ev.agent.check(ds)
  local p = data.row(ds.rows[1])
  local calls = p.messages.calls
  lu.assertEquals(#calls, 3)
  lu.assertEquals({ calls[1].name, calls[1].id, calls[1].turn, calls[1].message }, { "lookup_order", "call_1", 1, 3 })
  lu.assertEquals(calls[1].arguments, { order_id = "A17" })
  lu.assertEquals(calls[1].output, '{"status": "packed", "ships": "tomorrow"}')
  -- parallel calls of one message: both in message 7, answered in another order
  lu.assertEquals({ calls[2].name, calls[2].message, calls[2].index, calls[2].answer }, { "get_policy", 7, 1, 9 })
  lu.assertEquals({ calls[3].name, calls[3].message, calls[3].index, calls[3].answer }, { "lookup_order", 7, 2, 8 })
  lu.assertEquals(p.expected[2], { name = "get_policy", arguments = { topic = "address change" }, turn = 2, position = 2 })
end

function test_turns_split_a_conversation_at_each_user_message()
  local turns = ev.dataset.load(GOOD):turns()
  lu.assertEquals(turns.n, 3)
  local t1, t2, t3 = turns.rows[1], turns.rows[2], turns.rows[3]
  lu.assertEquals({ t1.qid, t1.conversation, t1.turn, t1._line }, { "c1#1", "c1", 1, 1 })
  lu.assertEquals(t1.query, "Where is my order A17?")
  lu.assertEquals(t1.answer, "Your order A17 is packed and ships tomorrow.")
  lu.assertEquals(#t1.messages, 4)
  lu.assertEquals(#t1.history, 1) -- the system message
  lu.assertEquals(t1.expected_tool_calls, { { name = "lookup_order", arguments = { order_id = "A17" }, turn = 1 } })
  lu.assertEquals(t1.scenario, "order_status")
  lu.assertEquals(t2.qid, "c1#2")
  lu.assertEquals(#t2.history, 5)
  lu.assertEquals(t2.answer, "Yes, until it ships tomorrow.")
  lu.assertEquals(t2.expected_tool_calls[1].name, "get_policy")
  -- content parts are joined as text; no expected call in the whole conversation: none per turn either
  lu.assertEquals(t3.query, "Hello\nthere")
  lu.assertEquals(t3.expected_tool_calls, {})
end

local function check_error(path)
  local ok, err = pcall(ev.agent.check, ev.dataset.load(path))
  lu.assertFalse(ok)
  return err
end

function test_arguments_that_are_not_json_name_file_line_and_field()
  local err = check_error("tests/data/agent/bad_arguments.jsonl")
  lu.assertStrContains(err, "tests/data/agent/bad_arguments.jsonl:2: field 'messages[2].tool_calls[1].function.arguments': not JSON (")
  lu.assertStrContains(err, "{order_id: A17}")
end

function test_a_tool_message_answering_no_call_names_file_line_and_field()
  lu.assertEquals(check_error("tests/data/agent/bad_tool_message.jsonl"),
    "tests/data/agent/bad_tool_message.jsonl:3: field 'messages[3].tool_call_id': 'c9' answers no call made before it")
end

-- Each bad shape, as the message a user reads.
local CASES = {
  { { role = "bot", content = "x" }, "field 'messages[1].role': expected system, developer, user, assistant or tool, got 'bot'" },
  { { role = "user" }, "field 'messages[1].content': missing (a string)" },
  { { role = "user", content = "x", tool_call = {} }, "field 'messages[1].tool_call': not a key of a message" },
  { { role = "user", content = "x", tool_calls = {} }, "field 'messages[1].tool_calls': only an assistant message makes tool calls (this one is user)" },
  { { role = "assistant" }, "field 'messages[1].content': missing: an assistant message needs content or tool_calls" },
  { { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "f", arguments = "[1, 2]" } } } },
    "field 'messages[1].tool_calls[1].function.arguments': the JSON is a list, not an object" },
  { { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "f", arguments = '{"x": 1e400}' } } } },
    "field 'messages[1].tool_calls[1].function.arguments': holds a number that is not finite" },
  { { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "", arguments = "{}" } } } },
    "field 'messages[1].tool_calls[1].function.name': expected a non-empty string" },
  { { role = "assistant", tool_calls = { { id = "a", type = "tool", ["function"] = { name = "f" } } } },
    "field 'messages[1].tool_calls[1].type': expected \"function\", got a string" },
  { { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "f" } }, { id = "a", ["function"] = { name = "g" } } } },
    "field 'messages[1].tool_calls[2].id': 'a' is the id of an earlier call too" },
  { { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "f" } } } },
    { role = "tool", tool_call_id = "a", content = "1" }, { role = "tool", tool_call_id = "a", content = "2" },
    "field 'messages[3].tool_call_id': answers call 'a' a second time (first in messages[2])" },
  { { role = "tool", content = "1" }, "field 'messages[1].tool_call_id': missing: a tool message names the call it answers" },
}

function test_every_bad_message_shape_is_refused_with_its_field()
  for _, c in ipairs(CASES) do
    local want = table.remove(c)
    local _, err = data.conversation(c, "messages")
    lu.assertStrContains(err, want)
  end
end

function test_expected_calls_are_checked_by_key()
  local _, err = data.expected({ { name = "f", args = { x = 1 } } }, "expected_tool_calls")
  lu.assertEquals(err, "field 'expected_tool_calls[1].args': not a key of an expected call (name, arguments, output, turn)")
  _, err = data.expected({ { name = "f", arguments = '{"x": 1}' } }, "expected_tool_calls")
  lu.assertEquals(err, "field 'expected_tool_calls[1].arguments': expected an object (the arguments decoded), got a string")
  _, err = data.expected({ { name = "f", turn = 1 }, { name = "g" } }, "expected_tool_calls")
  lu.assertEquals(err, "field 'expected_tool_calls[2].turn': every expected call names its turn, or none does (expected_tool_calls[1] does)")
  -- arguments left out are no arguments; a null argument is an absent one
  local calls = data.expected({ { name = "f" }, { name = "g", arguments = { x = require("cjson").null, y = 1 } } }, "e")
  lu.assertEquals(calls[1].arguments, {})
  lu.assertEquals(calls[2].arguments, { y = 1 })
end

function test_a_failure_the_row_records_in_tool_errors_is_data_not_bad_input()
  local msgs = { { role = "user", content = "x" },
                 { role = "assistant", tool_calls = { { id = "k", ["function"] = { name = "f", arguments = "{oops" } } } } }
  local _, err = data.row({ messages = msgs })
  lu.assertStrContains(err, "not JSON")
  local p = data.row({ messages = msgs, tool_errors = { { id = "k", error = "the arguments are not JSON" } } })
  lu.assertNil(p.messages.calls[1].arguments)
  lu.assertEquals(p.messages.calls[1].error, "the arguments are not JSON")
  lu.assertEquals(p.messages.calls[1].raw, "{oops")
end

function test_a_tool_answer_in_a_later_turn_cannot_be_split()
  local rows = { { qid = "x", messages = {
    { role = "user", content = "a" },
    { role = "assistant", tool_calls = { { id = "k", ["function"] = { name = "f" } } } },
    { role = "user", content = "b" },
    { role = "tool", tool_call_id = "k", content = "late" } } } }
  local ok, err = pcall(ev.dataset.from_rows(rows).turns, ev.dataset.from_rows(rows))
  lu.assertFalse(ok)
  lu.assertStrContains(err, "(rows):1: field 'messages[4]': answers call 'k' of an earlier turn")
end

os.exit(lu.LuaUnit.run(), true)
