-- ev.geval: the probability-weighted score (by hand), the fallback to the
-- plain integer and its flag, steps generated once and printable, samples,
-- strict mode, rubric checks, and the offline heuristic. Scripted answers
-- come from the mock server (tests/mock/mock_openai.py), whose logprobs are
-- one token per space-separated word with alternatives "<token>_k".
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local json = require "evalua.core.json"

local mock = mockmod.start()
local say = mockmod.say

local function judge(opts) return mock:judge({ max_retries = 0 }, opts) end

local STEPS = { "Read the input and the output.", "Check the output answers the input." }

-- logprobs = false unless a test is about the weighting, so scores are the integers
local function metric(opts)
  local o = { name = "helpful", steps = STEPS, logprobs = false }
  for k, v in pairs(opts or {}) do o[k] = v end
  return ev.geval(o)
end

local function row(reply, extra)
  local r = { query = "How big can a file be?", answer = "Up to 5 TiB. " .. say(type(reply) == "table" and reply or { answer = reply }) }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

local function lp(p) return math.log(p) end

TestGeval = {}
function TestGeval:setUp() mock:reset() end

-- ---- the weighted score, by hand ---------------------------------------------------

function TestGeval:test_weighted_score_by_hand()
  local tokens = { -- {"reason": "4 of them", "score": 4}
    { token = '{"reason": "', logprob = lp(0.9), top_logprobs = {} },
    -- a "4" in the reason is not the score's token: the JSON's "score" value is
    { token = "4", logprob = lp(0.5), top_logprobs = { { token = "4", logprob = lp(0.5) }, { token = "1", logprob = lp(0.5) } } },
    { token = ' of them", "score":', logprob = lp(0.99), top_logprobs = {} },
    { token = " 4", logprob = lp(0.6), top_logprobs = {
      { token = " 4", logprob = lp(0.6) }, { token = "3", logprob = lp(0.25) }, { token = "5", logprob = lp(0.1) },
      { token = "four", logprob = lp(0.03) },  -- not digits: ignored
      { token = "2", logprob = lp(0.005) },    -- below 1%: ignored
      { token = "7", logprob = lp(0.012) } } }, -- outside the 1-5 scale: ignored
    { token = "}", logprob = lp(0.99), top_logprobs = {} },
  }
  local s, kept = ev.geval.weighted_score(tokens, 4, 1, 5)
  -- (4 * 0.6 + 3 * 0.25 + 5 * 0.1) / (0.6 + 0.25 + 0.1) = 3.65 / 0.95
  lu.assertAlmostEquals(s, 3.65 / 0.95, 1e-12)
  lu.assertEquals(#kept, 3)
  -- exactly 1% is kept
  lu.assertAlmostEquals(ev.geval.weighted_score({ { token = '{"score":' }, { token = "2", top_logprobs = {
    { token = "2", logprob = lp(0.99) }, { token = "3", logprob = lp(0.01) } } }, { token = "}" } }, 2, 1, 5),
    2.01, 1e-12)
end

function TestGeval:test_weighted_score_reasons_for_falling_back()
  lu.assertEquals(select(2, ev.geval.weighted_score(nil, 4, 1, 5)), "the server returned no logprobs")
  lu.assertEquals(select(2, ev.geval.weighted_score({ { token = '{"score": ' }, { token = "4}", top_logprobs = {} } },
    4, 1, 5)), "the score 4 is not a token of its own (its token is '4}')")
  lu.assertEquals(select(2, ev.geval.weighted_score({ { token = "4", top_logprobs = {} } }, 4, 1, 5)),
    "the answer's tokens spell no JSON object with a score")
  lu.assertEquals(select(2, ev.geval.weighted_score({ { token = '{"score": ' }, { token = "4", top_logprobs = {
    { token = "x", logprob = 0 } } }, { token = "}" } }, 4, 1, 5)),
    "no score token with probability >= 1% among the alternatives")
end

-- Issue 25, point 8a: a score before a reason that mentions the same digit.
-- The score's token (found through the JSON) has "3" and "4" at 0.5 each:
-- (3 * 0.5 + 4 * 0.5) / 1 = 3.5. The reason's "3" has "3" 0.94, "4" 0.06,
-- which gave (3 * 0.94 + 4 * 0.06) / 1 = 3.06 when the last "3" was taken.
function TestGeval:test_the_score_token_is_found_through_the_json_not_by_its_digit()
  local function t(token, alts)
    local out = { token = token, logprob = lp(0.99), top_logprobs = {} }
    for i, a in ipairs(alts or {}) do out.top_logprobs[i] = { token = a[1], logprob = lp(a[2]) } end
    if alts then out.logprob = lp(alts[1][2]) end
    return out
  end
  local tokens = { t('{"'), t("score"), t('":'), t(" "), t("3", { { "3", 0.5 }, { "4", 0.5 } }), t(","), t(' "'),
                   t("reason"), t('":'), t(' "'), t("Point"), t(" "), t("3", { { "3", 0.94 }, { "4", 0.06 } }),
                   t(" is"), t(" missing"), t('."'), t("}") }
  local reply = '{"score": 3, "reason": "Point 3 is missing."}'
  local spelt = {}
  for i, x in ipairs(tokens) do spelt[i] = x.token end
  lu.assertEquals(table.concat(spelt), reply)
  local r = metric { logprobs = true }:score(row { answer = reply, logprobs = tokens }, judge())
  lu.assertEquals({ r.integer, r.weighted }, { 3, true })
  lu.assertAlmostEquals(r.raw, 3.5, 1e-12)
  lu.assertAlmostEquals(r.score, (3.5 - 1) / 4, 1e-12)
  lu.assertEquals(mock:stats().requests, 1)
end

-- Issue 25, point 8e: a server that refuses logprobs (HTTP 400) is named in
-- the reason, with the option that asks without them.
function TestGeval:test_a_server_refusing_logprobs_is_named_with_the_option()
  mock:config { refuse_logprobs = true }
  local r = metric { logprobs = true }:score(row('{"score": 4}'), judge())
  mock:config {}
  lu.assertEquals(r.unmeasured, true)
  lu.assertEquals(r.judge_failed, true)
  lu.assertEquals(r.reason, "HTTP 400: logprobs are not supported by this model (the request asked for logprobs, "
    .. "which some servers refuse: ev.geval{..., logprobs = false} asks without them)")
  lu.assertEquals(mock:stats().requests, 1) -- a 400 is not retried
end

function TestGeval:test_weighted_score_from_the_mock_logprobs_by_hand()
  -- The mock gives the score token " 4" logprob l and its alternatives " 5", " 3", " 6"
  -- logprobs l - 2, l - 4, l - 6; " 6" is below 1% (and outside 1-5), so the weights are
  -- proportional to 1, e^-2, e^-4.
  local r = metric { logprobs = true }:score(row('{"reason": "complete", "score": 4}'), judge())
  local e2, e4 = math.exp(-2), math.exp(-4)
  local g = (4 + 5 * e2 + 3 * e4) / (1 + e2 + e4)
  lu.assertEquals(r.weighted, true)
  lu.assertEquals(r.integer, 4)
  lu.assertAlmostEquals(r.raw, g, 1e-9)
  lu.assertAlmostEquals(r.score, (g - 1) / 4, 1e-9)
  lu.assertEquals(r.reason, "complete")
  lu.assertEquals(r.pass, true)
  local body = mock:requests()[1].body
  lu.assertEquals({ body.logprobs, body.top_logprobs, body.temperature }, { true, 20, 0 })
end

function TestGeval:test_fallback_to_the_integer_is_flagged()
  -- the mock writes 10 as the tokens "1" and "0": no token "10" to weight
  local r = metric { logprobs = true, scale = { 0, 10 } }:score(row('{"reason": "ok", "score": 10}'), judge())
  lu.assertEquals(r.weighted, false)
  lu.assertEquals(r.fallback, "the score 10 is not a token of its own (its token is '1')")
  lu.assertEquals({ r.score, r.raw, r.pass }, { 1, 10, true })
  r = metric():score(row('{"score": 2}'), judge())
  lu.assertEquals({ r.score, r.weighted, r.fallback, r.pass }, { 0.25, false, "logprobs = false", false })
  lu.assertEquals(mock:requests()[2].body.logprobs, nil)
end

-- ---- answers that cannot be used ------------------------------------------------------------

function TestGeval:test_invalid_answers_are_unmeasured()
  lu.assertEquals(metric():score(row('{"reason": "x", "score": 9 }'), judge()),
    { unmeasured = true, judge_failed = true, reason = "invalid judge answer for 'geval_score': score 9 is outside 1-5" })
  lu.assertEquals(metric():score(row('{"reason": "x", "score": 3.5 }'), judge()).reason,
    "invalid judge answer for 'geval_score': expected score as a whole number")
  lu.assertEquals(metric():score(row('{"reason": "x"}'), judge()).reason,
    "invalid judge answer for 'geval_score': expected score as a whole number")
  local r = metric():score(row { id = "g1", answers = { "Four.", "I said four." } }, judge())
  lu.assertEquals(r.unmeasured, true)
  lu.assertStrContains(r.reason, "neither was the repaired one")
  lu.assertStrContains(metric():score(row { faults = { "503" } }, judge()).reason, "HTTP 503")
  lu.assertEquals(metric():score({ query = "q" }, judge()), { unmeasured = true, reason = "no 'answer' in the row (actual_output)" })
end

-- ---- steps -------------------------------------------------------------------------------------

function TestGeval:test_steps_are_generated_once_and_printable()
  local criteria = "Answers the question. " .. say { answer = '{"steps": ["Read it.", "Judge it."]}' }
  local m = ev.geval { name = "g", criteria = criteria }
  local j = judge()
  lu.assertEquals(m:steps(j), { "Read it.", "Judge it." })
  local sent = mock:requests()[1].body.messages
  lu.assertStrContains(sent[1].content, "judging Input, Actual Output")
  lu.assertStrContains(sent[2].content, "Answers the question.")
  -- scoring two rows asks for no more steps; the steps are in every scoring prompt
  mock:reset()
  m:score(row('{"score": 3 }'), j)
  m:score(row('{"score": 5 }'), j)
  local seen = mock:requests()
  lu.assertEquals(#seen, 2)
  lu.assertStrContains(seen[1].body.messages[1].content, "Evaluation steps:\n1. Read it.\n2. Judge it.\n")
end

function TestGeval:test_generated_steps_come_from_the_judge_cache_in_a_new_run()
  local dir = io.popen("mktemp -d"):read("l")
  local criteria = "Cites a source. " .. say { answer = '{"steps": ["Look for a citation."]}' }
  lu.assertEquals(ev.geval { name = "g", criteria = criteria }:steps(judge { cache = dir }), { "Look for a citation." })
  local again = ev.geval { name = "g", criteria = criteria }:steps(judge { cache = dir })
  lu.assertEquals(again, { "Look for a citation." })
  lu.assertEquals(mock:stats().requests, 1)
  os.execute("rm -rf " .. dir)
end

function TestGeval:test_concurrent_rows_request_the_steps_once()
  local criteria = "Useful. " .. say { answer = '{"steps": ["Judge it."]}' }
  local m = ev.geval { name = "g", criteria = criteria, logprobs = false,
                       prompts = { score = { system = "Score from 1 to 5.\n{{steps | numbered}}" } } }
  local rows = {}
  for i = 1, 12 do rows[i] = row('{"score": 3}') end
  local j = judge()
  local out = ev.map(rows, function(r) return m:score(r, j) end, { concurrency = 6 })
  lu.assertEquals(mock:stats().requests, 13) -- one for the steps, one per row
  for i = 1, 12 do lu.assertEquals(out[i].score, 0.5) end
end

function TestGeval:test_pinned_steps_ask_nothing()
  lu.assertEquals(metric():steps(), STEPS)
  lu.assertErrorMsgContains("needs a judge", function() ev.geval { name = "g", criteria = "c" }:steps() end)
end

-- ---- samples, strict, rubric, scale ----------------------------------------------------------------

function TestGeval:test_samples_give_mean_and_spread()
  local m = metric { samples = 3 }
  -- the three requests are alike; the mock answers attempts 1, 2, 3 in turn
  local r = m:score(row { id = "s", answers = { '{"score": 2 }', '{"score": 4 }', '{"score": 5 }' } }, judge())
  -- normalised 0.25, 0.75, 1: mean 2/3, sample sd sqrt(((1/4-2/3)^2 + (3/4-2/3)^2 + (1-2/3)^2) / 2)
  lu.assertAlmostEquals(r.score, 2 / 3, 1e-12)
  lu.assertAlmostEquals(r.spread, math.sqrt(((0.25 - 2 / 3) ^ 2 + (0.75 - 2 / 3) ^ 2 + (1 - 2 / 3) ^ 2) / 2), 1e-12)
  lu.assertEquals(#r.samples, 3)
  lu.assertEquals(mock:requests()[1].body.temperature, 1)
end

function TestGeval:test_strict_mode_is_zero_or_one_with_threshold_one()
  local m = metric { strict = true }
  lu.assertEquals(m.threshold, 1)
  local r = m:score(row('{"reason": "meets it", "score": 1 }'), judge())
  lu.assertEquals({ r.score, r.pass, r.weighted, r.fallback }, { 1, true, false, "strict mode scores 0 or 1" })
  local body = mock:requests()[1].body
  lu.assertEquals(body.logprobs, nil)
  lu.assertStrContains(body.messages[1].content, "Give score 1 only when")
  lu.assertEquals(m:score(row('{"score": 3 }'), judge()).reason, "invalid judge answer for 'geval_strict': score 3 is outside 0-1")
end

function TestGeval:test_rubric_and_scale_in_the_prompt()
  local m = metric { scale = { 0, 10 }, rubric = { { 9, 10, "complete" }, { 0, 4, "wrong" }, { 5, 8, "partial" } } }
  local r = m:score(row('{"score": 7 }'), judge())
  lu.assertEquals(r.score, 0.7) -- (7 - 0) / (10 - 0)
  local sys = mock:requests()[1].body.messages[1].content
  lu.assertStrContains(sys, "score from 0 to 10")
  lu.assertStrContains(sys, "Score bands:\n0-4: wrong\n5-8: partial\n9-10: complete\n")
end

function TestGeval:test_option_errors()
  lu.assertErrorMsgContains("rubric bands 0-4 and 3-5 overlap", ev.geval,
    { name = "g", steps = STEPS, scale = { 0, 10 }, rubric = { { 0, 4, "a" }, { 3, 5, "b" } } })
  lu.assertErrorMsgContains("rubric[1] (0-6) must lie within the scale 1-5", ev.geval,
    { name = "g", steps = STEPS, rubric = { { 0, 6, "a" } } })
  lu.assertErrorMsgContains("give criteria or steps", ev.geval, { name = "g" })
  lu.assertErrorMsgContains("params[2] 'output' is not one of", ev.geval,
    { name = "g", steps = STEPS, params = { "input", "output" } })
  lu.assertErrorMsgContains("no prompt step 'scores'", ev.geval, { name = "g", steps = STEPS, prompts = { scores = "x" } })
end

function TestGeval:test_a_replaced_score_prompt()
  local m = metric { prompts = { score = { user = "Q={{case.1.value}} A={{case.2.value}}" } } }
  m:score(row('{"score": 3 }'), judge())
  lu.assertStrContains(mock:requests()[1].body.messages[2].content, "Q=How big can a file be? A=Up to 5 TiB.")
end

-- ---- the offline judge ----------------------------------------------------------------------------------

-- Issue 25, point 7: the offline judge cannot read a criterion. It gave
-- "written as a haiku about cats" the same kind of score as any other (word
-- overlaps of the case); now the item is unmeasured with the reason, and
-- only a metric's own offline function scores offline.
function TestGeval:test_offline_judge_leaves_a_criterion_unmeasured()
  local off = ev.judge.open("offline")
  local row = { query = "How big can a file be?", answer = "A file can be 5 TiB.", contexts = { "Files can be up to 5 TiB." } }
  local m = ev.geval { name = "haiku", criteria = "Written as a haiku about cats.", params = { "input", "actual_output", "context" } }
  lu.assertEquals(m:steps(off), { "Read the Input, Actual Output, Context.",
    "Check how far the Actual Output meets the criterion: Written as a haiku about cats.",
    "Score from 1 (not at all) to 5 (fully)." })
  lu.assertEquals(m:score(row, off), { unmeasured = true, offline = true,
    reason = "the offline judge cannot read the criterion of 'haiku': G-Eval needs a model judge "
      .. "(or an offline function on the metric)" })
  -- the metric's own estimate, checked like a judge's answer
  local seen
  local own = m { offline = function(case) seen = case return 2, "two of five" end }
  local r = own:score(row, off)
  lu.assertEquals({ r.integer, r.score, r.reason, r.weighted }, { 2, 0.25, "two of five", false })
  lu.assertEquals(r.fallback, "the offline judge gives no logprobs")
  lu.assertEquals(seen, { input = row.query, actual_output = row.answer, context = row.contexts[1] })
  lu.assertEquals(m { offline = function() return 7 end }:score(row, off).reason,
    "the offline function's score: score 7 is outside 1-5")
  lu.assertEquals(m { offline = function() return nil, "no idea" end }:score(row, off).reason, "no idea")
  lu.assertErrorMsgContains("offline must be a function", ev.geval, { name = "g", steps = STEPS, offline = 1 })
end

os.exit(lu.LuaUnit.run(), true)
