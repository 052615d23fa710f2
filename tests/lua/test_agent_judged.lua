-- The judged agent metrics against the mock server, whose answers to the
-- agent_* operations are token-overlap heuristics over the transcript
-- (tests/mock/mock_openai.py): every expected score below is computed by
-- hand from those rules on tests/data/agent/judged.jsonl, and the offline
-- judge either applies its stated heuristic or leaves the row unmeasured.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()
local function judge(opts) return mock:judge({ max_retries = 1 }, opts) end

local ds = ev.dataset.load("tests/data/agent/judged.jsonl")
local J1, J2, J3 = ds.rows[1], ds.rows[2], ds.rows[3]

local function score(m, row, j)
  local r = m:score(row, j or judge())
  return r.score, r
end

TestJudged = {}
function TestJudged:setUp() mock:reset() end

function TestJudged:test_argument_correctness_is_the_share_of_calls_judged_right()
  -- A17 was said by the user, B99 was not
  local s, r = score(ev.agent.argument_correctness, J1)
  lu.assertEquals(s, 0.5)
  lu.assertEquals({ r.verdicts[1].call, r.verdicts[1].verdict, r.verdicts[2].verdict }, { "lookup_order", 1, 0 })
  lu.assertEquals(r.reason, "1 of 2 calls have the right arguments")
  r = ev.agent.argument_correctness:score(J2, judge())
  lu.assertTrue(r.unmeasured)
  lu.assertEquals(r.reason, "no tool calls to judge")
  -- strict_mode: DeepEval's threshold 1, and a lower score is 0
  s = score(ev.agent.argument_correctness { strict_mode = true }, J1)
  lu.assertEquals(s, 0)
end

function TestJudged:test_task_completion_compares_the_extracted_task_and_outcome()
  local s, r = score(ev.agent.task_completion, J1)
  lu.assertEquals(s, 0.33) -- "order" of [my, order, a17] found in the last reply
  lu.assertEquals(r.task, "Where is my order A17?")
  lu.assertEquals(score(ev.agent.task_completion, J3), 1)
  -- a task given to the metric replaces the extracted one
  s, r = score(ev.agent.task_completion { task = "Say which order" }, J1)
  lu.assertEquals(r.task, "Say which order")
  lu.assertEquals(s, 0.5) -- [say, order] against "Which order do you mean?"
end

function TestJudged:test_goal_accuracy_with_and_without_a_reference()
  lu.assertEquals(score(ev.agent.agent_goal_accuracy, J1), 0)
  lu.assertEquals(score(ev.agent.agent_goal_accuracy, J3), 1)
  local r = ev.agent.agent_goal_accuracy:score(J2, judge())
  lu.assertEquals(r.reason, "no 'expected_outcome' in the row")
  lu.assertEquals(score(ev.agent.agent_goal_accuracy_without_reference, J3), 1)
  lu.assertEquals(score(ev.agent.agent_goal_accuracy_without_reference, J1), 0)
  -- fields renames the reference
  local m = ev.agent.agent_goal_accuracy { fields = { expected_outcome = "chatbot_role" } }
  lu.assertEquals(score(m, J2), 0) -- J2 has no expected_outcome, but a role: not its end state
end

function TestJudged:test_topic_adherence_precision_recall_and_f1()
  -- J2: on topic and answered (A17), on topic and refused (C33), off topic and answered (the joke)
  local s, r = score(ev.agent.topic_adherence, J2)
  lu.assertEquals(s, 0.5)
  lu.assertEquals({ r.precision, r.recall }, { 0.5, 0.5 })
  lu.assertEquals(score(ev.agent.topic_adherence { mode = "precision" }, J2), 0.5)
  lu.assertEquals(score(ev.agent.topic_adherence { mode = "recall" }, J1), 1)
  r = ev.agent.topic_adherence:score(J3, judge())
  lu.assertEquals(r.reason, "no 'reference_topics' in the row")
end

function TestJudged:test_knowledge_retention_counts_replies_that_keep_the_users_facts()
  -- J1's last reply asks again which order, though A17 and B22 were given
  local s, r = score(ev.agent.knowledge_retention, J1)
  lu.assertEquals(s, 0.5)
  lu.assertEquals({ r.verdicts[1].message, r.verdicts[1].forgot, r.verdicts[2].message, r.verdicts[2].forgot },
    { 5, false, 9, true })
  lu.assertEquals(r.facts, { "fact 1: A17", "fact 1: B22" })
  lu.assertEquals(score(ev.agent.knowledge_retention, J2), 1)
end

function TestJudged:test_role_adherence_counts_the_replies_out_of_role()
  lu.assertEquals(score(ev.agent.role_adherence, J1), 1)
  local s, r = score(ev.agent.role_adherence, J2)
  lu.assertAlmostEquals(s, 2 / 3, 1e-12)
  lu.assertEquals(r.out_of_character[1].index, 4)
  r = ev.agent.role_adherence:score(J3, judge())
  lu.assertEquals(r.reason, "no 'chatbot_role' in the row")
end

