-- The results object every report, history record and gate reads:
--   res.items[i]   = { id=, system=, row=, scores={metric=number}, reasons={},
--                      unmeasured={metric=reason}, details={}, slices={dim=value} }
--   res.metrics    = ordered metric tables;  res.systems = ordered system names
--   res.dims       = ordered slice dimensions ("all" first)
--   res:agg(system, metric [, dim, value]) = { n=, measured=, mean=, sd=, lo=, hi= }
--   res.worst[system][metric] = { dim=, value=, mean= }   (lowest slice mean)
--   res.bottom[system][metric] = the k lowest items
--   res.meta       = evalua version, time, data set hash, judge accounting ...
-- An unmeasured item never enters a mean: aggregates carry coverage
-- (measured of n) instead, and a slice with nothing measured has mean nil.
local stats = require "evalua.stats"
local sys = require "evalua._sys"

local Results = {}
Results.__index = Results

local M = {}

local function ordered_unique(items, key)
  local seen, out = {}, {}
  for _, it in ipairs(items) do
    local v = key(it)
    if not seen[v] then seen[v], out[#out + 1] = true, v end
  end
  return out
end

local function summarise(scores, n, ci)
  local a = { n = n, measured = #scores }
  if #scores == 0 then return a end
  a.mean = stats.mean(scores)
  a.sd = #scores > 1 and stats.sd(scores) or 0
  a.min, a.max = stats.min(scores), stats.max(scores)
  if ci and #scores > 1 then
    local c = stats.bootstrap_ci(scores, ci)
    a.lo, a.hi = c.lo, c.hi
  else
    a.lo, a.hi = a.mean, a.mean
  end
  return a
end

-- Items bucketed once: buckets[system][dim][value] = list of items.
local function bucket(res)
  local b = {}
  for _, system in ipairs(res.systems) do
    b[system] = {}
    for _, d in ipairs(res.dims) do
      b[system][d] = {}
      for _, v in ipairs(res.slice_values[d]) do b[system][d][v] = {} end
    end
  end
  for _, it in ipairs(res.items) do
    local per = b[it.system]
    for _, d in ipairs(res.dims) do
      local list = per[d][d == "all" and "all" or it.slices[d]]
      list[#list + 1] = it
    end
  end
  return b
end

local function aggregate(res, ci)
  local buckets = bucket(res)
  res.aggregates = {}
  for _, system in ipairs(res.systems) do
    res.aggregates[system] = {}
    for _, d in ipairs(res.dims) do
      res.aggregates[system][d] = {}
      for _, value in ipairs(res.slice_values[d]) do
        local cell, list = {}, buckets[system][d][value]
        res.aggregates[system][d][value] = cell
        for _, m in ipairs(res.metrics) do
          local scores = {}
          for _, it in ipairs(list) do
            local s = it.scores[m.name]
            if s ~= nil then scores[#scores + 1] = s end
          end
          cell[m.name] = summarise(scores, #list, ci)
        end
      end
    end
  end
end

-- The slice with the lowest mean (highest when lower is better) per system and metric.
local function find_worst(res)
  res.worst = {}
  for _, system in ipairs(res.systems) do
    res.worst[system] = {}
    for _, m in ipairs(res.metrics) do
      local worst
      for _, d in ipairs(res.dims) do
        if d ~= "all" then
          for _, value in ipairs(res.slice_values[d]) do
            local a = res.aggregates[system][d][value][m.name]
            local worse = worst and (m.higher_is_better and a.mean and a.mean < worst.mean
                                     or not m.higher_is_better and a.mean and a.mean > worst.mean)
            if a.mean and (not worst or worse) then
              worst = { dim = d, value = value, mean = a.mean, measured = a.measured }
            end
          end
        end
      end
      res.worst[system][m.name] = worst
    end
  end
end

local function reason_of(it, metric)
  return it.reasons[metric] or it.unmeasured[metric]
end

local function find_bottom(res, k)
  res.bottom = {}
  for _, system in ipairs(res.systems) do
    res.bottom[system] = {}
    for _, m in ipairs(res.metrics) do
      local pool = {}
      for idx, it in ipairs(res.items) do
        if it.system == system and it.scores[m.name] ~= nil then pool[#pool + 1] = { it = it, idx = idx } end
      end
      table.sort(pool, function(a, b)
        local sa, sb = a.it.scores[m.name], b.it.scores[m.name]
        if sa ~= sb then
          if m.higher_is_better then return sa < sb end
          return sa > sb
        end
        return a.idx < b.idx
      end)
      local list = {}
      for i = 1, math.min(k, #pool) do
        local it = pool[i].it
        list[i] = { id = it.id, score = it.scores[m.name], query = it.row.query,
                    answer = it.row.answer, reason = reason_of(it, m.name) }
      end
      res.bottom[system][m.name] = list
    end
  end
end

local function iso_time(t)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(t))
end

local function metadata(args)
  local ev = require "evalua"
  local meta = { evalua = ev.version, time = iso_time(sys.now()) }
  local ds = args.dataset
  if ds then
    meta.dataset = { path = ds.path, hash = ds.hash, rows = #ds.rows, skipped = #ds.skipped,
                     sampling = ds.sampling }
  end
  if args.judge and args.judge.stats then meta.judge = args.judge:stats() end
  for k, v in pairs(args.spec.meta or {}) do meta[k] = v end
  return meta
end

-- build{items=, metrics=, dims=, spec=, dataset=, judge=} -> results
function M.build(args)
  local spec = args.spec
  local res = setmetatable({ items = args.items, metrics = args.metrics }, Results)
  res.systems = ordered_unique(res.items, function(it) return it.system end)
  res.dims = { "all" }
  res.slice_values = { all = { "all" } }
  for _, d in ipairs(args.dims) do
    res.dims[#res.dims + 1] = d.name
    local values = ordered_unique(res.items, function(it) return it.slices[d.name] end)
    table.sort(values)
    res.slice_values[d.name] = values
  end
  res.ci = spec.ci == false and false or {
    resamples = (spec.ci or {}).resamples or 1000, level = (spec.ci or {}).level or 0.95,
    seed = (spec.ci or {}).seed or 1 }
  aggregate(res, res.ci)
  find_worst(res)
  find_bottom(res, spec.bottom or 5)
  res.skipped = args.dataset and args.dataset.skipped or {}
  res.meta = metadata(args)
  return res
end

function Results:agg(system, metric, dim, value)
  dim = dim or "all"
  local d = self.aggregates[system] and self.aggregates[system][dim]
  local cell = d and d[value or (dim == "all" and "all")]
  return cell and cell[metric]
end

function Results:metric(name)
  for _, m in ipairs(self.metrics) do
    if m.name == name then return m end
  end
end

-- Paired comparison of two systems of this run on items matched by id:
-- { n=, mean_a=, mean_b=, delta=, p= } with a paired permutation test.
function Results:compare(a, b, metric, opts)
  local byid = {}
  for _, it in ipairs(self.items) do
    if it.system == a and it.scores[metric] ~= nil then byid[it.id] = it.scores[metric] end
  end
  local xs, ys = {}, {}
  for _, it in ipairs(self.items) do
    local x = byid[it.id]
    if it.system == b and x ~= nil and it.scores[metric] ~= nil then
      xs[#xs + 1], ys[#ys + 1] = x, it.scores[metric]
    end
  end
  return M.paired(xs, ys, opts)
end

-- paired(xs, ys) -> { n=, mean_a=, mean_b=, delta = mean_b - mean_a, p= }
function M.paired(xs, ys, opts)
  local out = { n = #xs }
  if #xs == 0 then return out end
  out.mean_a, out.mean_b = stats.mean(xs), stats.mean(ys)
  out.delta = out.mean_b - out.mean_a
  if #xs > 1 then
    out.p = stats.paired_permutation(xs, ys, { resamples = (opts or {}).resamples or 10000,
                                              seed = (opts or {}).seed or 1 }).p
  end
  return out
end

-- Items of one system, in input order.
function Results:items_of(system)
  local out = {}
  for _, it in ipairs(self.items) do
    if it.system == system then out[#out + 1] = it end
  end
  return out
end

M.Results = Results
return M
