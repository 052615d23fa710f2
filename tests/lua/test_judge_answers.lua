-- Model answers as models write them (issue 25, point 8): a <think> block
-- or prose with braces before the JSON. Against the mock server
-- (tests/mock/), counting the requests sent, since the point is about what
-- is asked.
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
