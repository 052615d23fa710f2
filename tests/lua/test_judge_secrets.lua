-- Secrets against a hostile server (issue 26, items 5 and 6): the key
-- echoed in spellings a script can decode never reaches a result, an
-- error, stdout or the cache; requests stay below the base URL's path;
-- URL credentials are never shown.
local lu = require "luaunit"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()
local KEY = "sk-evalua-test-9f8e7d6c5b4a3210"
local WIDE = "sk-évalua-ключ-🔑-5b4a3210" -- a key that is not ASCII

local SCRIPT = [[
local ev = require "evalua"
local cjson = require "cjson"
local j = ev.judge.open { base_url = arg[2], model = "m", cache = arg[1] .. "/cache", backoff_ms = 1 }
local r = j:chat { messages = { { role = "user", content = arg[3] } }, json = arg[4] == "json" }
print(cjson.encode { ok = r.ok, text = r.text, json = r.json, error = r.error })
]]

-- Runs SCRIPT with the key in $OPENAI_API_KEY and directive d in the
-- message; returns the decoded result, the raw output and the cache's text.
local function echo(key, d, json)
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", SCRIPT)
  local r = h.run(("cd %s && OPENAI_API_KEY='%s' %s run script.lua %s %s '%s' %s"):format(
    dir, key, h.bin, dir, mock.url, mockmod.say(d), json and "json" or ""))
  lu.assertEquals(r.status, 0, r.stderr)
  local p = io.popen(("cat %s/cache/*/*.json 2>/dev/null"):format(dir))
  local cached = p:read("a")
  p:close()
  h.sh("rm -rf " .. dir)
  return require("cjson").decode(r.stdout), r.stdout .. r.stderr, cached
end

