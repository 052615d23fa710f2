-- ev.metrics from Lua: values worked out by hand from the definitions in
-- docs/retrieval.md (each derivation is in the comments), values from the
-- test suites of Haystack 3.2.0-rc0, the forms rankings and gold labels may
-- take, and the errors and defined behaviours for bad or partial input.
local lu = require "luaunit"
local ev = require "evalua"
local m = ev.metrics

local function log2(x) return math.log(x, 2) end
local EPS = 1e-12

-- Example A: ranks 1..4 hold d3 d1 d9 d4; d1, d4 and d7 are relevant.
-- Relevant at ranks 2 and 4; R = 3.
local A_run, A_gold = { "d3", "d1", "d9", "d4" }, { "d1", "d4", "d7" }

function test_binary_relevance_by_hand()
  lu.assertAlmostEquals(m.precision(A_run, A_gold, 2), 1 / 2, EPS)
  lu.assertAlmostEquals(m.precision(A_run, A_gold, 10), 2 / 10, EPS) -- P@k divides by k
  lu.assertAlmostEquals(m.precision(A_run, A_gold), 2 / 4, EPS)      -- whole ranking
  lu.assertAlmostEquals(m.recall(A_run, A_gold, 2), 1 / 3, EPS)
  lu.assertAlmostEquals(m.recall(A_run, A_gold), 2 / 3, EPS)
  lu.assertEquals(m.success(A_run, A_gold, 1), 0)
  lu.assertEquals(m.hit_rate(A_run, A_gold, 2), 1)
  lu.assertAlmostEquals(m.rr(A_run, A_gold), 1 / 2, EPS)
  lu.assertEquals(m.mrr(A_run, A_gold, 1), 0)
  lu.assertAlmostEquals(m.ap(A_run, A_gold), (1 / 2 + 2 / 4) / 3, EPS) -- divides by R, not by hits
  lu.assertAlmostEquals(m.ap(A_run, A_gold, 2), (1 / 2) / 3, EPS)
  lu.assertAlmostEquals(m.rprec(A_run, A_gold), 1 / 3, EPS)           -- 1 relevant in the top 3
  lu.assertAlmostEquals(m.bpref(A_run, A_gold), 2 / 3, EPS)           -- no judged non-relevant
  local idcg = 1 + 1 / log2(3) + 1 / log2(4)
  lu.assertAlmostEquals(m.ndcg(A_run, A_gold), (1 / log2(3) + 1 / log2(5)) / idcg, EPS)
  lu.assertAlmostEquals(m.ndcg(A_run, A_gold, 2), (1 / log2(3)) / (1 + 1 / log2(3)), EPS)
  lu.assertEquals(m.counts(A_run, A_gold), { num_ret = 4, num_rel = 3, num_rel_ret = 2 })
end

-- Example B: graded. a=1 b=3 c=0 retrieved in that order; z=2 not retrieved.
local B_run, B_gold = { "a", "b", "c" }, { a = 1, b = 3, c = 0, z = 2 }

function test_graded_relevance_and_levels_by_hand()
  -- linear gain: DCG = 1 + 3/log2(3); ideal order b z a: 3 + 2/log2(3) + 1/2
  lu.assertAlmostEquals(m.ndcg(B_run, B_gold), (1 + 3 / log2(3)) / (3 + 2 / log2(3) + 1 / 2), EPS)
  -- gain 2^g - 1: a 1, b 7, z 3
  lu.assertAlmostEquals(m.ndcg(B_run, B_gold, { gain = "exp" }), (1 + 7 / log2(3)) / (7 + 3 / log2(3) + 1 / 2), EPS)
  lu.assertAlmostEquals(m.ndcg(B_run, B_gold, 1, { gain = "exp" }), 1 / 7, EPS)
  -- level 2: relevant are b and z; b at rank 2
  local l2 = { level = 2 }
  lu.assertAlmostEquals(m.precision(B_run, B_gold, 3, l2), 1 / 3, EPS)
  lu.assertAlmostEquals(m.ap(B_run, B_gold, l2), (1 / 2) / 2, EPS)
  -- bpref: judged non-relevant a (above b) and c; R = N = 2: (1 - 1/2) / 2
  lu.assertAlmostEquals(m.bpref(B_run, B_gold, l2), 0.25, EPS)
  -- nDCG ignores the level, as trec_eval's does
  lu.assertAlmostEquals(m.ndcg(B_run, B_gold, l2), m.ndcg(B_run, B_gold), 0)
  -- a set is binary relevance
  lu.assertAlmostEquals(m.ap({ "x", "y" }, { y = true, x = false }), 1 / 2, EPS)
