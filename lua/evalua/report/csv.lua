-- CSV report: one line per item (id, system, slices, the judge, a column per metric,
-- with a comparison the baseline's score per metric, then the reasons of
-- metrics that give one, the query and the answer), streamed from the
-- columns by C (evalua._report). An unmeasured score is an empty cell,
-- never 0; a text cell that a spreadsheet would run as a formula starts
-- with an apostrophe.
local C = require "evalua._report"
local columns = require "evalua.report.columns"
local health = require "evalua.judge.health"

-- 0-based indices of the metrics that have a reason or an unmeasured item.
local function with_reasons(res)
  local out = {}
  for j in ipairs(res.metrics) do
    if res.scores:reasoned(j) then out[#out + 1] = j - 1 end
  end
  return out
end

-- The columns, with one more after the slices when a judged metric was
-- scored: `judge`, the judge's model, or "offline heuristic" when the
-- offline judge's estimates fill the judged columns. The same value in
-- every row: a spreadsheet's reader sees it beside every score.
local function spec_of(res)
  local spec = columns(res)
  local j = res.meta and res.meta.judge
  local judged = false
  for _, m in ipairs(res.metrics) do judged = judged or m.judged == true end
  if not (j and judged) then return spec end
  local name = "judge"
  for _, d in ipairs(spec.dims) do
    if d == name then name = "evalua_judge" end
  end
  local value = health.offline(res) and "offline heuristic" or tostring(j.model or j.requested_model)
  local codes, values = res.dataset.table:codes(nil, value)
  spec.dims[#spec.dims + 1], spec.dim_codes[#spec.dim_codes + 1], spec.dim_values[#spec.dim_values + 1] =
    name, codes, values
  return spec
end

-- write returns the number of invalid UTF-8 sequences written as U+FFFD.
return {
  render = function(res) return (C.csv(spec_of(res), with_reasons(res))) end,
  write = function(res, _, path) return select(2, C.csv(spec_of(res), with_reasons(res), path)) end,
}
