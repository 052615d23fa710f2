-- History and nested folders under --sandbox (issue 13, item 10): a script
-- creates folders several levels deep under --out, appends to a history,
-- and the nightly job runs sandboxed.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local dir
TestFolders = {}
function TestFolders.setUp() dir = h.tmpdir() end
function TestFolders.tearDown() h.sh("rm -rf " .. dir) end

local function sandboxed(code)
  h.write(dir .. "/s.lua", code)
  return h.run(("cd %s && %s run --sandbox --out out s.lua"):format(dir, h.bin))
end

function TestFolders.test_nested_missing_folders_are_created_under_out()
  local r = sandboxed([[
local sys = require("evalua").sys
print(sys.mkdir("out/a/b/c"))
print(pcall(sys.mkdir, "out/x/../../escaped"))
print(pcall(sys.mkdir, "elsewhere/a/b"))]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "true\n"
    .. "false\tsandbox: write access to 'out/x/../../escaped' is not allowed (writable only under --out)\n"
    .. "false\tsandbox: write access to 'elsewhere/a/b' is not allowed (writable only under --out)\n")
  lu.assertTrue(h.sh("test -d " .. dir .. "/out/a/b/c"))
  lu.assertNotEquals(h.sh("test -e " .. dir .. "/escaped"), true)
end

function TestFolders.test_history_appends_in_the_sandbox()
  local r = sandboxed([[
local ev = require "evalua"
local res = ev.evaluate(ev.dataset.from_rows({ { qid = "q1", s = 1 } }, "mem"),
                        { metrics = { { name = "s", fn = function(r) return r.s end } } })
local hist = ev.history.open("out/deep/history")
hist:append(res, { label = "a" })
hist:append(res, { label = "b" })
print(#hist:records(), hist:latest().label, hist:latest().git_commit)]])
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.status, 0)
  lu.assertEquals(r.stdout, "2\tb\tnil\n")
end

function TestFolders.test_nightly_runs_sandboxed()
  local cmd = ("cd %s && %s run --sandbox --read scripts --out %s scripts/nightly.lua --tier smoke --out %s/nightly")
    :format(os.getenv("EVALUA_SRC") or ".", h.bin, dir, dir)
  for run = 1, 2 do
    local r = h.run(cmd)
    lu.assertEquals(r.status, 0, r.stderr)
    lu.assertStrContains(r.stdout, run == 1 and "no baseline to compare with" or "significant regressions <= 0: none")
  end
  lu.assertEquals(#require("evalua").history.open(dir .. "/nightly/history"):records(), 2)
end

os.exit(lu.LuaUnit.run(), true)
