-- Part 2 of bench/history/run.sh: ev.history's reads against reading the
-- file's bytes once (the least any reader does), on a history of one
-- 100 kB record and on one of 1,000 records.
-- usage: evalua run bench/history/read.lua TMPDIR
local ev = require "evalua"
local sys = ev.sys
local dir = assert(arg[1], "usage: read.lua TMPDIR")

local function res_of(n)
  local rows = {}
  for i = 1, n do rows[i] = { qid = "q" .. i, query_class = "c" .. i % 4, s = i / n } end
  return ev.evaluate(rows, { metrics = { { name = "s", fn = function(r) return r.s end } },
                             slices = { "query_class" }, ci = false })
end

local function best_of(k, f)
  local best = math.huge
  for _ = 1, k do
    local t0 = sys.monotonic()
    f()
    best = math.min(best, sys.monotonic() - t0)
  end
  return best
end

local function bench(name, hist, first_label)
  local bytes = best_of(5, function()
    local f = io.open(hist.file, "rb")
    f:read("a")
    f:close()
  end)
  local size = sys.stat(hist.file).size
  print(("   %s (%d bytes): reading the bytes once %.2f ms"):format(name, size, bytes * 1e3))
  for _, case in ipairs {
    { "latest()", function() return hist:latest() end },
    { "find(oldest label)", function() return hist:find(first_label) end },
    { "records()", function() return hist:records() end },
  } do
    local t = best_of(5, case[2])
    print(("     %-20s %8.2f ms  %6.1fx the bytes"):format(case[1], t * 1e3, t / bytes))
  end
end

local one = ev.history.open(dir .. "/one")
one:append(res_of(20), { label = "big", notes = ("n"):rep(100000), dashboard = false, git_commit = false })
bench("one 100 kB record", one, "big")

local many = ev.history.open(dir .. "/many")
local res = res_of(200)
for i = 1, 1000 do
  many:append(res, { label = "v" .. i, notes = ("x"):rep(5000), dashboard = false, git_commit = false })
end
bench("1,000 records", many, "v1")
local t = best_of(3, function() many:dashboard() end)
print(("     %-20s %8.2f ms"):format("dashboard()", t * 1e3))
