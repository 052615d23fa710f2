-- The results object every report, history record and gate reads:
--   res.scores     = the score columns (C): res.scores:get(i, j) -> score|nil, reason
--   res.items[i]   = { id=, system=, row=, scores={metric=number}, reasons={},
--                      unmeasured={metric=reason}, details={}, slices={dim=value} },
--                    built from the columns when first read
--   res.metrics    = ordered metric tables;  res.systems = ordered system names
--   res.dims       = ordered slice dimensions ("all" first); res.slice_values[dim]
--   res:agg(system, metric [, dim, value]) = { n=, measured=, mean=, sd=, lo=, hi=, ci_method= }
--                    (lo, hi and ci_method only where an interval was computed)
--   res.worst[system][metric] = { dim=, value=, mean= }   (lowest slice mean)
--   res.bottom[system][metric] = the k lowest items
--   res.meta       = evalua version, time, data set hash, judge accounting ...
-- An unmeasured item never enters a mean: aggregates carry coverage
-- (measured of n) instead, and a slice with nothing measured has mean nil.
-- Aggregates, bottom-k and intervals are computed in C over the columns.
local options = require "evalua.core.options"
local stats = require "evalua.eval.stats"
local sys = require "evalua._sys"

local Results = {}
Results.__index = Results

local M = {}

local function names_of(metrics)
  local out = {}
  for j, m in ipairs(metrics) do out[j] = m.name end
  return out
end

-- One C pass per dimension: aggregates[system][dim][value][metric], for
-- the groups that have rows; present[system][dim] lists their values.
local function aggregate(res, ci)
  local names = names_of(res.metrics)
  res.aggregates, res.present = {}, {}
  for _, system in ipairs(res.systems) do res.aggregates[system], res.present[system] = {}, {} end
  for _, d in ipairs(res.dims) do
    local per, present = res.scores:aggregate(res.sys_codes, res.systems, names, res.dim_codes[d],
                                              res.slice_values[d], ci)
    for system, cells in pairs(per) do res.aggregates[system][d] = cells end
    for system, values in pairs(present) do res.present[system][d] = values end
  end
end

-- The slice with the lowest mean (highest when lower is better) per system
-- and metric; none when another slice has the same mean, as a marker on a
-- tie (every slice at 1.000) would point at nothing in particular.
local function find_worst(res)
  res.worst = {}
  for _, system in ipairs(res.systems) do
    res.worst[system] = {}
    for _, m in ipairs(res.metrics) do
      local worst, tied
      for _, d in ipairs(res.dims) do
        if d ~= "all" then
          for _, value in ipairs(res:values_of(system, d)) do
            local a = res.aggregates[system][d][value][m.name]
            if a.mean and worst and a.mean == worst.mean then
              tied = true
            elseif a.mean and (not worst or (m.higher_is_better and a.mean < worst.mean)
                               or (not m.higher_is_better and a.mean > worst.mean)) then
              worst, tied = { dim = d, value = value, mean = a.mean, measured = a.measured }, false
            end
          end
        end
      end
      res.worst[system][m.name] = not tied and worst or nil
    end
  end
end

