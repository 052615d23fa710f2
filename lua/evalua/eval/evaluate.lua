-- ev.evaluate(rows_or_dataset, spec) -> results
-- Runs every metric on every row, then aggregates per system (pipeline
-- variant) and per slice with confidence intervals.
--
--   local res = ev.evaluate(ds, {
--     metrics = { "recall@5", "mrr", "token_f1", my_metric },
--     system = "variant",                         -- field that names the system (optional)
--     slices = { "query_class", lang = function(row) ... end },
--     judge = judge, concurrency = 16,             -- for judged metrics
--     ci = { resamples = 1000, level = 0.95, seed = 1 } | false, bottom = 5,
--   })
--
-- Scores live in C columns. Built-in retrieval and answer metrics run in C
-- over the data set's columns; a metric written in Lua gets row views, and
-- per-row metrics run inside ev.map, so a metric that asks the judge runs
-- concurrently with the others while its code reads sequentially.
local registry = require "evalua.core.registry"
local caught = require "evalua.core.caught"
local results_mod = require "evalua.eval.results"
local dataset = require "evalua.data.dataset"
local T = require "evalua._table"
local trace = require "evalua.judge.trace"

local options = require "evalua.core.options"
local shard = require "evalua.scale.shard"

local KNOWN = options.set { "metrics", "system", "slices", "judge", "concurrency", "ci", "bottom", "id",
                            "retrieval", "options", "progress", "quiet", "meta", "shard" }

local inf = math.huge

-- v -> score | nil, reason (the explanation, or why it is unmeasured), detail
local function value_of(v)
  local t = type(v)
  if t == "number" then
    if v ~= v then return nil, "the metric returned NaN" end
    if v == inf or v == -inf then return nil, "the metric returned an infinite value" end
    return v
  elseif t == "boolean" then
    return v and 1 or 0
  elseif v == nil then
    return nil, "the metric returned no value"
  elseif t == "table" then
    if v.ok == false or v.unmeasured then return nil, v.error or v.reason or "unmeasured", v end
    local s = v.score
    if type(s) == "boolean" then s = s and 1 or 0 end
    if type(s) == "number" and s == s and s ~= inf and s ~= -inf then return s, v.reason, v end
    return nil, "the metric's table has no finite numeric score", v
  end
  return nil, "the metric returned a " .. t
end

-- A row's judge calls (judge/trace.lua) are kept in its detail as
-- judge_calls, a detail of their own when the metric returned a number.
local function recorder(scores, details)
  return function(i, j, metric, v, calls)
    local score, reason, detail = value_of(v)
    scores:set(i, j, score, reason and tostring(reason))
    if calls then
      detail = type(detail) == "table" and detail or {}
      detail.judge_calls = calls
    end
    if detail and metric.keep_detail ~= false then
      local d = details[metric.name] or {}
      details[metric.name] = d
      d[i] = detail
    end
  end
end

local function run_batch(metric, j, ds, record, ctx)
  local ok, values = pcall(metric.batch, ds.rows, ctx)
  if not ok then
    if caught.fatal(values) then error(values, 0) end -- an exit request, a limit, no memory go on
    error(("metric '%s' failed: %s"):format(metric.name, tostring(values)), 0)
  end
  if type(values) ~= "table" then
    error(("metric '%s': batch returned %s, not a list"):format(metric.name, type(values)), 0)
  end
  for i = 1, ds.n do record(i, j, metric, values[i]) end
end

-- An error a metric raises makes that row unmeasured with the message; a
-- request to exit, a limit passed or no memory (core.caught) is passed on. Returns the value and the judge
-- calls it made.
local function guarded(fn, row, ctx)
  trace.begin()
  local ok, v = pcall(fn, row, ctx)
  local calls = trace.finish()
  if ok then return v, calls end
  if caught.fatal(v) then error(v, 0) end
  return { unmeasured = true, error = tostring(v) }, calls
end

-- All per-row metrics of one row run in one task of ev.map.
local function run_rowwise(list, ds, record, ctx, spec)
  local map = require "evalua.client.map"
  local rows = ds.rows
  local idx = {}
  for i = 1, ds.n do idx[i] = i end
  map(idx, function(i)
    local row = rows[i]
    for _, e in ipairs(list) do
      local v, calls = guarded(e.m.fn, row, ctx)
      record(i, e.j, e.m, v, calls)
    end
    return true
  end, { concurrency = spec.concurrency or 16, progress = spec.progress, quiet = spec.quiet,
         label = "evaluating" })
end

