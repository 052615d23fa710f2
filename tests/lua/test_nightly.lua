-- scripts/nightly.lua end to end: consecutive runs with the pipeline variant
-- changed between them, the lock against overlapping runs, and a run killed
-- with SIGKILL and started again against the mock server.
local lu = require "luaunit"
local ev = require "evalua"
local cjson = require "cjson"
local h = require "tests.lua.helpers"
local sys = require "evalua._sys"

local SRC = os.getenv("EVALUA_SRC") or os.getenv("PWD")

local function nightly(dir, args, env)
  return h.run(("cd %s && %s %s run scripts/nightly.lua --out %s --quiet %s"):format(
    SRC, env or "", h.bin, dir, args or ""))
end

local function lines(cmd)
  local out = {}
  for l in io.popen(cmd):lines() do out[#out + 1] = l end
  return out
end

TestNightly = {}
function TestNightly:setUp() self.dir = h.tmpdir() end
function TestNightly:tearDown() h.sh("rm -rf " .. self.dir) end

function TestNightly:test_three_runs_then_a_regression()
  local dir = self.dir
  -- baseline misses the P0 recall gate (factoid recall@5 0.55 < 0.7): exit 1
  local r1 = nightly(dir, "--variant baseline --label v1.0")
  lu.assertEquals(r1.status, 1, r1.stderr)
  lu.assertStrContains(r1.stderr, "gates: FAILED")
  -- hybrid: factoid recall@5 0.698, still under 0.7
  local r2 = nightly(dir, "--variant hybrid --label v1.1")
  lu.assertEquals(r2.status, 1, r2.stderr)
  -- hybrid_rerank passes every gate
  local r3 = nightly(dir, "--variant hybrid_rerank --label v1.2")
  lu.assertEquals(r3.status, 0, r3.stderr)

  local hist = ev.history.open(dir .. "/history"):records()
  lu.assertEquals(#hist, 3)
  lu.assertEquals({ hist[1].label, hist[2].label, hist[3].label }, { "v1.0", "v1.1", "v1.2" })
  local folders = lines("ls " .. dir .. "/reports")
  lu.assertEquals(#folders, 3)
  for _, f in ipairs(folders) do
    lu.assertStrMatches(f, "%d%d%d%d%-%d%d%-%d%dT%d%d%d%d%d%dZ%-?%d*")
    for _, ext in ipairs { "md", "json", "csv", "html", "junit.xml" } do
      lu.assertNotNil(h.read(dir .. "/reports/" .. f .. "/nightly." .. ext), f .. " " .. ext)
    end
  end
  -- each run after the first is compared with the one before
  local third = cjson.decode(h.read(dir .. "/reports/" .. folders[3] .. "/nightly.json"))
  lu.assertEquals(third.comparison.baseline.label, "v1.1")
  lu.assertStrContains(h.read(dir .. "/reports/" .. folders[2] .. "/nightly.md"), "## Compared with v1.0")
  lu.assertStrContains(h.read(dir .. "/reports/" .. folders[3] .. "/nightly.html"), "Trend over the last 3 runs")

  -- back to the baseline pipeline: recall@5 falls 0.69 -> 0.48 on the same
  -- 20 queries, a significant regression, so the regression gate fails too
  local r4 = nightly(dir, "--variant baseline --label v1.3-revert")
  lu.assertEquals(r4.status, 1)
  local last = lines("ls " .. dir .. "/reports")
  local doc = cjson.decode(h.read(dir .. "/reports/" .. last[#last] .. "/nightly.json"))
  local regression
  for _, g in ipairs(doc.gates) do
    if g.name == "significant regressions <= 0" then regression = g end
  end
  lu.assertEquals(regression.status, "fail")
  lu.assertStrContains(regression.message, "recall@5[all] 0.6917 -> 0.4792")
  -- an unknown baseline is a usage error naming the runs there are
  -- --quiet keeps the report and the failing gate on stdout
  lu.assertStrContains(r4.stdout, "system")
  lu.assertStrContains(r4.stdout, "gate fail")
  local bad = nightly(dir, "--variant hybrid_rerank --baseline nosuch")
  lu.assertEquals(bad.status, 2)
  lu.assertStrContains(bad.stderr, "evalua: no run labelled or identified 'nosuch' in " .. dir
    .. "/history (runs: v1.0, v1.1, v1.2, v1.3-revert)")
  -- a named baseline instead of the previous run
  local r5 = nightly(dir, "--variant hybrid_rerank --baseline v1.0")
  lu.assertEquals(r5.status, 0, r5.stderr)
  local all = lines("ls " .. dir .. "/reports")
  lu.assertEquals(#all, 5)
  local junit = h.read(dir .. "/reports/" .. all[5] .. "/nightly.junit.xml")
  lu.assertStrContains(junit, 'name="gate recall@5[query_class=factoid] &gt;= 0.7"')
end

function TestNightly:test_a_second_run_waits_for_nobody_the_lock_refuses_it()
  local dir = self.dir
  h.sh("mkdir -p " .. dir)
  h.write(dir .. "/hold.lua", ([[
local l = assert(require("evalua._sys").lock(%q))
io.open(%q, "w"):close()
require("evalua._sys").sleep(30)
]]):format(dir .. "/nightly.lock", dir .. "/held"))
  local p = io.popen(("%s run %s & echo $!"):format(h.bin, dir .. "/hold.lua"))
  local pid = p:read("l")
  p:close()
  local deadline = sys.monotonic() + 10
  while not h.read(dir .. "/held") and sys.monotonic() < deadline do sys.sleep(0.02) end
  local r = nightly(dir, "--variant hybrid")
  h.sh("kill " .. pid)
  lu.assertEquals(r.status, 75)
  lu.assertStrContains(r.stderr, "nightly: another run is in progress: '" .. dir .. "/nightly.lock' is held by process " .. pid)
  lu.assertEquals(#ev.history.open(dir .. "/history"):records(), 0)
  -- once the holder is gone the lock is free again
  sys.sleep(0.2)
  lu.assertEquals(nightly(dir, "--variant hybrid_rerank").status, 0)
end

function TestNightly:test_a_killed_run_pays_for_nothing_twice()
  local mockmod = require "tests.mock.mock"
  local mock = mockmod.start("--latency-ms 100")
  local dir = self.dir
  local env = ("OPENAI_BASE_URL=%s EVALUA_MODEL=judge-1 OPENAI_API_KEY=sk-test-nightly"):format(mock.url)
  local cmd = ("cd %s && %s %s run scripts/nightly.lua --out %s --quiet --variant hybrid --concurrency 4"):format(
    SRC, env, h.bin, dir)
  local p = io.popen(cmd .. " >/dev/null 2>&1 & echo $!")
  local pid = p:read("l")
  p:close()
  local deadline = sys.monotonic() + 30
  local function cached() return #lines(("find %s/cache -name '*.json' 2>/dev/null"):format(dir)) end
  repeat sys.sleep(0.05) until cached() >= 12 or sys.monotonic() > deadline
  h.sh("kill -9 " .. pid)
  sys.sleep(0.3)
  local paid = cached()
  local first = mock:stats().requests
  lu.assertTrue(paid >= 12, "answers cached before the kill: " .. paid)
  lu.assertEquals(#ev.history.open(dir .. "/history"):records(), 0, "a killed run appends nothing")

  local r = h.run(cmd)
  lu.assertTrue(r.status == 0 or r.status == 1, r.stderr)
  local total = cached()
  local second = mock:stats().requests - first
  -- the rerun sent exactly the requests whose answers were not kept: kept are the files on disk and the
  -- answers the killed run had journaled but not written as files yet (a loaded machine's writer thread
  -- lags), so at least the files and at most the requests the killed run sent
  local kept = total - second
  io.stderr:write(("[killed run] paid %d, sent %d; rerun sent %d of %d\n"):format(paid, first, second, total))
  lu.assertTrue(kept >= paid and kept <= first, ("kept %d: %d files, %d sent before the kill"):format(kept, paid, first))
  -- and none of the answered requests was sent again
  local seen, repeats = {}, 0
  for _, req in ipairs(mock:requests()) do
    if seen[req.body] then repeats = repeats + 1 end
    seen[req.body] = true
  end
  lu.assertTrue(repeats <= first - paid, ("repeats %d, in flight at the kill %d"):format(repeats, first - paid))
  -- a third run is answered from the cache entirely
  local before = mock:stats().requests
  lu.assertTrue(h.run(cmd).status <= 1)
  lu.assertEquals(mock:stats().requests, before)
  -- the key is in no file written
  lu.assertEquals(#lines(("grep -rl sk-test-nightly %s"):format(dir)), 0)
  mock:stop()
end

os.exit(lu.LuaUnit.run(), true)