end

function test_scores_order_the_ranking_as_trec_eval_does()
  -- y and w tie at 2: ties go by id descending, so y, w, then x
  local run = { { id = "x", score = 1 }, { id = "y", score = 2 }, { id = "w", score = 2 } }
  lu.assertAlmostEquals(m.rr(run, { "w" }), 1 / 2, EPS)
  lu.assertAlmostEquals(m.rr(run, { "x" }), 1 / 3, EPS)
  -- without scores the list order is the ranking
  lu.assertAlmostEquals(m.rr({ { id = "x" }, { id = "y" } }, { "x" }), 1, EPS)
  -- numeric ids are ids too
  lu.assertAlmostEquals(m.rr({ 7, 3 }, { 3 }), 1 / 2, EPS)
  -- depth keeps the first documents after ordering
  lu.assertEquals(m.counts(run, { "x" }, { depth = 2 }), { num_ret = 2, num_rel = 1, num_rel_ret = 0 })
end

function test_repeated_ids_count_once_at_their_best_rank()
  -- a, a, b against {a, b}: the copy of a holds rank 2 but earns nothing
  local run, gold = { "a", "a", "b" }, { "a", "b" }
  lu.assertAlmostEquals(m.ap(run, gold), (1 / 1 + 2 / 3) / 2, EPS)
  lu.assertAlmostEquals(m.measure("haystack.map", run, gold), (1 / 1 + 2 / 3) / 2, EPS)
  lu.assertAlmostEquals(m.precision(run, gold, 3), 2 / 3, EPS)
  lu.assertEquals(m.counts(run, gold), { num_ret = 3, num_rel = 2, num_rel_ret = 2 })
  -- LlamaIndex's granular forms count every rank holding a relevant id
  lu.assertAlmostEquals(m.measure("llamaindex.hit_rate_granular", run, gold), 3 / 2, EPS)
  lu.assertAlmostEquals(m.measure("llamaindex.mrr_granular", run, gold), (1 + 1 / 2 + 1 / 3) / 3, EPS)
  -- RAGAS compares sets: 2 unique ids retrieved, both relevant
  lu.assertAlmostEquals(m.measure("ragas.id_context_precision", run, gold), 1, EPS)
  lu.assertAlmostEquals(m.measure("ragas.id_context_recall", run, { "a", "b", "c" }), 2 / 3, EPS)
end

-- Haystack's own test vectors (test/components/evaluators/test_document_*.py).
function test_haystack_test_vectors()
  local gt = { doc1 = 3, doc2 = 2, doc3 = 3, doc6 = 2, doc7 = 3, doc8 = 2 }
  local ret = { "doc1", "doc2", "doc3", "doc4", "doc5" }
  lu.assertAlmostEquals(m.measure("haystack.ndcg", ret, gt), 0.6592, 1e-4)
  lu.assertAlmostEquals(m.measure("haystack.ndcg", { "France", "Germany", "Paris" }, { "France", "Paris" }),
    0.9197, 1e-4)
  local run2, gold2 = { "9th century", "10th century", "9th" }, { "9th century", "9th" }
  lu.assertAlmostEquals(m.measure("haystack.map", run2, gold2), 0.8333, 1e-4)
  lu.assertEquals(m.measure("haystack.mrr", run2, gold2), 1)
  lu.assertEquals(m.measure("haystack.recall_single_hit", run2, gold2), 1)
  lu.assertEquals(m.measure("haystack.recall_multi_hit", run2, gold2), 1)
end

function test_variants_leave_empty_input_unmeasured()
  -- LlamaIndex raises and RAGAS returns NaN there: evalua gives nil, never NaN
  lu.assertNil(m.measure("llamaindex.hit_rate", {}, { "a" }))
  lu.assertNil(m.measure("llamaindex.mrr", { "a" }, {}))
  lu.assertNil(m.measure("ragas.id_context_precision", {}, { "a" }))
  lu.assertNil(m.measure("ragas.id_context_recall", { "a" }, {}))
  -- trec_eval's measures are 0 there
  lu.assertEquals(m.ap({}, { "a" }), 0)
  lu.assertEquals(m.ndcg({ "a" }, {}), 0)
end

