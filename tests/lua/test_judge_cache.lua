-- The judge cache on real files (issue 26, items 7 and 8): under --sandbox
-- it follows no symbolic link below --out, for writing or reading; a run
-- killed with SIGKILL loses none of the answers it had, because each is
-- journaled as it arrives and replayed by the next run.
local lu = require "luaunit"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"
local sys = require "evalua._sys"

local mock = mockmod.start()

local function lines_of(s)
  local t = {}
  for l in (s or ""):gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

local function count(cmd)
  return #lines_of(h.run(cmd).stdout)
end

TestCache = {}
function TestCache:setUp() mock:reset() end

local ASK = [[
local ev = require "evalua"
local j = ev.judge.open { base_url = "%s", model = "m", api_key_env = false }
for i = 1, 3 do
  local r = j:chat { messages = { { role = "user", content = "linked " .. i } } }
  print(r.ok, r.cached, r.text)
end
local s = j:stats()
print(s.cache_errors, s.cache_error)
]]

-- Issue 26, item 7: the cache's writer thread opened plain paths, so a
-- link below --out sent entries outside it, while io.open through the same
-- link was refused.
function TestCache:test_the_sandboxed_cache_follows_no_link_below_out()
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", ASK:format(mock.url))
  -- a first run makes the entries; they move outside, and every two-digit
  -- folder becomes a link to there, the answers planted in it changed
  local env = "OPENAI_BASE_URL=" .. mock.url
  local r = h.run(("cd %s && %s %s run --sandbox --out out script.lua"):format(dir, env, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  local cache = dir .. "/out/.evalua-cache/judge"
  h.sh(("mkdir %s/outside && cd %s && for d in ??; do mv $d/*.json %s/outside/; rmdir $d; done"):format(dir, cache, dir))
  h.sh(("cd %s/outside && sed -i 's/mock answer/PLANTED answer/' *.json"):format(dir))
  h.sh(("cd %s && for a in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do for b in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do "
    .. "ln -s %s/outside $a$b; done; done"):format(cache, dir))
  h.write(dir .. "/io.lua", ('print(io.open("%s/00/x.json", "w"))\n'):format(cache))
  r = h.run(("(cd %s && %s %s run --sandbox --out out script.lua && %s run --sandbox --out out io.lua)")
    :format(dir, env, h.bin, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  local out = lines_of(r.stdout)
  for i = 1, 3 do lu.assertEquals(out[i], "true\tfalse\tmock answer: linked " .. i) end -- asked again, not read outside
  -- three reads and three writes refused, counted; the first is said
  lu.assertStrMatches(out[4], "6\tcannot read judge cache entry %x+ in '[^']+': a symbolic link on the way "
    .. "%(not followed under %-%-sandbox%)")
  lu.assertStrContains(out[5], "nil\tsandbox: write access to '") -- io.open refuses the same link
  lu.assertStrContains(out[5], "' is not allowed")
  lu.assertEquals(count(("grep -l PLANTED %s/outside/*.json"):format(dir)), 3) -- nothing new outside
  lu.assertEquals(count(("ls %s/outside"):format(dir)), 3)
  -- the cache folder itself a link out of --out: refused when the judge opens
  h.write(dir .. "/linked.lua", ([[
local ev = require "evalua"
print(pcall(ev.judge.open, { base_url = "%s", model = "m", api_key_env = false, cache = "out/cache" }))
print(ev.judge.open { base_url = "%s", model = "m", api_key_env = false, cache = "out/none/yet", cache_mode = "ro" }
  .cache_mode) -- a folder to read that is not there yet is an empty cache
]]):format(mock.url, mock.url))
  h.sh(("ln -s %s/outside %s/out/cache"):format(dir, dir))
  r = h.run(("cd %s && %s %s run --sandbox --out out linked.lua"):format(dir, env, h.bin))
  lu.assertStrContains(r.stdout, "false\tev.judge.open: cache: ")
  lu.assertStrContains(r.stdout, "is not allowed")
  lu.assertStrContains(r.stdout, "\nro\n")
  lu.assertEquals(count(("ls %s/outside"):format(dir)), 3)
  h.sh("rm -rf " .. dir)
end

local KILLED = [[
local ev = require "evalua"
local j = ev.judge.open { base_url = "%s", model = "m", api_key_env = false, cache = "cache", concurrency = 8 }
local items = {}
for i = 1, %d do items[i] = i end
ev.map(items, function(i)
  local r = j:chat { messages = { { role = "user", content = "killed run item " .. i } } }
  if r.ok then io.stdout:write(i, "\n"); io.stdout:flush() end
end, { concurrency = 32, quiet = true })
]]

-- Issue 26, item 8: a kill lost every answer the writer thread had not yet
-- put on disk. Killed with SIGKILL after N answers, the rerun asks the
-- server for none of them.
function TestCache:test_a_run_killed_after_n_answers_pays_for_none_of_them_again()
  local N, ITEMS = 150, 400
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", KILLED:format(mock.url, ITEMS))
  local pid = h.run(("cd %s && (%s run script.lua > got 2> err & echo $! > pid)"):format(dir, h.bin)) and
    tonumber(h.read(dir .. "/pid"))
  local deadline = sys.monotonic() + 60
  while #lines_of(h.read(dir .. "/got")) < N and sys.monotonic() < deadline do sys.sleep(0.002) end
  h.sh("kill -9 " .. pid)
  local answered = lines_of(h.read(dir .. "/got"))
  lu.assertTrue(#answered >= N, "the run answered " .. #answered)
  lu.assertTrue(#answered < ITEMS, "the run ended before the kill")
  while h.sh("kill -0 " .. pid .. " 2>/dev/null") do sys.sleep(0.01) end
  mock:reset()
  local r = h.run(("cd %s && %s run script.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  local asked = {}
  for _, req in ipairs(mock:requests()) do
    asked[tonumber(req.body.messages[1].content:match("item (%d+)"))] = true
  end
  local again = {}
  for _, i in ipairs(answered) do
    if asked[tonumber(i)] then again[#again + 1] = i end
  end
  lu.assertEquals(again, {}, ("%d of the %d answers the killed run had were asked for again"):format(#again, #answered))
  lu.assertEquals(count(("find %s/cache -name '*.json'"):format(dir)), ITEMS)
  lu.assertEquals(count(("find %s/cache/journal -type f"):format(dir)), 0) -- replayed and removed
  h.sh("rm -rf " .. dir)
end

local code = lu.LuaUnit.run()
mock:stop()
os.exit(code, true)
