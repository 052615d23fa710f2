-- Bootstrap confidence interval of a mean: ev.stats.bootstrap_ci (C) over
-- 100,000 items with 1,000 resamples, against a plain-Lua bootstrap of the
-- same size in the same process (CPU time, each the best of RUNS runs). The
-- plain-Lua one draws with math.random, so its interval differs in the last
-- digits; both are printed.
-- usage: evalua run bench/stats/bootstrap.lua [ITEMS [RESAMPLES [LUA_RESAMPLES [RUNS]]]]
--   defaults: 100000 items, 1000 resamples; plain Lua runs 50 resamples and
--   is compared per resample; 3 runs.
local ev = require "evalua"

local N = math.tointeger(tonumber(arg[1])) or 100000
local R = math.tointeger(tonumber(arg[2])) or 1000
local RLUA = math.tointeger(tonumber(arg[3])) or 50
local RUNS = math.tointeger(tonumber(arg[4])) or 3

math.randomseed(7)
local xs = {}
for i = 1, N do xs[i] = math.random() < 0.7 and math.random() or 0 end -- scores in [0, 1)

local function lua_bootstrap(x, resamples, level)
  local n, means = #x, {}
  for b = 1, resamples do
    local s = 0
    for _ = 1, n do s = s + x[math.random(n)] end
    means[b] = s / n
  end
  table.sort(means)
  local function q(p) -- type 7, as ev.stats.percentile
    local h = (resamples - 1) * p
    local lo = math.floor(h)
    if lo >= resamples - 1 then return means[resamples] end
    return means[lo + 1] + (h - lo) * (means[lo + 2] - means[lo + 1])
  end
  return q((1 - level) / 2), q((1 + level) / 2)
end

local function time(f)
  local best, a, b = math.huge, nil, nil
  for _ = 1, RUNS do
    collectgarbage()
    local t0 = os.clock()
    a, b = f()
    best = math.min(best, os.clock() - t0)
  end
  return best, a, b
end

local t_c, ci = time(function() return ev.stats.bootstrap_ci(xs, { resamples = R, seed = 1 }) end)
local t_lua, lo, hi = time(function() return lua_bootstrap(xs, RLUA, 0.95) end)

local c_per, lua_per = t_c / R, t_lua / RLUA
print(("bootstrap CI of the mean, %d items, CPU time, best of %d runs each"):format(N, RUNS))
print(("  C          %5d resamples  %7.3f s  %8.2f ms/resample  %6.1fx plain Lua  [%.5f, %.5f]")
  :format(R, t_c, c_per * 1000, lua_per / c_per, ci.lo, ci.hi))
print(("  plain Lua  %5d resamples  %7.3f s  %8.2f ms/resample     1.0x          [%.5f, %.5f]")
  :format(RLUA, t_lua, lua_per * 1000, lo, hi))
