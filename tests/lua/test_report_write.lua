-- ev.report.write never leaves a partial report folder (issue 13, item 2):
-- files are written into a temporary folder and moved into place.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local PRELUDE = [[
local ev = require "evalua"
local res = ev.evaluate(ev.dataset.from_rows({ { qid = "q1", s = 0.5 } }, "mem"),
                        { metrics = { { name = "s", fn = function(r) return r.s end } } })
ev.report.register("die", function() os.exit(9) end, "txt")
]]

local function ls(dir)
  local p = io.popen("cd " .. dir .. " && find . | sort")
  local out = p:read("a")
  p:close()
  return out
end

function test_a_run_killed_while_writing_leaves_no_report_folder()
  local dir = h.tmpdir()
  h.write(dir .. "/s.lua", PRELUDE .. [[
ev.report.write(res, { dir = "out/reports/today", formats = { "md", "die" } })]])
  local r = h.run(("cd %s && %s run s.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 9)
  local listing = ls(dir .. "/out/reports")
  h.sh("rm -rf " .. dir)
  lu.assertNotStrContains(listing, "./today\n")
  lu.assertStrMatches(listing, "%.\n%./today%.tmp%-%d+\n%./today%.tmp%-%d+/report%.md\n")
end

function test_reports_move_into_a_new_or_existing_folder_and_nothing_else_remains()
  local dir = h.tmpdir()
  h.write(dir .. "/s.lua", PRELUDE .. [[
print(table.concat(ev.report.write(res, { dir = "out/new/", formats = { "md", "json" } }), " "))
print(table.concat(ev.report.write(res, { dir = "out", name = "r", formats = { "csv" } }), " "))]])
  h.write(dir .. "/out/keep.txt", "mine")
  local r = h.run(("cd %s && %s run --sandbox --out out s.lua"):format(dir, h.bin))
  local listing = ls(dir .. "/out")
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "out/new/report.md out/new/report.json\nout/r.csv\n")
  lu.assertEquals(listing, ".\n./keep.txt\n./new\n./new/report.json\n./new/report.md\n./r.csv\n")
end

os.exit(lu.LuaUnit.run(), true)
