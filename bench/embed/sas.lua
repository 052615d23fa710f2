-- Offline sas (ev.rag.sas on the offline judge: metrics/embed.c) over the
-- pairs of bench/embed/sas_gen.lua. Prints the wall seconds of the scoring
-- (rows in memory to scores; reading the file is not counted) and writes
-- each row's score, one a line, for bench/embed/sas.sh to compare.
-- usage: evalua run bench/embed/sas.lua PAIRS.tsv SCORES.out [RUNS]
local ev = require "evalua"
local path, out, runs = arg[1], arg[2], math.tointeger(tonumber(arg[3] or "")) or 1
assert(path and out, "usage: evalua run bench/embed/sas.lua PAIRS.tsv SCORES.out [RUNS]")
local rows = {}
for line in io.lines(path) do
  local f = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = field end
  rows[#rows + 1] = { answer = f[1], gold_answers = { table.unpack(f, 2) } }
end
local judge = ev.judge.open("offline")
local best, scores = math.huge, nil
for _ = 1, runs do
  collectgarbage()
  local t0 = ev.sys.monotonic()
  local res = ev.rag.sas.batch(rows, { judge = judge })
  local t = ev.sys.monotonic() - t0
  if t < best then best, scores = t, res end
end
local f = assert(io.open(out, "w"))
for i = 1, #scores do f:write(("%.12f\n"):format(scores[i].score)) end
f:close()
print(("%d %.4f"):format(#rows, best))
