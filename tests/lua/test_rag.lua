-- ev.rag against the mock OpenAI-compatible server with scripted answers
-- (a <<mock {...}>> directive inside the row text answers the request that
-- carries it) and with the offline judge. Expected scores are computed by
-- hand from the scripted verdicts, as noted beside each.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local json = require "evalua.core.json"

local mock = mockmod.start()
local say = mockmod.say
local rag = ev.rag

local function judge(opts) return mock:judge({ max_retries = 1 }, opts) end

local function answer(t) return say { answer = type(t) == "string" and t or json.encode(t) } end

local function requests() return mock:stats().requests end

TestRag = {}
function TestRag:setUp() mock:reset() end

-- ---- faithfulness -------------------------------------------------------------

function TestRag:test_faithfulness_is_supported_over_total_with_verdicts_kept()
  local row = {
    query = "q", answer = "Paris is the capital. It has 2 million people. " .. answer { statements = { "s1", "s2", "s3", "s4" } },
    contexts = { "Paris is the capital of France." .. answer { verdicts = {
      { statement = "s1", verdict = 1, reason = "stated" },
      { statement = "s2", verdict = "no", reason = "not stated" },
      { statement = "s3", verdict = "yes" }, { statement = "s4", verdict = "idk" } } } } }
  local r = rag.faithfulness:score(row, judge())
  lu.assertEquals(r.score, 2 / 4) -- verdicts 1, 0, 1, 0 ("idk" is not supported)
  lu.assertEquals(r.reason, "2 of 4 statements are supported by the contexts")
  lu.assertEquals(r.verdicts, { { statement = "s1", verdict = 1, reason = "stated" },
                                { statement = "s2", verdict = 0, reason = "not stated" },
                                { statement = "s3", verdict = 1 }, { statement = "s4", verdict = 0 } })
  lu.assertEquals(r.pass, true)
  lu.assertEquals(requests(), 2)
end

function TestRag:test_graded_faithfulness_counts_partly_supported_as_half_and_weighs()
  local row = {
    query = "q", answer = "One. Two. Three. " .. answer { statements = { "s1", "s2", "s3" } },
    contexts = { "c" .. answer { verdicts = { { grade = 2, reason = "all there" }, { grade = "partly" },
                                              { grade = 0 } } } } }
  local r = rag.faithfulness { graded = true }:score(row, judge())
  lu.assertEquals(r.score, (2 + 1 + 0) / (2 * 3))
  lu.assertEquals(r.reason, "1 of 3 statements are fully and 1 partly supported by the contexts")
  lu.assertEquals(r.verdicts[1], { statement = "s1", grade = 2, reason = "all there" })
  lu.assertEquals(mock:requests()[2].headers["x-evalua-operation"], "rag_graded")
  -- weights 1, 2, 3: (1 * 1 + 2 * 0.5 + 3 * 0) / 6
  local w = rag.faithfulness { graded = true, weights = function(_, i) return i end }:score(row, judge())
  lu.assertEquals(w.score, 2 / 6)
  lu.assertEquals(w.reason, "1 of 3 statements are fully and 1 partly supported by the contexts (weighted)")
  local bad = rag.faithfulness { graded = true, weights = function() return -1 end }
  lu.assertErrorMsgContains("the weight of statement 1 is -1, not a number >= 0", bad.score, bad, row, judge())
  lu.assertErrorMsgContains("weights must be", rag.faithfulness, { weights = "length" })
  row.contexts = { "c" .. answer { verdicts = { { grade = 3 }, { grade = 1 }, { grade = 1 } } } }
  lu.assertEquals(rag.faithfulness { graded = true }:score(row, judge()).reason,
    "verdicts: invalid judge answer for 'rag_graded': verdicts[1] has no grade 0, 1 or 2")
end

