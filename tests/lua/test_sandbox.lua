-- The --sandbox profile: each known escape fails with a clear message.
-- Each case runs a child `evalua run --sandbox` on a small script and checks
-- its exit status and message.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local function sandboxed(code, extra)
  return h.run_script(code, "--sandbox --cpu-limit 1 --mem-limit 64 " .. (extra or ""))
end

function test_setmetatable_on_globals_fails()
  local r = sandboxed("setmetatable(_G, {})")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "script.lua:1: cannot change a protected metatable")
end

function test_writing_through_the_string_metatable_fails()
  local r = sandboxed('getmetatable("").__index.upper = function() return "pwned" end')
  lu.assertEquals(r.status, 3)
  -- the methods are looked up through a function: nothing there to write into
  lu.assertStrContains(r.stderr, "script.lua:1: attempt to index a function value (field '__index')")
  r = sandboxed('getmetatable("").__index = {}')
  lu.assertStrContains(r.stderr, "sandbox: the 'string metatable' table is read-only (cannot set '__index')")
end

function test_bytecode_is_refused()
  local r = sandboxed('print(load(string.dump(function() return 1 end)))')
  lu.assertEquals(r.status, 0)
  lu.assertStrContains(r.stdout, "attempt to load a binary chunk (mode is 't')")
end

function test_endless_loop_hits_the_cpu_limit()
  local r = sandboxed("while true do end")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "CPU time limit of 1.0 s exceeded (--cpu-limit)")
end

function test_pcall_cannot_swallow_the_timeout()
  local r = sandboxed([[
for i = 1, 5 do
  local ok, err = pcall(function() while true do end end)
  print("caught", i, err)
end
print("escaped")]])
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "CPU time limit")
  lu.assertNotStrContains(r.stdout, "escaped")
end

