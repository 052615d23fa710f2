-- promptfoo's model-graded types against the project's mock server (its
-- reply set by a directive inside the graded output) and, for those that
-- run evalua's judged metrics, the same metric on the same row with the
-- offline judge.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local A = ev.assertions

local mock = mockmod.start()

local function with(reply) return ("Paris. <<mock %s>>"):format(require("evalua.core.json").encode { answer = reply }) end

local function run(a, row, judge)
  local c = assert(A.compile(a, "a"))
  local r = A.run(c, row, { judge = judge })
  return r.pass, r.reason, r.score
end

TestGraded = {}
function TestGraded:setUp() mock:reset(); mock:config {} end

function TestGraded:test_llm_rubric()
  local j = mock:judge()
  local row = { answer = with('{"pass": true, "score": 0.8, "reason": "names the capital"}') }
  lu.assertEquals({ run({ type = "llm-rubric", value = "names the capital of France" }, row, j) },
    { true, "score 0.8: names the capital", 0.8 })
  -- a threshold above the score fails a pass, as promptfoo's does
  lu.assertEquals({ run({ type = "llm-rubric", value = "names the capital", threshold = 0.9 }, row, j) },
    { false, "score 0.8: names the capital", 0.8 })
  local pass, reason, score = run({ type = "not-llm-rubric", value = "names the capital" }, row, j)
  lu.assertEquals({ pass, reason }, { false, "not: score 0.8: names the capital" })
  lu.assertAlmostEquals(score, 0.2, 1e-12)
  pass, reason = run({ type = "llm-rubric", value = "x" }, { answer = with('{"verdict": 1}') }, j)
  lu.assertNil(pass)
  lu.assertStrContains(reason, "llm-rubric: ")
  lu.assertEquals({ run({ type = "llm-rubric", value = "x" }, row) },
    { nil, "llm-rubric: no judge: pass judge = ev.judge.open(...) to ev.evaluate" })
end

function TestGraded:test_closed_qa_and_factuality()
  local j = mock:judge()
  lu.assertEquals({ run({ type = "model-graded-closedqa", value = "is a city" },
    { query = "Capital of France?", answer = with('{"verdict": "Y", "reason": "Paris is a city"}') }, j) },
    { true, "meets the criterion: Paris is a city", 1 })
  lu.assertEquals({ run({ type = "closed-qa", value = "is a river" }, { answer = with('{"verdict": "N"}') }, j) },
    { false, "does not meet the criterion", 0 })
  lu.assertEquals({ run({ type = "factuality", value = "Paris is the capital." },
    { answer = with('{"choice": "D", "reason": "they disagree"}') }, j) },
    { false, "choice D (disagree), score 0: they disagree", 0 })
  lu.assertEquals({ run({ type = "model-graded-factuality", value = "Paris" }, { answer = with('{"choice": "(A)"}') }, j) },
    { true, "choice A (subset), score 1", 1 })
  -- promptfoo's per-choice scores
  lu.assertEquals({ run({ type = "factuality", value = "Paris", scores = { subset = 0 } },
    { answer = with('{"choice": "A"}') }, j) }, { false, "choice A (subset), score 0", 0 })
  lu.assertEquals(select(2, A.compile({ type = "factuality", value = "x", scores = { partial = 1 } }, "a")),
    "a.scores.partial: not a choice (subset, superset, agree, disagree, differButFactual)")
end

function TestGraded:test_rag_types_are_evalua_metrics()
  local off = ev.judge.open("offline")
  local row = { query = "What is the object size limit?", answer = "The limit is 5 TiB per object.",
                context = { "Objects can be up to 5 TiB in size.", "Buckets are unlimited." } }
  local want = ev.rag.faithfulness { fields = { contexts = "context" } }:score(row, off)
  local pass, reason, score = run({ type = "context-faithfulness", threshold = 0.5 }, row, off)
  lu.assertAlmostEquals(score, want.score, 1e-12)
  lu.assertEquals(pass, want.score >= 0.5)
  lu.assertStrContains(reason, ("context faithfulness %.4f"):format(want.score))
  want = ev.rag.context_recall { fields = { contexts = "context", reference = function() return "5 TiB" end } }:score(row, off)
  _, _, score = run({ type = "context-recall", value = "5 TiB" }, row, off)
  lu.assertAlmostEquals(score, want.score, 1e-12)
  -- g-eval on the offline judge: it cannot read a criterion, so unmeasured
  pass, reason = run({ type = "g-eval", value = "The answer is concise." }, row, off)
  lu.assertNil(pass)
  lu.assertStrContains(reason, "G-Eval: ")
end

function TestGraded:test_select_best_asks_once_per_case()
  local j = mock:judge()
  local pick = '<<mock {"answer": "{\\"best\\": 1, \\"reason\\": \\"names the limit\\"}"}>>'
  local rows = {
    { qid = "q1", system = "a", answer = "I am not sure." },
    { qid = "q1", system = "b", answer = "5 TiB per object. " .. pick },
    { qid = "q2", system = "a", answer = "only one cell" },
  }
  local m = A.metric { { type = "select-best", value = "names the size limit" } }
  local before = mock:stats().requests
  local out = m.batch(rows, { judge = j })
  lu.assertEquals(mock:stats().requests - before, 1)
  lu.assertEquals({ out[1].score, out[2].score }, { 0, 1 })
  lu.assertEquals(out[2].assertions[1].reason, "chosen as the best: names the limit")
  lu.assertEquals(out[3], { unmeasured = true, reason = "select-best \"names the size limit\": one cell only: nothing to compare",
    assertions = out[3].assertions })
end

