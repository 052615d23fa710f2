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
  lu.assertStrContains(r.stderr, "script.lua:1: sandbox: the 'string' table is read-only (cannot set 'upper')")
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
  local r = sandboxed('local ev = require "evalua"; print(ev.version, require("cjson").encode({1}))')
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "[1]")
end

function test_trusted_mode_keeps_the_full_library()
  local r = h.run_script('print(type(os.execute), type(io.popen), type(debug.traceback))')
  lu.assertEquals(r.stdout, "function\tfunction\tfunction\n")
end

os.exit(lu.LuaUnit.run(), true)
