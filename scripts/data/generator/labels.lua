-- Simulated labels for trying out judge calibration: a sample of (qid,
-- variant) pairs with faithfulness 1..5 and correct 0/1, drawn at random for
-- each kind of answer the generator wrote (as a careful annotator would judge
-- that kind), plus random disagreement. No person labelled these answers.
local common = require "generator.common"

local M = {}

-- Base label per answer kind -> faithfulness, correct.
local function base(res)
  if res.kind == "correct" then return (math.random() < 0.8) and 5 or 4, 1 end
  if res.kind == "partial" then return 4, (math.random() < 0.25) and 1 or 0 end
  if res.kind == "wrong" then return (math.random() < 0.6) and 4 or 3, 0 end
  if res.kind == "refusal" then return (math.random() < 0.7) and 5 or 3, 0 end
  return res.core_correct and 2 or 1, res.core_correct and 1 or 0 -- hallucinated
end

-- -> faithfulness, correct, after simulated disagreement: faithfulness moves
-- by one point 20% of the time, correctness flips 4% of the time.
function M.judge(res)
  local faith, correct = base(res)
  if math.random() < 0.2 then faith = faith + (math.random() < 0.5 and -1 or 1) end
  faith = math.max(1, math.min(5, faith))
  if math.random() < 0.04 then correct = 1 - correct end
  return faith, correct
end

local QUOTA = { hallucinated = math.huge, wrong = 16, partial = 8, refusal = 8 }
local KINDS = { "hallucinated", "wrong", "partial", "refusal", "correct" }

-- A sample that over-represents the cases a judge gets wrong: every
-- hallucination, up to 16 wrong answers, 8 partial, 8 refusals, the rest
-- correct answers up to `total`; sorted by qid and variant.
function M.sample(queries, results, total)
  local by_kind = {}
  for _, kind in ipairs(KINDS) do by_kind[kind] = {} end
  for _, q in ipairs(queries) do
    for _, v in ipairs(common.VARIANTS) do
      local list = by_kind[results[q.qid][v].kind]
      list[#list + 1] = { qid = q.qid, variant = v }
    end
  end
  local chosen = {}
  for _, kind in ipairs(KINDS) do
    local list = common.shuffle(by_kind[kind])
    local want = QUOTA[kind] or (total - #chosen)
    for i = 1, math.min(want, #list) do chosen[#chosen + 1] = list[i] end
  end
  local order = {}
  for i, v in ipairs(common.VARIANTS) do order[v] = i end
  table.sort(chosen, function(a, b)
    if a.qid ~= b.qid then return a.qid < b.qid end
    return order[a.variant] < order[b.variant]
  end)
  return chosen
end

return M
