-- JSON report: run metadata, every aggregate, worst slices, lowest items and
-- every row with its scores, reasons and unmeasured causes. Keys are sorted,
-- so two reports of the same run diff cleanly. The items are streamed from
-- the columns by C (evalua._report), in constant memory.
local json = require "evalua.json"
local C = require "evalua._report"
local columns = require "evalua.report.columns"

local function metric_list(res)
  local out = {}
  for i, m in ipairs(res.metrics) do
    out[i] = { name = m.name, description = m.description, judged = m.judged or false,
               higher_is_better = m.higher_is_better }
  end
  return out
end

local MARK = "\0items\0"

-- The document without its items, split where they go.
local function around_items(res)
  local doc = {
    meta = res.meta, metrics = metric_list(res), systems = res.systems, dims = res.dims,
    slice_values = res.slice_values, aggregates = res.aggregates, worst = res.worst,
    bottom = res.bottom, skipped = setmetatable(res.skipped, json.array), items = MARK,
    ci = res.ci, comparison = res.comparison and {
      baseline = res.comparison.baseline, alpha = res.comparison.alpha, rows = res.comparison.rows,
      flips = res.comparison.flips } or nil,
    gates = res.gates,
  }
  local text = json.encode(doc, { indent = "  " }) .. "\n"
  local a, b = text:find(json.encode(MARK), 1, true)
  return text:sub(1, a - 1), text:sub(b + 1)
end

return {
  render = function(res)
    local head, tail = around_items(res)
    return C.json(columns(res), head, tail)
  end,
  write = function(res, _, path)
    local head, tail = around_items(res)
    return C.json(columns(res), head, tail, path)
  end,
}
