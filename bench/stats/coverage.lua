-- Coverage of the 95% intervals evalua reports, by simulation: for each kind
-- of score in [0, 1] and each group size, SETS data sets of n items with a
-- known true mean are drawn; each data set is one slice of an ev.evaluate
-- run, and the share of slices whose interval [lo, hi] holds the true mean
-- is the cell's coverage. The interval is exactly the one ev.evaluate
-- reports for a slice of that size on its own (ci = {draw_budget = huge},
-- so many slices in one run get what a single one would). Deterministic:
-- the data come from math.random seeded with SEED.
--
-- Also printed, outside the acceptance table: scores beyond [0, 1]
-- (ev.evaluate's interval for unbounded metrics) and paired differences
-- between two systems (ev.stats.paired_ci, the interval of ev.compare and
-- ev.compare.systems and evalua view's run deltas), when the evalua binary
-- has them.
--
-- usage: evalua run bench/stats/coverage.lua [SETS [SIZES [SEED]]]
--   defaults: 2000 data sets per cell, sizes 15,20,60,500, seed 25
local ev = require "evalua"

local SETS = math.tointeger(tonumber(arg[1])) or 2000
local SIZES = {}
for v in (arg[2] or "15,20,60,500"):gmatch("%d+") do SIZES[#SIZES + 1] = math.tointeger(tonumber(v)) end
local SEED = math.tointeger(tonumber(arg[3])) or 25
local ROWS_PER_RUN = 100000 -- bounds the memory of one ev.evaluate
local LEVEL = 0.95

local rand = math.random

local function normal()
  return math.sqrt(-2 * math.log(1 - rand())) * math.cos(2 * math.pi * rand())
end

-- Marsaglia and Tsang (2000); shapes below 1 through Gamma(a + 1) * U^(1/a).
local function gamma(a)
  if a < 1 then return gamma(a + 1) * (1 - rand()) ^ (1 / a) end
  local d = a - 1 / 3
  local c = 1 / math.sqrt(9 * d)
  while true do
    local x, v
    repeat x = normal(); v = 1 + c * x until v > 0
    v = v * v * v
    local u = 1 - rand()
    if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v) then return d * v end
  end
end

local function beta(a, b)
  local x = gamma(a)
  return x / (x + gamma(b))
end

local function bernoulli(p) return function() return rand() < p and 1 or 0 end end

-- A judge's 1-5 rating normalised to 0-1, skewed to the top as ratings are.
local LIKERT = { 0.05, 0.10, 0.15, 0.30, 0.40 }
local function likert()
  local u, c = rand(), 0
  for k, p in ipairs(LIKERT) do
    c = c + p
    if u < c then return (k - 1) / 4 end
  end
  return 1
end

-- name, draw, true mean
local BOUNDED = {
  { "bernoulli 0.5", bernoulli(0.5), 0.5 },
  { "bernoulli 0.8", bernoulli(0.8), 0.8 },
  { "bernoulli 0.9", bernoulli(0.9), 0.9 },
  { "bernoulli 0.95", bernoulli(0.95), 0.95 },
  { "likert 1-5 as 0-1", likert, 0.725 },                  -- 0.25*.10 + .5*.15 + .75*.30 + .40
  { "beta(5, 0.5), near 1", function() return beta(5, 0.5) end, 5 / 5.5 },
  { "beta(2, 2), middle", function() return beta(2, 2) end, 0.5 },
  { "70% exact 1, else U(0,1)", function() return rand() < 0.7 and 1 or rand() end, 0.85 },
}

-- Beyond [0, 1]: latency-like and count-like values.
local UNBOUNDED = {
  { "lognormal(0, 1)", function() return math.exp(normal()) end, math.exp(0.5) },
  { "exponential(1)", function() return -math.log(1 - rand()) end, 1 },
  { "1-5 rating as is", function() return likert() * 4 + 1 end, 0.725 * 4 + 1 },
}

-- Two systems on the same items: draw() -> a, b; the true mean of b - a.
local function clamp(x) return x < 0 and 0 or x > 1 and 1 or x end
local PAIRED = {
  { "0/1, b passes 5% more", function()
      local u = rand()
      return u < 0.80 and 1 or 0, u < 0.85 and 1 or 0
    end, 0.05 },
  { "0/1, 8% of items flip", function()
      local u = rand()
      local b = u < 0.85 and 1 or 0
      if rand() < 0.08 then b = 1 - b end
      return u < 0.80 and 1 or 0, b
    end, 0.85 * 0.92 + 0.15 * 0.08 - 0.80 },
  { "0/1, independent", function()
      return rand() < 0.8 and 1 or 0, rand() < 0.9 and 1 or 0
    end, 0.1 },
  { "beta(5, 0.5) vs shifted", function()
      local a = beta(5, 0.5)
      return a, clamp(a + 0.05 * normal() + 0.02)
    end, nil }, -- true mean by simulation below
  { "70% exact 1 vs 80%", function()
      local a = rand() < 0.7 and 1 or rand()
      local b = rand() < 0.5 and a or (rand() < 0.8 and 1 or rand())
      return a, b
    end, 0.5 * 0 + 0.5 * (0.9 - 0.85) },
}

math.randomseed(SEED)
do -- the mean of a clamped shift has no closed form: a large simulation (fixed seed)
  local s, m = 0, 400000
  for _ = 1, m do
    local a, b = PAIRED[4][2]()
    s = s + (b - a)
  end
  PAIRED[4][3] = s / m
end

local function metric_of(name, column)
  return { name = name, batch = function() return column end }
end

-- Coverage of ev.evaluate's interval for the kinds (one metric each) at
-- size n: { [kind] = { cover=, width=, zero=, methods = {name = count} } }.
local function evaluate_cells(kinds, n)
  local out = {}
  for k = 1, #kinds do out[k] = { cover = 0, width = 0, zero = 0, sets = 0, methods = {} } end
  local per_run = math.max(1, ROWS_PER_RUN // n)
  local done = 0
  while done < SETS do
    local sets = math.min(per_run, SETS - done)
    local rows, columns, metrics = {}, {}, {}
    for k = 1, #kinds do columns[k] = {} end
    for s = 1, sets do
      for i = 1, n do
        local r = #rows + 1
        rows[r] = { qid = ("s%d-%d"):format(s, i), set = ("s%d"):format(s) }
        for k, kind in ipairs(kinds) do columns[k][r] = kind[2]() end
      end
    end
    for k = 1, #kinds do metrics[k] = metric_of("m" .. k, columns[k]) end
    local res = ev.evaluate(ev.dataset.from_rows(rows, "coverage"), { metrics = metrics, slices = { "set" },
      quiet = true, ci = { level = LEVEL, draw_budget = 1e15 } })
    for s = 1, sets do
      for k, kind in ipairs(kinds) do
        local a, c = res:agg("all", "m" .. k, "set", ("s%d"):format(s)), out[k]
        c.sets = c.sets + 1
        if a.lo and a.hi then
          if a.lo <= kind[3] and kind[3] <= a.hi then c.cover = c.cover + 1 end
          c.width = c.width + (a.hi - a.lo)
          if a.hi == a.lo and a.ci_method ~= "constant" then c.zero = c.zero + 1 end
        end
        local m = a.ci_method or (a.lo and "percentile bootstrap" or "none")
        c.methods[m] = (c.methods[m] or 0) + 1
      end
    end
    done = done + sets
  end
  return out
end

-- Coverage of ev.stats.paired_ci for the paired kinds at size n.
local function paired_cells(n)
  local out = {}
  for k, kind in ipairs(PAIRED) do
    local c = { cover = 0, width = 0, zero = 0, sets = SETS, methods = {} }
    for _ = 1, SETS do
      local xs, ys = {}, {}
      for i = 1, n do xs[i], ys[i] = kind[2]() end
      local ci = ev.stats.paired_ci(xs, ys, { level = LEVEL })
      if ci.lo <= kind[3] and kind[3] <= ci.hi then c.cover = c.cover + 1 end
      c.width = c.width + (ci.hi - ci.lo)
      if ci.hi == ci.lo and ci.method ~= "constant" then c.zero = c.zero + 1 end
      c.methods[ci.method] = (c.methods[ci.method] or 0) + 1
    end
    out[k] = c
  end
  return out
end

local function methods_text(methods)
  local names = {}
  for name in pairs(methods) do names[#names + 1] = name end
  table.sort(names, function(a, b) return methods[a] > methods[b] end)
  return table.concat(names, "+")
end

-- Prints one table: a row per kind, a column per size; returns the mean and
-- the lowest coverage, the zero-width intervals and the methods used.
local function print_table(title, kinds, cells)
  print(title)
  local head = ("%-26s"):format("scores")
  for _, n in ipairs(SIZES) do head = head .. ("%16s"):format(("n = %d"):format(n)) end
  print(head)
  local sum, count, low, low_at, zero, methods = 0, 0, math.huge, "", 0, {}
  for k, kind in ipairs(kinds) do
    local line = ("%-26s"):format(kind[1])
    for s, n in ipairs(SIZES) do
      local c = cells[s][k]
      local cov = c.cover / c.sets
      line = line .. ("    %.3f (%.3f)"):format(cov, c.width / c.sets)
      sum, count, zero = sum + cov, count + 1, zero + c.zero
      if cov < low then low, low_at = cov, ("%s, n = %d"):format(kind[1], n) end
      for m, v in pairs(c.methods) do methods[m] = (methods[m] or 0) + v end
    end
    print(line)
  end
  print(("mean %.3f over %d cells, lowest %.3f (%s); zero-width intervals not marked constant: %d")
    :format(sum / count, count, low, low_at, zero))
  print("methods: " .. methods_text(methods))
  print("")
  return sum / count, low, zero
end

print(("Coverage of %g%% intervals: %d data sets per cell, seed %d, evalua %s; cells show coverage (mean width)")
  :format(LEVEL * 100, SETS, SEED, ev.version))
print("")
local cells = {}
for s, n in ipairs(SIZES) do cells[s] = evaluate_cells(BOUNDED, n) end
local mean, low, zero = print_table("Scores in [0, 1] (ev.evaluate, one slice per data set)", BOUNDED, cells)

for s, n in ipairs(SIZES) do cells[s] = evaluate_cells(UNBOUNDED, n) end
print_table("Scores beyond [0, 1] (ev.evaluate; not part of the goal)", UNBOUNDED, cells)

if ev.stats.paired_ci then
  for s, n in ipairs(SIZES) do cells[s] = paired_cells(n) end
  print_table("Paired differences b - a (ev.stats.paired_ci, as ev.compare reports them)", PAIRED, cells)
else
  print("Paired differences: this evalua reports no interval for them")
  print("")
end

local ok = low >= 0.92 and mean >= 0.94 and zero == 0
print(("goal for scores in [0, 1]: every cell >= 0.92, mean >= 0.94, no zero-width interval unless marked constant: %s")
  :format(ok and "met" or "NOT met"))
os.exit(ok and 0 or 1)
