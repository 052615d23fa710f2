-- Model answers as models write them (issue 25, point 8): a structured
-- refusal, an answer cut at max_tokens, a <think> block or prose with
-- braces before the JSON. Each against the mock server (tests/mock/),
-- counting the requests sent, since each point is about what is asked.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()
local say = mockmod.say

local function judge(opts) return mock:judge({ max_retries = 2 }, opts) end
local function user(text) return { { role = "user", content = text } } end
local function requests() return mock:stats().requests end

TestAnswers = {}
function TestAnswers:setUp() mock:reset() end

-- (b) OpenAI's refusal (content null, refusal "..."): an unmeasured item
-- with the refusal text, asked once; before, a broken response retried.
function TestAnswers:test_a_structured_refusal_is_an_answer_not_a_broken_response()
  local dir = h.tmpdir()
  local j = judge { cache = dir }
  local r = j:chat { messages = user(say { refusal = "I can't help with grading this." }), json = true }
  lu.assertEquals(r.ok, false)
  lu.assertEquals(r.refusal, "I can't help with grading this.")
  lu.assertEquals(r.error, "the judge refused to answer: I can't help with grading this.")
  lu.assertEquals({ r.unmeasured, r.judge_failed, r.attempts }, { true, true, 1 })
  lu.assertEquals(requests(), 1)
  lu.assertEquals({ j:stats().failures, j:stats().refused }, { 1, 1 })
  lu.assertEquals(h.run("find " .. dir .. " -name '*.json'").stdout, "") -- a refusal is not cached
  -- through a metric: the item is unmeasured with the refusal text
  mock:reset()
  local row = { query = "q", answer = "An answer. " .. say { refusal = "I won't." }, contexts = { "c" } }
  lu.assertEquals(ev.rag.faithfulness:score(row, j), { unmeasured = true, judge_failed = true, refusal = "I won't.",
    reason = "statements: the judge refused to answer: I won't." })
  lu.assertEquals(requests(), 1)
  h.sh("rm -rf " .. dir)
end

-- (c) finish_reason "length": the reason says the answer was cut at
-- max_tokens, and the request is asked once more with twice the room.
-- The mock cuts a reply after max_tokens pieces, as a server does; this
-- reply is 11: {" score ": " 4 , " reason ": " fine "}
local REPLY = '{"score": 4, "reason": "fine"}'

function TestAnswers:test_an_answer_cut_at_max_tokens_is_asked_again_with_twice_the_room()
  local r = judge():chat { messages = user(say { answer = REPLY }), json = true, max_tokens = 6 }
  lu.assertEquals(r.ok, true)
  lu.assertEquals(r.json, { score = 4, reason = "fine" })
  lu.assertEquals(r.repaired, true)
  local seen = mock:requests()
  lu.assertEquals(#seen, 2)
  lu.assertEquals({ seen[1].body.max_tokens, seen[2].body.max_tokens }, { 6, 12 })
  lu.assertEquals(seen[2].body.messages, seen[1].body.messages) -- the same question, not a repair prompt
end

function TestAnswers:test_an_answer_cut_twice_says_so()
  local r = judge():chat { messages = user(say { answer = REPLY }), json = true, max_tokens = 5 }
  lu.assertEquals(r.ok, false)
  lu.assertEquals(r.error, "the answer was cut at max_tokens (5), and again with twice the room (max_tokens = 10)")
  lu.assertEquals(r.judge_failed, true)
  lu.assertEquals(requests(), 2)
  -- without the repair request: one request, and the reason names the cut
  mock:reset()
  r = judge { json_repair = false }:chat { messages = user(say { answer = REPLY }), json = true, max_tokens = 5 }
  lu.assertStrContains(r.error, "the answer was cut at max_tokens (5); the judge's answer is not valid JSON: ")
  lu.assertEquals(requests(), 1)
  -- a plain answer is the caller's to read: returned with its finish_reason
  mock:reset()
  r = judge():chat { messages = user(say { answer = "one two three four" }), max_tokens = 2 }
  lu.assertEquals({ r.ok, r.text, r.finish_reason }, { true, "one two", "length" })
  lu.assertEquals(requests(), 1)
end

-- Through an operation (its max_tokens) and a metric: the item's reason
-- names the cut.
function TestAnswers:test_an_operation_cut_short_gets_the_room_once()
  ev.judge.register_op("cut_op", { prompt = { system = "Give a score.", user = "{{x}}" }, max_tokens = 4,
    parse = function(a) return type(a) == "table" and math.tointeger(a.score) or nil, "expected a score" end })
  -- 5 pieces: {" score ": " 4 }
  local r = judge():ask("cut_op", { x = say { answer = '{"score": 4}' } })
  lu.assertEquals({ r.ok, r.value }, { true, 4 })
  local seen = mock:requests()
  lu.assertEquals({ #seen, seen[1].body.max_tokens, seen[2].body.max_tokens }, { 2, 4, 8 })
  mock:reset()
  r = judge():ask("cut_op", { x = say { answer = REPLY } })
  lu.assertEquals(r.error, "the answer was cut at max_tokens (4), and again with twice the room (max_tokens = 8)")
  lu.assertEquals({ r.ok, r.judge_failed }, { false, true })
  lu.assertEquals(requests(), 2)
end

-- (d) A reasoning model's <think> block, or prose with braces before the
-- JSON, is read without a repair request (before, the span from the first
-- "{" to the last "}" did not parse and a second request was paid for).
function TestAnswers:test_think_blocks_and_braces_in_prose_cost_no_repair()
  local j = judge()
  local think = '<think>The context says {"verdict": 0} would be wrong; {x}.</think>\n{"statements": ["a", "b"]}'
  local r = j:chat { messages = user(say { answer = think }), json = true }
  lu.assertEquals({ r.ok, r.repaired }, { true, nil })
  lu.assertEquals(r.json, { statements = { "a", "b" } })
  local prose = 'I read {each statement} of the {answer}. Here it is: {"statements": ["c"]} I hope {this} helps.'
  r = j:chat { messages = user(say { answer = prose }), json = true }
  lu.assertEquals(r.json, { statements = { "c" } })
  lu.assertEquals(requests(), 2)
  lu.assertEquals(j:stats().invalid, 0)
  -- the same reader for text a script holds
  lu.assertEquals(ev.judge.json.lenient(think), { statements = { "a", "b" } })
  -- an answer whose JSON never closes is still invalid (nothing nested in it is taken for it)
  local v, why = ev.judge.json.lenient('{"verdicts": [{"verdict": 1}, {"verd')
  lu.assertEquals(v, nil)
  lu.assertStrContains(why, "invalid JSON in the answer")
end

local status = lu.LuaUnit.run()
mock:stop()
os.exit(status, true)
