-- The viewer's item page trajectory (lua/evalua/view/trajectory.lua): each
-- step with its calls, their arguments and the tool's answer, marked where
-- it left the reference, on a conversation built by hand.
local lu = require "luaunit"
local traj = require "evalua.view.trajectory"

local ROW = {
  qid = "t1",
  messages = {
    { role = "user", content = "Region of bucket media-prod? And open a ticket." },
    { role = "assistant", content = "", tool_calls = {
      { id = "c1", type = "function", ["function"] = { name = "get_bucket", arguments = '{"bucket":"media-prod"}' } },
      { id = "c2", type = "function", ["function"] = { name = "get_invoice", arguments = '{"month":"2026-01"}' } } } },
    { role = "tool", tool_call_id = "c1", content = '{"region":"eu-central"}' },
    { role = "tool", tool_call_id = "c2", content = "error: no such invoice" },
    { role = "assistant", content = "", tool_calls = {
      { id = "c3", type = "function", ["function"] = { name = "open_ticket", arguments = '{"subject":"other"}' } } } },
    { role = "tool", tool_call_id = "c3", content = '{"ticket":7}' },
    { role = "assistant", content = "It is in eu-central; ticket 7 is open." },
  },
  expected_tool_calls = {
    { name = "get_bucket", arguments = { bucket = "media-prod" } },
    { name = "open_ticket", arguments = { subject = "region" } },
    { name = "notify", arguments = {} },
  },
}

function test_steps_calls_and_marks()
  local t = traj.of(ROW)
  lu.assertEquals(#t.steps, 7)
  lu.assertEquals(t.steps[1].role, "user")
  local calls = t.steps[2].calls
  lu.assertEquals(#calls, 2)
  lu.assertEquals(calls[1].name, "get_bucket")
  lu.assertEquals(calls[1].arguments, { bucket = "media-prod" })
  lu.assertEquals(calls[1].mark, "ok")
  lu.assertEquals(calls[2].mark, "left")
  lu.assertEquals(calls[2].why, "not an expected call")
  -- a tool answer names the call it answers
  lu.assertEquals(t.steps[3].tool, "get_bucket")
  lu.assertEquals(t.steps[3].text, '{"region":"eu-central"}')
  lu.assertEquals(t.steps[4].tool, "get_invoice")
  -- the right tool with other arguments is partly right
  local ticket = t.steps[5].calls[1]
  lu.assertEquals(ticket.mark, "part")
  lu.assertStrContains(ticket.why, "arguments differ from the expected")
  lu.assertStrContains(ticket.why, "region")
  -- the expected call never made is listed
  lu.assertEquals(t.missing, { { name = "notify", arguments = {} } })
  lu.assertTrue(t.expected)
end

function test_rows_without_messages_have_no_trajectory()
  lu.assertNil(traj.of({ qid = "r", query = "q" }))
end

function test_unreadable_messages_say_why()
  local t = traj.of({ qid = "r", messages = "not a list" })
  lu.assertNotNil(t.error)
end

-- A model's call whose arguments are not JSON, recorded by the agent loop
-- in tool_errors, is shown with its text and the failure.
function test_arguments_that_are_not_json_keep_their_text()
  local t = traj.of({ qid = "r", tool_errors = { { id = "c1", error = "arguments are not JSON" } }, messages = {
    { role = "user", content = "x" },
    { role = "assistant", content = "", tool_calls = {
      { id = "c1", type = "function", ["function"] = { name = "f", arguments = "{broken" } } } } } })
  local c = t.steps[2].calls[1]
  lu.assertNil(c.arguments)
  lu.assertEquals(c.raw, "{broken")
  lu.assertEquals(c.mark, "left")
  lu.assertEquals(c.error, "arguments are not JSON")
end

os.exit(lu.LuaUnit.run(), true)
