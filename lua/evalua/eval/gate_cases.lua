-- Per-case gates, beside the mean gates of ev.gate.check:
--   pass_share  = { assertions = 0.95 }            -- 95% of cases score 1 (pass every assertion)
--   percentiles = { token_f1 = { p = 10, min = 0.2 } }  -- the 10th percentile >= 0.2 (or max =)
-- A case that could not be measured (no output) does not pass, so a failing
-- provider never raises the share; with less than min_coverage measured
-- the gate is undecided. Percentiles are type 7 over the measured scores.
local stats = require "evalua.eval.stats"

local M = {}

local function base(res, system, metric, name, coverage)
  local metric_t = res:metric(metric)
  if not metric_t then error(("gate: metric '%s' is not in this run"):format(metric), 0) end
  local a = res:agg(system, metric)
  local g = { system = system, metric = metric, dim = "all", value = "all", name = name }
  if not a or a.n == 0 then
    g.status, g.message = "undecided", "no items"
  elseif a.measured == 0 or a.measured / a.n < coverage then
    g.status = "undecided"
    g.message = ("only %d of %d items measured (need %d%%)"):format(a.measured, a.n, math.ceil(coverage * 100))
  end
  return g, a
end

function M.pass_share(res, system, metric, share, coverage)
  if type(share) ~= "number" or share < 0 or share > 1 then
    error(("gate: pass_share.%s must be a share from 0 to 1"):format(metric), 0)
  end
  local g, a = base(res, system, metric, ("%s[all] passing share >= %g"):format(metric, share), coverage)
  g.threshold = share
  if g.status then return g end
  local passed = 0
  for _, s in ipairs(res:scores_of(system, metric)) do
    if s >= 1 then passed = passed + 1 end
  end
  g.actual = passed / a.n
  local ok = g.actual >= share
  g.status = ok and "pass" or "fail"
  g.message = ("%d of %d cases pass (%.4f), %s %g"):format(passed, a.n, g.actual, ok and "meets" or "misses", share)
  return g
end

function M.percentile(res, system, metric, spec, coverage)
  local p, min, max = type(spec) == "table" and spec.p, type(spec) == "table" and spec.min, type(spec) == "table" and spec.max
  if type(p) ~= "number" or p < 0 or p > 100 or (min == nil) == (max == nil)
      or (min ~= nil and type(min) ~= "number") or (max ~= nil and type(max) ~= "number") then
    error(("gate: percentiles.%s must be {p = 0..100, min = x} or {p =, max = x}"):format(metric), 0)
  end
  local bound = min or max
  local op = min and ">=" or "<="
  local g = base(res, system, metric, ("%s[all] p%g %s %g"):format(metric, p, op, bound), coverage)
  g.threshold = bound
  if g.status then return g end
  g.actual = stats.percentile(res:scores_of(system, metric), p)
  local ok = min and g.actual >= min or max and g.actual <= max
  g.status = ok and "pass" or "fail"
  g.message = ("p%g of %s = %.4f, %s %g"):format(p, metric, g.actual, ok and "meets" or "misses", bound)
  return g
end

local sorted_keys = require("evalua.core.tables").sorted_keys

-- gates(res, system, spec, coverage) -> the per-case gates of spec for system
function M.gates(res, system, spec, coverage)
  local out = {}
  for _, m in ipairs(sorted_keys(spec.pass_share)) do
    out[#out + 1] = M.pass_share(res, system, m, spec.pass_share[m], coverage)
  end
  for _, m in ipairs(sorted_keys(spec.percentiles)) do
    out[#out + 1] = M.percentile(res, system, m, spec.percentiles[m], coverage)
  end
  return out
end

return M