-- The lowest items are a digest: their texts are cut at DIGEST bytes (the
-- JSON report's items keep every value whole).
local DIGEST = 1000

local function field(res, i, key, max)
  if res.dataset.lua_rows then
    local v = res.dataset.rows[i][key]
    if max and type(v) == "string" and #v > max then
      local cut = max
      while cut > 0 and (v:byte(cut + 1) or 0) & 0xC0 == 0x80 do cut = cut - 1 end
      v = v:sub(1, cut) .. "…"
    end
    return v
  end
  local v, kind = res.dataset.table:get(i, key, max)
  if kind == "json" then return res.dataset.rows[i][key] end
  return v
end

-- A bounded heap per system and metric in C; only the k rows are read.
local function find_bottom(res, k)
  res.bottom = {}
  for _, system in ipairs(res.systems) do res.bottom[system] = {} end
  local idf = res.id_field
  for j, m in ipairs(res.metrics) do
    local per = res.scores:bottom(j, res.sys_codes, math.tointeger(math.min(k, math.maxinteger)), not m.higher_is_better)
    for s, system in ipairs(res.systems) do
      local list = {}
      for r, i in ipairs(per[s]) do
        local score, reason = res.scores:get(i, j)
        list[r] = { id = field(res, i, idf), score = score, reason = reason,
                    query = field(res, i, "query", DIGEST), answer = field(res, i, "answer", DIGEST) }
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
  if ds and not ds.implicit then
    meta.dataset = { path = ds.path, hash = ds.hash, rows = ds.n, skipped = #ds.skipped,
                     sampling = ds.sampling }
  end
  if args.judge_stats then meta.judge = args.judge_stats
  elseif args.judge and args.judge.stats then meta.judge = args.judge:stats() end
  if args.merged and #args.merged.missing > 0 then
    -- a merge without some shards says which; a whole merge equals the one-process run
    meta.shards = { count = args.merged.shards, missing = args.merged.missing, rows_merged = args.merged.rows }
  end
  for k, v in pairs(args.spec.meta or {}) do meta[k] = v end
  return meta
end

-- res.items[i], built on first use from the columns and kept.
local function item_list(res)
  local ds, n = res.dataset, res.dataset.n
  return setmetatable({}, {
    __len = function() return n end,
    __index = function(items, i)
      if math.type(i) ~= "integer" or i < 1 or i > n then return nil end
      local row = ds.rows[i]
      local it = { id = row[res.id_field], row = row, scores = {}, reasons = {}, unmeasured = {},
                   details = {}, slices = {}, system = res.systems[res.sys_codes:get(i)] }
      for j, m in ipairs(res.metrics) do
        local score, reason = res.scores:get(i, j)
        it.scores[m.name] = score
        if score == nil then it.unmeasured[m.name] = reason or "unmeasured"
        elseif reason then it.reasons[m.name] = reason end
        local d = res.details[m.name]
        if d and d[i] ~= nil then it.details[m.name] = d[i] end
      end
      for _, d in ipairs(res.dims) do
        if d ~= "all" then it.slices[d] = res.slice_values[d][res.dim_codes[d]:get(i)] end
      end
      rawset(items, i, it)
      return it
    end,
  })
end

local CI_KNOWN = options.set { "resamples", "level", "seed", "bootstrap_max", "draw_budget" }

local function whole(v) return type(v) == "number" and math.tointeger(v) ~= nil end

local function bad(what, key, rule, v, level)
  local shown = v ~= v and "NaN" or type(v) == "string" and ("'%s'"):format(v) or tostring(v)
  error(("%s%s must be %s (got %s)"):format(what, key, rule, shown), level + 1)
end

-- check_resampling(opts, what, level) -> resamples, seed (integers or nil):
-- resamples from 1 to ev.stats.max_resamples, seed a whole number; what
-- prefixes the key in the message ("ev.compare: "), level as for error().
-- (and alpha, the significance level of the comparisons that take one)
function M.check_resampling(opts, what, level)
  local r, s = opts.resamples, opts.seed
  if r ~= nil and not (whole(r) and r >= 1 and r <= stats.max_resamples) then
    bad(what, "resamples", ("a whole number from 1 to %d"):format(stats.max_resamples), r, level + 1)
  end
  if s ~= nil and not whole(s) then bad(what, "seed", "a whole number", s, level + 1) end
  local a = opts.alpha
  if a ~= nil and not (type(a) == "number" and a > 0 and a < 1) then
    bad(what, "alpha", "a number between 0 and 1 (a significance level such as 0.05)", a, level + 1)
  end
  return r and math.tointeger(r), s and math.tointeger(s)
end

-- ci_spec(ci, level) -> the interval options of ev.evaluate, checked before
-- any metric runs (a bad value would otherwise surface after the paid work,
-- as an argument error of the C aggregation), or false.
function M.ci_spec(ci, level)
  if ci == false then return false end
  if ci ~= nil and type(ci) ~= "table" then bad("ev.evaluate: ", "ci", "a table or false", ci, level + 1) end
  ci = ci or {}
  options.check(ci, CI_KNOWN, "ev.evaluate: ci", level + 1)
  local what = "ev.evaluate: ci."
  local resamples, seed = M.check_resampling(ci, what, level + 1)
  local lv = ci.level
  if lv ~= nil and not (type(lv) == "number" and lv > 0 and lv < 1) then
    bad(what, "level", "a number between 0 and 1, exclusive", lv, level + 1)
  end
  local most = ci.bootstrap_max
  if most ~= nil and not (whole(most) and most >= 0) then bad(what, "bootstrap_max", "a whole number of rows, at least 0", most, level + 1) end
  local budget = ci.draw_budget
  if budget ~= nil and not (type(budget) == "number" and budget >= 0 and budget < math.huge) then
    bad(what, "draw_budget", "a finite number of draws, at least 0", budget, level + 1)
  end
  return { resamples = resamples or 1000, level = lv or 0.95, seed = seed or 1,
           bootstrap_max = most and math.tointeger(most) or 2000, draw_budget = budget or 2e7 }
end

-- How reports name the interval methods (docs/stats.md, "Intervals of a
-- mean"), in the order they are listed.
local CI_METHODS = {
  { "clopper_pearson", "Clopper-Pearson for 0/1 scores" },
  { "korn_graubard", "Clopper-Pearson at the effective sample size (Korn-Graubard) for other scores in [0, 1]" },
  { "bootstrap_t", "the studentized bootstrap (%d resamples) for scores beyond [0, 1]" },
  { "student_t", "Student's t for scores beyond [0, 1] in groups past the bootstrap's limits" },
  { "constant", "none where every value is equal" },
}

-- ci_methods(res) -> the set of ci_method values among the run's aggregates.
function M.ci_methods(res)
  local seen = {}
  for _, per_dim in pairs(res.aggregates or {}) do
    for _, cells in pairs(per_dim) do
      for _, metrics in pairs(cells) do
        for _, a in pairs(metrics) do
          if a.ci_method then seen[a.ci_method] = true end
        end
      end
    end
  end
  return seen
end

-- ci_note(res) -> "95% confidence intervals: Clopper-Pearson for 0/1 scores; ..."
-- naming the methods the run's intervals use, or nil when it has none.
function M.ci_note(res)
  if not res.ci then return nil end
  local seen, parts = M.ci_methods(res), {}
  for _, m in ipairs(CI_METHODS) do
    if seen[m[1]] then parts[#parts + 1] = m[2]:format(res.ci.resamples) end
  end
  if #parts == 0 then return nil end
  return ("%g%% confidence intervals: %s (docs/stats.md)"):format(res.ci.level * 100, table.concat(parts, "; "))
end

-- interval_text(a, num) -> "[lo, hi]", "[all equal]" where every value is
-- equal (no spread to estimate an interval from), or nil without one.
function M.interval_text(a, num)
  if not (a and a.lo and a.hi) then return nil end
  if a.ci_method == "constant" then return "[all equal]" end
  return ("[%s, %s]"):format(num(a.lo), num(a.hi))
end

-- How reports name the methods of a paired difference's interval
-- (docs/stats.md, "Interval of a paired difference").
local PAIRED_METHODS = {
  { "mover", "MOVER from each system's own interval for scores in [0, 1]" },
  { "bootstrap_t", "the studentized bootstrap of the differences beyond [0, 1]" },
  { "student_t", "Student's t of the differences beyond [0, 1]" },
  { "constant", "none where every difference is equal" },
}

-- paired_note(rows) -> "95% interval of the mean paired difference: MOVER ...",
-- naming the methods of the rows' ci, or nil when no row has one.
function M.paired_note(rows)
  local seen, level = {}, nil
  for _, r in ipairs(rows) do
    if r.ci then seen[r.ci.method], level = true, r.ci.level end
  end
  local parts = {}
  for _, m in ipairs(PAIRED_METHODS) do
    if seen[m[1]] then parts[#parts + 1] = m[2] end
  end
  if #parts == 0 then return nil end
  return ("%g%% interval of the mean paired difference over the items matched by id: %s (docs/stats.md)")
    :format(level * 100, table.concat(parts, "; "))
end

-- paired_text(row, num) -> the interval of a comparison row's difference,
-- "[lo, hi]", with the paired difference it surrounds when that differs
-- from the row's delta (items measured on one side only), or "-".
function M.paired_text(row, num)
  local ci = row.ci
  if not ci then return "-" end
  local s = ci.method == "constant" and "[all equal]" or ("[%s, %s]"):format(num(ci.lo), num(ci.hi))
  if ci.delta and row.delta and num(ci.delta) ~= num(row.delta) then s = s .. (" (paired: %s)"):format(num(ci.delta)) end
  return s
end

-- build{dataset=, scores=, details=, metrics=, dims=, sys_codes=, systems=, spec=, ci=, judge=} -> results
-- (ci: M.ci_spec(spec.ci))
function M.build(args)
  local spec = args.spec
  local res = setmetatable({ dataset = args.dataset, scores = args.scores, details = args.details,
                             metrics = args.metrics, systems = args.systems, sys_codes = args.sys_codes,
                             n = args.dataset.n, id_field = spec.id or "qid", metric_index = {} }, Results)
  for j, m in ipairs(res.metrics) do res.metric_index[m.name] = j end
  res.dims = { "all" }
  res.slice_values = { all = { "all" } }
  res.dim_codes = {}
  res.slice_errors = {}
  for _, d in ipairs(args.dims) do
    res.dims[#res.dims + 1] = d.name
    res.slice_values[d.name] = d.values
    res.dim_codes[d.name] = d.codes
    if d.error then res.slice_errors[d.name] = { rows = d.errors, error = d.error } end
  end
  res.ci = args.ci
  aggregate(res, res.ci)
  find_worst(res)
  find_bottom(res, spec.bottom or 5)
  res.items = item_list(res)
  res.skipped = args.dataset.skipped or {}
  res.meta = metadata(args)
  return res
end

-- Measured scores of one system and metric, in row order.
function Results:scores_of(system, metric)
  for j, m in ipairs(self.metrics) do
    if m.name == metric then
      for s, name in ipairs(self.systems) do
        if name == system then return self.scores:column(j, self.sys_codes, s) end
      end
      return {}
    end
  end
  return {}
end

-- The values of dim that system has rows in, in slice order.
function Results:values_of(system, dim)
  local p = self.present and self.present[system]
  return p and p[dim] or {}
end

-- A group without rows (a system that has no row of that slice) has n = 0.
function Results:agg(system, metric, dim, value)
  dim = dim or "all"
  if not self.aggregates[system] or not self.metric_index[metric] then return nil end
  local d = self.aggregates[system][dim]
  local cell = d and d[value or (dim == "all" and "all")]
  return cell and cell[metric] or { n = 0, measured = 0 }
end

-- Sections other code adds to a run's results, each through attach:
--   comparison         ev.compare(res, history, baseline)
--   system_comparison  ev.compare.systems(res, {baseline=})
--   trend              history:trend(res, n)
--   gates              ev.gate.check(res, spec)
--   shard              ev.evaluate under --shard (docs/scale.md)
-- and any name of a user's own (a custom report reads res[name]). A name is
-- attached once per owner: the same owner may replace its section, another
-- may not, and the fields evaluate computes cannot be replaced at all.
local CORE = options.set { "dataset", "scores", "details", "metrics", "systems", "sys_codes", "n", "id_field",
                           "metric_index", "dims", "slice_values", "dim_codes", "slice_errors", "ci",
                           "aggregates", "present", "worst", "bottom", "items", "skipped", "meta", "sections" }

-- A shard's results (res.shard, attached by ev.evaluate under --shard) are a
-- part of a run: its reports, gates and history come from evalua merge
-- (docs/scale.md). True for a part, which says so on stderr once; the
-- writers of reports, gates and history ask this instead of the shard module.
local said_part = false
function Results:is_part()
  local s = self.shard
  if not s then return false end
  if not said_part then
    said_part = true
    io.stderr:write(("evalua: shard %d/%d: %d rows evaluated into %s; reports, gates and history come from evalua merge\n")
      :format(s.index, s.count, s.rows, s.part))
  end
  return true
end

-- res:attach(name, value, owner) -> value; res.sections[name] = owner.
function Results:attach(name, value, owner)
  if type(name) ~= "string" or name == "" then error("res:attach: a section needs a name", 2) end
  if CORE[name] then error(("res:attach: '%s' is computed by ev.evaluate and cannot be replaced"):format(name), 2) end
  owner = owner or "script"
  self.sections = self.sections or {}
  local had = self.sections[name]
  if had and had ~= owner then
    error(("res:attach: section '%s' belongs to %s, not %s"):format(name, had, owner), 2)
  end
  self.sections[name], self[name] = owner, value
  return value
end

function Results:metric(name)
  for _, m in ipairs(self.metrics) do
    if m.name == name then return m end
  end
end

-- The rows of each system in row order (one pass over the system codes)
-- and their ids.
local function rows_by_system(res)
  local rows, ids = {}, {}
  for s = 1, #res.systems do rows[s], ids[s] = {}, {} end
  local codes = res.sys_codes
  for i = 1, res.n do
    local s = codes:get(i)
    local list = rows[s]
    list[#list + 1] = i
    ids[s][#list] = res:id(i)
  end
  return rows, ids
end

M.rows_by_system = rows_by_system

-- Scores of metric j of system b paired by id with those of system a
-- (xs of a, ys of b), in b's row order.
local function pair_systems(res, a, b, j, rows, ids)
  local sa, sb
  for s, name in ipairs(res.systems) do
    if name == a then sa = s end
    if name == b then sb = s end
  end
  local xs, ys = {}, {}
  if not sa or not sb then return xs, ys end
  if not rows then rows, ids = rows_by_system(res) end
  local scores, of_a = res.scores, {}
  for k, i in ipairs(rows[sa]) do
    local x = scores:get(i, j)
    if x ~= nil then of_a[ids[sa][k]] = x end
  end
  for k, i in ipairs(rows[sb]) do
    local x = of_a[ids[sb][k]]
    local y = x ~= nil and scores:get(i, j) or nil
    if y ~= nil then xs[#xs + 1], ys[#ys + 1] = x, y end
  end
  return xs, ys
end

M.pair_systems = pair_systems

-- Paired comparison of two systems of this run on items matched by id:
-- { n=, mean_a=, mean_b=, delta=, p= } with a paired permutation test.
function Results:compare(a, b, metric, opts)
  local j = self.metric_index[metric]
  if not j then return M.paired({}, {}, opts) end
  local xs, ys = pair_systems(self, a, b, j)
  return M.paired(xs, ys, opts)
end

-- The id of row i (the spec's id field), read from the data set's columns.
function Results:id(i)
  return field(self, i, self.id_field)
end

-- paired(xs, ys) -> { n=, mean_a=, mean_b=, delta = mean_b - mean_a, p=,
--   ci = { lo=, hi=, method=, level= } }: the permutation test's p and the
--   95% interval of the mean paired difference (ev.stats.paired_ci), from
--   2 pairs on
function M.paired(xs, ys, opts)
  local out = { n = #xs }
  if #xs == 0 then return out end
  out.mean_a, out.mean_b = stats.mean(xs), stats.mean(ys)
  out.delta = out.mean_b - out.mean_a
  if #xs > 1 then
    local seed = (opts or {}).seed or 1
    out.p = stats.paired_permutation(xs, ys, { resamples = (opts or {}).resamples or 10000, seed = seed }).p
    local ci = stats.paired_ci(xs, ys, { seed = seed })
    out.ci = { lo = ci.lo, hi = ci.hi, method = ci.method, level = ci.level }
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