function test_score_and_columns()
  local v, names = m.score(A_run, A_gold, { "P.2,4", "map", "ndcg@2", "mrr" })
  lu.assertEquals(names, { "P_2", "P_4", "map", "ndcg@2", "mrr" })
  lu.assertAlmostEquals(v.P_4, 0.5, EPS)
  -- one column keeps its name as asked; a cutoff list is named as trec_eval prints it
  lu.assertEquals(m.columns({ "success.10,1", "iprec_at_recall.0.5", "P_5", "P.3" }),
    { "success_1", "success_10", "iprec_at_recall.0.5", "P_5", "P.3" })
  lu.assertAlmostEquals(m.evaluate({ { retrieved = A_run, gold_doc_ids = A_gold } }, "P.2").summary["P.2"], 0.5, EPS)
end

local rows = {
  { qid = "q1", retrieved = A_run, gold_doc_ids = A_gold },
  { qid = "q2", retrieved = { { id = "b", score = 0.5 }, { id = "a", score = 0.9 } }, graded_relevance = { a = 1, b = 3 } },
  { qid = "q3", retrieved = { "x" } },                         -- no gold: skipped
  { qid = "q4", retrieved = {}, gold_doc_ids = { "a" } },      -- retrieved nothing: zeros
  { qid = "q5", gold_doc_ids = { "a" } },                      -- no ranking: skipped
}

