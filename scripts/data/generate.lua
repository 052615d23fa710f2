-- Regenerates the bundled RAG data set from its sources:
--
--   evalua run scripts/data/generate.lua [--out DIR] [--check] [--explain QID]
--
-- reads source/corpus.lua (the documents), source/queries.lua (questions and
-- judgements) and source/concepts.lua (the hybrid's concept lexicon), runs the
-- three retrieval pipelines of generator/pipelines.lua over the corpus, writes
-- corpus.jsonl, rag_eval.jsonl and simulated_labels.jsonl next to this file, and
-- prints summary statistics (docs/data.md quotes them). Every run writes the
-- same bytes: fixed seeds, no dependence on table order.
--   --out DIR      write the three files to DIR instead (to compare a fresh
--                  run with the committed files)
--   --check        also list documents in some variant's top 5 that have no
--                  judgement yet, so judging can be completed as TREC pools it
--   --explain QID  print the reranker's features for one question (stderr)

local DIR = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = DIR .. "/?.lua;" .. package.path

local common = require "generator.common"
local pipelines = require "generator.pipelines"
local answers = require "generator.answers"
local labels = require "generator.labels"
local jsonl = require "generator.jsonl"
local rerank = require "generator.rerank"

local SEED = 20240917
local HALLUCINATIONS = 7
local LABELLED_PAIRS = 60
local fail, VARIANTS, CLASSES = common.fail, common.VARIANTS, common.CLASSES

---------------------------------------------------------------------------
-- Sources
---------------------------------------------------------------------------

local function load_docs()
  local docs, by_id = {}, {}
  for i, e in ipairs(dofile(DIR .. "/source/corpus.lua")) do
    local d = { id = e[1], lang = e[2], title = e[3], text = e[4] }
    local where = "source/corpus.lua: entry " .. i
    if d.id ~= string.format("d%03d", i) then fail("%s: id is %s, expected d%03d", where, tostring(d.id), i) end
    if d.lang ~= "en" and d.lang ~= "zh" then fail("%s: lang must be en or zh", where) end
    if type(d.title) ~= "string" or type(d.text) ~= "string" then fail("%s: title and text must be strings", where) end
    if not utf8.len(d.title .. d.text) then fail("%s: text is not valid UTF-8", where) end
    docs[i], by_id[d.id] = d, d
  end
  return docs, by_id
end

local function check_ids(q, field, list, by_id)
  for _, id in ipairs(list) do
    if not by_id[id] then fail("source/queries.lua: %s: %s names unknown document %s", q.qid, field, id) end
    if (q.grades[id] or 0) < 1 then
      fail("source/queries.lua: %s: %s names %s, which is not graded 1 or more", q.qid, field, id)
    end
  end
end

local function check_grades(q, by_id)
  for _, id in ipairs(common.sorted_keys(q.grades)) do
    local g = q.grades[id]
    if not by_id[id] then fail("source/queries.lua: %s: grades names unknown document %s", q.qid, id) end
    if math.type(g) ~= "integer" or g < 0 or g > 3 then
      fail("source/queries.lua: %s: grade of %s must be an integer 0..3", q.qid, id)
    end
  end
end

local function check_query(q, i, by_id)
  if q.qid ~= string.format("q%02d", i) then fail("source/queries.lua: entry %d has qid %s", i, tostring(q.qid)) end
  if not common.set_of(CLASSES)[q.class] then fail("source/queries.lua: %s: unknown class %s", q.qid, tostring(q.class)) end
  if q.lang ~= "en" and q.lang ~= "zh" then fail("source/queries.lua: %s: lang must be en or zh", q.qid) end
  check_grades(q, by_id)
  if q.class == "comparison" then
    if not q.sides or #q.sides ~= 2 then fail("source/queries.lua: %s: a comparison needs two sides", q.qid) end
    for s = 1, 2 do check_ids(q, "sides", q.sides[s], by_id) end
  else
    check_ids(q, "ans", q.ans or fail("source/queries.lua: %s: ans is missing", q.qid), by_id)
  end
  for _, w in ipairs(q.wrong or {}) do
    if not by_id[w[1]] then fail("source/queries.lua: %s: wrong names unknown document %s", q.qid, w[1]) end
  end
  if #q.gold == 0 or #q.answers == 0 then fail("source/queries.lua: %s: gold and answers must not be empty", q.qid) end
end

local function load_queries(by_id)
  local queries = dofile(DIR .. "/source/queries.lua")
  for i, q in ipairs(queries) do check_query(q, i, by_id) end
  return queries
end

---------------------------------------------------------------------------
-- Rows
---------------------------------------------------------------------------

-- Judged documents, highest grade first, then by id.
local function graded_order(q)
  local ids = common.sorted_keys(q.grades)
  table.sort(ids, function(a, b)
    if q.grades[a] ~= q.grades[b] then return q.grades[a] > q.grades[b] end
    return a < b
  end)
  return ids
end

-- gold_doc_ids: every document graded 1 or more.
local function gold_ids(q)
  local out = {}
  for _, id in ipairs(graded_order(q)) do
    if q.grades[id] >= 1 then out[#out + 1] = id end
  end
  return out
end

local function eval_row(q, v, res)
  local grades = {}
  for _, id in ipairs(graded_order(q)) do grades[#grades + 1] = { id, tostring(q.grades[id]) } end
  local retrieved = jsonl.list(res.retrieved, function(e)
    return jsonl.object { { "id", jsonl.string(e.id) }, { "score", e.text } }
  end)
  return jsonl.object {
    { "qid", jsonl.string(q.qid) }, { "query", jsonl.string(q.query) },
    { "query_class", jsonl.string(q.class) }, { "language", jsonl.string(q.lang) },
    { "variant", jsonl.string(v) }, { "gold_doc_ids", jsonl.list(gold_ids(q)) },
    { "graded_relevance", jsonl.object(grades) }, { "gold_answers", jsonl.list(q.gold) },
    { "retrieved", retrieved }, { "answer", jsonl.string(res.answer) },
    res.citations and { "citations", jsonl.list(res.citations) } or nil,
  }
end

local function corpus_row(d)
  return jsonl.object { { "id", jsonl.string(d.id) }, { "title", jsonl.string(d.title) },
                        { "text", jsonl.string(d.text) }, { "lang", jsonl.string(d.lang) } }
end

local function label_row(p, faith, correct)
  return jsonl.object { { "qid", jsonl.string(p.qid) }, { "variant", jsonl.string(p.variant) },
                        { "faithfulness", tostring(faith) }, { "correct", tostring(correct) } }
end

local function write(dir, name, lines)
  jsonl.write(dir .. "/" .. name, lines)
  print(string.format("wrote %s/%s (%d lines)", dir, name, #lines))
end

---------------------------------------------------------------------------
-- Statistics, as trec_eval computes recall.5, recip_rank and ndcg_cut.5
-- (relevant = grade >= 1, gain = grade) over the lists as written.
---------------------------------------------------------------------------

local function retrieval_metrics(q, retrieved)
  local gold = gold_ids(q)
  local hits5, rr, dcg = 0, 0, 0
  for r, e in ipairs(retrieved) do
    local g = q.grades[e.id]
    if g and g >= 1 then
      if rr == 0 then rr = 1 / r end
      if r <= 5 then hits5, dcg = hits5 + 1, dcg + g / math.log(r + 1, 2) end
    end
  end
  local idcg = 0
  for r = 1, math.min(5, #gold) do idcg = idcg + q.grades[gold[r]] / math.log(r + 1, 2) end
  return { recall5 = hits5 / #gold, mrr = rr, ndcg5 = dcg / idcg }
end

local function mean_over(queries, results, v, metric, keep)
  local sum, n = 0, 0
  for _, q in ipairs(queries) do
    if not keep or keep(q) then
      sum, n = sum + retrieval_metrics(q, results[q.qid][v].retrieved)[metric], n + 1
    end
  end
  return sum / n
end

local function print_retrieval(queries, results)
  print("\nretrieval      recall@5  MRR     nDCG@5")
  for _, v in ipairs(VARIANTS) do
    print(string.format("%-14s %.4f    %.4f  %.4f", v, mean_over(queries, results, v, "recall5"),
      mean_over(queries, results, v, "mrr"), mean_over(queries, results, v, "ndcg5")))
  end
  print("\nrecall@5       factoid comparison how-to  en      zh")
  for _, v in ipairs(VARIANTS) do
    local cells = {}
    for _, c in ipairs(CLASSES) do
      cells[#cells + 1] = mean_over(queries, results, v, "recall5", function(q) return q.class == c end)
    end
    for _, l in ipairs({ "en", "zh" }) do
      cells[#cells + 1] = mean_over(queries, results, v, "recall5", function(q) return q.lang == l end)
    end
    print(string.format("%-14s %.4f  %.4f     %.4f  %.4f  %.4f", v, table.unpack(cells)))
  end
end

local function print_answers(queries, results)
  print("\nanswers        correct partial wrong refusal hallucinated")
  for _, v in ipairs(VARIANTS) do
    local n = { correct = 0, partial = 0, wrong = 0, refusal = 0, hallucinated = 0 }
    for _, q in ipairs(queries) do
      local kind = results[q.qid][v].kind
      n[kind] = n[kind] + 1
    end
    print(string.format("%-14s %7d %7d %5d %7d %12d", v, n.correct, n.partial, n.wrong, n.refusal, n.hallucinated))
  end
end

local function print_pool_gaps(queries, results)
  for _, q in ipairs(queries) do
    for _, v in ipairs(VARIANTS) do
      for r = 1, 5 do
        local e = results[q.qid][v].retrieved[r]
        if e and q.grades[e.id] == nil then
          print(string.format("unjudged: %s %-13s rank %d %s", q.qid, v, r, e.id))
        end
      end
    end
  end
end

---------------------------------------------------------------------------

local function parse_args()
  local opts, i = {}, 1
  while arg and arg[i] do
    if arg[i] == "--check" then opts.check = true
    elseif arg[i] == "--explain" and arg[i + 1] then opts.explain, i = arg[i + 1], i + 1
    elseif arg[i] == "--out" and arg[i + 1] then opts.out, i = arg[i + 1], i + 1
    else fail("usage: evalua run generate.lua [--out DIR] [--check] [--explain QID]") end
    i = i + 1
  end
  return opts
end

local function explainer(ctx, q)
  return function(i, f, noise, score)
    local parts = { ctx.docs[i].id }
    for _, name in ipairs(rerank.FEATURE_ORDER) do parts[#parts + 1] = string.format("%s=%.2f", name, f[name]) end
    parts[#parts + 1] = string.format("noise=%.2f -> %.3f", noise, score)
    io.stderr:write(q.qid, " ", table.concat(parts, " "), "\n")
  end
end

local function retrieve_all(ctx, queries, opts)
  math.randomseed(SEED, 1)      -- reranker noise
  local results = {}
  for _, q in ipairs(queries) do
    local lists = pipelines.run(ctx, q, q.qid == opts.explain and explainer(ctx, q) or nil)
    results[q.qid] = {}
    for _, v in ipairs(VARIANTS) do results[q.qid][v] = { retrieved = lists[v] } end
  end
  return results
end

local function answer_all(queries, results)
  math.randomseed(SEED, 2)      -- answers
  for _, q in ipairs(queries) do
    for _, v in ipairs(VARIANTS) do
      local res = results[q.qid][v]
      res.kind, res.answer = answers.decide(q, res.retrieved)
    end
  end
  answers.hallucinate(queries, results, HALLUCINATIONS)
end

-- The hybrid pipelines' generators cite their sources (the baseline's does
-- not); about one citing answer in ten names a page that was never retrieved.
local CITING = { hybrid = true, hybrid_rerank = true }
local function cite_all(queries, results, docs)
  math.randomseed(SEED, 4)      -- citation mistakes
  local ids = {}
  for i, d in ipairs(docs) do ids[i] = d.id end
  for _, q in ipairs(queries) do
    for _, v in ipairs(VARIANTS) do
      if CITING[v] then
        local res = results[q.qid][v]
        res.citations = answers.cite(q, res, math.random() < 0.1, ids)
      end
    end
  end
end

local function label_lines(queries, results)
  math.randomseed(SEED, 3)      -- simulated labels: sample and disagreement
  local lines = {}
  for _, p in ipairs(labels.sample(queries, results, LABELLED_PAIRS)) do
    lines[#lines + 1] = label_row(p, labels.judge(results[p.qid][p.variant]))
  end
  return lines
end

local function main()
  local opts = parse_args()
  local docs, by_id = load_docs()
  local queries = load_queries(by_id)
  local ctx = pipelines.context(docs, dofile(DIR .. "/source/concepts.lua"))
  local results = retrieve_all(ctx, queries, opts)
  answer_all(queries, results)
  cite_all(queries, results, docs)

  local corpus_lines, eval_lines = {}, {}
  for i, d in ipairs(docs) do corpus_lines[i] = corpus_row(d) end
  for _, q in ipairs(queries) do
    for _, v in ipairs(VARIANTS) do eval_lines[#eval_lines + 1] = eval_row(q, v, results[q.qid][v]) end
  end
  local out = opts.out or DIR
  write(out, "corpus.jsonl", corpus_lines)
  write(out, "rag_eval.jsonl", eval_lines)
  write(out, "simulated_labels.jsonl", label_lines(queries, results))

  print_retrieval(queries, results)
  print_answers(queries, results)
  if opts.check then print_pool_gaps(queries, results) end
end

main()
