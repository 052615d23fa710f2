-- ev.history, ev.compare and ev.gate: a history round trip, comparisons
-- with known answers, gate statuses, and concurrent appends.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

local function run_of(scores, opts)
  local rows = {}
  for i, s in ipairs(scores) do
    rows[i] = { qid = "q" .. i, query_class = i % 2 == 0 and "even" or "odd", s = s }
  end
  local metric = { name = "s", fn = function(row)
    if row.s == false then return { unmeasured = true, reason = "no answer" } end
    return row.s
  end }
  return ev.evaluate(ev.dataset.from_rows(rows, "mem"), { metrics = { metric }, slices = { "query_class" },
                                                       meta = opts and opts.meta })
end

local dir
TestHistory = {}
function TestHistory:setUp() dir = h.tmpdir() end
function TestHistory:tearDown() h.sh("rm -rf " .. dir) end

function TestHistory:test_round_trip_keeps_records_and_item_scores()
  local hist = ev.history.open(dir .. "/h")
  local res = run_of { 0.1, 0.2, 0.3, 0.4 }
  local rec = hist:append(res, { label = "v1.0", notes = "first" })
  local all = hist:records()
  lu.assertEquals(#all, 1)
  lu.assertEquals(all[1].run_id, rec.run_id)
  lu.assertEquals(all[1].label, "v1.0")
  lu.assertEquals(all[1].notes, "first")
  lu.assertEquals(all[1].dataset.hash, res.meta.dataset.hash)
  lu.assertAlmostEquals(all[1].aggregates.all.all.all.s.mean, 0.25, 1e-12)
  lu.assertAlmostEquals(all[1].aggregates.all.query_class.even.s.mean, 0.3, 1e-12)
  local items = hist:items(all[1])
  lu.assertEquals(items.all.q3.scores.s, 0.3)
  lu.assertEquals(items.all.q4.slices.query_class, "even")
  hist:append(run_of { 0.5 }, { label = "v1.1" })
  lu.assertEquals(hist:latest().label, "v1.1")
  lu.assertEquals(hist:find("v1.0").run_id, rec.run_id)
  lu.assertNil(hist:find("v9"))
end

function TestHistory:test_a_corrupt_history_line_is_named()
  local hist = ev.history.open(dir .. "/h", { jsonl = true }) -- writes history.jsonl's line 1 too
  hist:append(run_of { 1 })
  local f = io.open(dir .. "/h/history.jsonl", "a")
  f:write("{oops\n")
  f:close()
  local ok, err = pcall(hist.records, hist)
  lu.assertFalse(ok)
  lu.assertStrContains(err, dir .. "/h/history.jsonl:2: invalid history record")
end

function TestHistory:test_comparison_delta_arrow_significance_and_flips()
  local hist = ev.history.open(dir .. "/h")
  local before = {}
  for i = 1, 20 do before[i] = 0.8 end
  hist:append(run_of(before), { label = "base" })
  -- every item drops by 0.5: a certain regression
  local after = {}
  for i = 1, 20 do after[i] = 0.3 end
  local res = run_of(after)
  local cmp = ev.compare(res, hist, hist:find("base"), { resamples = 2000 })
  local all = cmp.rows[1]
  lu.assertEquals({ all.dim, all.metric, all.arrow, all.n }, { "all", "s", "▼", 20 })
  lu.assertAlmostEquals(all.before, 0.8, 1e-12)
  lu.assertAlmostEquals(all.delta, -0.5, 1e-12)
  lu.assertTrue(all.p < 0.001)
  lu.assertTrue(all.regression)
  lu.assertEquals(#cmp.flips.all.s.to_fail, 20)
  lu.assertEquals(#cmp.flips.all.s.to_pass, 0)
  lu.assertIs(res.comparison, cmp)
end

function TestHistory:test_no_change_is_not_significant()
  local hist = ev.history.open(dir .. "/h")
  local xs = { 0.1, 0.9, 0.4, 0.6, 0.5, 0.3, 0.7, 0.2 }
  hist:append(run_of(xs), { label = "base" })
  local ys = { 0.9, 0.1, 0.6, 0.4, 0.5, 0.7, 0.3, 0.2 } -- same values, swapped in pairs: mean unchanged
  local cmp = ev.compare(run_of(ys), hist, hist:latest())
  local all = cmp.rows[1]
  lu.assertEquals(all.arrow, "=")
  lu.assertAlmostEquals(all.delta, 0, 1e-12)
  lu.assertFalse(all.regression)
  lu.assertTrue(all.p > 0.5)
  -- pass means >= 0.5: q2, q4, q7 went from pass to fail, q1, q3, q6 the other way
  lu.assertEquals(cmp.flips.all.s.to_fail, { "q2", "q4", "q7" })
  lu.assertEquals(cmp.flips.all.s.to_pass, { "q1", "q3", "q6" })
end

function TestHistory:test_gates_pass_fail_and_undecided()
  local res = run_of { 0.9, 0.2, 0.8, 0.4, false, false } -- odd: 0.9, 0.8, (unmeasured); even: 0.2, 0.4, (unmeasured)
  local gates = ev.gate.check(res, {
    tiers = { by = "query_class", P0 = { "odd" }, P1 = { "even" } },
    thresholds = { s = { P0 = 0.7, P1 = 0.5 } },
    min_coverage = 0.6,
  })
  lu.assertEquals(#gates, 2)
  lu.assertEquals({ gates[1].name, gates[1].status }, { "s[query_class=odd] >= 0.7", "pass" })
  lu.assertEquals({ gates[2].name, gates[2].status }, { "s[query_class=even] >= 0.5", "fail" })
  lu.assertAlmostEquals(gates[2].actual, 0.3, 1e-12)
  lu.assertEquals(ev.gate.exit_code(gates), 1)
  gates = ev.gate.check(res, { tiers = { by = "query_class", P0 = { "odd" } }, thresholds = { s = { P0 = 0.7 } },
                               min_coverage = 0.8 })
  lu.assertEquals(gates[1].status, "undecided")
  lu.assertEquals(gates[1].message, "only 2 of 3 items measured (need 80%)")
  lu.assertEquals(ev.gate.exit_code(gates), 4)
  lu.assertEquals(ev.gate.exit_code(ev.gate.check(res, { thresholds = { s = { all = 0.1 } }, min_coverage = 0.5 })), 0)
end

function TestHistory:test_regression_gate_counts_significant_regressions()
  local hist = ev.history.open(dir .. "/h")
  local hi, lo = {}, {}
  for i = 1, 16 do hi[i], lo[i] = 0.9, 0.1 end
  hist:append(run_of(hi))
  local res = run_of(lo)
  ev.compare(res, hist, hist:latest(), { resamples = 1000 })
  local gates = ev.gate.check(res, { max_regressions = 0 })
  lu.assertEquals(gates[1].status, "fail")
  lu.assertStrContains(gates[1].message, "s[all] 0.9000 -> 0.1000")
end

function TestHistory:test_two_processes_appending_at_once_never_interleave()
  local script = dir .. "/append.lua"
  h.write(script, ([[
local ev = require "evalua"
local hist = ev.history.open(%q)
local rows = {}
for i = 1, 400 do rows[i] = { qid = "q" .. i, s = i / 400 } end
local res = ev.evaluate(rows, { metrics = { { name = "s", fn = function(r) return r.s end } }, ci = false })
for i = 1, 15 do hist:append(res, { label = arg[1] .. i, notes = string.rep(arg[1], 5000) }) end
]]):format(dir .. "/h"))
  h.sh(("(%s run %s A & %s run %s B & wait)"):format(h.bin, script, h.bin, script))
  local hist = ev.history.open(dir .. "/h")
  local recs = hist:records() -- every line must parse
  lu.assertEquals(#recs, 30)
  for _, r in ipairs(recs) do
    lu.assertEquals(#r.notes, 5000)
    lu.assertEquals(r.notes, string.rep(r.label:sub(1, 1), 5000))
    lu.assertNotNil(hist:items(r).all.q400)
  end
end

-- A record as history.jsonl holds it, padded to about `size` bytes.
local function record_line(id, size)
  local rec = ('{"aggregates":{},"label":"L%s","metrics":[],"notes":"%%s","run_id":"%s","systems":[],"time":"t"}')
    :format(id, id)
  return rec:format(("n"):rep(math.max(0, size - #rec + 2))) .. "\n"
end

-- latest() and find() read the file backwards in 64 KiB blocks: records
-- smaller than, equal to and larger than a block, blank lines and a torn
-- tail give what one forward pass over the file gives.
function TestHistory:test_reading_backwards_across_blocks_finds_what_reading_forwards_does()
  local sizes = { 10, 65535, 65536, 65537, 200000, 3, 131072, 70000, 1 }
  local text = {}
  for i, n in ipairs(sizes) do
    text[#text + 1] = record_line(i, n)
    if i == 5 then text[#text + 1] = "\n   \n" end
  end
  h.write(dir .. "/h/history.jsonl", table.concat(text))
  local hist = ev.history.open(dir .. "/h")
  local all = hist:records()
  lu.assertEquals(#all, #sizes)
  for i, rec in ipairs(all) do
    lu.assertEquals(rec.run_id, tostring(i))
    lu.assertIs(hist:find(tostring(i)).run_id, rec.run_id)
    lu.assertEquals(hist:find("L" .. i).notes, rec.notes)
  end
  lu.assertEquals(hist:latest().run_id, tostring(#sizes))
  lu.assertNil(hist:find("none"))
  lu.assertEquals(#ev.history.open(dir .. "/h"):trend({ systems = {}, metrics = {}, meta = {},
    attach = function(_, _, v) return v end }, 4).runs, 4)
  -- a torn tail longer than a block is skipped, with the line it is on
  local f = assert(io.open(dir .. "/h/history.jsonl", "ab"))
  f:write(record_line("torn", 100000):sub(1, -2))
  f:close()
  h.write(dir .. "/latest.lua", 'print(require("evalua").history.open("h"):latest().run_id)')
  local child = h.run(("cd %s && %s run latest.lua"):format(dir, h.bin))
  lu.assertEquals(child.stdout, #sizes .. "\n")
  lu.assertEquals(child.stderr, "evalua: warning: h/history.jsonl:12: ignoring a torn final record "
    .. "(100000 bytes without a newline; it is not imported)\n")
end

-- A hand-edited or damaged history gives file:line: field errors (exit 3,
-- no traceback), and a run id cannot name a file outside the folder.
function TestHistory:test_tampered_records_are_named_by_file_line_and_field()
  local cases = {
    { '{"run_id":"../../../etc/passwd","time":"t","systems":[],"metrics":[],"aggregates":{}}',
      "field 'run_id': expected a run id (letters, digits, '.', '_', '-'; no '/' or '..'), got \"../../../etc/passwd\"" },
    { '{"run_id":"r1","time":"t","systems":[],"metrics":[],"aggregates":{"all":"x"}}',
      "field 'aggregates.all': expected an object, got a string" },
    { '{"run_id":"r1","time":"t","systems":["a",3],"metrics":[],"aggregates":{}}',
      "field 'systems[2]': expected a string, got a number" },
    { '{"run_id":"r1","time":"t","systems":[],"metrics":[],"aggregates":{"a":{"all":{"all":{"m":{"mean":"0.5"}}}}}}',
      "field 'aggregates.a.all.all.m.mean': expected a finite number, got a string" },
    { '{"run_id":"r1","systems":[],"metrics":[],"aggregates":{}}', "field 'time': missing (expected a string)" },
  }
  h.write(dir .. "/latest.lua", 'print(require("evalua").history.open("h"):latest())')
  for _, case in ipairs(cases) do
    h.write(dir .. "/h/history.jsonl", record_line(0, 10) .. case[1] .. "\n")
    local r = h.run(("cd %s && %s run latest.lua"):format(dir, h.bin))
    lu.assertEquals(r.status, 3, case[1])
    lu.assertEquals(r.stderr, "h/history.jsonl:2: " .. case[2] .. "\n")
  end
  local hist = ev.history.open(dir .. "/h")
  local ok, err = pcall(hist.items, hist, { run_id = "../x" })
  lu.assertFalse(ok)
  lu.assertStrContains(err, dir .. "/h/history.db: field 'run_id': expected a run id")
  -- a damaged item line of a run
  h.write(dir .. "/h/history.jsonl", record_line(0, 10))
  h.write(dir .. "/h/runs/0.jsonl", '{"id":"q1","system":"all","scores":{"s":0.5}}\n{"id":"q2","system":"all","scores":{"s":"high"}}\n')
  ok, err = pcall(hist.items, hist, hist:latest())
  lu.assertFalse(ok)
  lu.assertStrContains(err, dir .. "/h/runs/0.jsonl:2: field 'scores.s': expected a finite number, got a string")
end

-- A count read back from the history is an integer: the comparison says
-- "(4 rows)", not "(4.0 rows)".
function TestHistory:test_counts_read_back_are_integers()
  local hist = ev.history.open(dir .. "/h")
  hist:append(run_of { 0.1, 0.2, 0.3, 0.4 })
  lu.assertEquals(math.type(hist:latest().dataset.rows), "integer")
  local cmp = ev.compare(run_of { 0.5, 0.5 }, hist, hist:latest())
  lu.assertStrMatches(cmp.warnings[1], "data set changed: sha256 %x+ %(4 rows%) in the baseline, %x+ %(2 rows%) now")
end

-- The dashboard links a run's report only by a relative path: what a
-- browser would run or send elsewhere is not linked, whatever the spelling.
function TestHistory:test_dashboard_links_only_relative_paths()
  local dashboard = require "evalua.report.dashboard"
  local refused = { " javascript:alert(1)", "\tjavascript:alert(1)", "java\nscript:alert(1)", "JavaScript:alert(1)",
                    "\1javascript:x", "data:text/html,x", "//evil.example/x", "\\\\evil.example\\x", "/etc/passwd",
                    "  /x", "https://evil.example/" }
  for _, link in ipairs(refused) do
    local html = dashboard({ { run_id = "r1", time = "t", label = "L", systems = {}, metrics = {}, aggregates = {},
                               report = link } })
    lu.assertNotStrContains(html, "<a href", link)
  end
  local html = dashboard({ { run_id = "r1", time = "t", systems = {}, metrics = {}, aggregates = {},
                             report = "../reports/2026 01/ü.html" } })
  lu.assertStrContains(html, '<a href="../reports/2026%2001/%C3%BC.html">2026 01/ü.html</a>')
end

-- A label given as a number (as earlier versions wrote it) is read as text.
function TestHistory:test_a_numeric_label_is_text()
  h.write(dir .. "/h/history.jsonl", '{"run_id":"r1","time":"t","label":5,"systems":[],"metrics":[],"aggregates":{}}\n')
  local hist = ev.history.open(dir .. "/h")
  lu.assertEquals(hist:latest().label, "5")
  lu.assertEquals(hist:find("5").run_id, "r1")
  lu.assertStrContains(h.read(hist:dashboard()), "<td>5</td>")
  hist:append(run_of { 0.5 }, { label = 6, git_commit = false, dashboard = false })
  lu.assertEquals(hist:find("6").label, "6")
end

os.exit(lu.LuaUnit.run(), true)
