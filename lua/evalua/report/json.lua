-- JSON report: run metadata, every aggregate, worst slices, lowest items and
-- every row's item with its scores, reasons and unmeasured causes. Keys are
-- sorted, so two reports of the same run diff cleanly. The items are
-- streamed from the columns by C (evalua._report), in constant memory:
-- compact by default (an item a line, without the input row, which the
-- data set holds), or with items = "full" each item's row too, a key a line.
local json = require "evalua.core.json"
local C = require "evalua._report"
local columns = require "evalua.report.columns"
local history = require "evalua.history"
local common = require "evalua.report.common"

local function metric_list(res)
  local out = {}
  for i, m in ipairs(res.metrics) do
    out[i] = { name = m.name, description = m.description, judged = m.judged or false,
               higher_is_better = m.higher_is_better, definition = history.definition(m) }
  end
  return out
end

local MARK = {} -- where the items go: the C writer streams them in its place

-- The notices every format shows at its top (report/common.lua).
local function notices(res)
  local out = setmetatable({}, json.array)
  for i, n in ipairs(common.notices(res)) do
    out[i] = { kind = n.kind, title = n.title, lines = setmetatable(n.lines, json.array) }
  end
  return out
end

local FORMS = { compact = true, full = true }

-- items = "compact" (the default) or "full"; what: the call, for the message.
local function check(opts, what, level)
  local form = opts.items
  if form ~= nil and not FORMS[form] then
    error(("%s: items must be \"compact\" or \"full\" (got %s)"):format(what,
      type(form) == "string" and ("%q"):format(form) or type(form)), level + 1)
  end
end

-- Compact only where a file holds the rows (ev.dataset.load and subsets
-- of it): rows made in memory (ev.generate's outputs, ev.dataset.from_rows)
-- exist nowhere else, so their items keep them unless asked otherwise.
local function form_of(opts, res)
  check(opts or {}, "ev.report", 3)
  if opts and opts.items then return opts.items end
  return res.dataset and res.dataset.from_file and "compact" or "full"
end

local function document(res, form)
  return {
    items_form = form,
    meta = res.meta, metrics = metric_list(res), systems = res.systems, dims = res.dims,
    slice_values = res.slice_values, aggregates = res.aggregates, worst = res.worst,
    bottom = res.bottom, skipped = setmetatable(res.skipped, json.array), items = MARK,
    ci = res.ci, comparison = res.comparison and {
      baseline = res.comparison.baseline, alpha = res.comparison.alpha, rows = res.comparison.rows,
      flips = res.comparison.flips,
      warnings = #(res.comparison.warnings or {}) > 0 and res.comparison.warnings or nil } or nil,
    system_comparison = res.system_comparison,
    gates = res.gates, notices = notices(res),
  }
end

-- Text that is not valid UTF-8 is written with U+FFFD for each invalid
-- sequence (host/bindings/l_json.c); write returns their number.
local function spec(res, form)
  local sp = columns(res, form)
  sp.full_items = form == "full"
  return sp
end

return {
  options = { "items" },
  check = check,
  render = function(res, opts)
    local form = form_of(opts, res)
    return (C.json(spec(res, form), document(res, form), MARK))
  end,
  write = function(res, opts, path)
    local form = form_of(opts, res)
    return select(2, C.json(spec(res, form), document(res, form), MARK, path))
  end,
}