-- n samples: the mock answers attempts 1, 2, 3 of the same request in turn
-- (samples differ only in their cache key, so their bodies are the same).
function TestRag:test_samples_vote_per_statement_and_average_scores()
  local function answers(list)
    local t = {}
    for i, v in ipairs(list) do t[i] = json.encode(v) end
    return say { answers = t }
  end
  local row = { query = "q", answer = "x " .. answer { statements = { "s1", "s2" } },
    contexts = { "c" .. answers { { verdicts = { { verdict = 1 }, { verdict = 0 } } },
                                  { verdicts = { { verdict = 1 }, { verdict = 1 } } },
                                  { verdicts = { { verdict = 0 }, { verdict = 0 } } } } } }
  local r = rag.faithfulness { samples = 3 }:score(row, judge())
  -- s1: 1, 1, 0 -> 1; s2: 0, 1, 0 -> 0
  lu.assertEquals(r.score, 0.5)
  lu.assertEquals({ r.verdicts[1].votes, r.verdicts[2].votes }, { { 1, 1, 0 }, { 0, 1, 0 } })
  lu.assertAlmostEquals(r.agreement, 2 / 3, 1e-15)
  lu.assertEquals({ r.samples, r.failed_samples }, { 3, 0 })
  lu.assertEquals(requests(), 4) -- statements once, verdicts three times
  local seen = mock:requests()
  lu.assertEquals({ seen[2].body.temperature, seen[4].body.temperature }, { 1, 1 })
  -- scores: the mean, with the spread
  local c = { query = "q", gold_answers = { "g" },
              answer = "a " .. answers { { score = 3 }, { score = 4 }, { score = 5 } } }
  local g = rag.correctness { samples = 3, temperature = 0.7 }:score(c, judge())
  lu.assertEquals({ g.score, g.spread, g.samples }, { 4, 1, 3 })
  lu.assertErrorMsgContains("samples must be a whole number >= 1", rag.correctness, { samples = 0 })
  lu.assertErrorMsgContains("samples and temperature do not apply", rag.sas, { samples = 3 })
end

function TestRag:test_answers_in_code_fences_and_with_trailing_commas_are_read()
  local row = { query = "q", answer = "A. " .. answer('Here you go:\n```json\n{"statements": ["a", "b",]}\n```'),
                contexts = { "c" .. answer('```\n{"verdicts": [{"verdict": 0}, {"verdict": 1}]}\n```') } }
  lu.assertEquals(rag.faithfulness:score(row, judge()).score, 0.5)
end

function TestRag:test_wrong_verdict_count_is_unmeasured_not_zero()
  local row = { query = "q", answer = "x " .. answer { statements = { "a", "b" } },
                contexts = { "c" .. answer { verdicts = { { verdict = 1 } } } } }
  local r = rag.faithfulness:score(row, judge())
  lu.assertEquals(r, { unmeasured = true, judge_failed = true,
    reason = "verdicts: invalid judge answer for 'rag_verdicts': 1 verdicts for 2 statements" })
end

function TestRag:test_missing_key_is_unmeasured()
  local row = { query = "q", answer = "x " .. answer { claims = { "a" } }, contexts = { "c" } }
  lu.assertEquals(rag.faithfulness:score(row, judge()), { unmeasured = true, judge_failed = true,
    reason = "statements: invalid judge answer for 'rag_statements': expected {\"statements\": [...]}" })
  row = { query = "q", answer = "x " .. answer { statements = { "a" } },
          contexts = { "c" .. answer { verdicts = { { statement = "a", reason = "?" } } } } }
  lu.assertEquals(rag.faithfulness:score(row, judge()).reason,
    "verdicts: invalid judge answer for 'rag_verdicts': verdicts[1] has no verdict 1 or 0")
end

function TestRag:test_invalid_json_after_the_repair_is_unmeasured()
  local row = { query = "q", answer = "x " .. say { id = "bad", answers = { "four statements", "still prose" } },
                contexts = { "c" } }
  local r = rag.faithfulness:score(row, judge())
  lu.assertEquals(r.unmeasured, true)
  lu.assertEquals(r.reason, "statements: the judge's answer is not valid JSON, and neither was the repaired one: "
    .. "the judge's answer is not valid JSON: no JSON object in the answer")
  lu.assertEquals(requests(), 2) -- the answer and one repair request
end

function TestRag:test_http_failure_and_budget_are_unmeasured_with_the_reason()
  local row = { query = "q", answer = "x " .. say { faults = { "500", "500" } }, contexts = { "c" } }
  local r = rag.faithfulness:score(row, judge())
  lu.assertEquals(r.unmeasured, true)
  lu.assertStrContains(r.reason, "statements: gave up after 2 attempts: HTTP 500")
  -- one request fits the budget; the verdicts request is refused
  row = { query = "q", answer = "x " .. answer { statements = { "a" } }, contexts = { "c" } }
  r = rag.faithfulness:score(row, judge { budget = { tokens = 1 } })
  lu.assertEquals(r.unmeasured, true)
  lu.assertStrContains(r.reason, "verdicts: budget exhausted")