local function slice_dims(spec)
  local dims = {}
  for k, v in pairs(spec.slices or {}) do
    if type(k) == "number" then
      dims[#dims + 1] = { name = v, field = v, pos = k }
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

-- Codes of a slice function's values; a function that raises puts the row
-- in "(error)" and the first message is kept in dim.error.
local function function_codes(ds, dim)
  local values = {}
  for i = 1, ds.n do
    local ok, v = pcall(dim.fn, ds.rows[i])
    if not ok then
      if caught.fatal(v) then error(v, 0) end
      dim.errors = (dim.errors or 0) + 1
      dim.error = dim.error or tostring(v)
      values[i] = "(error)"
    else
      values[i] = v ~= nil and tostring(v) or "(none)"
    end
  end
  return T.codes_of(values)
end

-- Codes renumbered so that values come in sorted order.
local function sorted_codes(codes, values)
  local order = {}
  for k = 1, #values do order[k] = k end
  table.sort(order, function(a, b) return values[a] < values[b] end)
  local sorted = {}
  for k, old in ipairs(order) do sorted[k] = values[old] end
  codes:remap(order)
  return codes, sorted
end

local function group_codes(ds, spec, dims)
  local tbl = ds.table
  local sys_codes, systems
  if spec.system then sys_codes, systems = tbl:codes(spec.system, "?")
  else sys_codes, systems = tbl:codes(nil, "all") end
  for _, d in ipairs(dims) do
    local codes, values
    if d.field then codes, values = tbl:codes(d.field, "(none)")
    else codes, values = function_codes(ds, d) end
    d.codes, d.values = sorted_codes(codes, values)
    if d.error then
      io.stderr:write(("evalua: slice '%s' raised on %d rows (put in \"(error)\"): %s\n")
        :format(d.name, d.errors, d.error))
    end
  end
  return sys_codes, systems
end

-- Score columns and details of every metric on every row of ds.
local function compute(ds, metrics, spec)
  local scores = T.scores(ds.n, #metrics)
  local details = {}
  local record = recorder(scores, details)
  local ctx = { judge = spec.judge, retrieval = spec.retrieval, options = spec.options or {} }
  for _, m in ipairs(metrics) do
    if m.check then m.check(ds) end -- bad input refused before any metric runs or asks the judge
  end
  if type(spec.judge) == "table" and spec.judge.check_family then spec.judge:check_family(ds) end
  local builtin, rowwise = {}, {}
  for j, m in ipairs(metrics) do
    if m.builtin then builtin[#builtin + 1] = { j = j, name = m.name, kind = m.builtin }
    elseif m.batch then run_batch(m, j, ds, record, ctx)
    else rowwise[#rowwise + 1] = { j = j, m = m } end
  end
  if #builtin > 0 then scores:eval(ds.table, builtin, spec.retrieval) end
  if #rowwise > 0 then run_rowwise(rowwise, ds, record, ctx, spec) end
  return scores, details
end

-- Under a shard (spec.shard, --shard, $EVALUA_SHARD) only the shard's rows
-- are evaluated, written to its part, and returned as results marked
-- res.shard; under evalua merge the columns come from the parts.
return function(data, spec)
  spec = spec or {}
  options.check(spec, KNOWN, "ev.evaluate", 2)
  local b = spec.bottom
  if b ~= nil and not (type(b) == "number" and b >= 0 and b == math.floor(b)) then
    error(("ev.evaluate: bottom must be a whole number of items, at least 0 (got %s)"):format(tostring(b)), 2)
  end
  local ci = results_mod.ci_spec(spec.ci, 2)
  local ds = getmetatable(data) == dataset.Dataset and data or nil
  if not ds then
    if type(data) ~= "table" then error("evaluate: expected rows or a data set", 2) end
    ds = dataset.from_rows(data)
    ds.implicit = true -- rows given directly: no data set to name in reports
  end
  local metrics = {}
  for i, s in ipairs(spec.metrics or {}) do metrics[i] = registry.resolve(s) end
  if #metrics == 0 then error("evaluate: no metrics given", 2) end
  local args = { metrics = metrics, dims = slice_dims(spec), spec = spec, ci = ci, judge = spec.judge, dataset = ds }
  local s = not shard.merging() and shard.of_spec(spec)
  local rows
  if shard.merging() then
    args.scores = T.scores(ds.n, #metrics)
    local merge = require "evalua.scale.merge"
    args.details, args.judge_stats, args.merged = merge.evaluation(ds, metrics, args.scores, spec.id or "qid")
  else
    if s then rows = shard.rows(ds, spec.id or "qid", s); args.dataset = ds:subset(rows) end
    args.scores, args.details = compute(args.dataset, metrics, spec)
  end
  args.sys_codes, args.systems = group_codes(args.dataset, spec, args.dims)
  local res = results_mod.build(args)
  if s then
    res:attach("shard", { index = s.index, count = s.count, rows = #rows,
                          part = shard.record(ds, rows, res, spec.judge, s) }, "ev.evaluate")
  end
  -- a judge that gave no usable answer is never silent (docs/judge.md)
  local dead = require("evalua.judge.health").line(res, require("evalua.eval.gate").max_judge_failures)
  if dead then
    io.stderr:write(dead, "\n")
    require("evalua.core.run").current():mark_undecided(dead)
  end
  return res
end
