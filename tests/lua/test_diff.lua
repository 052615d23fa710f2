-- evalua diff A.json B.json on two reports whose scores are known: the
-- deltas, an exact paired permutation test, the flips, the warning for a
-- changed judge, the exit status and the errors for files that are not
-- JSON reports.
local lu = require "luaunit"
local cjson = require "cjson"
local ev = require "evalua"
local h = require "tests.lua.helpers"

-- Six items of one system; every score falls from A to B.
local A = { 0.9, 0.8, 0.7, 0.6, 0.5, 0.9 }
local B = { 0.5, 0.5, 0.4, 0.3, 0.1, 0.6 }

local function write(dir, name, scores, judge)
  local rows = {}
  for i = 1, #scores do rows[i] = { qid = "q" .. i, i = i, query_class = i <= 3 and "x" or "y" } end
  local res = ev.evaluate(ev.dataset.from_rows(rows, "rows.jsonl"), {
    metrics = { { name = "m", fn = function(r) return scores[r.i] end } }, slices = { "query_class" },
    meta = { label = name, time = "2026-01-0" .. (name == "a" and 1 or 2) .. "T00:00:00Z" } })
  res.meta.judge = { model = judge }
  return ev.report.write(res, { dir = dir .. "/" .. name, name = "r", formats = { "json" } })[1]
end

local function diff(args) return h.run(h.bin .. " diff " .. args) end

function test_diff_of_two_reports()
  local dir = h.tmpdir()
  local a, b = write(dir, "a", A, "judge-1"), write(dir, "b", B, "judge-2")
  local r = diff(a .. " " .. b)
  -- 6 differences of one sign: 2 of the 64 sign patterns reach |sum|, p = 2/64
  lu.assertEquals(r.status, 1, r.stderr)
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, table.concat({
    ("a (%s, 2026-01-01T00:00:00Z) -> b (%s, 2026-01-02T00:00:00Z)"):format(a, b),
    "warning: judge model changed: judge-1 in the baseline, judge-2 now; judged scores are not comparable",
    "",
    "system         slice                  metric              before      after  delta     pairs  p",
    "all            all                    m                    0.733 ->   0.400  ▼ -0.333      6  0.0312 REGRESSION",
    "",
    "p: paired permutation test on the items both reports measured (matched by system and id); significant when p < 0.05.",
    "all m (pass at 0.50): pass to fail: q3, q4, q5; fail to pass: none",
    "" }, "\n"))
  -- per slice, as JSON: query_class=x has 3 pairs (p = 2/8, not significant)
  local j = diff("--slices --format json " .. a .. " " .. b)
  lu.assertEquals(j.status, 1)
  local doc = cjson.decode(j.stdout)
  lu.assertEquals(#doc.rows, 3)
  lu.assertEquals({ doc.rows[2].dim, doc.rows[2].value, doc.rows[2].n, doc.rows[2].p }, { "query_class", "x", 3, 0.25 })
  lu.assertFalse(doc.rows[2].regression)
  lu.assertEquals(doc.flips.all.m.to_fail, { "q3", "q4", "q5" })
  -- the same report twice: nothing changed, exit 0, no warning
  local same = diff(a .. " " .. a)
  lu.assertEquals(same.status, 0)
  lu.assertStrContains(same.stdout, "0.733 ->   0.733  = +0.000      6  1.0000\n")
  lu.assertNotStrContains(same.stdout, "warning")
  h.sh("rm -rf " .. dir)
end

function test_files_that_are_not_reports()
  local dir = h.tmpdir()
  local a = write(dir, "a", A, "judge-1")
  h.write(dir .. "/empty.json", "{}")
  h.write(dir .. "/broken.json", "{")
  local r = diff(a .. " " .. dir .. "/empty.json")
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, dir .. "/empty.json: field 'systems': missing; expected an evalua JSON report "
    .. "(ev.report.write, format json)\n")
  local r2 = diff(a .. " " .. dir .. "/broken.json")
  lu.assertEquals(r2.status, 3)
  lu.assertStrContains(r2.stderr, dir .. "/broken.json: not JSON: ")
  local r3 = diff(a .. " " .. dir .. "/none.json")
  lu.assertEquals(r3.status, 3)
  lu.assertEquals(r3.stderr, dir .. "/none.json: cannot read (No such file or directory)\n")
  local r4 = diff(a)
  lu.assertEquals(r4.status, 2)
  lu.assertEquals(r4.stderr, "evalua: diff needs two JSON reports, A (the baseline) and B, got 1 (try --help)\n")
  local r5 = diff("--format xml " .. a .. " " .. a)
  lu.assertEquals(r5.status, 2)
  lu.assertEquals(r5.stderr, "evalua: --format must be one of text, json, got 'xml' (try --help)\n")
  h.sh("rm -rf " .. dir)
end

function test_help()
  local r = h.run(h.bin .. " --help")
  lu.assertStrContains(r.stdout, "\n       evalua diff [OPTIONS] A.json B.json    compare two saved JSON reports\n")
  local d = h.run(h.bin .. " diff --help")
  lu.assertEquals(d.status, 0)
  lu.assertStrContains(d.stdout, "evalua diff [options] A.json B.json\n")
  lu.assertStrContains(d.stdout, "  --format FORMAT          what to print (one of: text, json) (default: text)\n")
end

os.exit(lu.LuaUnit.run(), true)
