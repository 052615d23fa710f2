-- Comparing a run with a baseline from the history, per system, metric and
-- slice: both means, the delta with an arrow, a paired permutation test on
-- items matched by id, and the items that flipped between pass and fail.
--
--   local cmp = ev.compare(res, hist, baseline_record, { alpha = 0.05, pass = { token_f1 = 0.5 } })
--   cmp.rows[i] = { system=, dim=, value=, metric=, before=, after=, delta=, arrow=,
--                   n=, p=, significant=, regression=,
--                   ci = { delta=, lo=, hi=, method=, level= } }
--   (ci: the interval of the mean paired difference over the n items matched
--   by id, which is delta when every item is matched)
--   cmp.flips[system][metric] = { to_fail = { ids }, to_pass = { ids } }
--   cmp.before[system][id] = { scores = {...} }   (the baseline's item scores)
--   cmp.baseline_scores   a score column: row i's item's baseline score of
--                         metric j (what the CSV report writes beside each)
--   cmp.warnings = { "judge model changed: ...", ... }  (what makes the runs unlike)
-- ev.compare also attaches itself to res (res.comparison), so every report
-- format shows it.
--
-- The systems of one run against a baseline system, on items matched by id:
--   local sc = ev.compare.systems(res, { baseline = "bm25", alpha = 0.05 })
--   sc.rows[i] = { system=, metric=, n=, base=, mean=, delta=, arrow=, p=, significant=, better=,
--                  ci = { lo=, hi=, method=, level= } }   (the interval of delta)
-- also attached as res.system_comparison.
--
-- Everything reads the score columns: one pass over the rows per system and
-- metric, never a Lua table per row.
local results_mod = require "evalua.eval.results"
local rows_by_system, pair_systems = results_mod.rows_by_system, results_mod.pair_systems
local options = require "evalua.core.options"
local history = require "evalua.history"
local T = require "evalua._table"

local KNOWN = options.set { "alpha", "pass", "resamples", "seed", "system_map" }
local SYSTEMS_KNOWN = options.set { "baseline", "alpha", "resamples", "seed" }

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

-- The slice code of each of rows, per dimension other than "all".
local function slice_codes(res, rows)
  local out = {}
  for _, d in ipairs(res.dims) do
    if d ~= "all" then
      local c, list = res.dim_codes[d], {}
      for k, i in ipairs(rows) do list[k] = c:get(i) end
      out[d] = list
    end
  end
  return out
end

local function push(pair, x, y)
  local n = #pair[1] + 1
  pair[1][n], pair[2][n] = x, y
end

-- One pass over a system's rows for metric j: the (baseline, current)
-- pairs of the whole run and of every slice, and the pass/fail flips; each
-- row's baseline score into the column base.
local function paired_scores(res, rows, ids, codes, j, before_items, metric, threshold, base)
  local all, by = { {}, {} }, {}
  for d in pairs(codes) do by[d] = {} end
  local to_fail, to_pass = {}, {}
  local scores = res.scores
  for k, i in ipairs(rows) do
    local b = before_items[ids[k]]
    local x = b and b.scores and b.scores[metric]
    if math.type(x) and x - x == 0 then base:set(i, j, x) end -- a finite number
    local y = x ~= nil and scores:get(i, j) or nil
    if y ~= nil then
      push(all, x, y)
      for d, list in pairs(codes) do
        local c = list[k]
        by[d][c] = by[d][c] or { {}, {} }
        push(by[d][c], x, y)
      end
      if x >= threshold and y < threshold then to_fail[#to_fail + 1] = ids[k] end
      if x < threshold and y >= threshold then to_pass[#to_pass + 1] = ids[k] end
    end
  end
  return all, by, { to_fail = to_fail, to_pass = to_pass, threshold = threshold }
end

local function code_index(res)
  local out = {}
  for _, d in ipairs(res.dims) do
    out[d] = {}
    for c, v in ipairs(res.slice_values[d]) do out[d][v] = c end
  end
  return out
end

local function worse(metric, delta)
  return delta ~= nil and (metric.higher_is_better and delta < -EPS or not metric.higher_is_better and delta > EPS)
end

-- The fingerprints a run saw, in a stable order (they arrive as answers do).
local function sorted_text(list)
  local copy = {}
  for i, v in ipairs(list or {}) do copy[i] = tostring(v) end
  table.sort(copy)
  return table.concat(copy, ", ")
end

-- unlike(now, before) -> what makes two runs unlike, one sentence each:
-- another judge model or fingerprint, another data set, other metric
-- definitions. Each side is { judge = {model=, system_fingerprints=},
-- dataset = {hash=, rows=}, definitions = {[metric] = hash} }; now.metrics
-- lists the metric names to check.
local function unlike(now, before)
  local out = {}
  local jn, jb = now.judge or {}, before.judge or {}
  if (jn.model or jb.model) and jn.model ~= jb.model then
    out[#out + 1] = ("judge model changed: %s in the baseline, %s now; judged scores are not comparable")
      :format(tostring(jb.model or "none"), tostring(jn.model or "none"))
  else
    local a, b = sorted_text(jb.system_fingerprints), sorted_text(jn.system_fingerprints)
    if a ~= "" and b ~= "" and a ~= b then
      out[#out + 1] = ("judge fingerprint changed: %s in the baseline, %s now (the served model was updated)")
        :format(a, b)
    end
  end
  local da, db = before.dataset, now.dataset
  if da and db and da.hash ~= db.hash then
    out[#out + 1] = ("data set changed: sha256 %s (%s rows) in the baseline, %s (%s rows) now")
      :format(tostring(da.hash):sub(1, 12), tostring(da.rows), tostring(db.hash):sub(1, 12), tostring(db.rows))
  end
  local defs = before.definitions
  if defs and now.definitions then
    for _, name in ipairs(now.metrics or {}) do
      if defs[name] == nil then
        out[#out + 1] = ("metric %s is not in the baseline"):format(name)
      elseif now.definitions[name] and defs[name] ~= now.definitions[name] then
        out[#out + 1] = ("metric %s is defined differently from the baseline (description or options changed)")
          :format(name)
      end
    end
  end
  return out
end

local function warnings(res, baseline)
  local names, defs = {}, {}
  for i, m in ipairs(res.metrics) do names[i], defs[m.name] = m.name, history.definition(m) end
  return unlike({ judge = res.meta.judge, dataset = res.meta.dataset, definitions = defs, metrics = names },
                { judge = baseline.judge, dataset = baseline.dataset, definitions = baseline.metric_definitions })
end

-- compare(res, hist, baseline [, opts]) -> comparison
-- opts.alpha      significance level (default 0.05)
-- opts.pass       per-metric pass thresholds for flips (default 0.5, or metric.threshold)
-- opts.resamples  permutation-test resamples (default 10000), opts.seed
-- opts.system_map { [current system] = baseline system } when names differ
local function compare(res, hist, baseline, opts)
  opts = opts or {}
  options.check(opts, KNOWN, "ev.compare", 2)
  results_mod.check_resampling(opts, "ev.compare: ", 2)
  local alpha = opts.alpha or 0.05
  local before = hist:items(baseline)
  local cmp = { baseline = { run_id = baseline.run_id, label = baseline.label, time = baseline.time },
                alpha = alpha, rows = {}, flips = {}, before = {}, warnings = warnings(res, baseline),
                baseline_scores = T.scores(res.n, #res.metrics) }
  local rows, ids = rows_by_system(res)
  local index = code_index(res)
  for s, system in ipairs(res.systems) do
    local bsys = (opts.system_map or {})[system] or system
    local before_items = before[bsys] or {}
    local codes = slice_codes(res, rows[s])
    cmp.flips[system] = {}
    cmp.before[system] = before_items -- per-item baseline scores, for the CSV report
    for j, m in ipairs(res.metrics) do
      local threshold = (opts.pass or {})[m.name] or m.threshold or 0.5
      local all, by, flips = paired_scores(res, rows[s], ids[s], codes, j, before_items, m.name, threshold,
                                           cmp.baseline_scores)
      for _, d in ipairs(res.dims) do
        for _, v in ipairs(res:values_of(system, d)) do
          local a = res:agg(system, m.name, d, v)
          local row = { system = system, dim = d, value = v, metric = m.name,
                        before = baseline_mean(baseline, bsys, m.name, d, v), after = a and a.mean }
          if row.before and row.after then row.delta = row.after - row.before end
          row.arrow = arrow(row.delta)
          local pair = d == "all" and all or by[d][index[d][v]] or { {}, {} }
          local t = results_mod.paired(pair[1], pair[2], opts)
          row.n, row.p = t.n, t.p
          if t.ci then row.ci = { delta = t.delta, lo = t.ci.lo, hi = t.ci.hi, method = t.ci.method, level = t.ci.level } end
          row.significant = t.p ~= nil and t.p < alpha
          row.regression = row.significant and worse(m, row.delta) or false
          cmp.rows[#cmp.rows + 1] = row
        end
      end
      cmp.flips[system][m.name] = flips
    end
  end
  return res:attach("comparison", cmp, "ev.compare")
end

-- systems(res, {baseline=, alpha=, resamples=, seed=}) -> the systems of
-- this run against the baseline system, per metric over the whole run.
local function systems(res, opts)
  opts = opts or {}
  options.check(opts, SYSTEMS_KNOWN, "ev.compare.systems", 2)
  results_mod.check_resampling(opts, "ev.compare.systems: ", 2)
  local base = opts.baseline or res.systems[1]
  local known = false
  for _, s in ipairs(res.systems) do known = known or s == base end
  if not known then
    error(("ev.compare.systems: no system '%s' in this run (systems: %s)")
      :format(tostring(base), table.concat(res.systems, ", ")), 2)
  end
  local alpha = opts.alpha or 0.05
  local out = { baseline = base, alpha = alpha, rows = {} }
  local rows, ids = rows_by_system(res)
  for _, system in ipairs(res.systems) do
    if system ~= base then
      for j, m in ipairs(res.metrics) do
        local xs, ys = pair_systems(res, base, system, j, rows, ids)
        local t = results_mod.paired(xs, ys, { resamples = opts.resamples, seed = opts.seed })
        local row = { system = system, metric = m.name, n = t.n, base = t.mean_a, mean = t.mean_b,
                      delta = t.delta, arrow = arrow(t.delta), p = t.p, ci = t.ci }
        row.significant = t.p ~= nil and t.p < alpha
        row.better = row.significant and not worse(m, t.delta) and math.abs(t.delta) > EPS or false
        row.worse = row.significant and worse(m, t.delta) or false
        out.rows[#out.rows + 1] = row
      end
    end
  end
  return res:attach("system_comparison", out, "ev.compare.systems")
end

return setmetatable({ systems = systems, unlike = unlike, arrow = arrow, worse = worse }, {
  __call = function(_, ...) return compare(...) end,
})