function test_memory_bomb_hits_the_memory_cap()
  -- most of this loop runs in C, where only the CPU backstop (limit + 1 s)
  -- could stop it; under ASan it needs about 2 s of CPU to fill 64 MB
  local r = sandboxed([[
local t = {}
while true do t[#t + 1] = string.rep("x", 1000000) .. #t end]], "--cpu-limit 10")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "evalua: memory limit of 64 MB exceeded (--mem-limit)")
end

function test_processes_and_c_modules_are_unavailable()
  for _, call in ipairs { 'os.execute("true")', 'io.popen("true")', 'package.loadlib("x", "y")',
                          'os.getenv("HOME")' } do
    local r = sandboxed(call)
    lu.assertEquals(r.status, 3, call)
    lu.assertStrContains(r.stderr, "is not available in --sandbox mode", false, call)
  end
  local r = sandboxed('print(debug, package.cpath, pcall(require, "socket"))')
  lu.assertStrContains(r.stdout, "nil\t\tfalse")
end

function test_files_outside_the_named_folders_are_refused()
  local dir = h.tmpdir()
  h.write(dir .. "/in/data.txt", "hello")
  local r = sandboxed(([[
print(io.open("/etc/passwd"))
print(io.open("%s/in/data.txt"):read("a"))
local f = assert(io.open("%s/out/result.txt", "w")); f:write("ok"); f:close()
print(io.open("%s/in/new.txt", "w"))
]]):format(dir, dir, dir), ("--read %s/in --out %s/out"):format(dir, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "nil\tsandbox: read access to '/etc/passwd' is not allowed")
  lu.assertStrContains(r.stdout, "hello")
  lu.assertStrContains(r.stdout, "sandbox: write access to '" .. dir .. "/in/new.txt' is not allowed")
  lu.assertEquals(h.read(dir .. "/out/result.txt"), "ok")
end

function test_symlinks_cannot_leave_the_out_folder()
  local dir = h.tmpdir()
  h.sh(("mkdir -p %s/out && ln -s /etc %s/out/etc"):format(dir, dir))
  local r = sandboxed(('print(io.open("%s/out/etc/passwd"))'):format(dir), "--out " .. dir .. "/out")
  lu.assertStrContains(r.stdout, "sandbox: read access")
end

function test_library_still_works_inside_the_sandbox()
  local r = sandboxed('local ev = require "evalua"; print(ev.version, ev.json.encode({1}), require("evalua.core.json").encode({2}))')
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "\t[1]\t[2]\n")
end

function test_trusted_mode_keeps_the_full_library()
  local r = h.run_script('print(type(os.execute), type(io.popen), type(debug.traceback))')
  lu.assertEquals(r.stdout, "function\tfunction\tfunction\n")
end

-- Issue 13, item 4: the script's globals come from an allow-list, and what
-- library code uses cannot be reached or changed from a script.
function test_library_tables_cannot_be_reached_or_changed()
  local r = sandboxed([[
local view = select(2, pairs(string))
print(rawget(view, "rep"), (pcall(rawset, view, "rep", function() return "pwned" end)))
print(type(getmetatable("").__index), pcall(rawset, getmetatable("").__index, "rep", 1))
print(pcall(function() string.upper = nil end))
print(package.loaded._G == _G, package.loaded.package == package, package.loaded.string == string)
print(("ab"):rep(2), require("evalua").json.encode({ ("x"):rep(3) }))]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, table.concat({
    "nil\tfalse",
    "function\tfalse\tbad argument #1 to 'rawset' (table expected, got function)",
    "false\tscript.lua:4: sandbox: the 'string' table is read-only (cannot set 'upper')",
    "true\ttrue\ttrue",
    'abab\t["xxx"]', "" }, "\n"))
end

function test_package_tables_cannot_be_changed()
  for _, code in ipairs {
    'package.searchers[1] = function() return function() return "pwned" end end',
    'table.insert(package.searchers, 1, print)',
    'package.preload.evil = function() return "pwned" end',
    'package.loaded.evalua = "pwned"',
  } do
    local r = sandboxed(code)
    lu.assertEquals(r.status, 3, code)
    lu.assertStrContains(r.stderr, "is read-only (cannot set '", false, code)
  end
  local r = sandboxed([[
print(pcall(rawset, package.preload, "evil", function() return "pwned" end))
print(pcall(require, "evil"))]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "false\tsandbox: rawset on a locked table (cannot set 'evil')\n")
  lu.assertStrContains(r.stdout, "false\tsandbox: module 'evil' is not available in --sandbox mode")
end

-- evalua's own modules are frozen in place: the library's markers keep
-- their identity, and no field can be set, added or put in front.
function test_evalua_modules_cannot_be_changed()
  local r = sandboxed([[
local ev = require "evalua"
local json = ev.json
print(pcall(function() json.encode = print end))
print(pcall(function() ev.judge = {} end))
print(pcall(function() ev.sys.open = io.open end))
print(pcall(rawset, ev.text, "token_f1", print))
print(pcall(setmetatable, json, nil))
print(json.encode(setmetatable({}, json.array)), json.encode({ a = 1 }), ev.text.token_f1("a b", "a b"))
local n = 0
for _ in pairs(json) do n = n + 1 end
print(n > 0, getmetatable(ev))]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, table.concat({
    "false\tscript.lua:3: sandbox: the module 'evalua.core.json' is read-only (cannot set 'encode')",
    "false\tscript.lua:4: sandbox: the module 'evalua' is read-only (cannot set 'judge')",
    "false\tscript.lua:5: sandbox: the module 'evalua._sys' is read-only (cannot set 'open')",
    "false\tsandbox: rawset on a locked table (cannot set 'token_f1')",
    "false\tcannot change a protected metatable",
    '[]\t{"a":1}\t1.0',
    "true\tsandbox: locked", "" }, "\n"))
end

function test_names_off_the_allow_list_are_absent_or_refused()
  local r = sandboxed([[
print(os.setlocale, string.dump ~= nil, math.sqrt(4), utf8.char(72), coroutine.running() ~= nil)
print(pcall(io.tmpfile))
print(pcall(collectgarbage, "stop"))
print(collectgarbage("count") > 0)]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, table.concat({
    "nil\ttrue\t2.0\tH\ttrue",
    "false\tsandbox: io.tmpfile is not available in --sandbox mode",
    'false\tsandbox: collectgarbage("stop") is not available in --sandbox mode',
    "true", "" }, "\n"))
end

os.exit(lu.LuaUnit.run(), true)