end

function TestRag:test_no_statements_and_missing_fields_are_unmeasured()
  local j = judge()
  lu.assertEquals(rag.faithfulness:score({ query = "q", answer = "hm " .. answer { statements = {} }, contexts = { "c" } }, j),
    { unmeasured = true, reason = "the answer makes no statements to check" })
  lu.assertEquals(rag.faithfulness:score({ query = "q", answer = "a" }, j),
    { unmeasured = true, reason = "no 'contexts' in the row" })
  lu.assertEquals(rag.faithfulness.fn({ answer = "a", contexts = { "c" } }, {}),
    { unmeasured = true, reason = "no judge: pass judge = ev.judge.open(...) to ev.evaluate" })
  lu.assertEquals(requests(), 1)
end

-- ---- context precision, recall, relevance ---------------------------------------------

function TestRag:test_context_precision_is_rank_weighted_average_precision()
  local row = { query = "q", gold_answers = { "ref" }, contexts = {
    "c1" .. answer { verdict = 1, reason = "useful" }, "c2" .. answer { verdict = 0 },
    "c3" .. answer { verdict = 1 }, "c4" .. answer { verdict = 0 } } }
  local r = rag.context_precision:score(row, judge())
  -- useful at ranks 1 and 3: (1/1 + 2/3) / 2
  lu.assertAlmostEquals(r.score, (1 + 2 / 3) / 2, 1e-15)
  lu.assertEquals(r.verdicts[1], { rank = 1, verdict = 1, reason = "useful" })
  lu.assertEquals(r.reason, "2 of 4 chunks judged useful")
  lu.assertEquals(requests(), 4) -- one verdict per chunk
  -- the reference answer is what the judge sees
  lu.assertStrContains(mock:requests()[1].body.messages[2].content, "<expected_answer>\nref\n</expected_answer>")
end

function TestRag:test_average_precision_by_hand()
  lu.assertEquals(rag.average_precision { 0, 0, 0 }, 0)
  lu.assertEquals(rag.average_precision { 1, 1 }, 1)
  lu.assertEquals(rag.average_precision { 0, 1 }, 0.5)
  lu.assertAlmostEquals(rag.average_precision { 0, 1, 0, 1, 1 }, (1 / 2 + 2 / 4 + 3 / 5) / 3, 1e-15)
end

function TestRag:test_context_precision_without_reference()
  local row = { query = "q", answer = "a", contexts = { "c1" .. answer { verdict = 1 } } }
  lu.assertEquals(rag.context_precision:score(row, judge()), { unmeasured = true,
    reason = "no 'gold_answers' in the row (against = \"answer\" judges by the answer instead)" })
  lu.assertEquals(rag.context_precision { against = "answer" }:score(row, judge()).score, 1)
end

function TestRag:test_context_recall_checks_each_reference_sentence()
  local row = { query = "q", gold_answers = { "First fact. Second fact. Third fact." },
                contexts = { "ctx" .. answer { verdicts = { { verdict = 1 }, { verdict = 1 }, { verdict = 0 } } } } }
  local r = rag.context_recall:score(row, judge())
  lu.assertEquals(r.score, 2 / 3)
  lu.assertEquals(r.verdicts[3].statement, "Third fact.")
  local sent = mock:requests()[1].body.messages[2].content
  lu.assertStrContains(sent, '["First fact.","Second fact.","Third fact."]')
end

function TestRag:test_context_relevance_counts_statements_over_all_chunks()
  local row = { query = "q", contexts = {
    "c1" .. answer { verdicts = { { statement = "x", verdict = 1 }, { statement = "y", verdict = 0 } } },
    "c2" .. answer { verdicts = { { statement = "z", verdict = 1 } } } } }
  local r = rag.context_relevance:score(row, judge())
  lu.assertEquals(r.score, 2 / 3) -- 1 + 1 relevant of 2 + 1 statements
  lu.assertEquals(r.contexts[1].relevant, 1)
  row.contexts = { "c" .. answer { verdicts = {} } }
  lu.assertEquals(rag.context_relevance:score(row, judge()),
    { unmeasured = true, reason = "the contexts make no statements" })
