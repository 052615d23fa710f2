-- The generated answer of each pipeline, consistent with its top 3 (the
-- context its generator saw):
--   correct   an answering document is in the top 3 (for a comparison, one
--             of each side); a distractor ranked above it fools the
--             generator half of the time
--   partial   a comparison with only one side found
--   wrong     no answer found, but a distractor (an outdated or confusable
--             page) is in the top 3: its plausible wrong answer
--   refusal   nothing usable in the top 3
-- then a few correct answers are replaced by hallucinated ones.
local common = require "generator.common"

local M = {}

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

-- Best rank among ids in pos, or nil.
local function best_rank(pos, ids)
  local best
  for _, id in ipairs(ids) do
    if pos[id] and (not best or pos[id] < best) then best = pos[id] end
  end
  return best
end

local function distractor(q, pos)
  local best, answer
  for _, w in ipairs(q.wrong or {}) do
    local r = pos[w[1]]
    if r and (not best or r < best) then best, answer = r, w[2] end
  end
  return best, answer
end

-- Sometimes the bare reference answer, usually a sentence around it.
local function correct_text(q)
  if math.random() < 0.12 then return q.gold[1] end
  return common.pick(q.answers)
end

-- -> kind, answer text
function M.decide(q, retrieved)
  local pos = top_positions(retrieved, 3)
  local found, first
  if q.sides then
    local r1, r2 = best_rank(pos, q.sides[1]), best_rank(pos, q.sides[2])
    found = r1 and r2
    first = found and math.max(r1, r2)
    local side = r1 and 1 or 2
    if not found and (r1 or r2) and q.partial and q.partial[side] then
      return "partial", q.partial[side]
    end
  else
    first = best_rank(pos, q.ans)
    found = first ~= nil
  end
  local wrong_rank, wrong_text = distractor(q, pos)
  local fooled = math.random() < 0.5
  if found and not (wrong_rank and wrong_rank < first and fooled) then
    return "correct", correct_text(q)
  end
  if wrong_rank then return "wrong", wrong_text end
  return "refusal", common.pick(REFUSALS[q.lang])
end

-- Replaces `count` correct answers, for distinct questions that have a
-- hallucination written, by that hallucination (facts in no document).
function M.hallucinate(queries, results, count)
  local candidates = {}
  for _, q in ipairs(queries) do
    if q.halluc then
      for _, v in ipairs(common.VARIANTS) do
        if results[q.qid][v].kind == "correct" then candidates[#candidates + 1] = { q = q, v = v } end
      end
    end
  end
  common.shuffle(candidates)
  local used, n = {}, 0
  for _, c in ipairs(candidates) do
    if n < count and not used[c.q.qid] then
      used[c.q.qid], n = true, n + 1
      local res = results[c.q.qid][c.v]
      res.kind, res.answer, res.core_correct = "hallucinated", c.q.halluc[1], c.q.halluc[2]
    end
  end
end

-- The documents an answer is drawn from, as a citing generator reports
-- them: the answering page (one per side of a comparison), the distractor
-- of a wrong answer, nothing for a refusal, and for a hallucination the top
-- result, which does not hold it. `mistake` replaces one citation by a page
-- the pipeline never retrieved, as generators sometimes invent sources.
function M.cite(q, res, mistake, corpus_ids)
  local pos, cited = top_positions(res.retrieved, 3), {}
  local function best(ids)
    local r, id = nil, nil
    for _, x in ipairs(ids) do
      if pos[x] and (not r or pos[x] < r) then r, id = pos[x], x end
    end
    return id
  end
  if res.kind == "correct" or res.kind == "partial" then
    for _, ids in ipairs(q.sides or { q.ans }) do cited[#cited + 1] = best(ids) end
  elseif res.kind == "wrong" then
    local ids = {}
    for _, w in ipairs(q.wrong or {}) do ids[#ids + 1] = w[1] end
    cited[1] = best(ids)
  elseif res.kind == "hallucinated" then
    cited[1] = res.retrieved[1].id
  end
  if mistake and #cited > 0 then
    local retrieved = {}
    for _, e in ipairs(res.retrieved) do retrieved[e.id] = true end
    repeat cited[#cited] = corpus_ids[math.random(#corpus_ids)] until not retrieved[cited[#cited]]
  end
  return cited
end

return M
