-- Part 2 of bench/history/run.sh: ev.history's reads from the SQLite store
-- against the older JSONL read of the same records (jsonl.records: one
-- forward pass over history.jsonl, checking each record (record.decode), as records() did
-- before the store; the import does it once) and against reading
-- history.jsonl's bytes once, on a history of one 100 kB record and on
-- one of 1,000 records. Both formats are written by the same appends
-- ({jsonl = true}), so they hold the same records.
-- usage: evalua run bench/history/read.lua TMPDIR
local ev = require "evalua"
local jsonl = require "evalua.history.jsonl"
local record = require "evalua.history.record"
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
    local f = io.open(hist.jsonl_file, "rb")
    f:read("a")
    f:close()
  end)
  local old = best_of(5, function() jsonl.records(hist.jsonl_file, record.decode) end)
  local wal = sys.stat(hist.file .. "-wal")
  print(("   %s (history.jsonl %d bytes, history.db and its log %d bytes):"):format(name,
    sys.stat(hist.jsonl_file).size, sys.stat(hist.file).size + (wal and wal.size or 0)))
  print(("     %-22s %8.2f ms"):format("jsonl bytes once", bytes * 1e3))
  print(("     %-22s %8.2f ms  %6.2fx the bytes"):format("jsonl records (old)", old * 1e3, old / bytes))
  for _, case in ipairs {
    { "store latest()", function() return hist:latest() end },
    { "store find(oldest)", function() return hist:find(first_label) end },
    { "store records()", function() return hist:records() end },
  } do
    local t = best_of(5, case[2])
    print(("     %-22s %8.2f ms  %6.2fx the bytes  %6.3fx the old jsonl read"):format(case[1], t * 1e3, t / bytes,
      t / old))
  end
end

local one = ev.history.open(dir .. "/one", { jsonl = true })
one:append(res_of(20), { label = "big", notes = ("n"):rep(100000), dashboard = false, git_commit = false })
bench("one 100 kB record", one, "big")

local many = ev.history.open(dir .. "/many", { jsonl = true })
local res = res_of(200)
local t0 = sys.monotonic()
for i = 1, 1000 do
  many:append(res, { label = "v" .. i, notes = ("x"):rep(5000), dashboard = false, git_commit = false })
end
print(("   1,000 appends of 200 items (both formats): %.1f ms each"):format((sys.monotonic() - t0)))
bench("1,000 records", many, "v1")
local t = best_of(3, function() many:dashboard() end)
print(("     %-22s %8.2f ms"):format("dashboard()", t * 1e3))
