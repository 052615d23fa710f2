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

-- A report of the scores (false: unmeasured); systems: the variant of each
-- item (default: one system, "all").
local function write(dir, name, scores, judge, systems, hist, items)
  local rows = {}
  for i = 1, #scores do
    rows[i] = { qid = "q" .. i, i = i, query_class = i <= 3 and "x" or "y", variant = systems and systems[i] }
  end
  local res = ev.evaluate(ev.dataset.from_rows(rows, "rows.jsonl"), {
    metrics = { { name = "m", fn = function(r)
      if scores[r.i] == false then return { unmeasured = true, reason = "no answer" } end
      return scores[r.i]
    end } }, slices = { "query_class" }, system = systems and "variant" or nil,
    meta = { label = name, time = "2026-01-0" .. (name == "a" and 1 or 2) .. "T00:00:00Z" } })
  res.meta.judge = { model = judge }
  if hist then hist:append(res, { label = name, dashboard = false, git_commit = false }) end
  return ev.report.write(res, { dir = dir .. "/" .. name, name = "r", formats = { "json" }, items = items })[1]
end

local function diff(args) return h.run(h.bin .. " diff " .. args) end

-- evalua diff --history DIR [A [B]]: two runs of a history's store compared
-- as their JSON reports are, with the same numbers (p = 2/64 as below).
function test_diff_of_two_runs_of_a_history()
  local dir = h.tmpdir()
  local hist = ev.history.open(dir .. "/h")
  local r = diff("--history " .. dir .. "/h")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: diff: " .. dir .. "/h/history.db has 0 runs: nothing to compare (try --help)\n")
  local a = write(dir, "a", A, "judge-1", nil, hist)
  local b = write(dir, "b", B, "judge-2", nil, hist)
  hist:close()
  local from_reports = diff("--slices --format json " .. a .. " " .. b)
  for _, args in ipairs { "", " a b", " a" } do
    r = diff("--slices --format json --history " .. dir .. "/h" .. args)
    lu.assertEquals(r.status, 1, r.stderr)
    local doc, want = cjson.decode(r.stdout), cjson.decode(from_reports.stdout)
    lu.assertStrContains(doc.baseline.path, dir .. "/h/history.db run ")
    doc.baseline.path, doc.run.path, want.baseline.path, want.run.path = nil, nil, nil, nil
    lu.assertEquals(doc, want)
    lu.assertEquals(doc.rows[1].p, 0.03125)
  end
  r = diff("--history " .. dir .. "/h b a")
  lu.assertEquals(r.status, 0)
  lu.assertStrContains(r.stdout, "0.400 ->   0.733  ▲ +0.333")
  r = diff("--history " .. dir .. "/h a c")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: diff: " .. dir .. "/h/history.db has no run c (runs: a, b) (try --help)\n")
  r = diff("--history " .. dir .. "/h a b c")
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "diff --history takes at most two runs, A and B, got 3")
  h.sh("rm -rf " .. dir)
end

-- The compact items (the default) and the full ones (items = "full", each
-- with its row) compare alike, in either order.
function test_diff_reads_both_forms_of_items()
  local dir = h.tmpdir()
  local a, b = write(dir, "a", A, "judge-1"), write(dir, "b", B, "judge-2")
  local af = write(dir, "af", A, "judge-1", nil, nil, "full")
  local bf = write(dir, "bf", B, "judge-2", nil, nil, "full")
  lu.assertStrContains(h.read(af), '"row": {')
  lu.assertNotStrContains(h.read(a), '"row"')
  local function out(x, y)
    local r = diff("--slices --format json " .. x .. " " .. y)
    lu.assertEquals(r.status, 1, r.stderr)
    local doc = cjson.decode(r.stdout)
    doc.baseline, doc.run = nil, nil -- paths, labels and times differ
    return doc
  end
  local want = out(a, b)
  lu.assertEquals(want.rows[1].p, 0.03125)
  lu.assertEquals(out(af, bf), want)
  lu.assertEquals(out(a, bf), want)
  lu.assertEquals(out(af, b), want)
  h.sh("rm -rf " .. dir)
