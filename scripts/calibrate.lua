-- Judge calibration: how well does the judge agree with labels people gave?
-- Takes labels for a sample and the judge's scores for the same items, and
-- reports Spearman's rho, Kendall's tau-b, Pearson's r, Cohen's kappa
-- (unweighted and quadratic-weighted) and a confusion table. Warns below 50
-- labels or when rho is under 0.7. The bundled labels are simulated (drawn by
-- the data generator per kind of answer): they show how the script works, not
-- how well any judge agrees with people; bring your own with --labels.
--
--   evalua run scripts/calibrate.lua                            # offline judge, bundled simulated labels
--   evalua run scripts/calibrate.lua --judge openai             # an OpenAI-compatible judge
--   evalua run scripts/calibrate.lua --scores out/rag_report.json   # scores from a report
--
-- Exit status: 0; 4 when the judge gave no usable answer for more than
-- ev.gate.max_judge_failures of the labelled items (nothing to calibrate:
-- docs/judge.md); 2 usage; 3 input error or fewer than 2 scored items.
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder

local opt = ev.cli.parse(arg, {
  usage = "evalua run scripts/calibrate.lua [options]",
  description = "Agreement between a judge metric and labels of the same items (the bundled labels are simulated).",
  { "labels", here .. "/data/simulated_labels.jsonl", "labels: {qid, variant, <field>: 1..scale}" },
  { "field", "faithfulness", "the label field people filled in" },
  { "metric", "faithfulness", "the judge metric to compare (0..1 scores)" },
  { "scale", 5, "labels run from 1 to this; judge scores map onto it as round(1 + s * (scale - 1))" },
  { "scores", "", "take the judge's scores from this JSON report instead of judging now", path = "file" },
  { "data", here .. "/data/rag_eval.jsonl", "the rows the labels refer to" },
  { "corpus", here .. "/data/corpus.jsonl", "documents that supply contexts" },
  { "contexts", 3, "retrieved documents given to the judge", integer = true, min = 1 },
  { "judge", "offline", "offline, or openai", choices = { "offline", "openai" } },
  { "out", "out/calibrate", "folder for the printed table (calibrate.txt)", path = "out" },
  { "quiet", false, "no progress on stderr" },
})

-- What is printed is also kept, for --out.
local shown = {}
local function say(line)
  print(line)
  shown[#shown + 1] = line
end

local scale = math.tointeger(opt.scale)
if not scale or scale < 2 then ev.cli.usage_error("--scale must be an integer >= 2") end
-- Judging now needs a judged metric of ev.rag; a report's scores may be any metric's.
local judged_metric = type(ev.rag[opt.metric]) == "table" and ev.rag[opt.metric].name == opt.metric
if opt.scores == "" and not judged_metric then
  ev.cli.usage_error("--metric: '%s' is no judged metric of ev.rag (faithfulness, context_recall, ...:"
    .. " docs/judged_metrics.md); a metric of another report needs --scores", opt.metric)
end

local function key(qid, variant) return tostring(qid) .. "\0" .. tostring(variant or "") end

-- Labels, checked: an integer from 1 to scale in the named field.
local labels = ev.dataset.load(opt.labels, { schema = { [opt.field] = "integer!", variant = "string" } })
for _, l in ipairs(labels.rows) do
  local v = l[opt.field]
  if v < 1 or v > scale then
    ev.input_error(("%s:%d: field '%s': expected 1..%d, got %s"):format(opt.labels, l._line, opt.field, scale, v))
  end
end

-- The judge's score per (qid, variant): from a report, or by judging now.
local function scores_from_report(path)
  local f = assert(io.open(path, "rb"))
  local doc = ev.json.decode(f:read("a"))
  f:close()
  if type(doc) ~= "table" or type(doc.items) ~= "table" then
    ev.input_error(path .. ": not an evalua JSON report (no items)")
  end
  local out = {}
  for _, it in ipairs(doc.items) do
    local s = it.scores and it.scores[opt.metric]
    if s then out[key(it.id, it.row and it.row.variant)] = s end
  end
  return out
end

local function scores_by_judging()
  local wanted = {}
  for _, l in ipairs(labels.rows) do wanted[key(l.qid, l.variant)] = true end
  local ds = ev.dataset.load(opt.data):filter(function(r) return wanted[key(r.qid, r.variant)] end)
  ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.contexts)
  local res = ev.evaluate(ds, { metrics = { ev.rag[opt.metric] or opt.metric },
                                judge = ev.cli.try(ev.judge.open, opt.judge), quiet = opt.quiet, ci = false })
  if ev.gate.exit_code(ev.gate.check(res, {})) == ev.gate.UNDECIDED then
    io.stderr:write("calibrate: the judge failed: nothing to calibrate\n")
    ev.exit(ev.gate.UNDECIDED)
  end
  local out = {}
  for _, it in ipairs(res.items) do
    if it.scores[opt.metric] then out[key(it.id, it.row.variant)] = it.scores[opt.metric] end
  end
  return out
