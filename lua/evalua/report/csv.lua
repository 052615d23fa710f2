-- CSV report: one line per item (id, system, slices, a column per metric,
-- with a comparison the baseline's score per metric, then the reasons of
-- metrics that give one, the query and the answer), streamed from the
-- columns by C (evalua._report). An unmeasured score is an empty cell,
-- never 0; a text cell that a spreadsheet would run as a formula starts
-- with an apostrophe.
local C = require "evalua._report"
local columns = require "evalua.report.columns"

-- 0-based indices of the metrics that have a reason or an unmeasured item.
local function with_reasons(res)
  local out = {}
  for j in ipairs(res.metrics) do
    if res.scores:reasoned(j) then out[#out + 1] = j - 1 end
  end
  return out
end

return {
  render = function(res) return C.csv(columns(res), with_reasons(res)) end,
  write = function(res, _, path) return C.csv(columns(res), with_reasons(res), path) end,
}
