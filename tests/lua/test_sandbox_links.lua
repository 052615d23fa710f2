-- Writes cannot land outside --out (issue 13, item 6): not through a
-- dangling symbolic link inside it, and not by swapping a folder for a link
-- between the sandbox's check and the open (they are one step now).
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local dir
TestLinks = {}
function TestLinks.setUp()
  dir = h.tmpdir()
  h.sh(("mkdir -p %s/out %s/outside && ln -s %s/outside/created %s/out/dangling"):format(dir, dir, dir, dir))
end
function TestLinks.tearDown() h.sh("rm -rf " .. dir) end

local function sandboxed(code)
  h.write(dir .. "/s.lua", code)
  return h.run(("cd %s && %s run --sandbox --out out s.lua"):format(dir, h.bin))
end

function TestLinks.test_a_dangling_link_inside_out_is_not_followed()
  local r = sandboxed([[
local sys = require("evalua").sys
print(io.open("out/dangling", "w"))
print(io.open("out/dangling", "a"))
print(pcall(sys.append, "out/dangling", "x"))
print(pcall(io.output, "out/dangling"))
-- rename(2) replaces the link itself: the new file is inside out
print(pcall(sys.write_atomic, "out/dangling", "x"))]])
  lu.assertEquals(r.status, 0, r.stderr)
  local refused = "sandbox: write access to 'out/dangling' is not allowed (no symbolic links under --sandbox)"
  lu.assertEquals(r.stdout, table.concat({
    "nil\t" .. refused .. "\t40", "nil\t" .. refused .. "\t40",
    "false\t" .. refused,
    "false\t" .. refused, "true\ttrue", "" }, "\n"))
  lu.assertEquals(h.read(dir .. "/out/dangling"), "x")
  lu.assertNotEquals(h.sh(("test -e %s/outside/created"):format(dir)), true)
end

function TestLinks.test_remove_rename_and_lines_do_not_follow_links()
  h.sh(("ln -s %s/outside %s/out/away && echo secret > %s/outside/s"):format(dir, dir, dir))
  local r = sandboxed([[
print(pcall(io.lines, "out/away/s"))
print(pcall(require("evalua").sys.listdir, "out/away"))
print(pcall(os.remove, "out/away/s"))
local f = assert(io.open("out/f", "w")); f:write("1\n2\n"); f:close()
print(pcall(os.rename, "out/f", "out/away/f"))
local n = 0
for l in io.lines("out/f") do n = n + l end
print(n, os.rename("out/f", "out/dangling"))]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, table.concat({
    "false\tsandbox: read access to 'out/away/s' is not allowed (readable only under --read or --out)",
    "false\tsandbox: read access to 'out/away' is not allowed (no symbolic links under --sandbox)",
    "false\tsandbox: write access to 'out/away/s' is not allowed (writable only under --out)",
    "false\tsandbox: write access to 'out/away/f' is not allowed (writable only under --out)",
    "3\ttrue", "" }, "\n"))
  lu.assertEquals(h.read(dir .. "/outside/s"), "secret\n")
  lu.assertEquals(h.read(dir .. "/out/dangling"), "1\n2\n") -- the link was replaced, not followed
  lu.assertNotEquals(h.sh(("test -e %s/outside/created"):format(dir)), true)
end

-- os.remove and os.rename act on a link itself, as rename(2) and unlink(2)
-- do, whether it points inside --out or out of it (issue 26, item 12).
function TestLinks.test_remove_and_rename_act_on_the_link_not_its_target()
  h.sh(("cd %s && echo in > out/target && ln -s target out/inner && ln -s inner out/inner2"
    .. " && echo secret > outside/s && ln -s %s/outside/s out/outer"):format(dir, dir))
  local r = sandboxed([[
print(os.remove("out/inner"))
print(os.rename("out/inner2", "out/moved"))
print(os.remove("out/outer"))
print(io.open("out/moved"))]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "true\ntrue\ntrue\n"
    .. "nil\tsandbox: read access to 'out/moved' is not allowed (no symbolic links under --sandbox)\t40\n")
  lu.assertEquals(h.read(dir .. "/out/target"), "in\n")   -- the target stays
  lu.assertEquals(h.read(dir .. "/outside/s"), "secret\n")
  local p = io.popen(("cd %s/out && ls && readlink moved"):format(dir))
  lu.assertEquals(p:read("a"), "dangling\nmoved\ntarget\ninner\n") -- the links went, the link moved as it was
  p:close()
end

function TestLinks.test_swapping_a_folder_for_a_link_during_writes_never_escapes()
  -- a shell swaps out/d between a folder and a link to ../outside while the
  -- script writes out/d/f as fast as it can
  local swap = ("cd %s && end=$((SECONDS+1)); while [ $SECONDS -lt $end ]; do "
    .. "mkdir -p out/d.dir && mv -T out/d.dir out/d 2>/dev/null; "
    .. "ln -sfn ../outside out/d.link && mv -T out/d.link out/d 2>/dev/null; done"):format(dir)
  h.write(dir .. "/s.lua", [[
local ok, n = 0, 0
local t = require("evalua").sys.monotonic()
while require("evalua").sys.monotonic() - t < 1 do
  n = n + 1
  local f = io.open("out/d/f" .. n % 50, "w")
  if f then ok = ok + 1; f:write("x"); f:close() end
end
print(n > 100, ok > 0) -- the loop ran, and wrote whenever out/d was a folder]])
  local r = h.run(("bash -c '(%s) & %s; wait'"):format(swap,
    ("cd %s && %s run --sandbox --out out s.lua"):format(dir, h.bin)))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "true\ttrue\n")
  local p = io.popen(("ls %s/outside | wc -l"):format(dir))
  local escaped = tonumber(p:read("a"))
  p:close()
  lu.assertEquals(escaped, 0)
end

-- TREC files are opened in the same step as the check: a link in --out to
-- a file outside is refused, and the real files load.
function TestLinks.test_trec_files_are_opened_beneath_the_folder()
  h.sh(("printf '1 0 d1 1\\n' > %s/out/q && printf '1 Q0 d1 1 2.0 r\\n' > %s/out/r"):format(dir, dir))
  h.sh(("printf '1 0 d1 1\\n' > %s/outside/q && ln -s %s/outside/q %s/out/linked"):format(dir, dir, dir))
  local r = sandboxed([[
local ev = require "evalua"
print(ev.dataset.trec("out/q", "out/r").n)
print(pcall(ev.dataset.trec, "out/linked", "out/r"))]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "1\nfalse\tsandbox: read access to 'out/linked' is not allowed (no symbolic links under --sandbox)\n")
end

os.exit(lu.LuaUnit.run(), true)
