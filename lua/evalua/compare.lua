-- Comparing a run with a baseline from the history, per system, metric and
-- slice: both means, the delta with an arrow, a paired permutation test on
-- items matched by id, and the items that flipped between pass and fail.
--
--   local cmp = ev.compare(res, hist, baseline_record, { alpha = 0.05, pass = { token_f1 = 0.5 } })
--   cmp.rows[i] = { system=, dim=, value=, metric=, before=, after=, delta=, arrow=,
--                   n=, p=, significant=, regression= }
--   cmp.flips[system][metric] = { to_fail = { ids }, to_pass = { ids } }
--   cmp.before[system][id] = { scores = {...} }   (the baseline's item scores)
-- ev.compare also attaches itself to res (res.comparison), so every report
-- format shows it.
local results_mod = require "evalua.results"
local options = require "evalua.options"

local KNOWN = options.set { "alpha", "pass", "resamples", "seed", "system_map" }

local ARROWS = { up = "▲", down = "▼", same = "=" }
local EPS = 1e-9

local function arrow(delta)
  if delta == nil then return "" end
  if delta > EPS then return ARROWS.up elseif delta < -EPS then return ARROWS.down end
  return ARROWS.same
end

local function baseline_mean(rec, system, metric, dim, value)
  local a = rec.aggregates and rec.aggregates[system]
  a = a and a[dim] and a[dim][value] and a[dim][value][metric]
  return a and a.mean
end

-- Scores matched by id between the baseline items and the current items of a slice.
local function pairs_for(res, before_items, system, metric, dim, value)
  local xs, ys = {}, {}
  for _, it in ipairs(res.items) do
    if it.system == system and (dim == "all" or it.slices[dim] == value) then
      local b = before_items[it.id]
      local x, y = b and b.scores and b.scores[metric], it.scores[metric]
      if x ~= nil and y ~= nil then xs[#xs + 1], ys[#ys + 1] = x, y end
    end
  end
  return xs, ys
end

local function flips(res, before_items, system, metric, threshold)
  local to_fail, to_pass = {}, {}
  for _, it in ipairs(res.items) do
    local b = it.system == system and before_items[it.id] or nil
    local x, y = b and b.scores and b.scores[metric], it.scores[metric]
    if x and y then
      if x >= threshold and y < threshold then to_fail[#to_fail + 1] = it.id end
      if x < threshold and y >= threshold then to_pass[#to_pass + 1] = it.id end
    end
  end
  return { to_fail = to_fail, to_pass = to_pass, threshold = threshold }
end

-- compare(res, hist, baseline [, opts]) -> comparison
-- opts.alpha      significance level (default 0.05)
-- opts.pass       per-metric pass thresholds for flips (default 0.5, or metric.threshold)
-- opts.resamples  permutation-test resamples (default 10000), opts.seed
-- opts.system_map { [current system] = baseline system } when names differ
local function compare(res, hist, baseline, opts)
  opts = opts or {}
  options.check(opts, KNOWN, "ev.compare", 2)
  local alpha = opts.alpha or 0.05
  local before = hist:items(baseline)
  local cmp = { baseline = { run_id = baseline.run_id, label = baseline.label, time = baseline.time },
                alpha = alpha, rows = {}, flips = {}, before = {} }
  for _, system in ipairs(res.systems) do
    local bsys = (opts.system_map or {})[system] or system
    local before_items = before[bsys] or {}
    cmp.flips[system] = {}
    cmp.before[system] = before_items -- per-item baseline scores, for the CSV report
    for _, m in ipairs(res.metrics) do
      for _, d in ipairs(res.dims) do
        for _, v in ipairs(res:values_of(system, d)) do
          local a = res:agg(system, m.name, d, v)
          local row = { system = system, dim = d, value = v, metric = m.name,
                        before = baseline_mean(baseline, bsys, m.name, d, v), after = a and a.mean }
          if row.before and row.after then row.delta = row.after - row.before end
          row.arrow = arrow(row.delta)
          local xs, ys = pairs_for(res, before_items, system, m.name, d, v)
          local t = results_mod.paired(xs, ys, opts)
          row.n, row.p = t.n, t.p
          row.significant = t.p ~= nil and t.p < alpha
          local worse = row.delta and (m.higher_is_better and row.delta < -EPS or not m.higher_is_better and row.delta > EPS)
          row.regression = row.significant and worse or false
          cmp.rows[#cmp.rows + 1] = row
        end
      end
      local threshold = (opts.pass or {})[m.name] or m.threshold or 0.5
      cmp.flips[system][m.name] = flips(res, before_items, system, m.name, threshold)
    end
  end
  res.comparison = cmp
  return cmp
end

return compare
