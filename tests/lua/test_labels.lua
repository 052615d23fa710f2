-- Human labels in the history's store (issue 29, part 3): checked on the
-- way in, listed, exported to and imported from JSONL, one label per item
-- from several raters; and scripts/calibrate.lua reading them with the
-- judge's scores of a run of the same store. The expected correlations and
-- intervals were computed apart (Python: Spearman's rho as the Pearson r of
-- average ranks; Fisher's z with Bonett and Wright's standard error).
local lu = require "luaunit"
local ev = require "evalua"
local cjson = require "cjson"
local h = require "tests.lua.helpers"

local SRC = os.getenv("EVALUA_SRC") or os.getenv("PWD")
local dir, hist
TestLabels = {}
function TestLabels:setUp()
  dir = h.tmpdir()
  hist = ev.history.open(dir .. "/h")
end
function TestLabels:tearDown()
  hist:close()
  h.sh("rm -rf " .. dir)
end

local function label(t)
  t.metric, t.scale, t.rater = t.metric or "faithfulness", t.scale or "1..5", t.rater or "ana"
  return t
end

function TestLabels:test_labels_are_checked_stored_and_listed()
  hist:label(label { item = "q1", value = 4, time = "2026-12-01T10:00:00Z", note = "cites the manual" })
  hist:label(label { item = 7, value = 2, system = "hybrid", time = "2026-12-01T09:00:00Z" })
  hist:label(label { item = "q1", metric = "correct", value = "fail", scale = "pass/fail", rater = "bo",
                     time = "2026-12-01T11:00:00Z" })
  local all = hist:labels()
  lu.assertEquals(#all, 3)
  lu.assertEquals({ all[1].item, all[1].system, all[1].value }, { 7, "hybrid", 2 }) -- oldest first; an id keeps its type
  lu.assertEquals(math.type(all[1].item), "integer")
  lu.assertEquals({ all[2].item, all[2].note, all[3].value }, { "q1", "cites the manual", 0 })
  lu.assertEquals(#hist:labels { metric = "correct" }, 1)
  lu.assertEquals(#hist:labels { rater = "ana" }, 2)
  for _, case in ipairs {
    { label { item = "q1", value = 6 }, "field 'value': expected an integer on the scale 1..5, got 6" },
    { label { item = "q1", value = 2.5 }, "field 'value': expected an integer on the scale 1..5, got 2.5" },
    { label { item = "q1", value = "yes", scale = "pass/fail" },
      "field 'value': expected an integer on the scale pass/fail (1 or \"pass\", 0 or \"fail\"), got \"yes\"" },
    { label { item = "q1", value = 1, scale = "1-5" }, "field 'scale': expected a scale: \"LO..HI\"" },
    { label { item = "q1", value = 1, rater = "" }, "field 'rater': expected a non-empty string" },
    { label { item = {}, value = 1 }, "field 'item': expected an item id (a string or an integer)" },
    { label { item = "q1", value = 1, time = "yesterday" }, "field 'time': expected an ISO 8601 UTC time" },
    { label { item = "q1", value = 1, score = 3 }, "field 'score': unknown" },
  } do
    local ok, err = pcall(hist.label, hist, case[1])
    lu.assertFalse(ok)
    lu.assertStrContains(err, "history:label: " .. case[2])
  end
  lu.assertEquals(#hist:labels(), 3)
end

function TestLabels:test_export_and_import_round_trip()
  hist:label(label { item = "q1", value = 4, time = "2026-12-01T10:00:00Z", note = "ü" })
  hist:label(label { item = "q2", value = 1, time = "2026-12-01T10:01:00Z", rater = "bo" })
  lu.assertEquals(hist:export_labels(dir .. "/l.jsonl"), 2)
  lu.assertEquals(h.read(dir .. "/l.jsonl"),
    '{"item":"q1","metric":"faithfulness","note":"ü","rater":"ana","scale":"1..5","time":"2026-12-01T10:00:00Z","value":4}\n'
    .. '{"item":"q2","metric":"faithfulness","rater":"bo","scale":"1..5","time":"2026-12-01T10:01:00Z","value":1}\n')
  local other = ev.history.open(dir .. "/other")
  lu.assertEquals({ other:import_labels(dir .. "/l.jsonl") }, { 2, 0 })
  lu.assertEquals({ other:import_labels(dir .. "/l.jsonl") }, { 0, 2 }) -- nothing twice
  lu.assertEquals(other:labels(), hist:labels())
  -- a bad line: named by file and line, and nothing of the file imported
  h.write(dir .. "/bad.jsonl", '{"item":"q3","metric":"m","value":3,"scale":"1..5","rater":"c"}\n'
    .. '{"item":"q4","metric":"m","value":9,"scale":"1..5","rater":"c"}\n')
  h.write(dir .. "/imp.lua", ('local h = require("evalua").history.open(%q); print(h:import_labels(%q))')
    :format(dir .. "/other", dir .. "/bad.jsonl"))
  local r = h.run(h.bin .. " run " .. dir .. "/imp.lua")
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, dir .. "/bad.jsonl:2: field 'value': expected an integer on the scale 1..5, got 9\n")
  lu.assertEquals(#other:labels(), 2)
  other:close()
end

-- Per item: each rater's newest label, then the lower median of the raters.
function TestLabels:test_one_label_per_item()
  hist:label(label { item = "q1", value = 1, rater = "ana", time = "2026-12-01T09:00:00Z" })
  hist:label(label { item = "q1", value = 5, rater = "ana", time = "2026-12-01T10:00:00Z" }) -- replaces her 1
  hist:label(label { item = "q1", value = 2, rater = "bo", time = "2026-12-01T09:30:00Z" })
  hist:label(label { item = "q1", value = 3, rater = "cy", time = "2026-12-01T09:40:00Z" })
  hist:label(label { item = "q2", value = 4, rater = "bo", time = "2026-12-01T09:40:00Z" })
  hist:label(label { item = "q2", value = 2, rater = "cy", time = "2026-12-01T09:41:00Z" })
  local per = hist:item_labels("faithfulness")
  -- q1: 5, 2, 3 -> 3; q2: 4, 2 -> the lower median 2
  lu.assertEquals({ per[1].item, per[1].value, per[1].raters }, { "q1", 3, 3 })
  lu.assertEquals({ per[2].item, per[2].value, per[2].raters }, { "q2", 2, 2 })
  lu.assertEquals(hist:item_labels("faithfulness", { rater = "bo" })[1].value, 2)
end

-- calibrate --history: labels imported into the store, the judge's scores
-- of the store's run; the rule's verdict.
local function calibrate_on(scores, values, extra)
  local rows = {}
  for i, s in ipairs(scores) do rows[i] = { qid = "q" .. i, s = s, c = i <= #scores // 2 and "a" or "b" } end
  local res = ev.evaluate(rows, { metrics = { { name = "faithfulness", fn = function(r) return r.s end } }, ci = false,
                                  slices = { "c" } })
  hist:append(res, { label = "nightly-1", dashboard = false, git_commit = false })
  local lines = {}
  for i, v in ipairs(values) do
    lines[i] = cjson.encode { item = "q" .. i, metric = "faithfulness", value = v, scale = "1..5", rater = "ana",
                              time = "2026-12-01T10:00:00Z" }
  end
  h.write(dir .. "/labels.jsonl", table.concat(lines, "\n") .. "\n")
  return h.run(("cd %s && %s run scripts/calibrate.lua --quiet --history %s/h --import-labels %s/labels.jsonl "
    .. "--export-labels %s/used.jsonl --out %s/cal %s"):format(SRC, h.bin, dir, dir, dir, dir, extra or ""))
end

function TestLabels:test_calibrate_reads_labels_from_the_store()
  local r = calibrate_on({ 0.1, 0.3, 0.5, 0.7, 0.9, 0.2 }, { 1, 3, 2, 4, 5, 2 }, "--by c")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stderr, "calibrate: imported 6 labels from " .. dir .. "/labels.jsonl (0 there already)\n")
  lu.assertStrContains(r.stderr, "calibrate: judge scores of run nightly-1 (")
  lu.assertStrContains(r.stdout, "(1..5): 6 labelled items\n")
  -- people's labels are not called simulated, and where they came from is said
  lu.assertNotStrContains(r.stdout, "simulated")
  lu.assertStrContains(r.stderr, "calibrate: 6 labels of 'faithfulness' from the store ")
  lu.assertStrContains(r.stderr, " (raters: ana)\n")
  lu.assertStrContains(r.stdout, "  Spearman rho               0.899  [0.124, 0.993]\n")
  lu.assertStrContains(r.stdout, "\nnot enough labels: 6 of the 50 the rule needs (44 more); Spearman 0.90 [0.12, 0.99] "
    .. "so far, the rule asks >= 0.7\n")
  lu.assertEquals(select(2, h.read(dir .. "/used.jsonl"):gsub("\n", "")), 6)
  -- per slice, from the slices the run recorded: c=a scores .1 .3 .5, labels 1 3 2: rho = 1 - 6 * 2 / 24 = 0.5,
  -- tau-b = (2 - 1) / 3; c=b scores .7 .9 .2, labels 4 5 2: the same order, 1 and 1; three items: no interval
  lu.assertStrContains(r.stdout, "\n  by c\n  c=a: 3 labelled items\n    Spearman rho               0.500\n"
    .. "    Kendall tau-b              0.333\n")
  lu.assertStrContains(r.stdout, "\n  c=b: 3 labelled items\n    Spearman rho               1.000\n"
    .. "    Kendall tau-b              1.000\n")
end

-- With --history, a --labels file or --scale would be ignored: refused.
function TestLabels:test_calibrate_refuses_options_the_store_overrides()
  for _, o in ipairs { "--labels scripts/data/simulated_labels.jsonl", "--scale 5" } do
    local r = h.run(("cd %s && %s run scripts/calibrate.lua --quiet --history %s/h %s --out %s/cal")
      :format(SRC, h.bin, dir, o, dir))
    lu.assertEquals(r.status, 2, o)
    lu.assertStrContains(r.stderr, "does nothing with --history: the labels and their scale come from the store")
  end
end

-- calibrate --scores REPORT: the judge's scores from a JSON report, keyed
-- by (qid, variant); a compact report has no rows, and its items' system
-- (the variant here) keys them: both forms give the same figures.
function TestLabels:test_calibrate_scores_from_either_form_of_report()
  local rows, labels = {}, {}
  local scores, values = { 0.1, 0.3, 0.5, 0.7, 0.9, 0.2 }, { 1, 3, 2, 4, 5, 2 }
  for i, s in ipairs(scores) do
    local v = i % 2 == 0 and "x" or "y"
    rows[i] = { qid = "q" .. (i + 1) // 2, variant = v, s = s }
    labels[i] = cjson.encode { qid = "q" .. (i + 1) // 2, variant = v, faithfulness = values[i] }
  end
  h.write(dir .. "/labels.jsonl", table.concat(labels, "\n") .. "\n")
  local res = ev.evaluate(rows, { metrics = { { name = "faithfulness", fn = function(r) return r.s end } },
                                  system = "variant", ci = false })
  local out = {}
  for _, form in ipairs { "compact", "full" } do
    local path = ev.report.write(res, { dir = dir .. "/" .. form, formats = { "json" }, items = form })[1]
    local r = h.run(("cd %s && %s run scripts/calibrate.lua --quiet --scores %s --labels %s/labels.jsonl --out %s/cal")
      :format(SRC, h.bin, path, dir, dir))
    lu.assertEquals(r.status, 0, r.stderr)
    out[form] = r.stdout
  end
  lu.assertStrContains(out.compact, "(1..5): 6 labelled items\n")
  lu.assertStrContains(out.compact, "  Spearman rho               0.899  [0.124, 0.993]\n")
  lu.assertEquals(out.compact, out.full)
end

function TestLabels:test_calibrate_verdict_on_60_labels()
  -- scores i/60, labels 1..5 twelve each in order, the first and last swapped
  local scores, values = {}, {}
  for i = 1, 60 do scores[i], values[i] = i / 60, 1 + (5 * (i - 1)) // 60 end
  values[1], values[60] = values[60], values[1]
  local r = calibrate_on(scores, values)
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "  Spearman rho               0.819  [0.694, 0.897]\n")
  lu.assertStrContains(r.stdout, "\njudge agrees with 60 labels: Spearman 0.82 [0.69, 0.90], passes >= 0.7 "
    .. "(the interval reaches below it: more labels would settle it)\n")
end

os.exit(lu.LuaUnit.run(), true)
