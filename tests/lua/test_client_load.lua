-- libcurl is opened on first use (host/client/curl_load.c, issue 30 goal 7),
-- and so is libcrypto (host/runtime/crypto_load.c, below):
-- a run that sends no request never maps it; the first engine does; a
-- libcurl that cannot be opened is a clear error naming it, and only for
-- the run that needs the client.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local MAPPED = [[
local function mapped()
  for line in io.lines("/proc/self/maps") do
    if line:find("libcurl", 1, true) then return true end
  end
  return false
end
local ev = require "evalua"
local _ = ev.dataset, ev.report, ev.map, ev.text
print(mapped())
ev.map({ 1 }, function() return 1 end)
print(mapped())
require("evalua._client").engine { base_url = "http://127.0.0.1:9/v1" }
print(mapped())
]]

local function run(script, env)
  local dir = h.tmpdir()
  h.write(dir .. "/s.lua", script)
  local r = h.run(("%s %s run %s/s.lua"):format(env or "", h.bin, dir))
  h.sh("rm -rf " .. dir)
  return r
end

function test_libcurl_is_mapped_only_once_an_engine_exists()
  local r = run(MAPPED)
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "false\nfalse\ntrue\n")
end

function test_a_libcurl_that_cannot_be_opened_names_itself()
  local r = run('print("no client needed")\n'
    .. 'print(pcall(require("evalua").judge.open, { base_url = "http://127.0.0.1:9/v1", model = "m" }))\n',
    "EVALUA_LIBCURL=/nonexistent/libcurl.so.4")
  lu.assertEquals(r.status, 0)
  local first, second = r.stdout:match("^(.-)\n(.-)\n$")
  lu.assertEquals(first, "no client needed")
  lu.assertStrContains(second, "false\t")
  lu.assertStrContains(second, "libcurl could not be loaded (/nonexistent/libcurl.so.4: cannot open shared object file")
  lu.assertStrContains(second, "install libcurl4")
end

function test_a_library_without_curls_functions_is_refused_by_name()
  local r = run('print(pcall(require("evalua._client").engine, { base_url = "http://127.0.0.1:9/v1" }))\n',
    "EVALUA_LIBCURL=libz.so.1")
  lu.assertStrContains(r.stdout, "libcurl could not be used: libz.so.1 has no function curl_global_init")
end

-- libcrypto likewise (host/runtime/crypto_load.c): an empty script never
-- maps it, the first SHA-256 does, and the digest is SHA-256's own (the
-- FIPS 180-2 example "abc").
function test_libcrypto_is_mapped_only_once_something_hashes()
  local r = run([[
local function mapped()
  for line in io.lines("/proc/self/maps") do
    if line:find("libcrypto", 1, true) then return true end
  end
  return false
end
local ev = require "evalua"
print(mapped())
print(ev.sys.sha256("abc"))
print(mapped())
]])
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "false\nba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\ntrue\n")
end

os.exit(lu.LuaUnit.run(), true)
