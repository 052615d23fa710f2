-- ev.llm_evaluator: the prompt built from instructions, declared keys,
-- examples and inputs; answers validated to have exactly the declared keys;
-- the score key; the offline judge's nearest example.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()
local say = mockmod.say

local function judge() return mock:judge { max_retries = 0 } end

local EXAMPLES = {
  { inputs = { query = "Where is the office?", answer = "Go find it yourself." },
    outputs = { reason = "dismissive", score = 0 } },
  { inputs = { query = "How big can a file be?", answer = "Up to 5 TiB, happy to help." },
    outputs = { reason = "courteous", score = 1 } },
}

local function polite(extra)
  local o = { name = "polite", instructions = "Decide whether the answer is polite.",
              inputs = { "query", "answer" }, outputs = { "reason", "score" }, examples = EXAMPLES }
  for k, v in pairs(extra or {}) do o[k] = v end
  return ev.llm_evaluator(o)
end

-- The judge's scripted reply rides in the instructions: the inputs are
-- JSON-encoded in the prompt, so a directive there would not read as one.
local function replying(reply, extra)
  local o = { instructions = "Decide whether the answer is polite. " .. say { answer = reply } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return polite(o)
end

local ROW = { query = "Can I cancel?", answer = "Yes, any time." }

TestLLMEvaluator = {}
function TestLLMEvaluator:setUp() mock:reset() end

-- Three samples (the mock answers attempts 1, 2, 3 of the same request in
-- turn): the score output by mean, the reason by majority.
function TestLLMEvaluator:test_samples_vote_per_output()
  local m = polite { samples = 3, instructions = "Decide whether the answer is polite. " .. say { answers = {
    '{"reason": "kind", "score": 1}', '{"reason": "curt", "score": 0}', '{"reason": "kind", "score": 1}' } } }
  local r = m:score(ROW, judge())
  lu.assertEquals({ r.score, r.outputs.reason, r.samples }, { 2 / 3, "kind", 3 })
  lu.assertEquals(mock:stats().requests, 3)
  lu.assertErrorMsgContains("samples must be a whole number >= 1", polite, { samples = 1.5 })
end

function TestLLMEvaluator:test_prompt_has_instructions_keys_examples_and_inputs()
  local r = replying('{"reason": "friendly", "score": 1}'):score(ROW, judge())
  lu.assertEquals(r, { score = 1, reason = "friendly", outputs = { reason = "friendly", score = 1 } })
  local msgs = mock:requests()[1].body.messages
  local want = table.concat({
    "Decide whether the answer is polite. " .. say { answer = '{"reason": "friendly", "score": 1}' },
    "",
    'Reply with a JSON object that has exactly these keys: ["reason","score"].',
    "",
    "Examples:",
    "",
    "Inputs:",
    '{"answer":"Go find it yourself.","query":"Where is the office?"}',
    "Outputs:",
    '{"reason":"dismissive","score":0}',
    "",
    "Inputs:",
    '{"answer":"Up to 5 TiB, happy to help.","query":"How big can a file be?"}',
    "Outputs:",
    '{"reason":"courteous","score":1}',
    "",
    "Inputs:",
    '{"answer":"Yes, any time.","query":"Can I cancel?"}',
    "Outputs:" }, "\n")
  lu.assertEquals(msgs[2].content, want)
  lu.assertEquals(mock:requests()[1].body.response_format, { type = "json_object" })
end

function TestLLMEvaluator:test_exactly_the_declared_keys()
  lu.assertEquals(replying('{"score": 1}'):score(ROW, judge()),
    { unmeasured = true, judge_failed = true,
      reason = "invalid judge answer for 'llm_evaluator': the answer has no key 'reason'" })
  lu.assertEquals(replying('{"reason": "r", "score": 1, "confidence": 0.9}'):score(ROW, judge()).reason,
    "invalid judge answer for 'llm_evaluator': the answer has unexpected key 'confidence'")
  lu.assertEquals(replying('{"reason": "r", "score": "high"}'):score(ROW, judge()),
    { unmeasured = true, reason = "output 'score' is not a number", outputs = { reason = "r", score = "high" } })
  lu.assertEquals(replying('["reason", "score"]'):score(ROW, judge()).reason,
    "invalid judge answer for 'llm_evaluator': the answer is not a JSON object")
end

function TestLLMEvaluator:test_score_key_function_and_threshold()
  local m = replying('{"verdict": "yes", "reason": "kind"}', { outputs = { "verdict", "reason" },
    score = function(o) return o.verdict == "yes" end, threshold = 1, examples = {} })
  local r = m:score(ROW, judge())
  lu.assertEquals({ r.score, r.pass, r.reason }, { 1, true, "kind" })
  -- without score = ..., the key "score" if declared, else the first output
  lu.assertEquals(replying('{"rating": 0.5}', { outputs = { "rating" }, examples = {} }):score(ROW, judge()).score, 0.5)
end

function TestLLMEvaluator:test_inputs_by_mapping_and_missing_fields()
  local m = replying('{"reason": "r", "score": 1}',
    { inputs = { question = "query", response = function(r) return r.answer:upper() end }, examples = {} })
  lu.assertEquals(m:score(ROW, judge()).score, 1)
  lu.assertStrContains(mock:requests()[1].body.messages[2].content,
    'Inputs:\n{"question":"Can I cancel?","response":"YES, ANY TIME."}\nOutputs:')
  lu.assertEquals(polite():score({ query = "q" }, judge()), { unmeasured = true, reason = "no 'answer' in the row" })
end

function TestLLMEvaluator:test_construction_errors_name_the_problem()
  lu.assertErrorMsgContains("examples[1].outputs has no key 'score'", ev.llm_evaluator,
    { name = "p", instructions = "i", inputs = { "query" }, outputs = { "score" },
      examples = { { inputs = { query = "q" }, outputs = { reason = "r" } } } })
  lu.assertErrorMsgContains("examples[1].inputs has unexpected key 'answer'", ev.llm_evaluator,
    { name = "p", instructions = "i", inputs = { "query" }, outputs = { "score" },
      examples = { { inputs = { query = "q", answer = "a" }, outputs = { score = 1 } } } })
  lu.assertErrorMsgContains("outputs must be a non-empty list of names", ev.llm_evaluator,
    { name = "p", instructions = "i", inputs = { "query" }, outputs = {} })
  lu.assertErrorMsgContains("name is required", ev.llm_evaluator, { instructions = "i" })
end

-- The offline judge cannot follow instructions: without the metric's own
-- offline function the item is unmeasured, examples or not (copying the
-- outputs of the example with the most words in common, as it did, judged
-- the topic, never the instruction).
function TestLLMEvaluator:test_offline_judge_needs_the_metrics_offline_function()
  local off = ev.judge.open("offline")
  local why = "the offline judge cannot follow the instructions of 'polite': it needs a model judge "
    .. "(or an offline function on the metric)"
  lu.assertEquals(polite():score({ query = "How big can a file be?", answer = "5 TiB." }, off),
    { unmeasured = true, offline = true, reason = why })
  lu.assertEquals(polite { examples = {} }:score(ROW, off), { unmeasured = true, offline = true, reason = why })
  local fn = polite { offline = function(i) return { reason = "by length", score = #i.answer > 3 and 1 or 0 } end }
  lu.assertEquals(fn:score({ query = "q", answer = "ok" }, off).score, 0)
end

function TestLLMEvaluator:test_plugs_into_evaluate_through_the_registry()
  local registry = require "evalua.core.registry"
  local m = registry.register(polite { name = "polite_registered" })
  lu.assertIs(registry.resolve("polite_registered"), m)
end

os.exit(lu.LuaUnit.run(), true)
