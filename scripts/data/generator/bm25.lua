-- Retriever 1: Okapi BM25 (k1 = 1.2, b = 0.75, Lucene's idf) over the text
-- of each document, as a plain lexical chunk index has it.
local text = require "generator.text"
local common = require "generator.common"

local M = {}

local K1, B = 1.2, 0.75

function M.index(docs)
  local idx = { N = #docs, df = {}, tf = {}, len = {}, avglen = 0 }
  for i, d in ipairs(docs) do
    local tf, n = {}, 0
    for _, t in ipairs(text.terms(d.text)) do
      tf[t] = (tf[t] or 0) + 1
      n = n + 1
    end
    for _, t in ipairs(common.sorted_keys(tf)) do idx.df[t] = (idx.df[t] or 0) + 1 end
    idx.tf[i], idx.len[i] = tf, n
    idx.avglen = idx.avglen + n
  end
  idx.avglen = idx.avglen / #docs
  return idx
end

-- idf = ln(1 + (N - df + 0.5) / (df + 0.5))
function M.idf(idx, t)
  local df = idx.df[t] or 0
  return math.log(1 + (idx.N - df + 0.5) / (df + 0.5))
end

-- score(d) = sum over distinct query terms t of
--            idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avglen))
function M.scores(idx, query)
  local qterms, scores = text.unique_terms(query), {}
  for i = 1, idx.N do
    local s, tf = 0, idx.tf[i]
    for _, t in ipairs(qterms) do
      local f = tf[t]
      if f then
        local norm = K1 * (1 - B + B * idx.len[i] / idx.avglen)
        s = s + M.idf(idx, t) * f * (K1 + 1) / (f + norm)
      end
    end
    scores[i] = s
  end
  return scores
end

return M
