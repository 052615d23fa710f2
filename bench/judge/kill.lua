-- The run bench/judge/kill.py kills: n chat requests through ev.map and a
-- judge with a cache, as a script uses them.
-- usage: evalua run bench/judge/kill.lua URL CACHE_DIR N CONCURRENCY TAG
local ev = require "evalua"
local url, dir, n, concurrency, tag = arg[1], arg[2], math.tointeger(tonumber(arg[3])), math.tointeger(tonumber(arg[4])), arg[5]
assert(url and dir and n and concurrency and tag, "usage: evalua run bench/judge/kill.lua URL CACHE_DIR N CONCURRENCY TAG")
local judge = ev.judge.open { base_url = url, model = "m", cache = dir, api_key_env = false, concurrency = concurrency }
local items = {}
for i = 1, n do items[i] = i end
local out = ev.map(items, function(i)
  return judge:chat { messages = { { role = "user", content = ("kill %s item %d"):format(tag, i) } } }.ok
end, { concurrency = 4 * concurrency, quiet = true })
for i = 1, n do assert(out[i] == true, "item " .. i .. " failed") end
