-- The judge operations on both kinds of judge: the offline heuristics
-- (values worked out by hand below) and the same operations asked of an
-- HTTP judge (the mock answers them with the same overlap rules).
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"

local offline = ev.judge.offline
local mock = mockmod.start()
local say = mockmod.say

local CTX = "Paris is the capital and largest city of France."
local STATEMENTS = { "Paris is the capital of France", "Bananas are blue" }

local function http(opts)
  local o = { base_url = mock.url, model = "m", cache = false, api_key_env = false }
  for k, v in pairs(opts or {}) do o[k] = v end
  return ev.judge.open(o)
end

TestOffline = {}

function TestOffline:test_tokens()
  -- ev.text.tokens: lower case, articles and punctuation dropped, CJK one each
  lu.assertEquals(offline.tokens("The Capital of FRANCE, 分片 ＡＢＣ１２"), { "capital", "of", "france", "分", "片", "abc12" })
  lu.assertEquals(offline.tokens("bad \255 byte"), { "bad", "byte" })
  -- the fallback tokenizer splits at every punctuation mark
  lu.assertEquals(offline.local_tokens("The Capital, 3.5 ＡＢＣ１２ 分片 naïve"),
                  { "the", "capital", "3", "5", "abc12", "分", "片", "naïve" })
  lu.assertEquals(offline.content_tokens("what is the capital of France"), { "capital", "france" })
  lu.assertEquals(offline.content_tokens("is it"), { "is", "it" }) -- only stopwords: keep them
end

function TestOffline:test_sentences()
  lu.assertEquals(offline.sentences("连续三个分片失败后中止上传。然后重试! It is 3.5 km. OK\n\n..."),
                  { "连续三个分片失败后中止上传。", "然后重试!", "It is 3.5 km.", "OK" })
  lu.assertEquals(offline.sentences(""), {})
end

function TestOffline:test_statements_verdicts_relevance()
  local j = ev.judge.open("offline")
  lu.assertEquals(j:ask("statements", { answer = "Paris is big. It has a tower." }),
                  { ok = true, value = { "Paris is big.", "It has a tower." }, reason = "split at sentence ends, refusals dropped",
                    judge = "offline" })
  -- a sentence that declines to answer is not a claim
  lu.assertEquals(j:ask("statements", { answer = "The documentation does not say. Try support." }).value,
                  { "Try support." })
  lu.assertEquals(j:ask("statements", { answer = "文档中没有提到这一点。" }).value, {})
  -- content tokens paris, capital, france: 3 of 3 in the context; bananas, blue: 0 of 2
  local v = j:ask("verdicts", { statements = STATEMENTS, context = { CTX } })
  lu.assertEquals(v.value, {
    { statement = STATEMENTS[1], verdict = 1, reason = "3 of 3 words are in the context (100%; supported from 50%)" },
    { statement = STATEMENTS[2], verdict = 0, reason = "0 of 2 words are in the context (0%; supported from 50%)" },
  })
  -- paris, has, bananas: 1 of 3 = 33 %: below 50 %, above 30 %
  local one = { statements = { "Paris has bananas" }, context = CTX }
  lu.assertEquals(j:ask("verdicts", one).value[1].verdict, 0)
  lu.assertEquals(ev.judge.open { kind = "offline", support_threshold = 0.3 }:ask("verdicts", one).value[1].verdict, 1)
  -- a number the context never mentions makes a statement unsupported,
  -- whatever the word overlap (4 of 4 words here)
  local ctx = "Incomplete multipart uploads are deleted after 7 days."
  local nums = j:ask("verdicts", { statements = { "Incomplete uploads deleted after 30 days.",
                                                  "Incomplete uploads deleted after 7 days." }, context = ctx }).value
  lu.assertEquals({ nums[1].verdict, nums[1].reason }, { 0, "the number 30 is not in the context" })
  lu.assertEquals(nums[2].verdict, 1)
  -- so does a capitalised name past the first word (a swapped name keeps the
  -- other words); acronyms, possessives, hyphens and plurals are found
  local names = j:ask("verdicts", { context = "The Denver Broncos beat the Carolina Panthers at Levi's Stadium in "
      .. "February. The Standard tier restore URL takes hours.", statements = {
    "The Denver Broncos beat the Tennessee Titans.", "Carolina lost at Levi's Stadium in February.",
    "They played in March.", "The Standard-tier restore URL takes hours.", "The restore URLs take hours in the SDK." } }).value
  lu.assertEquals({ names[1].verdict, names[1].reason }, { 0, "the name Tennessee is not in the context" })
  lu.assertEquals(names[2].verdict, 1)
  lu.assertEquals({ names[3].verdict, names[3].reason }, { 0, "the name March is not in the context" })
  lu.assertEquals(names[4].verdict, 1) -- standard and tier are in the context, and 4 of 5 words
  lu.assertEquals(names[5].reason, "2 of 5 words are in the context (40%; supported from 50%)") -- no name: acronyms
  -- a phrase without a lower-case word is all names, its first word too
  local date = j:ask("verdicts", { context = "The game was played on February 7, 2016.",
                                   statements = { "August 7, 2016", "February 7, 2016" } }).value
  lu.assertEquals({ date[1].verdict, date[1].reason }, { 0, "the name August is not in the context" })
  lu.assertEquals(date[2].verdict, 1)
  -- a context in Chinese may name in its own script what a statement names in Latin letters
  local cn = j:ask("verdicts", { context = "中国区域默认 200 个存储桶。 Global regions allow 100 buckets.",
                                 statements = { "Global regions allow 100 buckets, China regions 200." } }).value
  lu.assertEquals(cn[1].verdict, 1)
  ev.judge.offline.check_names = false
  local off = j:ask("verdicts", { context = "The Denver Broncos won.", statements = { "The Boston Broncos won." } })
  ev.judge.offline.check_names = true
  lu.assertEquals(off.value[1].verdict, 1) -- broncos, won: 2 of 3 words
  -- question 分片上传的中止阈值是多少: 10 content characters (的, 是 are stopwords); 6 in the text
  lu.assertEquals(j:ask("relevance", { question = "分片上传的中止阈值是多少", text = "连续三个分片失败后中止上传。" }),
                  { ok = true, value = 0.6, reason = "6 of 10 question words appear in the text", judge = "offline" })
  lu.assertEquals(j:ask("relevance", { question = "What is the capital of France?", text = "Paris is the capital." }).value, 0.5)
