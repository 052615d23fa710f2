-- The viewer's filters over a run's table (evalua.view.index, items.lua):
-- "systems disagree" keeps a row whose score and another system's on the
-- same item fall on either side of 0.5, "unmeasured" a row without a
-- score, "below" a score under the value; each checked against the item
-- ids worked out by hand below. A child evalua with its own cache folder.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

-- m's score per item and system (nil: unmeasured); pass is >= 0.5.
local ROWS = {
  { qid = "q1", variant = "A", s = 0.7 }, { qid = "q1", variant = "B", s = 0.2 },  -- A passes, B fails
  { qid = "q2", variant = "A", s = 0.6 }, { qid = "q2", variant = "B", s = 0.9 },  -- both pass...
  { qid = "q2", variant = "C", s = 0.4 },                                          -- ...and C fails
  { qid = "q3", variant = "A", s = 0.1 }, { qid = "q3", variant = "B" },          -- B unmeasured
  { qid = "q4", variant = "A", s = 0.3 },                                          -- A alone
  { qid = "q5", variant = "B", s = 0.5 }, { qid = "q5", variant = "C", s = 0.5 },  -- both pass (0.5)
}

local SHOW = [[
local source, runs = require "evalua.view.source", require "evalua.view.runs"
local index, items = require "evalua.view.index", require "evalua.view.items"
local src = source.history(arg[1])
local r = runs.find(src, "nightly")
local idx = index.build(src, r)
for _, f in ipairs { { disagree = true }, { disagree = true, metric = "m" }, { unmeasured = true },
                     { metric = "m", below = 0.35 } } do
  f.seq, f.page, f.per = r.seq, 1, 50
  local out = {}
  for _, row in ipairs(items.page(src, idx, f).rows) do out[#out + 1] = row.system .. ":" .. row.item end
  io.write(table.concat(out, " "), "\n")
end
]]

TestViewFilters = {}

function TestViewFilters:test_disagree_unmeasured_and_below_keep_the_rows_worked_out_by_hand()
  local dir = h.tmpdir()
  local res = ev.evaluate(ROWS, { metrics = { { name = "m", fn = function(r) return r.s end } }, system = "variant",
                                  ci = false })
  ev.report.write(res, { dir = dir .. "/h", name = "run", formats = { "json" }, items = "full" })
  local hist = ev.history.open(dir .. "/h")
  hist:append(res, { label = "nightly", report = dir .. "/h/run.json", dashboard = false, git_commit = false })
  hist:close()
  local r = h.run_script(SHOW, "", dir .. "/h", "XDG_CACHE_HOME=" .. dir .. "/cache")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, table.concat({
    "A:q1 A:q2 B:q1 B:q2 C:q2", -- by system, then id
    "A:q1 A:q2 B:q1 B:q2 C:q2",
    "B:q3",
    "A:q3 A:q4 B:q1",
  }, "\n") .. "\n")
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run())