end

-- ---- answer relevance -------------------------------------------------------------------

function TestRag:test_answer_relevance_embedding_cosine_and_noncommittal()
  local q = "How large can an object be?"
  -- a generated question equal to the real one embeds identically: cosine 1
  local row = { query = q, answer = "5 TiB. " .. answer { questions = {
    { question = q, noncommittal = 0 }, { question = q, noncommittal = 1 } } } }
  local r = rag.answer_relevance:score(row, judge())
  lu.assertAlmostEquals(r.score, 1, 1e-6) -- not zeroed: only one of two is noncommittal
  lu.assertEquals(mock:stats().by_path["/v1/embeddings"], 1)
  row.answer = "I cannot say. " .. answer { questions = { { question = q, noncommittal = 1 },
                                                          { question = "Other?", noncommittal = 1 } } }
  r = rag.answer_relevance:score(row, judge())
  lu.assertEquals(r.score, 0)
  lu.assertEquals(r.reason, "every generated question is noncommittal")
end

function TestRag:test_answer_relevance_without_embeddings_endpoint()
  -- the generated question carries a directive failing the embeddings request;
  -- written with \u escapes so that it is no directive inside the chat request
  local q = 'x\\u003c\\u003cmock {\\"faults\\": [\\"404\\"]}\\u003e\\u003e'
  local row = { query = "q?", answer = "a " .. answer('{"questions": [{"question": "' .. q .. '", "noncommittal": 0}]}') }
  local r = rag.answer_relevance:score(row, judge())
  lu.assertEquals(r.unmeasured, true)
  lu.assertStrContains(r.reason, "embeddings: HTTP 404")
  lu.assertStrContains(r.reason, "answer_relevance{mode = \"direct\"}")
  row.answer = "a " .. answer { reason = "on topic", relevance = 0.75 }
  r = rag.answer_relevance_direct:score(row, judge())
  lu.assertEquals(r, { score = 0.75, reason = "on topic", mode = "direct", pass = true })
end

-- ---- relevancy, correctness ------------------------------------------------------------------

