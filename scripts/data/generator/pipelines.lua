-- The three pipeline variants, run over the corpus for one question:
--   baseline       BM25
--   hybrid         weighted reciprocal rank fusion of BM25 and concept vectors
--   hybrid_rerank  the hybrid's top 20 reordered by the reranker
-- Each returns its top 10 with scores rounded as written to the data set.
local text = require "generator.text"
local bm25 = require "generator.bm25"
local concepts = require "generator.concepts"
local rerank = require "generator.rerank"

local M = {}

-- Fusion: score(d) = sum over lists l of w_l / (60 + rank_l(d)), over the top
-- FUSE_DEPTH of each list (Cormack et al. 2009, k = 60). Unequal weights also
-- keep a document found only lexically from tying with one found only by
-- concepts at the same rank.
M.FUSE_WEIGHTS = { lexical = 0.4, concepts = 0.6 }
M.FUSE_DEPTH = 10
M.RERANK_DEPTH = 20
M.K = 10

function M.context(docs, lexicon_source)
  local ctx = { docs = docs, bm25 = bm25.index(docs), pairs = {},
                concepts = concepts.index(concepts.lexicon(lexicon_source), docs) }
  for i, d in ipairs(docs) do ctx.pairs[i] = text.adjacent_pairs(d.title .. " " .. d.text) end
  return ctx
end

-- Document indices best first (ties: lower index). A first-stage retriever
-- returns only documents that match at all; a reranker ranks every candidate.
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

local function fuse(rankings, weights, n)
  local fused = {}
  for i = 1, n do fused[i] = 0 end
  for li, ranking in ipairs(rankings) do
    for r = 1, math.min(M.FUSE_DEPTH, #ranking) do
      local i = ranking[r]
      fused[i] = fused[i] + weights[li] / (60 + r)
    end
  end
  return fused
end

-- The top k as written: scores rounded to `decimals`, ties ordered as
-- trec_eval orders them (score descending, then document id descending).
local function top_k(ctx, ranking, scores, decimals)
  local out = {}
  for r = 1, math.min(M.K, #ranking) do
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

-- -> { baseline = list, hybrid = list, hybrid_rerank = list }
function M.run(ctx, q, explain)
  local n = #ctx.docs
  local bm = bm25.scores(ctx.bm25, q.query)
  local con = concepts.scores(ctx.concepts, q.query)
  local bm_rank = rank(bm, all_docs(n))
  local fused = fuse({ bm_rank, rank(con, all_docs(n)) },
                     { M.FUSE_WEIGHTS.lexical, M.FUSE_WEIGHTS.concepts }, n)
  local fused_rank = rank(fused, all_docs(n))
  local pool = { table.unpack(fused_rank, 1, math.min(M.RERANK_DEPTH, #fused_rank)) }
  local rr = rerank.scores(ctx, q, pool, bm, con, explain)
  return {
    baseline = top_k(ctx, bm_rank, bm, 2),
    hybrid = top_k(ctx, fused_rank, fused, 4),
    hybrid_rerank = top_k(ctx, rank(rr, pool, true), rr, 3),
  }
end

return M