end

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
    "before, after: each report's mean over the items it measured, as its own tables show.",
    "pairs: the items both reports measured (matched by system and id); p: paired permutation test on them; "
      .. "significant when p < 0.05.",
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
  -- alpha is a significance level: 5 would call every difference significant
  local r6 = diff("--alpha 5 " .. a .. " " .. a)
  lu.assertEquals(r6.status, 2)
  lu.assertEquals(r6.stderr, "evalua: --alpha must be a significance level between 0 and 1 (such as 0.05), got '5' (try --help)\n")
  -- resamples and seed are whole numbers, resamples bounded (1.5 was read as the default 10000)
  for opt, msg in pairs {
    ["--resamples 1.5"] = "--resamples expects a whole number, got '1.5'",
    ["--resamples 0"] = "--resamples must be at least 1, got '0'",
    ["--resamples 1e10"] = "--resamples must be at most 10000000, got '1e10'",
    ["--seed 0.5"] = "--seed expects a whole number, got '0.5'",
  } do
    local r = diff(opt .. " " .. a .. " " .. a)
    lu.assertEquals({ r.status, r.stderr }, { 2, "evalua: " .. msg .. " (try --help)\n" })
  end
  h.sh("rm -rf " .. dir)
end

-- An item measured in one report only: before and after stay each report's
-- mean (as its tables show), the row is marked and gives the paired means.
-- B's q6 is unmeasured: 5 pairs, A's mean over them (0.9+0.8+0.7+0.6+0.5)/5
-- = 0.700, B's 1.8/5 = 0.360; 5 differences of one sign: p = 2/32.
function test_paired_means_are_explained_when_an_item_is_measured_once()
  local dir = h.tmpdir()
  local a = write(dir, "a", A, "j")
  local b = write(dir, "b", { 0.5, 0.5, 0.4, 0.3, 0.1, false }, "j")
  local r = diff(a .. " " .. b)
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "all            all                    m                    0.733 ->   0.360  ▼ -0.373      5* "
    .. "0.0625  (paired: 0.700 -> 0.360)\n")
  lu.assertStrContains(r.stdout, "\n*: some items are measured in one report only; the paired means, over the pairs alone, "
    .. "follow the row.\n")
end

-- Reports of other systems say what is compared; counts are integers.
function test_other_systems_are_named_and_what_is_compared()
  local dir = h.tmpdir()
  local a = write(dir, "a", A, "j", { "bm25", "bm25", "bm25", "bm25", "bm25", "bm25" })
  local b = write(dir, "b", { 0.5, 0.5, 0.4, 0.3, 0.1, 0.6, 0.7 }, "j", { "hybrid", "hybrid", "hybrid", "hybrid", "hybrid", "hybrid", "hybrid" })
  local r = diff(a .. " " .. b)
  lu.assertEquals(r.status, 1, r.stderr)
  local lines = {}
  for l in r.stdout:gmatch("[^\n]*") do lines[#lines + 1] = l end
  lu.assertEquals(lines[2], "systems differ: A has bm25, B has hybrid; compared: the one system of each, bm25 (A) with hybrid (B)")
  lu.assertStrMatches(lines[3], "warning: data set changed: sha256 %x+ %(6 rows%) in the baseline, %x+ %(7 rows%) now")
  -- B's q7 has no pair: B's mean is 3.1/7, the paired one 2.4/6
  lu.assertStrContains(r.stdout, "\nhybrid         all                    m                    0.733 ->   0.443  ▼ -0.290      6* "
    .. "0.0312 REGRESSION  (paired: 0.733 -> 0.400)\n")
  -- two systems against one of them
  local c = write(dir, "c", { 0.5, 0.5, 0.4, 0.3, 0.1, 0.6 }, "j", { "bm25", "hybrid", "bm25", "hybrid", "bm25", "hybrid" })
  r = diff(a .. " " .. c)
  lu.assertStrContains(r.stdout, "\nsystems differ: only in A: none; only in B: hybrid; compared: bm25 (in both)\n")
  lu.assertNotStrContains(r.stdout, "\nhybrid ")
  -- nothing in common
  local d = write(dir, "d", A, "j", { "x", "y", "x", "y", "x", "y" })
  r = diff(a .. " " .. d)
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, ("%s and %s have no system in common (A: bm25; B: x, y): nothing to compare\n"):format(a, d))
end

-- A tampered report is named by file and field, never with a traceback.
function test_a_tampered_report_is_named_by_field()
  local dir = h.tmpdir()
  local a = write(dir, "a", A, "j")
  local doc = cjson.decode(h.read(a))
  doc.items[2].scores.m = "high"
  h.write(dir .. "/t.json", cjson.encode(doc))
  local r = diff(a .. " " .. dir .. "/t.json")
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, dir .. "/t.json: field 'items[2].scores.m': expected a finite number, got a string\n")
  doc = cjson.decode(h.read(a))
  doc.aggregates.all = { "x" }
  h.write(dir .. "/t.json", cjson.encode(doc))
  r = diff(a .. " " .. dir .. "/t.json")
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, dir .. "/t.json: field 'aggregates.all': expected an object, got a list\n")
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