function TestRag:test_relevancy_refine_stops_at_yes_and_packs_by_budget()
  local row = { query = "q", answer = "a", contexts = {
    "aaaa" .. answer { verdict = "NO", reason = "r1" }, "bbbb" .. answer { verdict = "YES", reason = "r2" },
    "cccc" .. answer { verdict = "NO" } } }
  -- each context is longer than the budget: three parts, the second says YES
  local r = rag.relevancy { budget = 10 }:score(row, judge())
  lu.assertEquals(r.score, 1)
  lu.assertEquals(r.verdict, "YES")
  lu.assertEquals(#r.steps, 2)
  lu.assertEquals(requests(), 2)
  local second = mock:requests()[2].body.messages[2].content
  lu.assertStrContains(second, "<earlier_verdict>NO</earlier_verdict>")
  -- one big part: the first directive answers it
  r = rag.relevancy:score(row, judge())
  lu.assertEquals(r.score, 0)
  lu.assertEquals(r.reason, "r1")
end

function TestRag:test_relevancy_per_source_gives_one_verdict_per_chunk()
  local row = { query = "q", answer = "a", contexts = {
    "c1" .. answer { verdict = "yes" }, "c2" .. answer { verdict = "NO" }, "c3" .. answer { verdict = "YES." } } }
  local r = rag.relevancy { mode = "per_source" }:score(row, judge())
  lu.assertEquals(r.score, 2 / 3)
  lu.assertEquals({ r.verdicts[1].verdict, r.verdicts[2].verdict, r.verdicts[3].verdict }, { "YES", "NO", "YES" })
end

function TestRag:test_correctness_scale_and_pass_at_four()
  local row = { query = "q", gold_answers = { "ref" }, answer = "a " .. answer { reason = "minor gap", score = 4 } }
  lu.assertEquals(rag.correctness:score(row, judge()), { score = 4, reason = "minor gap", pass = true })
  row.answer = "a " .. answer { score = 3.5 }
  lu.assertEquals(rag.correctness:score(row, judge()).pass, false)
  row.answer = "a " .. answer { score = 6 }
  lu.assertEquals(rag.correctness:score(row, judge()).reason,
    "grade: invalid judge answer for 'rag_correctness': expected score as a number from 1 to 5")
end

-- ---- prompts --------------------------------------------------------------------------------

function TestRag:test_a_prompt_replaced_by_a_string_is_what_the_judge_sees()
  local m = rag.faithfulness { prompts = { statements = "Claims of: {{answer}} " .. answer { statements = { "s" } },
                                           verdicts = { system = "Check {{statements | json}}." } } }
  local row = { query = "q", answer = "A {{contexts}} B", contexts = { "c" .. answer { verdicts = { { verdict = 1 } } } } }
  lu.assertEquals(m:score(row, judge()).score, 1)
  local seen = mock:requests()
  lu.assertStrContains(seen[1].body.messages[2].content, "Claims of: A {{contexts}} B ") -- never evaluated
  lu.assertEquals(seen[1].body.messages[1].content, ev.template(rag.prompts.statements.system):render {})
  lu.assertEquals(seen[2].body.messages[1].content, 'Check ["s"].')
end

-- The judge names each request's operation in a header; the mock answers by
-- it, so reworded prompts still get answers of the right shape.
function TestRag:test_each_request_names_its_operation_whatever_the_prompt_says()
  local m = rag.faithfulness { prompts = { statements = { system = "Split the text." },
                                           verdicts = { system = "Check each line." } } }
  local row = { query = "q", answer = "Paris is the capital. It has 9 bridges.",
                contexts = { "Paris is the capital of France." } }
  local r = m:score(row, judge())
  lu.assertEquals(r.score, 1 / 2) -- sentence 1: 2 of 2 content words in the context; sentence 2: 0 of 3
  local ops = {}
  for i, q in ipairs(mock:requests()) do ops[i] = q.headers["x-evalua-operation"] end
  lu.assertEquals(ops, { "rag_statements", "rag_verdicts" })
  mock:reset()
  judge():chat { messages = { { role = "user", content = "hi" } } }
  lu.assertNil(mock:requests()[1].headers["x-evalua-operation"]) -- a plain chat names none
end

function TestRag:test_prompt_errors_name_the_step_and_variable()
  lu.assertErrorMsgContains("faithfulness: no prompt step 'verdict' (its steps: statements, verdicts)",
    rag.faithfulness, { prompts = { verdict = "x" } })
  local m = rag.faithfulness { prompts = { statements = "{{answr}}" } }
  local ok, err = pcall(m.score, m, { query = "q", answer = "a", contexts = { "c" } }, judge())
  lu.assertFalse(ok)
  lu.assertStrContains(err, "template 'faithfulness.statements/user' line 1: missing variable 'answr'")
end

-- ---- the offline judge: deterministic heuristics, values by hand -----------------------------------

local ROW = {
  query = "How big can a single file be in Nimbus Storage?",
  answer = "A single object can be up to 5 TiB. Billing is monthly.",
  contexts = { "Objects in Nimbus Storage can be up to 5 TiB.", "Support is open on weekdays." },
  gold_answers = { "5 TiB per object" },
}

function TestRag:test_offline_faithfulness_by_token_overlap()
  local r = rag.faithfulness:score(ROW, ev.judge.open("offline"))
  -- "A single object can be up to 5 TiB.": content words single object can up 5 tib,
  -- 4 of 6 (can up 5 tib) in the contexts; "Billing is monthly.": 0 of 2
  lu.assertEquals(r.score, 0.5)
  lu.assertEquals(r.verdicts[1].reason, "4 of 6 words are in the context (67%; supported from 50%)")
end

function TestRag:test_offline_graded_faithfulness_and_word_weights()
  local row = { query = ROW.query, contexts = ROW.contexts,
                answer = "A single object can be up to 50 TiB. Billing is monthly. Objects live in Nimbus regions." }
  local off = ev.judge.open("offline")
  -- 1: single object can up 50 tib, 4 of 6 words but 50 is not in the context: partly;
  -- 2: billing monthly, 0 of 2: unsupported; 3: objects live nimbus regions, 2 of 4: fully
  local r = rag.faithfulness { graded = true }:score(row, off)
  lu.assertEquals(r.score, (1 + 0 + 2) / 6)
  lu.assertEquals(r.verdicts[1].reason, "partly: the number 50 is not in the context")
  -- weighted by content words 6, 2, 4: (6 * 0.5 + 2 * 0 + 4 * 1) / 12
  local w = rag.faithfulness { graded = true, weights = "words" }:score(row, off)
  lu.assertAlmostEquals(w.score, 7 / 12, 1e-15)
  lu.assertEquals({ w.verdicts[1].weight, w.verdicts[2].weight, w.verdicts[3].weight }, { 6, 2, 4 })
end

function TestRag:test_offline_precision_recall_and_relevance()
  local off = ev.judge.open("offline")
  -- reference "5 TiB per object": content words 5 tib per object; chunk 1 has 5, tib (50%): useful
  lu.assertEquals(rag.context_precision:score(ROW, off).score, 1)
  lu.assertEquals(rag.context_recall:score(ROW, off).score, 1)
  -- question content words: big can single file nimbus storage; chunk 1 has can nimbus storage (3/6 >= 1/3)
  lu.assertEquals(rag.context_relevance:score(ROW, off).score, 0.5)
  -- direct relevance: question words in the answer would score a correct short answer 0, so
  -- the offline judge does not estimate it
  lu.assertEquals(rag.answer_relevance_direct:score(ROW, off), { unmeasured = true, offline = true,
    reason = "relevance: the offline judge cannot rate how well an answer addresses its question; "
      .. "answer_relevance_direct needs a model judge" })
  -- correctness: SQuAD token F1 (ev.text) of {single object can be up to 5 tib billing is monthly}
  -- and {5 tib per object}: 3 common, P = 3/11, R = 3/4, F1 = 0.4 -> 1 + 4 * 0.4 = 2.6, rounded 3
  local c = rag.correctness:score(ROW, off)
  lu.assertEquals(c.score, 3)
  lu.assertEquals(c.reason, "offline: 1 + 4 x token F1 with the reference (F1 0.40)")
end

-- Issue 25, point 7: with nothing to compare the offline judge measured 0
-- (a question without words scored its contexts 0; a reference without
-- words graded every answer 1 of 5; pairwise without a reference ranked
-- answers by question words). Now each is unmeasured with the reason.
function TestRag:test_offline_nothing_to_compare_is_unmeasured_not_zero()
  local off = ev.judge.open("offline")
  local row = { query = "?!", answer = "A file can be 5 TiB.", contexts = { "Files can be up to 5 TiB." },
                gold_answers = { "..." }, answer_b = "Billing is monthly." }
  lu.assertEquals(rag.context_relevance:score(row, off), { unmeasured = true, offline = true,
    reason = "chunk 1: the question has no words to look for" })
  lu.assertEquals(rag.correctness:score(row, off), { unmeasured = true, offline = true,
    reason = "grade: the reference has no words to compare with" })
  lu.assertEquals(rag.context_precision:score(row, off), { unmeasured = true, offline = true,
    reason = "chunk 1: the reference has no words to look for" })
  lu.assertEquals(rag.relevancy:score({ query = "q", answer = "...", contexts = { "c" } }, off),
    { unmeasured = true, offline = true, reason = "part 1: the answer has no words to look for" })
  row.gold_answers = nil
  lu.assertEquals(rag.pairwise:score(row, off), { unmeasured = true, offline = true,
    reason = "A shown first: the offline judge compares answers only with a reference; "
      .. "pairwise without one needs a model judge" })
  lu.assertEquals(off:ask("relevance", { question = "?", text = "t" }).error, "the question has no words to look for")
end

function TestRag:test_offline_answer_relevance_is_unmeasured_with_the_reason()
  local r = rag.answer_relevance:score(ROW, ev.judge.open("offline"))
  lu.assertEquals(r, { unmeasured = true, offline = true, reason = "questions: the offline judge cannot write the questions an "
    .. "answer replies to; answer_relevance needs a model judge (offline, sas compares answers with gold answers)" })
end

function TestRag:test_registered_names_resolve()
  local reg = require "evalua.core.registry"
  for _, name in ipairs { "faithfulness", "answer_relevance", "answer_relevance_direct", "context_precision",
                          "context_recall", "context_relevance", "relevancy", "correctness" } do
    lu.assertIs(reg.resolve(name), rag[name])
    lu.assertEquals(rag[name].judged, true)
  end
end

os.exit(lu.LuaUnit.run(), true)
