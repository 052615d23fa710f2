-- Sizes are checked before arithmetic and numbers before they become C
-- integers, at the Lua boundary (issue 26, item 3): each case here
-- overflowed, wrapped or was cast out of range before.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local T = require "evalua._table"

local function rows(n)
  local t = T.new { rag = true }
  for i = 1, n do assert(t:append(('{"qid": "q%d", "answer": "a"}'):format(i), i)) end
  return t
end

-- bottom = 2^61 made nvalues * k wrap in scores:bottom: a heap overflow
-- (an abort in the shipped binary), under --sandbox too.
function test_a_huge_bottom_lists_every_row()
  local dir = h.tmpdir()
  h.write(dir .. "/in/d.jsonl", '{"qid":"q1","answer":"a","gold_answers":["a"]}\n'
    .. '{"qid":"q2","answer":"b","gold_answers":["c"]}\n')
  h.write(dir .. "/s.lua", [[
local ev = require "evalua"
local ds = ev.dataset.load("in/d.jsonl")
for _, k in ipairs { 2^61, math.maxinteger, 1e300 } do
  print(#ev.evaluate(ds, { metrics = { "exact_match" }, bottom = k }).bottom.all.exact_match)
end
print(pcall(ev.evaluate, ds, { metrics = { "exact_match" }, bottom = 2.5 }))]])
  local r = h.run(("cd %s && %s run --sandbox --read in s.lua"):format(dir, h.bin))
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "2\n2\n2\nfalse\tev.evaluate: bottom must be a whole number of items, at least 0 (got 2.5)\n")
end

function test_score_tables_are_checked_before_they_are_sized()
  h.fails_with_argument_error(1, "a size from 0 to 2^59", T.scores, 2 ^ 62, 1)
  h.fails_with_argument_error(2, "a size from 0 to 2^59", T.scores, 1, -1)
  local s = T.scores(4, 1)
  local codes = T.codes_of { "a", "b", "a", "b" }
  for i = 1, 4 do s:set(i, 1, i / 4) end
  lu.assertEquals(s:bottom(1, codes, math.maxinteger, false), { { 1, 3 }, { 2, 4 } })
  -- a group value of 0 wrapped to 2^32 - 1 and matched nothing, silently
  h.fails_with_argument_error(4, "a value of the codes", s.column, s, 1, codes, 0)
  h.fails_with_argument_error(4, "a value of the codes", s.column, s, 1, codes, 3)
  lu.assertEquals(s:column(1, codes, 2), { 0.5, 1 })
  lu.assertErrorMsgContains("resamples from 1 to 1e7", s.aggregate, s, codes, { "a", "b" }, { "m" }, nil, { "all" },
                            { resamples = -1 })
end

-- A line number past 2^32 wrapped to a small one.
function test_a_row_line_must_fit()
  local t = rows(1)
  h.fails_with_argument_error(3, "a line number from 0 to 2^32 - 1", t.append, t, '{"qid": "x"}', 2 ^ 32)
  lu.assertEquals(#t, 1)
end

-- A reason column past the metrics read past the array of their names.
function test_a_report_reason_column_must_name_a_metric()
  local t = rows(2)
  local s = T.scores(2, 1)
  local codes, values = T.codes_of { "a", "a" }
  local spec = { table = t, scores = s, sys_codes = codes, systems = values, metrics = { "m" }, dims = {},
                 dim_codes = {}, dim_values = {}, id_field = "qid" }
  h.fails_with_argument_error(2, "a metric index from 0", require("evalua._report").csv, spec, { 5 })
  lu.assertStrContains(require("evalua._report").csv(spec, { 0 }), "id,system,m,m.reason,query,answer\r\n")
end

-- An exit status past 255 left the process with that status mod 256: 0.
function test_an_exit_status_must_fit()
  local r = h.run_script('require("evalua").exit(256)')
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "bad argument #1 to 'exit' (an exit status from 0 to 255)")
  lu.assertEquals(h.run_script('require("evalua").exit(4)').status, 4)
end

function test_json_depth_is_bounded()
  local J = require "evalua._json"
  h.fails_with_argument_error(3, "a depth from 0 to 64", J.encode, {}, "  ", -2 ^ 31)
  lu.assertEquals(J.encode({ 1 }, "  ", 1), "[\n    1\n  ]")
end

os.exit(lu.LuaUnit.run(), true)
