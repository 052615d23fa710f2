-- Regenerates the bundled RAG data set from its sources:
--
--   evalua run scripts/data/generate.lua [--check]
--
-- reads corpus_src.lua (the documents), queries_src.lua (questions and
-- judgements) and concepts_src.lua (the hybrid retriever's concept lexicon),
-- runs three real retrieval pipelines over the corpus, writes corpus.jsonl,
-- rag_eval.jsonl and human_labels.jsonl next to this file, and prints summary
-- statistics. The output is identical on every run (fixed seeds, sorted keys).
-- --check also lists documents in the top 5 of some variant that have no
-- judgement yet, so the judgements can be completed the way TREC pools them.

local cjson = require "cjson"

local SEED = 20240917
local DIR = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local VARIANTS = { "baseline", "hybrid", "hybrid_rerank" }
local CLASSES = { "factoid", "comparison", "how-to" }

---------------------------------------------------------------------------
-- Small helpers
---------------------------------------------------------------------------

local function fail(fmt, ...)
  error(string.format(fmt, ...), 0)
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

-- Standard normal draw from the seeded generator (Box-Muller).
local function gaussian()
  local u1, u2 = 1 - math.random(), math.random()
  return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
end

local function pick(list)
  return list[math.random(#list)]
end

---------------------------------------------------------------------------
-- Loading and checking the sources
---------------------------------------------------------------------------

local function load_docs()
  local docs, by_id = {}, {}
  for i, e in ipairs(dofile(DIR .. "/corpus_src.lua")) do
    local d = { id = e[1], lang = e[2], title = e[3], text = e[4] }
    if d.id ~= string.format("d%03d", i) then
      fail("corpus_src.lua: entry %d has id %s, expected d%03d", i, tostring(d.id), i)
    end
    if d.lang ~= "en" and d.lang ~= "zh" then fail("corpus_src.lua: %s: lang must be en or zh", d.id) end
    if not utf8.len(d.title .. d.text) then fail("corpus_src.lua: %s: text is not valid UTF-8", d.id) end
    docs[i], by_id[d.id] = d, d
  end
  return docs, by_id
end

local function check_ids(q, field, list, by_id)
  for _, id in ipairs(list) do
    if not by_id[id] then fail("queries_src.lua: %s: %s names unknown document %s", q.qid, field, id) end
    if (q.grades[id] or 0) < 1 then
      fail("queries_src.lua: %s: %s names %s, which is not graded >= 1", q.qid, field, id)
    end
  end
end

local function check_query(q, i, by_id)
  if q.qid ~= string.format("q%02d", i) then fail("queries_src.lua: entry %d has qid %s", i, tostring(q.qid)) end
  if not set_of(CLASSES)[q.class] then fail("queries_src.lua: %s: unknown class %s", q.qid, tostring(q.class)) end
  for _, id in ipairs(sorted_keys(q.grades)) do
    local g = q.grades[id]
    if not by_id[id] then fail("queries_src.lua: %s: grades names unknown document %s", q.qid, id) end
    if math.type(g) ~= "integer" or g < 0 or g > 3 then fail("queries_src.lua: %s: grade of %s must be 0..3", q.qid, id) end
  end
  if q.class == "comparison" then
    if not q.sides or #q.sides ~= 2 then fail("queries_src.lua: %s: a comparison needs two sides", q.qid) end
    for s = 1, 2 do check_ids(q, "sides", q.sides[s], by_id) end
  else
    check_ids(q, "ans", q.ans or fail("queries_src.lua: %s: ans is missing", q.qid), by_id)
  end
  for _, w in ipairs(q.wrong or {}) do
    if not by_id[w[1]] then fail("queries_src.lua: %s: wrong names unknown document %s", q.qid, w[1]) end
  end
  if #q.gold == 0 or #q.answers == 0 then fail("queries_src.lua: %s: gold and answers must not be empty", q.qid) end
end

local function load_queries(by_id)
  local queries = dofile(DIR .. "/queries_src.lua")
  for i, q in ipairs(queries) do check_query(q, i, by_id) end
  return queries
end

---------------------------------------------------------------------------
-- Tokenising: English words are lower-cased and lightly stemmed; Chinese
-- runs become character unigrams and bigrams, as lexical Chinese search does.
---------------------------------------------------------------------------

local STOP = set_of {
  "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "and", "or",
  "is", "are", "be", "it", "its", "this", "that", "do", "does", "i", "my", "me", "you", "your",
  "can", "how", "what", "which", "when", "after", "get", "one", "much", "many", "into", "as",
  "there", "so", "if", "not", "than", "them", "they", "all", "any", "has", "have", "should",
}
local ZH_STOP = set_of { "的", "了", "吗", "是", "在", "和", "与", "有", "个", "一", "也", "要", "把", "就", "可", "以", "到", "么", "什", "怎", "少", "多" }

local function stem(w)
  if #w > 4 and w:sub(-3) == "ies" then return w:sub(1, -4) .. "y" end
  if #w > 3 and w:sub(-1) == "s" and not w:match("[siu]s$") then return w:sub(1, -2) end
  return w
end

local function is_cjk(cp)
  return (cp >= 0x4E00 and cp <= 0x9FFF) or (cp >= 0x3400 and cp <= 0x4DBF)
end

-- Splits text into English words (stemmed, stop words kept) and Chinese runs.
local function split(text)
  local words, runs, word, run = {}, {}, {}, {}
  local function flush()
    if #word > 0 then words[#words + 1] = stem(table.concat(word):lower()); word = {} end
    if #run > 0 then runs[#runs + 1] = run; run = {} end
  end
  for _, cp in utf8.codes(text) do
    if cp < 128 and string.char(cp):match("%w") then
      if #run > 0 then flush() end
      word[#word + 1] = string.char(cp)
    elseif is_cjk(cp) then
      if #word > 0 then flush() end
      run[#run + 1] = utf8.char(cp)
    else
      flush()
    end
  end
  flush()
  return words, runs
end

-- Index terms for BM25: English words without stop words, Chinese uni/bigrams.
local function terms(text)
  local words, runs = split(text)
  local out = {}
  for _, w in ipairs(words) do
    if not STOP[w] then out[#out + 1] = w end
  end
  for _, run in ipairs(runs) do
    for i, ch in ipairs(run) do
      if not ZH_STOP[ch] then out[#out + 1] = ch end
      if run[i + 1] then out[#out + 1] = ch .. run[i + 1] end
    end
  end
  return out
end

---------------------------------------------------------------------------
-- Retriever 1: BM25 (k1 = 1.2, b = 0.75, Lucene's idf)
---------------------------------------------------------------------------

local function bm25_index(docs)
  local idx = { N = #docs, df = {}, tf = {}, len = {}, avglen = 0 }
  for i, d in ipairs(docs) do
    local tf, n = {}, 0
    for _, t in ipairs(terms(d.text)) do
      tf[t] = (tf[t] or 0) + 1
      n = n + 1
    end
    for _, t in ipairs(sorted_keys(tf)) do idx.df[t] = (idx.df[t] or 0) + 1 end
    idx.tf[i], idx.len[i] = tf, n
    idx.avglen = idx.avglen + n
  end
  idx.avglen = idx.avglen / #docs
  return idx
end

local function bm25_idf(idx, t)
  local df = idx.df[t] or 0
  return math.log(1 + (idx.N - df + 0.5) / (df + 0.5))
end

local function unique_terms(text)
  local seen, out = {}, {}
  for _, t in ipairs(terms(text)) do
    if not seen[t] then seen[t] = true; out[#out + 1] = t end
  end
  return out
end

local function bm25_scores(idx, query)
  local k1, b, scores = 1.2, 0.75, {}
  local qterms = unique_terms(query)
  for i = 1, idx.N do
    local s, tf = 0, idx.tf[i]
    for _, t in ipairs(qterms) do
      local f = tf[t]
      if f then
        local norm = k1 * (1 - b + b * idx.len[i] / idx.avglen)
        s = s + bm25_idf(idx, t) * f * (k1 + 1) / (f + norm)
      end
    end
    scores[i] = s
  end
  return scores
end

---------------------------------------------------------------------------
-- Retriever 2: concept vectors (the "dense-like" signal of the hybrid)
---------------------------------------------------------------------------

local function prepare_lexicon(raw)
  local lex = {}
  for i, c in ipairs(raw) do
    local forms = {}
    for _, f in ipairs(c.en) do forms[#forms + 1] = (split(f)) end
    lex[i] = { name = c[1], en = forms, zh = c.zh }
  end
  return lex
end

local function count_phrase(words, phrase)
  local n = 0
  for i = 1, #words - #phrase + 1 do
    local hit = true
    for j = 1, #phrase do
      if words[i + j - 1] ~= phrase[j] then hit = false; break end
    end
    if hit then n = n + 1 end
  end
  return n
end

local function count_substring(text, s)
  local n, pos = 0, 1
  while true do
    local a, e = text:find(s, pos, true)
    if not a then return n end
    n, pos = n + 1, e + 1
  end
end

-- concept index -> occurrence count in text
local function concept_counts(lex, text)
  local words = split(text)
  local counts = {}
  for ci, c in ipairs(lex) do
    local n = 0
    for _, phrase in ipairs(c.en) do n = n + count_phrase(words, phrase) end
    for _, s in ipairs(c.zh) do n = n + count_substring(text, s) end
    if n > 0 then counts[ci] = n end
  end
  return counts
end

local function concept_index(lex, docs)
  local idx = { lex = lex, counts = {}, title_counts = {}, df = {}, N = #docs, by_name = {} }
  for ci, c in ipairs(lex) do idx.by_name[c.name] = ci end
  for i, d in ipairs(docs) do
    idx.counts[i] = concept_counts(lex, d.title .. " " .. d.text)
    idx.title_counts[i] = concept_counts(lex, d.title)
    for ci = 1, #lex do
      if idx.counts[i][ci] then idx.df[ci] = (idx.df[ci] or 0) + 1 end
    end
  end
  return idx
end

local function concept_idf(idx, ci)
  return math.log((idx.N + 1) / ((idx.df[ci] or 0) + 1))
end

-- Weighted vector as an array over concept indices (0 where absent).
local function concept_vector(idx, counts)
  local v, norm = {}, 0
  for ci = 1, #idx.lex do
    local n = counts[ci]
    local w = n and (1 + math.log(n)) * concept_idf(idx, ci) or 0
    v[ci], norm = w, norm + w * w
  end
  return v, math.sqrt(norm)
end

local function concept_scores(idx, query)
  local qv, qn = concept_vector(idx, concept_counts(idx.lex, query))
  local scores = {}
  for i = 1, idx.N do
    local dv, dn = concept_vector(idx, idx.counts[i])
    local dot = 0
    for ci = 1, #qv do dot = dot + qv[ci] * dv[ci] end
    scores[i] = (qn > 0 and dn > 0) and dot / (qn * dn) or 0
  end
  return scores
end

---------------------------------------------------------------------------
-- Rankings, fusion and the reranker
---------------------------------------------------------------------------

-- Document indices best first (ties: lower index). A first-stage retriever
-- returns only documents that match at all (score > 0); a reranker ranks
-- every candidate it was given.
local function rank(scores, candidates, keep_all)
  local list = {}
  for _, i in ipairs(candidates) do
    if keep_all or scores[i] > 0 then list[#list + 1] = i end
  end
  table.sort(list, function(a, b)
    if scores[a] ~= scores[b] then return scores[a] > scores[b] end
    return a < b
  end)
  return list
end

local function all_docs(n)
  local list = {}
  for i = 1, n do list[i] = i end
  return list
end

-- Weighted reciprocal rank fusion (Cormack et al. 2009, k = 60) over the top
-- `depth` of each ranking, as a hybrid system fuses the candidate lists it
-- fetched. Unequal weights also keep a document found only lexically from
-- tying with one found only by concepts at the same rank.
local function rrf(rankings, weights, n, depth)
  local fused = {}
  for i = 1, n do fused[i] = 0 end
  for li, ranking in ipairs(rankings) do
    for r = 1, math.min(depth, #ranking) do
      local i = ranking[r]
      fused[i] = fused[i] + weights[li] / (60 + r)
    end
  end
  return fused
end

-- Share of the query's idf weight that a document covers.
local function coverage(q_items, weight, has)
  local total, hit = 0, 0
  for _, item in ipairs(q_items) do
    local w = weight(item)
    total = total + w
    if has(item) then hit = hit + w end
  end
  return total > 0 and hit / total or 0
end

-- Weights of the fusion (rrf) and of the reranker's features (rerank_scores).
local W = {
  rrf_lexical = 0.4, rrf_concept = 0.6,
  ccov = 3.0, title = 1.5, tcov = 1.5, bm25 = 1.0, cos = 1.5, atype = 1.0, phrase = 2.0,
  stale = 1.5, other_lang = 1.5, noise = 0.32,
}

-- Answer types: what kind of statement a question asks for, recognised from
-- the question words that BM25 drops ("how long", "多少钱"), and patterns of
-- text that make such a statement. A reranker that reads the whole question
-- learns this; the first-stage retrievers cannot.
local ANSWER_TYPES = {
  { ask = { "how long", "how often", "多久", "多长时间", "时长", "周期" },
    says = { "%d+%s*days?", "%d+%-day", "%d+%s*hours", "%d+%s*minutes", "%d+%s*seconds",
             "%d+%s*天", "%d+%s*小时", "%d+%s*分钟", "%d+%s*秒" } },
  { ask = { "how many", "多少个", "最多" }, says = { "%d" } },
  { ask = { "cost", "cheap", "how much", "price", "charged", "paying", "价格", "多少钱", "费用", "收费" },
    says = { "%$%d", "%d%s*元", "美元" } },
  { ask = { "how big", "biggest", "largest", "size", "多大", "字节" },
    says = { "%d+%s*[kmgt]i?b", "%d+%s*字节", "%d[%d,]*%s*bytes" } },
  { ask = { "how do i", "how can i", "how should", "怎么", "如何", "怎样" },
    says = { "nimbus %l+ ", "run ", "执行", "%f[%w]1%. ", "第一步", "call ", "调用", "%f[%w]%u%l+%u%l+%u",
             "%l_%l", " set " } },
  { ask = { "error" }, says = { "%u%l+%u%a*%s*%(%d%d%d%)" } },
}

local function contains_any(text, needles, plain)
  for _, n in ipairs(needles) do
    if text:find(n, 1, plain) then return true end
  end
  return false
end

-- Share of the answer types the question asks for that the document makes.
local function answer_type_match(query, doc)
  local q, asked, met = query:lower(), 0, 0
  local text = doc.title .. " " .. doc.text
  for _, t in ipairs(ANSWER_TYPES) do
    if contains_any(q, t.ask, true) then
      asked = asked + 1
      if contains_any(text, t.says, false) or contains_any(text:lower(), t.says, false) then met = met + 1 end
    end
  end
  return asked > 0 and met / asked or 0
end

-- Adjacent pairs of index terms: English word pairs and Chinese character
-- trigrams, i.e. the query's word order, which bag-of-words retrievers ignore.
local function adjacent_pairs(text)
  local words, runs = split(text)
  local pairs_, prev = {}, nil
  for _, w in ipairs(words) do
    if not STOP[w] then
      if prev then pairs_[prev .. " " .. w] = true end
      prev = w
    end
  end
  for _, run in ipairs(runs) do
    for i = 1, #run - 2 do pairs_[run[i] .. run[i + 1] .. run[i + 2]] = true end
  end
  return pairs_
end

local function phrase_match(qpairs, dpairs)
  local n, hit = 0, 0
  for _, p in ipairs(qpairs) do
    n = n + 1
    if dpairs[p] then hit = hit + 1 end
  end
  return n > 0 and hit / n or 0
end

-- The reranker reads the whole query against each candidate: how much of the
-- query's concepts and terms the document covers, plus both first-stage
-- signals, with a little noise so that it is good but not perfect.
local function rerank_scores(ctx, query, qlang, candidates, bm, con)
  local qcounts = concept_counts(ctx.cidx.lex, query)
  local qconcepts = sorted_keys(qcounts)
  local qterms = unique_terms(query)
  local qpairs = sorted_keys(adjacent_pairs(query))
  local deprecated_ci = ctx.cidx.by_name.deprecated
  local asks_old = qcounts[deprecated_ci] ~= nil
  local max_bm = 0
  for _, i in ipairs(candidates) do max_bm = math.max(max_bm, bm[i]) end
  local scores = {}
  for _, i in ipairs(candidates) do
    local ccov = coverage(qconcepts, function(ci) return concept_idf(ctx.cidx, ci) end,
                          function(ci) return ctx.cidx.counts[i][ci] ~= nil end)
    local tcov = coverage(qterms, function(t) return bm25_idf(ctx.bidx, t) end,
                          function(t) return ctx.bidx.tf[i][t] ~= nil end)
    local tcon = coverage(qconcepts, function(ci) return concept_idf(ctx.cidx, ci) end,
                          function(ci) return ctx.cidx.title_counts[i][ci] ~= nil end)
    local atype = answer_type_match(query, ctx.docs[i])
    local nbm = max_bm > 0 and bm[i] / max_bm or 0
    local phrase = phrase_match(qpairs, ctx.pairs[i])
    local stale = (not asks_old and ctx.cidx.counts[i][deprecated_ci]) and 1 or 0
    local other = ctx.docs[i].lang ~= qlang and 1 or 0
    local s = W.ccov * ccov + W.title * tcon + W.tcov * tcov + W.bm25 * nbm + W.cos * con[i] + W.atype * atype
              + W.phrase * phrase - W.stale * stale - W.other_lang * other
    local noise = W.noise * gaussian()
    scores[i] = 1.6 * s - 7 + noise       -- on the scale of a cross-encoder's logits
    if ctx.explain == query then
      io.stderr:write(string.format("%s ccov=%.2f title=%.2f tcov=%.2f bm=%.2f cos=%.2f atype=%.2f phrase=%.2f stale=%d noise=%.2f -> %.3f\n",
        ctx.docs[i].id, ccov, tcon, tcov, nbm, con[i], atype, phrase, stale, noise, scores[i]))
    end
  end
  return scores
end

---------------------------------------------------------------------------
-- Retrieved lists as written: rounded scores, ties ordered as trec_eval
-- orders them (score descending, then document id descending).
---------------------------------------------------------------------------

local function retrieved_list(ctx, ranking, scores, decimals, k)
  local out = {}
  for r = 1, math.min(k, #ranking) do
    local i = ranking[r]
    local txt = string.format("%." .. decimals .. "f", scores[i])
    if tonumber(txt) == 0 then txt = string.format("%." .. decimals .. "f", 0) end
    out[r] = { id = ctx.docs[i].id, score = tonumber(txt), text = txt }
  end
  table.sort(out, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.id > b.id
  end)
  return out
end

local function run_variants(ctx, q)
  local n = #ctx.docs
  local bm = bm25_scores(ctx.bidx, q.query)
  local con = concept_scores(ctx.cidx, q.query)
  local bm_rank = rank(bm, all_docs(n))
  local fused = rrf({ bm_rank, rank(con, all_docs(n)) }, { W.rrf_lexical, W.rrf_concept }, n, 10)
  local fused_rank = rank(fused, all_docs(n))
  local pool = { table.unpack(fused_rank, 1, math.min(20, #fused_rank)) }
  local rr = rerank_scores(ctx, q.query, q.lang, pool, bm, con)
  return {
    baseline = retrieved_list(ctx, bm_rank, bm, 2, 10),
    hybrid = retrieved_list(ctx, fused_rank, fused, 4, 10),
    hybrid_rerank = retrieved_list(ctx, rank(rr, pool, true), rr, 3, 10),
  }
end

---------------------------------------------------------------------------
-- Generated answers: consistent with what the pipeline put in its top 3.
---------------------------------------------------------------------------

local REFUSALS = {
  en = { "The documentation does not say.", "I couldn't find this in the provided documentation.",
         "The retrieved documents don't answer this question." },
  zh = { "文档中没有提到这一点。", "根据提供的文档无法回答这个问题。" },
}

local function top_positions(retrieved, k)
  local pos = {}
  for r = 1, math.min(k, #retrieved) do pos[retrieved[r].id] = r end
  return pos
end

-- Rank of the best of ids within the top 3, or nil.
local function best_rank(pos, ids)
  local best
  for _, id in ipairs(ids) do
    if pos[id] and (not best or pos[id] < best) then best = pos[id] end
  end
  return best
end

local function distractor(q, pos)
  local best, text
  for _, w in ipairs(q.wrong or {}) do
    local r = pos[w[1]]
    if r and (not best or r < best) then best, text = r, w[2] end
  end
  return best, text
end

local function correct_text(q)
  if math.random() < 0.12 then return q.gold[1] end
  return pick(q.answers)
end

-- -> kind ("correct", "partial", "wrong", "refusal"), answer text
local function decide_answer(q, retrieved)
  local pos = top_positions(retrieved, 3)
  local found, first
  if q.sides then
    local r1, r2 = best_rank(pos, q.sides[1]), best_rank(pos, q.sides[2])
    found = r1 and r2
    first = found and math.max(r1, r2)
    if not found and (r1 or r2) and q.partial and q.partial[r1 and 1 or 2] then
      return "partial", q.partial[r1 and 1 or 2]
    end
  else
    first = best_rank(pos, q.ans)
    found = first ~= nil
  end
  local wr, wtext = distractor(q, pos)
  local fooled = math.random() < 0.5
  if found and not (wr and wr < first and fooled) then return "correct", correct_text(q) end
  if wr then return "wrong", wtext end
  return "refusal", pick(REFUSALS[q.lang])
end

-- A few answers are hallucinated although retrieval was right: one per
-- question, for distinct questions chosen with the seeded generator.
local function add_hallucinations(queries, results, count)
  local candidates = {}
  for _, q in ipairs(queries) do
    if q.halluc then
      for _, v in ipairs(VARIANTS) do
        if results[q.qid][v].kind == "correct" then candidates[#candidates + 1] = { q = q, v = v } end
      end
    end
  end
  for i = #candidates, 2, -1 do
    local j = math.random(i)
    candidates[i], candidates[j] = candidates[j], candidates[i]
  end
  local used, n = {}, 0
  for _, c in ipairs(candidates) do
    if n < count and not used[c.q.qid] then
      used[c.q.qid], n = true, n + 1
      local res = results[c.q.qid][c.v]
      res.kind, res.answer, res.core_correct = "hallucinated", c.q.halluc[1], c.q.halluc[2]
    end
  end
end

---------------------------------------------------------------------------
-- Human judgements for judge calibration
---------------------------------------------------------------------------

-- What a careful annotator gives each kind of answer, before disagreement.
local function human_base(res)
  if res.kind == "correct" then return (math.random() < 0.8) and 5 or 4, 1 end
  if res.kind == "partial" then return 4, (math.random() < 0.25) and 1 or 0 end
  if res.kind == "wrong" then return (math.random() < 0.6) and 4 or 3, 0 end
  if res.kind == "refusal" then return (math.random() < 0.7) and 5 or 3, 0 end
  return res.core_correct and 2 or 1, res.core_correct and 1 or 0
end

local function human_label(res)
  local faith, correct = human_base(res)
  if math.random() < 0.2 then faith = faith + (math.random() < 0.5 and -1 or 1) end
  faith = math.max(1, math.min(5, faith))
  if math.random() < 0.04 then correct = 1 - correct end
  return faith, correct
end

-- A sample that over-represents the interesting cases: every hallucination,
-- most wrong and partial answers, some refusals, the rest correct answers.
local function sample_pairs(queries, results, total)
  local by_kind = { hallucinated = {}, wrong = {}, partial = {}, refusal = {}, correct = {} }
  for _, q in ipairs(queries) do
    for _, v in ipairs(VARIANTS) do
      local list = by_kind[results[q.qid][v].kind]
      list[#list + 1] = { qid = q.qid, variant = v }
    end
  end
  local quota = { hallucinated = 99, wrong = 16, partial = 8, refusal = 8 }
  local chosen = {}
  for _, kind in ipairs({ "hallucinated", "wrong", "partial", "refusal", "correct" }) do
    local list = by_kind[kind]
    local want = quota[kind] or (total - #chosen)
    for i = #list, 2, -1 do
      local j = math.random(i)
      list[i], list[j] = list[j], list[i]
    end
    for i = 1, math.min(want, #list) do chosen[#chosen + 1] = list[i] end
  end
  local vorder = { baseline = 1, hybrid = 2, hybrid_rerank = 3 }
  table.sort(chosen, function(a, b)
    if a.qid ~= b.qid then return a.qid < b.qid end
    return vorder[a.variant] < vorder[b.variant]
  end)
  return chosen
end

---------------------------------------------------------------------------
-- JSON with a fixed key order and UTF-8 kept as is
---------------------------------------------------------------------------

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function jstr(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function jlist(items, fmt)
  local parts = {}
  for i, v in ipairs(items) do parts[i] = fmt(v) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- fields: array of { key, already-encoded value }
local function jobject(fields)
  local parts = {}
  for i, f in ipairs(fields) do parts[i] = jstr(f[1]) .. ": " .. f[2] end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function graded_order(q)
  local ids = sorted_keys(q.grades)
  table.sort(ids, function(a, b)
    if q.grades[a] ~= q.grades[b] then return q.grades[a] > q.grades[b] end
    return a < b
  end)
  return ids
end

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
  return jobject {
    { "qid", jstr(q.qid) }, { "query", jstr(q.query) }, { "query_class", jstr(q.class) },
    { "language", jstr(q.lang) }, { "variant", jstr(v) },
    { "gold_doc_ids", jlist(gold_ids(q), jstr) },
    { "graded_relevance", jobject(grades) },
    { "gold_answers", jlist(q.gold, jstr) },
    { "retrieved", jlist(res.retrieved, function(e)
        return jobject { { "id", jstr(e.id) }, { "score", e.text } }
      end) },
    { "answer", jstr(res.answer) },
  }
end

local function write_lines(name, lines)
  local path = DIR .. "/" .. name
  local f = assert(io.open(path, "w"))
  for _, line in ipairs(lines) do
    assert(cjson.decode(line), "generated line is not JSON")
    f:write(line, "\n")
  end
  f:close()
  print(string.format("wrote %s (%d lines)", path, #lines))
end

---------------------------------------------------------------------------
-- Statistics the docs quote: recall@5, MRR and nDCG@5 as trec_eval computes
-- them (relevant = grade >= 1, linear gains), and answer kinds.
---------------------------------------------------------------------------

local function retrieval_metrics(q, retrieved)
  local rel, nrel = {}, 0
  for _, id in ipairs(gold_ids(q)) do rel[id] = q.grades[id]; nrel = nrel + 1 end
  local hits5, rr, dcg = 0, 0, 0
  for r, e in ipairs(retrieved) do
    local g = rel[e.id]
    if g then
      if rr == 0 then rr = 1 / r end
      if r <= 5 then hits5, dcg = hits5 + 1, dcg + g / (math.log(r + 1, 2)) end
    end
  end
  local ideal = {}
  for _, id in ipairs(gold_ids(q)) do ideal[#ideal + 1] = q.grades[id] end
  table.sort(ideal, function(a, b) return a > b end)
  local idcg = 0
  for r = 1, math.min(5, #ideal) do idcg = idcg + ideal[r] / math.log(r + 1, 2) end
  return { recall5 = hits5 / nrel, mrr = rr, ndcg5 = dcg / idcg }
end

local function mean_over(queries, results, v, metric, filter)
  local sum, n = 0, 0
  for _, q in ipairs(queries) do
    if not filter or filter(q) then
      sum, n = sum + retrieval_metrics(q, results[q.qid][v].retrieved)[metric], n + 1
    end
  end
  return sum / n
end

local function print_stats(queries, results)
  print("\nvariant        recall@5  MRR     nDCG@5  | recall@5 factoid comparison how-to | en      zh")
  for _, v in ipairs(VARIANTS) do
    local line = string.format("%-14s %.4f    %.4f  %.4f  |", v,
      mean_over(queries, results, v, "recall5"), mean_over(queries, results, v, "mrr"),
      mean_over(queries, results, v, "ndcg5"))
    for _, c in ipairs(CLASSES) do
      line = line .. string.format(" %.4f", mean_over(queries, results, v, "recall5",
        function(q) return q.class == c end))
    end
    for _, l in ipairs({ "en", "zh" }) do
      line = line .. string.format(" | %.4f", mean_over(queries, results, v, "recall5",
        function(q) return q.lang == l end))
    end
    print(line)
  end
  print("\nanswers        correct partial wrong refusal hallucinated")
  for _, v in ipairs(VARIANTS) do
    local n = { correct = 0, partial = 0, wrong = 0, refusal = 0, hallucinated = 0 }
    for _, q in ipairs(queries) do n[results[q.qid][v].kind] = n[results[q.qid][v].kind] + 1 end
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

local function main()
  local check, explain = false, nil
  local i = 1
  while arg and arg[i] do
    if arg[i] == "--check" then check = true
    elseif arg[i] == "--explain" and arg[i + 1] then explain, i = arg[i + 1], i + 1
    else fail("usage: evalua run generate.lua [--check] [--explain QID]") end
    i = i + 1
  end
  local docs, by_id = load_docs()
  local queries = load_queries(by_id)
  for _, q in ipairs(queries) do
    if q.qid == explain then explain = q.query end
  end
  local ctx = { docs = docs, bidx = bm25_index(docs), explain = explain, pairs = {},
                cidx = concept_index(prepare_lexicon(dofile(DIR .. "/concepts_src.lua")), docs) }

  for i, d in ipairs(docs) do ctx.pairs[i] = adjacent_pairs(d.title .. " " .. d.text) end

  math.randomseed(SEED, 1)      -- reranker noise
  local results = {}
  for _, q in ipairs(queries) do
    results[q.qid] = {}
    for v, retrieved in pairs(run_variants(ctx, q)) do results[q.qid][v] = { retrieved = retrieved } end
  end
  math.randomseed(SEED, 2)      -- answers
  for _, q in ipairs(queries) do
    for _, v in ipairs(VARIANTS) do
      local res = results[q.qid][v]
      res.kind, res.answer = decide_answer(q, res.retrieved)
    end
  end
  add_hallucinations(queries, results, 7)

  local corpus_lines = {}
  for i, d in ipairs(docs) do
    corpus_lines[i] = jobject { { "id", jstr(d.id) }, { "title", jstr(d.title) },
                                { "text", jstr(d.text) }, { "lang", jstr(d.lang) } }
  end
  write_lines("corpus.jsonl", corpus_lines)
  local eval_lines = {}
  for _, q in ipairs(queries) do
    for _, v in ipairs(VARIANTS) do eval_lines[#eval_lines + 1] = eval_row(q, v, results[q.qid][v]) end
  end
  write_lines("rag_eval.jsonl", eval_lines)

  math.randomseed(SEED, 3)      -- human sample and disagreement
  local label_lines = {}
  for _, p in ipairs(sample_pairs(queries, results, 60)) do
    local faith, correct = human_label(results[p.qid][p.variant])
    label_lines[#label_lines + 1] = jobject { { "qid", jstr(p.qid) }, { "variant", jstr(p.variant) },
      { "faithfulness", tostring(faith) }, { "correct", tostring(correct) } }
  end
  write_lines("human_labels.jsonl", label_lines)

  print_stats(queries, results)
  if check then print_pool_gaps(queries, results) end
end

main()