end

function TestOffline:test_the_offline_judge_needs_no_network_and_cannot_chat()
  local j = ev.judge.open("offline")
  lu.assertEquals(j.kind, "offline")
  lu.assertEquals(j:chat { messages = { { role = "user", content = "x" } } }.error,
                  "the offline judge cannot chat; it answers judge:ask(op, vars) and judge:embed{input=}")
  lu.assertEquals(j:stats().requests, 0)
  lu.assertErrorMsgContains("does not apply to the offline judge", ev.judge.open, { kind = "offline", model = "x" })
end

function TestOffline:test_misuse_is_an_error_naming_the_field()
  local j = ev.judge.open("offline")
  lu.assertErrorMsgContains("unknown operation 'nope'", j.ask, j, "nope", {})
  lu.assertErrorMsgContains("judge:ask('verdicts'): vars.statements must be a list of strings (got nil)",
                            j.ask, j, "verdicts", { context = "c" })
  lu.assertErrorMsgContains("vars.context[2] must be a string", j.ask, j, "verdicts",
                            { statements = {}, context = { "a", 2 } })
end

TestHttpOps = {}
function TestHttpOps:setUp() mock:reset() end

function TestHttpOps:test_the_same_operations_on_an_http_judge()
  local j = http()
  local s = j:ask("statements", { answer = "Paris is big. It has a tower." })
  lu.assertEquals(s.ok, true)
  lu.assertEquals(s.value, { "Paris is big.", "It has a tower." })
  local v = j:ask("verdicts", { statements = STATEMENTS, context = { CTX } })
  lu.assertEquals({ v.value[1].verdict, v.value[2].verdict }, { 1, 0 })
  lu.assertEquals(v.value[1].statement, STATEMENTS[1])
  local r = j:ask("relevance", { question = "分片上传的中止阈值是多少", text = "连续三个分片失败后中止上传。" })
  lu.assertEquals(r.value, 0.6)
  lu.assertEquals(r.reason, "6 of 10 question words")
  local seen = mock:requests()
  lu.assertEquals(#seen, 3)
  lu.assertEquals(seen[2].body.temperature, 0)
  lu.assertEquals(seen[2].body.response_format, { type = "json_object" })
  lu.assertEquals(seen[2].body.messages[1].content, ev.judge.ops.verdicts.prompt.system)
  lu.assertStrContains(seen[2].body.messages[2].content, '<statements>\n["Paris is the capital of France","Bananas are blue"]\n</statements>')
end

function TestHttpOps:test_an_answer_of_the_wrong_shape_is_invalid_not_zero()
  local j = http()
  local r = j:ask("verdicts", { statements = STATEMENTS, context = say { answer = '{"verdicts": [{"verdict": 1}]}' } })
  lu.assertEquals(r, { ok = false, unmeasured = true, invalid = true, judge_failed = true,
                       text = '{"verdicts": [{"verdict": 1}]}',
                       error = "invalid judge answer for 'verdicts': 1 verdicts for 2 statements" })
  r = j:ask("relevance", { question = "q", text = say { answer = '{"relevance": 7}' } })
  lu.assertEquals(r.error, "invalid judge answer for 'relevance': expected relevance as a number from 0 to 1")
  lu.assertEquals(j:stats().invalid, 2)
  r = j:ask("verdicts", { statements = { "x" }, context = say { answer = '{"verdicts": [{"verdict": "yes"}]}' } })
  lu.assertEquals(r.value[1].verdict, 1) -- "yes" is read as 1
end

function TestHttpOps:test_prompts_can_be_replaced_and_ops_registered()
  local op = ev.judge.ops.relevance
  local saved = op.prompt.system
  op.prompt.system = 'Rate it. Reply {"relevance": x}.'
  local r = http():ask("relevance", { question = "q", text = "q" })
  op.prompt.system = saved
  lu.assertEquals(r.ok, true)
  lu.assertEquals(mock:requests()[1].body.messages[1].content, 'Rate it. Reply {"relevance": x}.')
  ev.judge.register_op("echo", {
    prompt = { system = "Answer in JSON.", user = "{{word}}" },
    parse = function(answer) return answer.answer end,
    offline = function(vars) return vars.word:upper(), "shouted" end,
  })
  lu.assertEquals(ev.judge.open("offline"):ask("echo", { word = "hi" }).value, "HI")
  lu.assertEquals(http():ask("echo", { word = "hi" }).value, "mock answer: hi")
  lu.assertErrorMsgContains("needs prompt = {system=, user=} strings and a parse function",
                            ev.judge.register_op, "bad", { prompt = {} })
end

function TestHttpOps:test_a_failed_request_is_an_unmeasured_answer()
  local r = http { max_retries = 0 }:ask("relevance", { question = "q", text = say { faults = { "503" } } })
  lu.assertEquals(r.ok, false)
  lu.assertEquals(r.unmeasured, true)
  lu.assertEquals(r.status, 503)
  lu.assertEquals(r.error, "HTTP 503: mock error 503")
end

local code = lu.LuaUnit.run()
mock:stop()
os.exit(code, true)