-- A bad assertion in a data row stops ev.generate before any request.
function TestGraded:test_bad_rows_stop_generate_before_any_request()
  local h = require "tests.lua.helpers"
  local dir = h.tmpdir()
  local cases = {
    { '{"qid": "a", "query": "q", "assert": [{"type": "contians", "value": "x"}]}',
      "field 'assert[1].type': unknown assertion type 'contians' (did you mean 'contains'?)" },
    { '{"qid": "a", "query": "q", "assert": [{"type": "is-json", "value": {"type": "object", "minLenght": 2}}]}',
      "field 'assert[1].value': schema keyword 'minLenght' is not a JSON Schema draft-07 keyword (did you mean 'minLength'?)" },
    { '{"qid": "a", "query": "q", "assert": [{"type": "is-sql", "value": {"databaseType": "MySQL"}}]}',
      "field 'assert[1].value.databaseType': evalua checks SQLite's dialect only, not \"MySQL\"" },
    { '{"qid": "a", "query": "q", "threshold": 1.5, "assert": [{"type": "contains", "value": "x"}]}',
      "field 'threshold': expected a number from 0 to 1, got 1.5" },
  }
  for _, c in ipairs(cases) do
    h.write(dir .. "/cases.jsonl", '{"qid": "z", "query": "fine"}\n' .. c[1] .. "\n")
    local ds = ev.dataset.load(dir .. "/cases.jsonl")
    local before = mock:stats().requests
    local ok, err = pcall(ev.evaluate, ds, { metrics = { A.metric({}) }, judge = mock:judge(), ci = false, quiet = true })
    lu.assertFalse(ok)
    lu.assertEquals(tostring(err), dir .. "/cases.jsonl:2: " .. c[2])
    lu.assertEquals(mock:stats().requests, before)
  end
  h.sh("rm -rf " .. dir)
end

-- webhook: the output and context POSTed to the grader, whose JSON is the verdict.
function TestGraded:test_webhook()
  local url = mock.url:gsub("/v1$", "") .. "/grade/x"
  local function hook(answer) return run({ type = "webhook", value = url }, { answer = answer, vars = { city = "Oslo" } }) end
  lu.assertEquals({ hook('Oslo <<mock {"answer": "{\\"pass\\": true, \\"score\\": 0.9, \\"reason\\": \\"fine\\"}"}>>') },
    { true, "fine", 0.9 })
  lu.assertEquals({ hook('x <<mock {"answer": "{\\"pass\\": false}"}>>') }, { false, "the script failed it", 0 })
  lu.assertEquals({ hook('x <<mock {"answer": "[1]"}>>') },
    { nil, "the script returned [1], not a boolean, a number or {pass =, score =, reason =}" })
  local seen = mock:requests()
  local body = seen[#seen].body
  lu.assertEquals(body.context.vars, { city = "Oslo" })
  local h = require "tests.lua.helpers"
  local r = h.run_script(('local ev = require "evalua"\nev.assertions.metric { { type = "webhook", value = %q } }\n'):format(url),
    "--sandbox")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "assertions[1].value: webhook sends the output to a server, which --sandbox does not allow")
end

-- A script's own Lua function may ask the judge: its requests park in
-- ev.map's scheduler like any judged metric's.
function TestGraded:test_a_lua_function_may_ask_the_judge()
  local j = mock:judge()
  local m = A.metric { { type = "lua", value = function(output)
    local sims = j:similarity({ output }, { { "5 TiB per object" } })
    return sims[1] ~= nil and sims[1][1] > 0.5
  end } }
  local before = mock:stats().requests
  local res = ev.evaluate({ { qid = "a", answer = "5 TiB per object", system = "s" },
                            { qid = "b", answer = "5 TiB per object", system = "s" } },
                          { metrics = { m }, judge = j, system = "system", ci = false, quiet = true })
  lu.assertEquals(res:agg("s", "assertions").mean, 1)
  lu.assertTrue(mock:stats().requests > before)
end

-- ev.generate keeps the finish reason and, asked with logprobs = true, the
-- token log-probabilities, which finish-reason and perplexity read.
function TestGraded:test_generate_records_finish_reason_and_logprobs()
  local h = require "tests.lua.helpers"
  local dir = h.tmpdir()
  local lp = '[{"token": "5", "logprob": -0.5, "top_logprobs": []}, {"token": " TiB", "logprob": -1.5, "top_logprobs": []}]'
  h.write(dir .. "/c.jsonl", ('{"qid": "a", "query": "limit? <<mock {\\"answer\\": \\"5 TiB\\", \\"logprobs\\": %s}>>"}\n')
    :format((lp:gsub('"', '\\"'))))
  local ds = ev.dataset.load(dir .. "/c.jsonl")
  local p = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = false, logprobs = true }
  local out = ev.generate(ds, { prompts = { p = "{{query}}" }, providers = { p }, quiet = true })
  lu.assertEquals(out.rows[1].finish_reason, "stop")
  local c = assert(A.compile({ type = "perplexity-score", threshold = 0.2 }, "a"))
  local r = A.run(c, out.rows[1])
  -- perplexity exp(-(-0.5 - 1.5) / 2) = e; the score 1 / (1 + e)
  lu.assertAlmostEquals(r.score, 1 / (1 + math.exp(1)), 1e-12)
  lu.assertTrue(r.pass)
  -- a reply cut by max_tokens finishes with "length"
  h.write(dir .. "/d.jsonl", '{"qid": "b", "query": "tell me a long story about storage"}\n')
  local short = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = false, max_tokens = 1 }
  out = ev.generate(ev.dataset.load(dir .. "/d.jsonl"), { prompts = { p = "{{query}}" }, providers = { short }, quiet = true })
  c = assert(A.compile({ type = "finish-reason", value = "length" }, "a"))
  lu.assertEquals(A.run(c, out.rows[1]).pass, true)
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
