-- Judge behaviour across processes: the API key reaches the server and no
-- file, output, result or message; a killed run resumes sending only what
-- is missing; the sandbox keeps the cache under --out.
local lu = require "luaunit"
local cjson = require "cjson"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()
local KEY = "sk-evalua-test-9f8e7d6c5b4a3210"

local function count_lines(cmd)
  local p = io.popen(cmd)
  local n = 0
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

local SECRET_SCRIPT = [[
local ev = require "evalua"
local cjson = require "cjson"
local out, url = arg[1], arg[2]
local j = ev.judge.open { base_url = url, model = "m", cache = out .. "/cache",
                          api_key_env = "EVALUA_TEST_KEY", backoff_ms = 1 }
local results = ev.map({ 1, 2, 3 }, function(i)
  return j:chat { messages = { { role = "user", content = "secret test " .. i } } }
end)
local bad = j:chat { messages = { { role = "user", content =
  [=[<<mock {"faults": ["401"], "message": "Incorrect API key provided: {auth}"}>>]=] } } }
local fields = {}
for k, v in pairs(j) do fields[#fields + 1] = k .. "=" .. tostring(v) end
local report = { results = results, bad = bad, stats = j:stats(), run = ev.judge.stats(),
                 fields = fields, str = tostring(j) }
ev.sys.write_atomic(out .. "/report.json", cjson.encode(report))
print(cjson.encode(report))
io.stderr:write(bad.error, "\n")
]]

TestProcess = {}
function TestProcess:setUp() mock:reset() end

function TestProcess:test_the_key_is_sent_but_never_written_shown_or_returned()
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", SECRET_SCRIPT)
  local r = h.run(("cd %s && EVALUA_TEST_KEY=%s %s run script.lua %s/out %s")
    :format(dir, KEY, h.bin, dir, mock.url))
  lu.assertEquals(r.status, 0, r.stderr)
  -- the server did receive it ...
  local seen = mock:requests()
  lu.assertEquals(#seen, 4)
  for _, req in ipairs(seen) do lu.assertEquals(req.headers.authorization, "Bearer " .. KEY) end
  -- ... and it appears nowhere else
  lu.assertNotStrContains(r.stdout, KEY)
  lu.assertNotStrContains(r.stderr, KEY)
  lu.assertEquals(r.stderr, "HTTP 401: Incorrect API key provided: Bearer [redacted]\n")
  lu.assertEquals(count_lines(("grep -rl -- '%s' %s"):format(KEY, dir)), 0)
  lu.assertEquals(count_lines(("grep -rl -- '9f8e7d6c' %s"):format(dir)), 0)
  lu.assertEquals(count_lines(("find %s/out/cache -name '*.json'"):format(dir)), 3)
  local report = cjson.decode(h.read(dir .. "/out/report.json"))
  lu.assertEquals(report.results[1].ok, true)
  h.sh("rm -rf " .. dir)
end

local RESUME_SCRIPT = [[
local ev = require "evalua"
local j = ev.judge.open { base_url = arg[2], model = "m", cache = arg[1], concurrency = 4,
                          api_key_env = false }
local items = {}
for i = 1, 20 do items[i] = i end
local out = ev.map(items, function(i)
  return j:chat { messages = { { role = "user", content =
    ([=[<<mock {"latency_ms": 150}>> resume item %d]=]):format(i) } } }
end)
local ok, cached = 0, 0
for i = 1, 20 do
  if out[i].ok then ok = ok + 1 end
  if out[i].cached then cached = cached + 1 end
end
print(ok, cached)
]]

function TestProcess:test_a_killed_run_resumes_sending_only_the_missing_requests()
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", RESUME_SCRIPT)
  local cmd = ("cd %s && %s run script.lua %s/cache %s"):format(dir, h.bin, dir, mock.url)
  local p = io.popen(cmd .. " >/dev/null 2>&1 & echo $!")
  local pid = p:read("l")
  p:close()
  local sys = require "evalua._sys"
  local deadline = sys.monotonic() + 20
  repeat -- kill it once the first round (4 at a time, 150 ms each) is on disk
    sys.sleep(0.02)
  until count_lines(("find %s/cache -name '*.json' 2>/dev/null"):format(dir)) >= 4 or sys.monotonic() > deadline
  h.sh("kill -9 " .. pid)
  sys.sleep(0.2)
  local cached = count_lines(("find %s/cache -name '*.json'"):format(dir))
  local sent_before = mock:stats().requests
  lu.assertTrue(cached > 0 and cached < 20, "cached " .. cached)
  -- every entry on disk is whole: a metadata line, then the response
  for path in io.popen(("find %s/cache -name '*.json'"):format(dir)):lines() do
    local meta, response = h.read(path):match("^([^\n]*)\n(.*)$")
    lu.assertEquals(cjson.decode(meta).v, 2, path)
    lu.assertIsTable(cjson.decode(response).choices, path)
  end
  local r = h.run(cmd)
  lu.assertEquals(r.status, 0, r.stderr)
  -- The rerun serves from the cache the files on disk and the answers the
  -- killed run had journaled but not yet written as files (a loaded
  -- machine's writer thread lags): at least the files, at most the
  -- requests the killed run sent. It asks for exactly the rest.
  local ok, from_cache = r.stdout:match("^(%d+)\t(%d+)\n$")
  lu.assertEquals(ok, "20", r.stdout)
  from_cache = tonumber(from_cache)
  lu.assertTrue(from_cache >= cached and from_cache <= sent_before,
    ("served %d from the cache: %d files, %d sent before the kill"):format(from_cache, cached, sent_before))
  lu.assertEquals(mock:stats().requests - sent_before, 20 - from_cache)
  lu.assertEquals(count_lines(("find %s/cache -name '*.json'"):format(dir)), 20)
  r = h.run(cmd) -- a finished run sends nothing
  lu.assertEquals(r.stdout, "20\t20\n")
  lu.assertEquals(mock:stats().requests - sent_before, 20 - from_cache)
  h.sh("rm -rf " .. dir)
end

function TestProcess:test_the_sandbox_keeps_the_default_cache_under_out()
  local code = ([[
local ev = require "evalua"
local j = ev.judge.open { base_url = "%s", model = "m", api_key_env = false }
print(j.cache_dir == nil, (j.cache_dir or ""):match("/out/%%.evalua%%-cache/judge$") ~= nil)
print(j:chat { messages = { { role = "user", content = "sandboxed" } } }.ok)
print(pcall(ev.judge.open, { base_url = "%s", model = "m", cache = "/tmp/elsewhere" }))
]]):format(mock.url, mock.url)
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", code)
  local r = h.run(("cd %s && OPENAI_BASE_URL=%s %s run --sandbox --out out script.lua"):format(dir, mock.url, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  local lines = {}
  for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
  lu.assertEquals(lines[1], "false\ttrue")
  lu.assertEquals(lines[2], "true")
  lu.assertEquals(count_lines(("find %s/out/.evalua-cache/judge -name '*.json'"):format(dir)), 1)
  lu.assertStrContains(lines[3], "false")
  h.sh("rm -rf " .. dir)
end

function TestProcess:test_the_sandbox_sends_the_key_only_to_the_configured_server()
  local code = ([[
local ev = require "evalua"
local function ask(opts)
  opts.model, opts.cache = "m", false
  return ev.judge.open(opts):chat { messages = { { role = "user", content = "where does it go" } } }.ok
end
print(ask {})                          -- $OPENAI_BASE_URL: the key goes along
print(ask { base_url = "%s/" })        -- the same server
print(ask { base_url = "%s" })         -- listed in $EVALUA_JUDGE_URLS: no key
print(pcall(ev.judge.open, { model = "m", api_key_env = "HOME" }))
print(pcall(ev.judge.open, { model = "m", headers = { ["api-key"] = { env = "HOME" } } }))
]]):format(mock.url, (mock.url:gsub("127%.0%.0%.1", "localhost")))
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", code)
  local r = h.run(("cd %s && OPENAI_BASE_URL=%s EVALUA_JUDGE_URLS='http://x.invalid/v1 %s' OPENAI_API_KEY=%s "
    .. "%s run --sandbox --out out script.lua"):format(dir, mock.url, mock.url:gsub("127%.0%.0%.1", "localhost"),
    KEY, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  local lines = {}
  for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
  lu.assertEquals({ lines[1], lines[2], lines[3] }, { "true", "true", "true" })
  lu.assertStrContains(lines[4], "'api_key_env' is not available in --sandbox mode")
  lu.assertStrContains(lines[5], "values from the environment are not available in --sandbox mode")
  local seen = mock:requests()
  lu.assertEquals(#seen, 3)
  lu.assertEquals(seen[1].headers.authorization, "Bearer " .. KEY)
  lu.assertEquals(seen[2].headers.authorization, "Bearer " .. KEY)
  lu.assertNil(seen[3].headers.authorization)
  h.sh("rm -rf " .. dir)
end

-- Issue 13, item 7: a sandboxed script posted a file it could read to
-- another port through the raw engine. Only the operator's URLs are reachable.
function TestProcess:test_the_sandbox_reaches_only_the_operators_servers()
  local other = mockmod.start()
  local code = ([[
local ev = require "evalua"
print(pcall(require, "evalua._client")) -- the raw engine is internal (issue 26, item 4)
print(pcall(ev.judge.open, { base_url = "%s", model = "m", cache = false }))
print(pcall(ev.judge.open, { model = "m", cache = false, ca_file = "/etc/shadow" }))
print(ev.judge.open { model = "m", cache = false }:chat { messages = { { role = "user", content = "ok" } } }.ok)
print(pcall(ev.judge.open, { model = "m", cache = false, max_response_bytes = 1e9 }))
]]):format(other.url)
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", code)
  local r = h.run(("cd %s && OPENAI_BASE_URL=%s %s run --sandbox --out out script.lua"):format(dir, mock.url, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  local lines = {}
  for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
  local refused = ("base_url '%s' is not allowed in --sandbox mode"):format(other.url)
  lu.assertStrContains(lines[1], "sandbox: module 'evalua._client' is not available in --sandbox mode")
  lu.assertStrContains(lines[2], refused)
  -- item 9: ca_file goes through the read check, so it says nothing of the file
  lu.assertStrContains(lines[3], "sandbox: read access to '/etc/shadow' is not allowed")
  lu.assertEquals(lines[4], "true")
  -- item 8, the judge's part: response buffers are outside the memory cap, so bounded
  lu.assertStrContains(lines[5], "'max_response_bytes' above 67108864 is not available in --sandbox mode")
  lu.assertEquals(other:stats().requests, 0)
  lu.assertEquals(mock:stats().requests, 1)
  other:stop()
  h.sh("rm -rf " .. dir)
end

-- Issue 12, defect 8: a server echoing the key JSON-escaped (\u0073k-...)
-- slipped past the raw-bytes redaction into r.text and the cache.
function TestProcess:test_a_key_echoed_json_escaped_is_redacted_everywhere()
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", ([[
local ev = require "evalua"
local j = ev.judge.open { base_url = "%s", model = "m", cache = arg[1] .. "/cache" }
local r = j:chat { messages = { { role = "user", content = '<<mock {"answer": "you sent {auth}", "escape": true}>>' } } }
print(r.ok, r.text)
]]):format(mock.url))
  local r = h.run(("cd %s && OPENAI_API_KEY=%s %s run script.lua %s"):format(dir, KEY, h.bin, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "true\tyou sent Bearer [redacted]\n")
  lu.assertEquals(count_lines(("find %s/cache -name '*.json'"):format(dir)), 1)
  local escaped = KEY:sub(1, 3):gsub(".", function(c) return ("\\\\u%04x"):format(c:byte()) end)
  lu.assertEquals(h.run(("grep -rl -e %s -e '%s' %s"):format(KEY, escaped, dir)).stdout, "")
  lu.assertEquals(h.run(("grep -rlF '[redacted]' %s/cache"):format(dir)).status, 0)
  h.sh("rm -rf " .. dir)
end

-- Issue 13, item 3: a cache that cannot be written only bumped a counter
-- judge:stats() dropped. It is said once on stderr and kept in the stats;
-- a FIFO at an entry path no longer hangs the run.
function TestProcess:test_cache_problems_are_said_once_and_never_hang()
  local dir = h.tmpdir()
  h.sh(("mkdir -p %s/c && cd %s/c && for a in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do "
    .. "for b in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do : > $a$b; done; done"):format(dir, dir))
  h.write(dir .. "/script.lua", ([[
local ev = require "evalua"
local j = ev.judge.open { base_url = "%s", model = "m", api_key_env = false, cache = arg[1] }
for i = 1, 3 do assert(j:chat { messages = { { role = "user", content = "cache trouble " .. i } } }.ok) end
local s = j:stats()
print(s.cache_errors, s.requests, s.cache_error)
]]):format(mock.url))
  local r = h.run(("%s run %s/script.lua %s/c"):format(h.bin, dir, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, "3\t3\tcannot write judge cache entry in '[^']+': Not a directory\n")
  local _, said = r.stderr:gsub("evalua: judge cache: cannot write judge cache entry in '[^']+': Not a directory "
    .. "%(the run goes on; later cache errors are counted in judge:stats%(%)%)\n", "")
  lu.assertEquals(said, 1, r.stderr)
  -- a FIFO where an entry was: refused at once, asked from the server, replaced
  h.sh(("mkdir %s/d"):format(dir))
  lu.assertEquals(h.run(("%s run %s/script.lua %s/d"):format(h.bin, dir, dir)).status, 0)
  h.sh(("cd %s/d && for f in */*.json; do rm $f; mkfifo $f; done"):format(dir))
  r = h.run(("timeout 20 %s run %s/script.lua %s/d"):format(h.bin, dir, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, "3\t3\tcannot read judge cache entry %x+ in '[^']+': not a regular file\n")
  lu.assertEquals(count_lines(("find %s/d -type f -name '*.json'"):format(dir)), 3)
  h.sh("rm -rf " .. dir)
end

-- ... and a full disk, for real where a small tmpfs can be mounted (CI
-- runs as root); skipped elsewhere.
function TestProcess:test_a_full_cache_disk_is_said_once()
  local dir = h.tmpdir()
  if h.run(("mount -t tmpfs -o size=64k tmpfs %s"):format(dir)).status ~= 0 then
    h.sh("rm -rf " .. dir)
    lu.skip("cannot mount a tmpfs here")
  end
  h.run(("mkdir %s/c && dd if=/dev/zero of=%s/fill bs=4k 2>/dev/null"):format(dir, dir))
  local script = h.tmpdir() .. "/full-disk.lua" -- beside the full disk: the flavours run at once
  h.write(script, ([[
local ev = require "evalua"
local j = ev.judge.open { base_url = "%s", model = "m", api_key_env = false, cache = arg[1] }
for i = 1, 3 do assert(j:chat { messages = { { role = "user", content = "full disk " .. i } } }.ok) end
local s = j:stats()
print(s.cache_errors, s.requests, s.cache_error)
]]):format(mock.url))
  local r = h.run(("%s run %s %s/c"):format(h.bin, script, dir))
  h.run("umount " .. dir)
  h.sh(("rm -rf %s %s"):format(script:match("^(.*)/"), dir))
  lu.assertEquals(r.status, 0, r.stderr)
  -- once per answer: its journal record or, when that fitted, its file
  lu.assertStrMatches(r.stdout, "3\t3\tcannot %a+ judge cache entry in '[^']+': No space left on device.*\n")
  local _, said = r.stderr:gsub("evalua: judge cache: [^\n]*No space left on device", "")
  lu.assertEquals(said, 1, r.stderr)
end

local code = lu.LuaUnit.run()
mock:stop()
os.exit(code, true)