function TestJudged:test_conversation_completeness_and_turn_relevancy()
  lu.assertEquals(score(ev.agent.conversation_completeness, J1), 0.5)
  lu.assertAlmostEquals(score(ev.agent.conversation_completeness, J2), 1 / 3, 1e-12)
  lu.assertEquals(score(ev.agent.turn_relevancy, J1), 1)
  local s, r = score(ev.agent.turn_relevancy { window_size = 1 }, J2)
  lu.assertAlmostEquals(s, 1 / 3, 1e-12)
  lu.assertEquals({ r.verdicts[1].verdict, r.verdicts[2].verdict, r.verdicts[3].verdict }, { 0, 0, 1 })
  -- the window: turn 3 with window_size 2 sends turns 2 and 3, numbered as in the conversation
  local function last_body()
    local reqs = mock:requests()
    local b = reqs[#reqs].body
    return type(b) == "string" and require("cjson").decode(b) or b
  end
  local body = last_body()
  lu.assertStrContains(body.messages[2].content, "[5] user: Where is order A17?")
  lu.assertNotStrContains(body.messages[2].content, "[3] user")
  mock:reset()
  score(ev.agent.turn_relevancy { window_size = 2 }, J2)
  body = last_body()
  lu.assertStrContains(body.messages[2].content, "[3] user: Tell me a joke.")
  lu.assertNotStrContains(body.messages[2].content, "[1] user")
end

function TestJudged:test_conversational_geval_over_the_conversation_and_over_windows()
  local m = ev.agent.conversational_geval { name = "resolves", criteria = "The assistant resolves the user's request.",
                                            params = { "expected_outcome" }, logprobs = false }
  -- the last reply against the expected outcome: token F1 1/3, so 3 of 0-10
  local s = score(m, J1)
  lu.assertAlmostEquals(s, 0.3, 1e-12)
  local w = m { window = 1 }
  local r
  s, r = score(w, J1)
  -- turn 1: F1 0.8 of the first reply, 8 of 10; turn 2: 3 of 10
  lu.assertAlmostEquals(s, (0.8 + 0.3) / 2, 1e-12)
  lu.assertEquals(#r.turns, 2)
  local _, why = pcall(ev.agent.conversational_geval, { name = "x", criteria = "y", params = { "answer" } })
  lu.assertStrContains(why, "params[1] 'answer' is not one of turns, scenario, expected_outcome, chatbot_role, context")
end

function TestJudged:test_samples_are_asked_and_voted()
  local m = ev.agent.argument_correctness { samples = 3 }
  local s, r = score(m, J1)
  lu.assertEquals(s, 0.5)
  lu.assertEquals(r.samples, 3)
  lu.assertEquals(r.agreement, 1)
  lu.assertEquals(mock:stats().requests, 3)
  local ok, why = pcall(ev.agent.topic_adherence, { samples = 3 })
  lu.assertFalse(ok)
  lu.assertStrContains(why, "unknown option 'samples'")
end

function TestJudged:test_an_answer_of_the_wrong_shape_is_an_invalid_judge_answer()
  local row = { qid = "x", messages = {
    { role = "user", content = 'Where is A17? <<mock {"answer": "{\\"verdicts\\": []}"}>>' },
    { role = "assistant", tool_calls = { { id = "a", ["function"] = { name = "lookup_order", arguments = '{"order_id": "A17"}' } } } } } }
  local r = ev.agent.argument_correctness:score(row, judge())
  lu.assertTrue(r.unmeasured)
  lu.assertTrue(r.judge_failed)
  lu.assertStrContains(r.reason, "invalid judge answer for 'agent_arguments': 0 verdicts for 1 items")
end

function TestJudged:test_a_dead_judge_leaves_every_row_undecided_with_the_reason()
  mock:config { fail_status = 500 }
  local res = ev.evaluate(ds, { metrics = { "task_completion" }, judge = judge { max_retries = 0 }, ci = false, quiet = true })
  mock:config {}
  for i = 1, 3 do
    local s, why = res.scores:get(i, 1)
    lu.assertNil(s)
    lu.assertStrContains(why, "outcome: HTTP 500")
    lu.assertTrue(res.details.task_completion[i].judge_failed)
  end
end

function TestJudged:test_the_offline_judge_estimates_only_goal_accuracy_against_a_reference()
  local off = ev.judge.open("offline")
  lu.assertEquals(score(ev.agent.agent_goal_accuracy, J3, off), 1)
  lu.assertEquals(score(ev.agent.agent_goal_accuracy, J1, off), 0)
  for _, name in ipairs { "agent_goal_accuracy_without_reference", "argument_correctness", "task_completion",
                          "topic_adherence", "knowledge_retention", "role_adherence", "conversation_completeness",
                          "turn_relevancy" } do
    local r = ev.agent[name]:score(J1, off)
    lu.assertTrue(r.unmeasured, name)
    lu.assertTrue(r.offline, name)
    lu.assertStrContains(r.reason, "the offline judge cannot", false, name)
  end
end

function TestJudged:test_judged_metrics_run_by_name_in_evaluate_and_refuse_bad_rows_first()
  local res = ev.evaluate(ds, { metrics = { "argument_correctness", "role_adherence" }, judge = judge(), ci = false,
                                quiet = true })
  lu.assertEquals(res.scores:get(1, 1), 0.5)
  lu.assertAlmostEquals(res.scores:get(2, 2), 2 / 3, 1e-12)
  local before = mock:stats().requests
  local ok, err = pcall(ev.evaluate, ev.dataset.load("tests/data/agent/bad_tool_message.jsonl"),
    { metrics = { "turn_relevancy" }, judge = judge() })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "bad_tool_message.jsonl:3: field 'messages[3].tool_call_id'")
  lu.assertEquals(mock:stats().requests, before) -- nothing was sent for the rows before the bad one
end

os.exit(lu.LuaUnit.run(), true)
