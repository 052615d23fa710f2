-- JSON report: run metadata, every aggregate, worst slices, lowest items and
-- every row with its scores, reasons and unmeasured causes. Keys are sorted,
-- so two reports of the same run diff cleanly.
local json = require "evalua.json"

local function metric_list(res)
  local out = {}
  for i, m in ipairs(res.metrics) do
    out[i] = { name = m.name, description = m.description, judged = m.judged or false,
               higher_is_better = m.higher_is_better }
  end
  return out
end

local function items(res)
  local out = {}
  for i, it in ipairs(res.items) do
    local row = {}
    for k, v in pairs(it.row) do
      if k ~= "_line" then row[k] = v end
    end
    out[i] = { id = it.id, system = it.system, slices = it.slices, scores = it.scores,
               reasons = it.reasons, unmeasured = it.unmeasured, details = it.details, row = row }
  end
  return setmetatable(out, json.array)
end

return function(res, opts)
  local doc = {
    meta = res.meta, metrics = metric_list(res), systems = res.systems, dims = res.dims,
    slice_values = res.slice_values, aggregates = res.aggregates, worst = res.worst,
    bottom = res.bottom, skipped = setmetatable(res.skipped, json.array), items = items(res),
    ci = res.ci, comparison = res.comparison and {
      baseline = res.comparison.baseline, alpha = res.comparison.alpha, rows = res.comparison.rows,
      flips = res.comparison.flips } or nil,
    gates = res.gates,
  }
  return json.encode(doc, { indent = opts.indent or "  " }) .. "\n"
end