-- Every spelling a reader could decode from text: raw, JSON-escaped (in
-- either hex case, as UTF-8 or as the header's bytes read as Latin-1),
-- either half of the key.
local function assert_no_key(key, text, what)
  local latin1 = key:gsub("[\128-\255]", function(c) return utf8.char(c:byte()) end)
  local spellings = { key, latin1, key:sub(1, #key // 2 + 3), key:sub(#key // 2 - 2) }
  for _, k in ipairs { key, latin1 } do
    spellings[#spellings + 1] = table.concat(
      (function() local t = {} for _, c in utf8.codes(k) do t[#t + 1] = ("\\u%04x"):format(c) end return t end)())
  end
  for _, s in ipairs(spellings) do
    lu.assertNil(text:find(s, 1, true), ("%s holds the key spelled %q"):format(what, s))
    lu.assertNil(text:lower():find(s:lower(), 1, true), what .. " holds the key in another case")
  end
end

TestSecrets = {}
function TestSecrets:setUp() mock:reset() end

function TestSecrets:test_a_key_escaped_inside_the_json_answer_is_redacted()
  local r, out, cached = echo(KEY, { answer = "{auth}", echo = "nested" }, true)
  lu.assertEquals(r.ok, true)
  lu.assertEquals(r.json, { reason = "Bearer [redacted]" })
  assert_no_key(KEY, out, "the output")
  assert_no_key(KEY, cached, "the cache")
  lu.assertStrContains(cached, "[redacted]")
end

function TestSecrets:test_a_key_split_across_streamed_chunks_is_redacted()
  local r, out, cached = echo(KEY, { answer = "you sent {auth} ok", echo = "split" })
  lu.assertEquals(r.ok, true)
  lu.assertEquals(r.text, "you sent Bearer [redacted] ok")
  assert_no_key(KEY, out, "the output")
  assert_no_key(KEY, cached, "the cache")
end

function TestSecrets:test_a_non_ascii_key_echoed_with_json_escapes_is_redacted()
  for _, utf8_header in ipairs { true, false } do -- the header read as UTF-8, or as Latin-1
    local r, out, cached = echo(WIDE, { answer = "you sent {auth}", escape = true, auth_utf8 = utf8_header })
    lu.assertEquals(r.text, "you sent Bearer [redacted]")
    assert_no_key(WIDE, out, "the output")
    assert_no_key(WIDE, cached, "the cache")
  end
  local r, out = echo(WIDE, { faults = { "401" }, message = "Incorrect API key: {auth}", auth_utf8 = true })
  lu.assertEquals(r.ok, false)
  lu.assertEquals(r.error, "HTTP 401: Incorrect API key: Bearer [redacted]")
  assert_no_key(WIDE, out, "the output")
end

-- Issue 26, item 6: engine:submit("/../../x") sent the key to any path of
-- the host.
function TestSecrets:test_a_request_cannot_leave_the_base_path()
  local r = h.run_script(([[
local C = require "evalua._client"
local e = C.engine { base_url = "%s", api_key_env = "EVALUA_TEST_KEY" }
for _, path in ipairs { "/../../x", "/%%2e%%2e/%%2E%%2e/x", "/a/../../../x", "/..%%2f..%%2fx", "/a\\..\\x" } do
  print(select(2, pcall(e.submit, e, path, "{}")))
end
]]):format(mock.url), "", "")
  lu.assertEquals(r.status, 0, r.stderr)
  local lines = {}
  for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
  for i = 1, 3 do lu.assertStrContains(lines[i], "bad argument #2 to '?' (the path leaves the base URL's path)") end
  for i = 4, 5 do lu.assertStrContains(lines[i], "the path holds an encoded slash or backslash") end
  lu.assertEquals(mock:stats().requests, 0)
end

-- Runs code as script.lua in a fresh folder with the environment env
-- ("NAME=value ..."); returns the lines printed and the run.
local function run_with(env, code, opts)
  local dir = h.tmpdir()
  h.write(dir .. "/script.lua", code)
  local r = h.run(("cd %s && env %s %s run %s script.lua"):format(dir, env, h.bin, opts or ""))
  h.sh("rm -rf " .. dir)
  local lines = {}
  for l in (r.stdout or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines, r
end

-- Issue 26, item 6: _judge.env() (now _client.env()).base_url returned user:password from
-- $OPENAI_BASE_URL. Scripts see the URL without them; requests carry them.
function TestSecrets:test_url_credentials_are_used_but_never_shown()
  local lines, r = run_with("OPENAI_BASE_URL=" .. mock.url:gsub("^http://", "http://evalua:s3cret-pw@"), [[
local ev = require "evalua"
local C = require "evalua._client"
print(C.env().base_url)
local j = ev.judge.open { model = "m", cache = false, api_key_env = false }
print(j.base_url, tostring(j))
print(j:chat { messages = { { role = "user", content = "hello" } } }.ok)
local again = ev.judge.open { base_url = C.env().base_url, model = "m", cache = false, api_key_env = false }
print(again:chat { messages = { { role = "user", content = '<<mock {"faults": ["401"], "message": "bad {auth}"}>>' } } }.error)
]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(lines, { mock.url, mock.url .. "\tjudge m (http at " .. mock.url .. ")", "true",
                           "HTTP 401: bad Basic [redacted] (no API key was sent: set $OPENAI_API_KEY or name "
                           .. "another variable with api_key_env)" })
  lu.assertNotStrContains(r.stdout .. r.stderr, "s3cret")
  local seen = mock:requests()
  lu.assertEquals(#seen, 2)
  for _, req in ipairs(seen) do lu.assertEquals(req.headers.authorization, "Basic ZXZhbHVhOnMzY3JldC1wdw==") end
end

-- Issue 26, item 6: for --notify or the http provider the operator had to
-- allow a whole host, and a script then posted to its own webhook there.
-- $EVALUA_JUDGE_URLS allows a URL and the paths below it.
function TestSecrets:test_the_sandbox_allows_urls_by_prefix_not_host()
  local hook, root = mock.root .. "/hooks/T1", mock.root
  local lines, r = run_with(("OPENAI_BASE_URL=%s EVALUA_JUDGE_URLS='%s'"):format(mock.url, hook), ([[
local ev = require "evalua"
print(ev.notify.post("%s", { text = "ours" }))
print(ev.notify.post("%s/", { text = "ours, with a slash" }))
print(ev.notify.post("%s/hooks/T2", { text = "theirs" }))
print(ev.notify.post("%s/../T2", { text = "theirs" }))
print(ev.notify.post("%s0", { text = "theirs" }))
print(pcall(ev.provider.http, { url = "%s/rag" }))
print(pcall(ev.provider.http, { url = "%s/hooks/T3" }))
]]):format(hook, hook, root, hook, hook, hook, root), "--sandbox --out out")
  lu.assertEquals({ lines[1], lines[2] }, { "true", "true" })
  for i = 3, 5 do
    lu.assertStrContains(lines[i], "nil\tjudge: base_url 'the notification URL' is not allowed in --sandbox mode")
  end
  lu.assertStrContains(lines[6], "true\tprovider http")
  lu.assertStrContains(lines[7], "false\t")
  lu.assertStrContains(lines[7], "is not allowed in --sandbox mode")
  local seen = mock:requests()
  lu.assertEquals(#seen, 2)
  lu.assertEquals({ seen[1].path, seen[2].path }, { "/hooks/T1", "/hooks/T1/" })
end

local code = lu.LuaUnit.run()
mock:stop()
os.exit(code, true)
