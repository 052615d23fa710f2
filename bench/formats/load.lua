-- Loading a peer's file against loading evalua's own rows, on the same
-- simulated rows: a RAGAS EvaluationDataset (JSON lines, as to_jsonl writes
-- it) read with {format = "ragas"}, the same rows written in evalua's format
-- and read by the C reader, and a converter a user would write instead (a
-- plain Lua loop over cjson that maps the keys and hands the rows to
-- ev.dataset.from_rows). Prints the best of 3 CPU seconds of each and the
-- ratios against evalua's own format.
-- usage: evalua run bench/formats/load.lua [ROWS] [DIR]
local ev = require "evalua"
local sys = require "evalua._sys"
local cjson = require "cjson"

local n = tonumber(arg[1] or "100000")
local dir = arg[2] or os.getenv("TMPDIR") or "/tmp"
local ragas, own = ("%s/bench-ragas.%d.jsonl"):format(dir, n), ("%s/bench-own.%d.jsonl"):format(dir, n)

local function words(i, k)
  local w = {}
  for j = 1, k do w[j] = ("w%d"):format((i * 7 + j * 13) % 997) end
  return table.concat(w, " ")
end

local function write(path, make)
  local f = assert(io.open(path, "wb"))
  for i = 1, n do f:write(make(i), "\n") end
  f:close()
end

write(ragas, function(i)
  return cjson.encode { user_input = words(i, 12), response = words(i + 1, 20), reference = words(i + 2, 8),
    retrieved_contexts = { words(i + 3, 40), words(i + 4, 40), words(i + 5, 40) } }
end)
write(own, function(i)
  return cjson.encode { qid = i, query = words(i, 12), answer = words(i + 1, 20), gold_answers = { words(i + 2, 8) },
    contexts = { words(i + 3, 40), words(i + 4, 40), words(i + 5, 40) } }
end)

local function best(fn)
  local t = math.huge
  for _ = 1, 3 do
    collectgarbage("collect")
    local c0 = sys.cputime()
    local ds = fn()
    assert(ds.n == n)
    t = math.min(t, sys.cputime() - c0)
  end
  return t
end

local t_own = best(function() return ev.dataset.load(own) end)
local t_ragas = best(function() return ev.dataset.load(ragas, { format = "ragas" }) end)
local t_conv = best(function()
  local rows, i = {}, 0
  for line in io.lines(ragas) do
    local r = cjson.decode(line)
    i = i + 1
    rows[i] = { qid = i, query = r.user_input, answer = r.response, gold_answers = { r.reference },
                contexts = r.retrieved_contexts }
  end
  return ev.dataset.from_rows(rows, ragas)
end)

print(("rows: %d; best of 3 CPU seconds"):format(n))
print(("evalua's own format (C reader)     %7.3f s  1.00x"):format(t_own))
print(("RAGAS JSONL, {format = \"ragas\"}     %7.3f s  %.2fx"):format(t_ragas, t_ragas / t_own))
print(("a hand converter (cjson + from_rows) %5.3f s  %.2fx"):format(t_conv, t_conv / t_own))
os.remove(ragas)
os.remove(own)