function test_evaluate_rows()
  local r = m.evaluate(rows, { "map", "ndcg@2", "num_rel", "llamaindex.mrr" })
  lu.assertEquals(r.columns, { "map", "ndcg@2", "num_rel", "llamaindex.mrr" })
  lu.assertEquals(#r.per_query, 5)
  lu.assertAlmostEquals(r.per_query[1].map, 1 / 3, EPS)
  lu.assertEquals(r.per_query[2].qid, "q2")
  -- q2 by score: a then b; gains 1 then 3; ideal 3 then 1
  lu.assertAlmostEquals(r.per_query[2]["ndcg@2"], (1 + 3 / log2(3)) / (3 + 1 / log2(3)), EPS)
  lu.assertEquals(r.per_query[3], { qid = "q3", skipped = "no gold labels" })
  lu.assertEquals(r.per_query[4].map, 0)
  lu.assertNil(r.per_query[4]["llamaindex.mrr"])
  lu.assertEquals(r.per_query[5], { qid = "q5", skipped = "no retrieved list" })
  lu.assertEquals(r.skipped, { { index = 3, qid = "q3", reason = "no gold labels" },
                               { index = 5, qid = "q5", reason = "no retrieved list" } })
  lu.assertAlmostEquals(r.summary.map, (1 / 3 + 1 + 0) / 3, EPS)
  lu.assertEquals(r.n.map, 3)
  lu.assertEquals(r.summary.num_rel, 3 + 2 + 1) -- counts are summed
  lu.assertEquals(r.n["llamaindex.mrr"], 2)
  lu.assertAlmostEquals(r.summary["llamaindex.mrr"], (1 / 2 + 1) / 2, EPS)
end

function test_evaluate_rows_errors_name_row_and_field()
  local function err(data, measures, opts)
    local ok, msg = pcall(m.evaluate, data, measures or "map", opts)
    lu.assertFalse(ok)
    return msg
  end
  lu.assertStrContains(err({ { qid = "q1", retrieved = "d1 d2", gold_doc_ids = { "a" } } }),
    "row 1 (qid q1): field 'retrieved' is not a list")
  lu.assertStrContains(err({ { qid = 7, retrieved = { { id = "a", score = 1 }, "b" }, gold_doc_ids = { "a" } } }),
    "row 1 (qid 7): retrieved[2] is a plain id among {id=, score=} entries")
  lu.assertStrContains(err({ { retrieved = { { id = "a" }, { id = "b", score = 2 } }, gold_doc_ids = { "a" } } }),
    "row 1: retrieved[2] has a score while [1] does not")
  lu.assertStrContains(err({ { retrieved = { { score = 2 } }, gold_doc_ids = { "a" } } }),
    "row 1: retrieved[1].id is missing or not a string")
  lu.assertStrContains(err({ { qid = "q", retrieved = {}, graded_relevance = { a = "high" } } }),
    "row 1 (qid q): graded_relevance[a] is a string, not a grade or true")
  lu.assertStrContains(err({ { qid = "q", retrieved = {}, gold_doc_ids = { "a", "b" }, graded_relevance = { a = 2 } } }),
    "row 1 (qid q): gold_doc_ids has 'b', which graded_relevance lacks (mixed graded and ungraded relevance)")
  lu.assertStrContains(err({ "q1" }), "row 1 is a string, not a table")
  lu.assertStrContains(err(rows, "P@5"), "unknown measure 'P@5'")
  lu.assertStrContains(err(rows, "precision@0"), "the cutoff after '@' must be a positive integer")
  lu.assertStrContains(err(rows, "map", { depth = 0 }), "'depth' must be a positive integer")
  lu.assertStrContains(err(rows, {}), "no measure given")
end

function test_per_query_argument_errors()
  lu.assertErrorMsgContains("positive integer cutoff expected, got 0", m.precision, A_run, A_gold, 0)
  lu.assertErrorMsgContains("gold mixes a list of ids with other keys", m.ap, A_run, { "a", b = 2 })
  lu.assertErrorMsgContains("ranking[2] is a boolean, not an id", m.ap, { "a", true }, A_gold)
  lu.assertErrorMsgContains('gain must be "linear" or "exp"', m.ndcg, A_run, A_gold, 3, { gain = "log" })
end

local F = "tests/fixtures/trec_eval/"

function test_trec_files_and_rows_give_the_same_numbers()
  local data = assert(m.load_trec(F .. "qrels.rel_level", F .. "results.test"))
  lu.assertEquals(data:runid(), "STANDARD")
  local measures = { "map", "P.5,30", "ndcg", "ndcg_cut.10", "bpref", "Rprec", "recip_rank", "num_rel" }
  for _, level in ipairs({ 1, 2 }) do
    local a = m.evaluate(data, measures, { level = level })
    local b = m.evaluate(data:rows(), measures, { level = level })
    lu.assertEquals(#a.per_query, 3)
    lu.assertEquals(a.per_query, b.per_query)
    lu.assertEquals(a.summary, b.summary)
  end
  -- trec_eval's out.test.aql (-l2): map of query 301 and over all
  local r = m.evaluate(data, "map", { level = 2 })
  lu.assertEquals(("%6.4f"):format(r.per_query[1].map), "0.0003")
  lu.assertEquals(("%6.4f"):format(r.summary.map), "0.1667")
end

-- The fixture's run and qrels as JSONL rows, loaded as a user loads a data
-- set: every per-query line of trec_eval's out.test.aq for the measures
-- evalua implements comes out the same.
function test_jsonl_rows_give_trec_eval_numbers()
  local cjson = require "cjson"
  local data = assert(m.load_trec(F .. "qrels.test", F .. "results.test"))
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  for _, row in ipairs(data:rows()) do f:write(cjson.encode(row), "\n") end
  f:close()
  local rows = ev.dataset.load(path).rows
  os.remove(path)
  local r = m.evaluate(rows, { "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall.5,10,15,20,30,100,200,500,1000", "ndcg", "ndcg_cut", "map_cut", "success.1,5,10" })
  local want, lines = {}, 0
  for name, qid, value in io.open(F .. "out.test.aq"):read("a"):gmatch("(%S+)%s*\t(%S+)\t(%S+)\n") do
    want[qid .. " " .. name] = value
  end
  for _, q in ipairs(r.per_query) do
    for _, col in ipairs(r.columns) do
      local fmt = col:match("^num_") and "%d" or "%6.4f"
      lu.assertEquals(fmt:format(q[col]), want[q.qid .. " " .. col], q.qid .. " " .. col)
      lines = lines + 1
    end
  end
  lu.assertEquals(lines, 3 * 58) -- 58 columns of three queries
end

function test_load_trec_errors()
  local data, msg = m.load_trec(F .. "qrels.test", "no/such/run")
  lu.assertNil(data)
  lu.assertEquals(msg, "no/such/run: cannot open (No such file or directory)")
  local dir = os.tmpname()
  local f = assert(io.open(dir, "w"))
  f:write("301 Q0 d1 1 2 r\n301 Q0 d1 2 1 r\n")
  f:close()
  data = assert(m.load_trec(F .. "qrels.test", dir))
  lu.assertErrorMsgContains(dir .. ":2: document 'd1' is retrieved twice for query '301' (first at line 1)",
    m.evaluate, data, "map")
  os.remove(dir)
end

os.exit(lu.LuaUnit.run(), true)
