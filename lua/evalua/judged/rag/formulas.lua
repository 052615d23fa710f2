-- The RAG metrics' formulas over judge verdicts: pure functions, tested
-- on their own.
local M = {}

-- Rank-weighted average precision over verdicts in rank order:
-- sum_k (precision@k * v_k) / (number of useful chunks); 0 when none is useful.
function M.average_precision(verdicts)
  local hits, sum = 0, 0
  for k, v in ipairs(verdicts) do
    if v == 1 then
      hits = hits + 1
      sum = sum + hits / k
    end
  end
  if hits == 0 then return 0 end
  return sum / hits
end

-- Pairwise verdicts of both orders -> one result. first: the verdict when A
-- was shown first; swapped: the verdict (in the labels the judge saw) when B
-- was shown first. A = 1, B = 0, tie = 0.5 per order; the score is their mean.
function M.reconcile(first, swapped)
  local back = ({ A = "B", B = "A", tie = "tie" })[swapped]
  local value = { A = 1, B = 0, tie = 0.5 }
  local score = (value[first] + value[back]) / 2
  local verdict
  if first == back then verdict = first
  elseif score > 0.5 then verdict = "A"
  elseif score < 0.5 then verdict = "B"
  else verdict = "inconsistent" end
  return { score = score, verdict = verdict, agreement = first == back, orders = { first, back } }
end


return M