end

local judged = opt.scores ~= "" and scores_from_report(opt.scores) or scores_by_judging()

local labelled, judge_scores, judge_bins, missing = {}, {}, {}, 0
for _, l in ipairs(labels.rows) do
  local s = judged[key(l.qid, l.variant)]
  if s == nil then
    missing = missing + 1
  else
    labelled[#labelled + 1] = l[opt.field]
    judge_scores[#judge_scores + 1] = s
    judge_bins[#judge_bins + 1] = math.floor(1 + s * (scale - 1) + 0.5)
  end
end

local n = #labelled
say(("calibration of judge metric '%s' against labels '%s' (1..%d): %d labelled items%s"):format(
  opt.metric, opt.field, scale, n, missing > 0 and (", %d without a judge score"):format(missing) or ""))
if n < 2 then
  io.stderr:write("calibrate: fewer than 2 items have both a label and a judge score\n")
  return 3
end

local function show(name, v, why)
  say(("  %-26s %s"):format(name, v and ("%.3f"):format(v) or ("undefined (" .. tostring(why) .. ")")))
end
local S = ev.stats
local rho, why_rho = S.spearman(judge_scores, labelled)
show("Spearman rho", rho, why_rho)
show("Kendall tau-b", S.kendall(judge_scores, labelled))
show("Pearson r", S.pearson(judge_scores, labelled))
show("Cohen's kappa", S.cohen_kappa(judge_bins, labelled))
show("Cohen's kappa (quadratic)", S.cohen_kappa(judge_bins, labelled, { weights = "quadratic" }))

-- Confusion table: rows are labels, columns the judge's binned scores.
say("\n  confusion (rows: labels, columns: judge)")
local head = { "      " }
for j = 1, scale do head[#head + 1] = ("%5d"):format(j) end
say(table.concat(head))
for i = 1, scale do
  local line = { ("  %4d"):format(i) }
  for j = 1, scale do
    local c = 0
    for k = 1, n do
      if labelled[k] == i and judge_bins[k] == j then c = c + 1 end
    end
    line[#line + 1] = ("%5d"):format(c)
  end
  say(table.concat(line))
end

local warned = false
if n < 50 then
  say(("\nwarning: only %d labelled items; 50 or more are needed before trusting these figures"):format(n))
  warned = true
end
if rho and rho < 0.7 then
  say(("\nwarning: Spearman rho %.3f is under 0.7: the judge does not order items the way the labels do"):format(rho))
  warned = true
end
if not warned then say("\nthe judge agrees with the labels well enough to stand in for them on this metric") end
if opt.labels == here .. "/data/simulated_labels.jsonl" then
  say("\nnote: these labels are simulated, drawn at random per kind of answer by the data generator;"
    .. "\nthey test this script, not how well a judge agrees with people (docs/data.md)")
end

assert(ev.sys.mkdir(opt.out))
local path = opt.out .. "/calibrate.txt"
assert(ev.sys.write_atomic(path, table.concat(shown, "\n") .. "\n"))
io.stderr:write("wrote ", path, "\n")
