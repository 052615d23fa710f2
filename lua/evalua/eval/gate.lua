-- Gates: thresholds per metric and slice tier, and a limit on significant
-- regressions against the baseline. Each gate passes, fails, or is
-- undecided when too little of its slice was measured to say.
--
--   local results = ev.gate.check(res, {
--     tiers = { by = "query_class", P0 = { "factoid" }, P1 = { "how-to" }, P2 = { "comparison" } },
--     thresholds = {
--       ["recall@5"] = { P0 = 0.7, P1 = 0.5, P2 = 0.3 },   -- per tier
--       token_f1 = { all = 0.3 },                          -- over the whole run
--     },
--     max_regressions = 0,   -- significant regressions allowed (needs res.comparison)
--     min_coverage = 0.8,    -- share of a slice that must be measured to decide
--     pass_share = { assertions = 0.95 },              -- per case (evalua.eval.gate_cases)
--     percentiles = { token_f1 = { p = 10, min = 0.2 } },
--   })
--   return ev.gate.exit_code(results)   -- 0 pass, 1 a gate failed, 4 undecided
--
-- Every check also holds the judge to account: a metric whose items the
-- judge left unmeasured (no usable answer: HTTP or connection failures
-- after the retries, invalid answers, refusals) in more than
-- max_judge_failures of a system's items gets an undecided gate of kind
-- "judge", whatever the spec asks (ev.gate.check(res, {}) gives only these).
local options = require "evalua.core.options"
local health = require "evalua.judge.health"

local M = {}

M.PASS, M.FAIL, M.UNDECIDED = 0, 1, 4

-- The share of a system's items a judge may fail on before its metric is
-- undecided (docs/judge.md, "A dead judge").
M.max_judge_failures = 0.05

-- The share allowed: spec.max_judge_failures, else the module's setting.
function M.judge_share(spec)
  local v = spec and spec.max_judge_failures
  if v == nil then v = M.max_judge_failures end
  if type(v) ~= "number" or v ~= v or v < 0 or v > 1 then
    error("ev.gate: max_judge_failures must be a share from 0 to 1", 3)
  end
  return v
end

-- Undecided gates for the metrics the judge failed on in system.
local function judge_gates(res, system, max)
  local out = {}
  for _, f in ipairs(health.undecided(res, max)) do
    if f.system == system then
      out[#out + 1] = { system = system, metric = f.metric, kind = "judge", status = "undecided",
        actual = f.failed, threshold = max, failed = f.failed, n = f.n, reason = f.reason,
        name = ("%s: judge failures <= %g%%"):format(f.metric, max * 100),
        message = ("the judge failed on %d of %d items (no usable answer; first: %s)"):format(f.failed, f.n,
          f.reason) }
    end
  end
  return out
end

local function threshold_gate(res, system, metric, dim, value, min, tier, coverage)
  local a = res:agg(system, metric.name, dim, value)
  local where = dim == "all" and "all" or (dim .. "=" .. value)
  local g = { system = system, metric = metric.name, dim = dim, value = value, threshold = min, tier = tier,
              name = ("%s[%s] %s %s"):format(metric.name, where, metric.higher_is_better and ">=" or "<=", min) }
  if not a or a.n == 0 then
    g.status, g.message = "undecided", ("no items in slice %s"):format(where)
  elseif a.measured == 0 or a.measured / a.n < coverage then
    g.status = "undecided"
    g.message = ("only %d of %d items measured (need %d%%)"):format(a.measured, a.n, math.ceil(coverage * 100))
  else
    g.actual = a.mean
    local ok = metric.higher_is_better and a.mean >= min or not metric.higher_is_better and a.mean <= min
    g.status = ok and "pass" or "fail"
    g.message = ("%s = %.4f, %s %s"):format(metric.name, a.mean, ok and "meets" or "misses", min)
  end
  return g
end

local function tier_values(tiers, tier)
  if tier == "all" then return "all", { "all" } end
  local values = tiers and tiers[tier]
  if not values then error(("gate: tier '%s' is not defined in tiers"):format(tier), 0) end
  return tiers.by, values
end

local function regression_gate(res, system, max, include_slices)
  local cmp = res.comparison
  local g = { system = system, name = ("significant regressions <= %d"):format(max) }
  if not cmp then
    g.status, g.message = "pass", "no baseline to compare with"
    return g
  end
  local found = {}
  for _, r in ipairs(cmp.rows) do
    if r.system == system and r.regression and (include_slices or r.dim == "all") then
      found[#found + 1] = ("%s[%s] %.4f -> %.4f (p=%.4f)"):format(r.metric,
        r.dim == "all" and "all" or (r.dim .. "=" .. r.value), r.before, r.after, r.p)
    end
  end
  g.actual = #found
  g.status = #found <= max and "pass" or "fail"
  g.message = #found == 0 and "none" or table.concat(found, "; ")
  return g
end

-- check(res, spec) -> list of gate results; also stored as res.gates
local KNOWN = options.set { "tiers", "thresholds", "max_regressions", "regression_slices", "min_coverage",
                            "pass_share", "percentiles", "max_judge_failures" }

function M.check(res, spec)
  options.check(spec, KNOWN, "ev.gate.check", 2)
  local out = {}
  if res:is_part() then return res:attach("gates", out, "ev.gate") end
  local coverage = spec.min_coverage or 0.8
  local max = M.judge_share(spec)
  local names = {}
  for name in pairs(spec.thresholds or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, system in ipairs(res.systems) do
    for _, name in ipairs(names) do
      local metric = res:metric(name)
      if not metric then error(("gate: metric '%s' is not in this run"):format(name), 0) end
      local tiers = {}
      for tier in pairs(spec.thresholds[name]) do tiers[#tiers + 1] = tier end
      table.sort(tiers)
      for _, tier in ipairs(tiers) do
        local dim, values = tier_values(spec.tiers, tier)
        for _, value in ipairs(values) do
          out[#out + 1] = threshold_gate(res, system, metric, dim, value, spec.thresholds[name][tier],
                                         tier, coverage)
        end
      end
    end
    for _, g in ipairs(require("evalua.eval.gate_cases").gates(res, system, spec, coverage)) do out[#out + 1] = g end
    if spec.max_regressions then
      out[#out + 1] = regression_gate(res, system, spec.max_regressions, spec.regression_slices)
    end
    for _, g in ipairs(judge_gates(res, system, max)) do out[#out + 1] = g end
  end
  return res:attach("gates", out, "ev.gate")
end

-- exit_code(gates) -> 1 when any gate failed, else 4 when any is undecided, else 0
function M.exit_code(gates)
  local undecided = false
  for _, g in ipairs(gates) do
    if g.status == "fail" then return M.FAIL end
    if g.status == "undecided" then undecided = true end
  end
  return undecided and M.UNDECIDED or M.PASS
end

return M
