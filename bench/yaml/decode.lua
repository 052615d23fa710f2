-- evalua's side of bench/yaml/run.sh: decodes FILE RUNS times with
-- evalua._yaml, prints the best wall time, and writes the value as JSON
-- (keys sorted) for the comparison with Python's reading.
local Y = require "evalua._yaml"
local json = require "evalua.core.json"
local sys = require "evalua._sys"
local path, runs, out = arg[1], tonumber(arg[2]), arg[3]
local f = assert(io.open(path, "rb"))
local text = f:read("a")
f:close()
local best, v = math.huge, nil
for _ = 1, runs do
  collectgarbage()
  local t = sys.monotonic()
  v = assert(Y.decode(text, path))
  best = math.min(best, sys.monotonic() - t)
end
local g = assert(io.open(out, "wb"))
g:write(json.encode(v))
g:close()
print(("%.4f"):format(best))
