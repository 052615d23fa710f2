-- The reranker of hybrid_rerank: it reads the whole question against each of
-- the hybrid's top 20 and scores, on the scale of a cross-encoder's logits,
--   1.6 * sum(weight * feature) - 7 + noise,   noise ~ N(0, 0.32)
-- with the features below, each in [0, 1]. It is better than the first stage
-- because it uses what they drop (question words, word order, titles); the
-- noise and a preference for the question's language keep it imperfect.
local common = require "generator.common"
local text = require "generator.text"
local bm25 = require "generator.bm25"
local concepts = require "generator.concepts"

local M = {}

M.WEIGHTS = {
  concepts = 3.0,    -- share of the question's concept idf weight found in the document
  title = 1.5,       -- the same share found in the title alone
  terms = 1.5,       -- share of the question's term idf weight found in the document
  bm25 = 1.0,        -- BM25 score relative to the best candidate
  cosine = 1.5,      -- concept-vector cosine
  answer_type = 1.0, -- the document makes the kind of statement asked for
  phrase = 2.0,      -- share of the question's adjacent word pairs found
  stale = -1.5,      -- a deprecated (v1) page when the question does not ask about v1
  other_lang = -1.5, -- the document is not in the question's language
}
M.NOISE = 0.32

-- Answer types: the kind of statement a question asks for, recognised from
-- question words ("how long", "多少钱"), and Lua patterns of text that makes
-- such a statement.
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
    says = { "nimbus %l+ ", "run ", "执行", "%f[%w]1%. ", "第一步", "call ", "调用",
             "%f[%w]%u%l+%u%l+%u", "%l_%l", " set " } },
  { ask = { "error" }, says = { "%u%l+%u%a*%s*%(%d%d%d%)" } },
}

local function contains_any(s, needles, plain)
  for _, n in ipairs(needles) do
    if s:find(n, 1, plain) then return true end
  end
  return false
end

-- Share of the answer types the question asks for that the document makes.
local function answer_type(query, doc)
  local q, asked, met = query:lower(), 0, 0
  local body = doc.title .. " " .. doc.text
  for _, t in ipairs(ANSWER_TYPES) do
    if contains_any(q, t.ask, true) then
      asked = asked + 1
      if contains_any(body, t.says, false) or contains_any(body:lower(), t.says, false) then
        met = met + 1
      end
    end
  end
  return asked > 0 and met / asked or 0
end

-- Share of the weight of items for which has(item) holds.
local function coverage(items, weight, has)
  local total, hit = 0, 0
  for _, item in ipairs(items) do
    local w = weight(item)
    total = total + w
    if has(item) then hit = hit + w end
  end
  return total > 0 and hit / total or 0
end

local function share_found(list, found)
  local hit = 0
  for _, p in ipairs(list) do
    if found[p] then hit = hit + 1 end
  end
  return #list > 0 and hit / #list or 0
end

-- What the reranker reads from the question once.
local function question(ctx, q)
  local counts = concepts.counts(ctx.concepts.lex, q.query)
  return {
    text = q.query, lang = q.lang,
    concepts = common.sorted_keys(counts),
    terms = text.unique_terms(q.query),
    pairs = common.sorted_keys(text.adjacent_pairs(q.query)),
    asks_v1 = counts[ctx.concepts.by_name.deprecated] ~= nil,
  }
end

local function features(ctx, qi, i, bm_rel, cosine)
  local cidx, doc = ctx.concepts, ctx.docs[i]
  local cweight = function(ci) return concepts.idf(cidx, ci) end
  return {
    concepts = coverage(qi.concepts, cweight, function(ci) return cidx.counts[i][ci] ~= nil end),
    title = coverage(qi.concepts, cweight, function(ci) return cidx.title_counts[i][ci] ~= nil end),
    terms = coverage(qi.terms, function(t) return bm25.idf(ctx.bm25, t) end,
                     function(t) return ctx.bm25.tf[i][t] ~= nil end),
    bm25 = bm_rel,
    cosine = cosine,
    answer_type = answer_type(qi.text, doc),
    phrase = share_found(qi.pairs, ctx.pairs[i]),
    stale = (not qi.asks_v1 and cidx.counts[i][cidx.by_name.deprecated]) and 1 or 0,
    other_lang = doc.lang ~= qi.lang and 1 or 0,
  }
end

local FEATURE_ORDER = { "concepts", "title", "terms", "bm25", "cosine", "answer_type", "phrase", "stale", "other_lang" }

-- scores[i] for every candidate index i; explain(i, features, noise, score)
-- is called per candidate when given.
function M.scores(ctx, q, candidates, bm, con, explain)
  local qi = question(ctx, q)
  local max_bm = 0
  for _, i in ipairs(candidates) do max_bm = math.max(max_bm, bm[i]) end
  local scores = {}
  for _, i in ipairs(candidates) do
    local f = features(ctx, qi, i, max_bm > 0 and bm[i] / max_bm or 0, con[i])
    local s = 0
    for _, name in ipairs(FEATURE_ORDER) do s = s + M.WEIGHTS[name] * f[name] end
    local noise = M.NOISE * common.gaussian()
    scores[i] = 1.6 * s - 7 + noise
    if explain then explain(i, f, noise, scores[i]) end
  end
  return scores
end

M.FEATURE_ORDER = FEATURE_ORDER
return M
