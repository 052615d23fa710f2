-- ev.evaluate(rows_or_dataset, spec) -> results
-- Runs every metric on every row, then aggregates per system (pipeline
-- variant) and per slice with bootstrap confidence intervals.
--
--   local res = ev.evaluate(ds, {
--     metrics = { "recall@5", "mrr", "token_f1", my_metric },
--     system = "variant",                         -- field that names the system (optional)
--     slices = { "query_class", lang = function(row) ... end },
--     judge = judge, concurrency = 16,             -- for judged metrics
--     ci = { resamples = 1000, level = 0.95, seed = 1 }, bottom = 5,
--   })
--
-- Per-row metrics run inside ev.map, so a metric that asks the judge runs
-- concurrently with the others while its code reads sequentially.
local registry = require "evalua.registry"
local results_mod = require "evalua.results"

local function value_of(v)
  -- -> score | nil, reason, unmeasured-reason, detail
  local t = type(v)
  if t == "number" then
    if v ~= v then return nil, nil, "the metric returned NaN" end
    return v
  elseif t == "boolean" then
    return v and 1 or 0
  elseif v == nil then
    return nil, nil, "the metric returned no value"
  elseif t == "table" then
    if v.ok == false or v.unmeasured then
      return nil, v.reason, v.error or v.reason or "unmeasured", v
    end
    local s = v.score
    if type(s) == "boolean" then s = s and 1 or 0 end
    if type(s) == "number" and s == s then return s, v.reason, nil, v end
    return nil, v.reason, "the metric's table has no numeric score", v
  end
  return nil, nil, "the metric returned a " .. t
end

local function record(item, metric, v)
  local score, reason, missing, detail = value_of(v)
  item.scores[metric.name] = score
  if reason then item.reasons[metric.name] = reason end
  if missing then item.unmeasured[metric.name] = missing end
  if detail and metric.keep_detail ~= false then item.details[metric.name] = detail end
end

local function run_batch(metric, rows, items, ctx)
  local ok, values = pcall(metric.batch, rows, ctx)
  if not ok then
    error(("metric '%s' failed: %s"):format(metric.name, tostring(values)), 0)
  end
  if type(values) ~= "table" then
    error(("metric '%s': batch returned %s, not a list"):format(metric.name, type(values)), 0)
  end
  for i, item in ipairs(items) do record(item, metric, values[i]) end
end

-- Every retrieval measure in one C call over all rows.
local function run_retrieval(metrics, rows, items, ctx)
  local names = {}
  for i, m in ipairs(metrics) do names[i] = m.name end
  local cols = registry.retrieval_columns(rows, names, ctx.retrieval)
  for _, m in ipairs(metrics) do
    for i, item in ipairs(items) do record(item, m, cols[m.name][i]) end
  end
end

-- All per-row metrics of one row run in one task of ev.map, so a failing
-- metric is recorded as unmeasured for that row and nothing else.
local function run_rowwise(metrics, rows, items, ctx, spec)
  local map = require "evalua.map"
  map(rows, function(row, i)
    for _, m in ipairs(metrics) do
      local ok, v = pcall(m.fn, row, ctx)
      if not ok then v = { unmeasured = true, error = tostring(v) } end
      record(items[i], m, v)
    end
    return true
  end, { concurrency = spec.concurrency or 16, progress = spec.progress, quiet = spec.quiet,
         label = "evaluating" })
end

local function slice_functions(spec)
  local dims = {}
  for k, v in pairs(spec.slices or {}) do
    if type(k) == "number" then
      dims[#dims + 1] = { name = v, fn = function(row) return row[v] end, pos = k }
    else
      dims[#dims + 1] = { name = k, fn = v, pos = math.huge }
    end
  end
  table.sort(dims, function(a, b)
    if a.pos ~= b.pos then return a.pos < b.pos end
    return a.name < b.name
  end)
  return dims
end

local function make_items(rows, spec, dims)
  local idf, sysf = spec.id or "qid", spec.system
  local items = {}
  for i, row in ipairs(rows) do
    local item = { id = row[idf], row = row, scores = {}, reasons = {}, unmeasured = {},
                   details = {}, slices = {} }
    item.system = sysf and tostring(row[sysf] or "?") or "all"
    for _, d in ipairs(dims) do
      local ok, v = pcall(d.fn, row)
      item.slices[d.name] = ok and v ~= nil and tostring(v) or "(none)"
    end
    items[i] = item
  end
  return items
end

return function(data, spec)
  spec = spec or {}
  local rows = data.rows or data
  if type(rows) ~= "table" then error("evaluate: expected rows or a data set", 2) end
  local metrics = {}
  for i, s in ipairs(spec.metrics or {}) do metrics[i] = registry.resolve(s) end
  if #metrics == 0 then error("evaluate: no metrics given", 2) end
  local dims = slice_functions(spec)
  local items = make_items(rows, spec, dims)
  local ctx = { judge = spec.judge, retrieval = spec.retrieval, options = spec.options or {} }
  local rowwise, retrieval = {}, {}
  for _, m in ipairs(metrics) do
    if m.retrieval then retrieval[#retrieval + 1] = m
    elseif m.batch then run_batch(m, rows, items, ctx)
    else rowwise[#rowwise + 1] = m end
  end
  if #retrieval > 0 then run_retrieval(retrieval, rows, items, ctx) end
  if #rowwise > 0 then run_rowwise(rowwise, rows, items, ctx, spec) end
  return results_mod.build {
    items = items, metrics = metrics, dims = dims, spec = spec,
    dataset = data.rows and data or nil, judge = spec.judge,
  }
end
