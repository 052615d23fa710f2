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
--   evalua run scripts/calibrate.lua --history out/nightly/history   # labels and scores from a history's store
--   evalua run scripts/calibrate.lua --history H --import-labels team.jsonl   # labels made elsewhere, first
--
-- With --history the labels come from the store (ev.history labels of the
-- metric --field, the lower median of each rater's newest per item), and
-- the judge's scores from the store's run --run (default: the newest run
-- that scored --metric), matched by item id and system.
--
-- The verdict applies the calibration rule: Spearman's rho of at least 0.7
-- on at least 50 labels, with 95% intervals (Fisher's z with Bonett and
-- Wright's standard errors for rho and tau-b; a percentile bootstrap over
-- the labelled items for kappa; docs/history.md#calibration-scriptscalibratelua).
--
-- Exit status: 0; 4 when the judge gave no usable answer for more than
-- ev.gate.max_judge_failures of the labelled items (nothing to calibrate:
-- docs/judge.md); 2 usage; 3 input error or fewer than 2 scored items.
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder

local opt, given = ev.cli.parse(arg, {
  usage = "evalua run scripts/calibrate.lua [options]",
  description = "Agreement between a judge metric and labels of the same items (the bundled labels are simulated).",
  { "labels", here .. "/data/simulated_labels.jsonl", "labels: {qid, variant, <field>: 1..scale}" },
  { "field", "faithfulness", "the label field people filled in" },
  { "metric", "faithfulness", "the judge metric to compare (0..1 scores)" },
  { "scale", 5, "labels run from 1 to this; judge scores map onto it as round(1 + s * (scale - 1))" },
  { "scores", "", "take the judge's scores from this JSON report instead of judging now", path = "file" },
  { "data", here .. "/data/rag_eval.jsonl", "the rows the labels refer to" },
  { "data-format", "evalua", "the format of --data: evalua's rows, a peer's file or folder, or auto (docs/data.md)",
    choices = ev.dataset.formats },
  { "corpus", here .. "/data/corpus.jsonl", "documents that supply contexts" },
  { "contexts", 3, "retrieved documents given to the judge", integer = true, min = 1 },
  { "judge", "offline", "offline, or openai", choices = { "offline", "openai" } },
  { "by", "", "also the agreement per value of this slice (a data field, or a slice the run recorded)" },
  { "history", "", "a history folder: labels from its store, and the judge's scores of its run --run" },
  { "run", "", "with --history: the run (label or run id) whose scores are compared (default: the newest "
    .. "that scored --metric)" },
  { "rater", "", "with --history: only this rater's labels" },
  { "import-labels", "", "with --history: import these JSONL labels into the store first (ev.history "
    .. "import_labels)", path = "file" },
  { "export-labels", "", "with --history: write the labels compared to this JSONL file" },
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
for _, o in ipairs { "run", "rater", "import-labels", "export-labels" } do
  if opt[o] ~= "" and opt.history == "" then ev.cli.usage_error("--%s needs --history", o) end
end
-- With --history the labels and their scale are the store's: a --labels
-- file or a --scale would be ignored.
for _, o in ipairs { "labels", "scale" } do
  if given[o] and opt.history ~= "" then
    ev.cli.usage_error("--%s does nothing with --history: the labels and their scale come from the store "
      .. "(to add a file's labels: --import-labels)", o)
  end
end
-- Judging now needs a judged metric of ev.rag; a report's scores may be any metric's.
local judged_metric = type(ev.rag[opt.metric]) == "table" and ev.rag[opt.metric].name == opt.metric
if opt.scores == "" and opt.history == "" and not judged_metric then
  ev.cli.usage_error("--metric: '%s' is no judged metric of ev.rag (faithfulness, context_recall, ...:"
    .. " docs/judged_metrics.md); a metric of another report needs --scores or --history", opt.metric)
end

local function key(qid, variant) return tostring(qid) .. "\0" .. tostring(variant or "") end

-- Labels, checked: an integer from 1 to scale in the named field; or, with
-- --history, the store's labels of that field (their declared scale "1..K").
local labels, hist, from_store
if opt.history ~= "" then
  hist = ev.history.open(opt.history)
  if opt["import-labels"] ~= "" then
    local added, had = hist:import_labels(opt["import-labels"])
    io.stderr:write(("calibrate: imported %d labels from %s (%d there already)\n"):format(added, opt["import-labels"], had))
  end
  local per, scales = hist:item_labels(opt.field, { rater = opt.rater ~= "" and opt.rater or nil })
  local names = {}
  for sc in pairs(scales) do names[#names + 1] = sc end
  table.sort(names)
  if #names > 1 then
    ev.input_error(("%s: the labels of '%s' use several scales (%s): one scale per criterion"):format(hist.file,
      opt.field, table.concat(names, ", ")))
  end
  if #names == 1 then
    local lo, hi = names[1]:match("^1%.%.(%d+)$")
    if not lo and not names[1]:match("^1%.%.%d+$") then
      ev.input_error(("%s: the labels of '%s' are on the scale %s; calibrate compares labels on 1..K"):format(
        hist.file, opt.field, names[1]))
    end
    scale = math.tointeger(tonumber(names[1]:match("%.%.(%d+)$")))
  end
  labels = { rows = {} }
  for i, l in ipairs(per) do labels.rows[i] = { qid = l.item, variant = l.system, [opt.field] = l.value } end
  if opt["export-labels"] ~= "" then
    hist:export_labels(opt["export-labels"], { metric = opt.field, rater = opt.rater ~= "" and opt.rater or nil })
  end
  from_store = true
  local raters = {}
  for _, l in ipairs(per) do
    for _, name in ipairs(l.rated_by) do raters[name] = true end
  end
  local who = {}
  for r in pairs(raters) do who[#who + 1] = r end
  table.sort(who)
  io.stderr:write(("calibrate: %d labels of '%s' from the store %s (raters: %s)\n"):format(#per, opt.field, hist.file,
    #who > 0 and table.concat(who, ", ") or "none"))
else
  labels = ev.dataset.load(opt.labels, { schema = { [opt.field] = "integer!", variant = "string" } })
  for _, l in ipairs(labels.rows) do
    local v = l[opt.field]
    if v < 1 or v > scale then
      ev.input_error(("%s:%d: field '%s': expected 1..%d, got %s"):format(opt.labels, l._line, opt.field, scale, v))
    end
  end
end

-- The slice value of each judged item, for --by.
local slice_of = {}
local function note_slice(k, it)
  if opt.by == "" then return end
  local v = it.slices and it.slices[opt.by]
  if v == nil and it.row then v = it.row[opt.by] end
  if v ~= nil then slice_of[k] = tostring(v) end
end

-- The judge's score per (qid, variant): from a report, or by judging now.
local function scores_from_report(path)
  local f = assert(io.open(path, "rb"))
  local doc = ev.json.decode(f:read("a"))
  f:close()
  if type(doc) ~= "table" or type(doc.items) ~= "table" then
    ev.input_error(path .. ": not an evalua JSON report (no items)")
  end
  -- the variant: the row's (items = "full"), or the item's system, which
  -- the bundled scripts take from it (compact items have no row)
  local one_system = #(doc.systems or {}) == 1 and doc.systems[1] == "all"
  local function variant(it)
    if it.row then return it.row.variant end
    if not one_system then return it.system end
  end
  local out = {}
  for _, it in ipairs(doc.items) do
    local s = it.scores and it.scores[opt.metric]
    if s then
      local k = key(it.id, from_store and it.system or variant(it))
      out[k] = s
      note_slice(k, it)
    end
  end
  return out
end

local function scores_by_judging()
  local wanted = {}
  for _, l in ipairs(labels.rows) do wanted[key(l.qid, l.variant)] = true end
  local ds = ev.dataset.load(opt.data, { format = opt["data-format"] }):filter(function(r) return wanted[key(r.qid, r.variant)] end)
  ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.contexts)
  local res = ev.evaluate(ds, { metrics = { ev.rag[opt.metric] or opt.metric },
                                judge = ev.cli.try(ev.judge.open, opt.judge), quiet = opt.quiet, ci = false })
  if ev.gate.exit_code(ev.gate.check(res, {})) == ev.gate.UNDECIDED then
    io.stderr:write("calibrate: the judge failed: nothing to calibrate\n")
    ev.exit(ev.gate.UNDECIDED)
  end
  local out = {}
  for _, it in ipairs(res.items) do
    if it.scores[opt.metric] then
      out[key(it.id, it.row.variant)] = it.scores[opt.metric]
      note_slice(key(it.id, it.row.variant), it)
    end
  end
  return out
end

-- The judge's scores of a run of the history, by (item, system).
local function scores_from_history()
  local run
  if opt.run ~= "" then
    run = hist:find(opt.run)
    if not run then ev.cli.usage_error("--run: %s has no run %s", hist.file, opt.run) end
  else
    local recs = hist:records()
    for k = #recs, 1, -1 do
      for _, m in ipairs(recs[k].metrics) do
        if m == opt.metric then run = recs[k] break end
      end
      if run then break end
    end
    if not run then ev.input_error(("%s: no run scored '%s'"):format(hist.file, opt.metric)) end
  end
  -- a label without a system is of the item in a run of one system
  local out, only = {}, #run.systems == 1
  for system, items in pairs(hist:items(run)) do
    for id, it in pairs(items) do
      if it.scores[opt.metric] then
        out[key(id, system)] = it.scores[opt.metric]
        note_slice(key(id, system), it)
        if only then
          out[key(id, nil)] = it.scores[opt.metric]
          note_slice(key(id, nil), it)
        end
      end
    end
  end
  io.stderr:write(("calibrate: judge scores of run %s (%s)\n"):format(run.label or run.run_id, run.run_id))
  return out
end

local judged = opt.scores ~= "" and scores_from_report(opt.scores) or from_store and scores_from_history()
  or scores_by_judging()

local labelled, judge_scores, judge_bins, slices, missing = {}, {}, {}, {}, 0
for _, l in ipairs(labels.rows) do
  local s = judged[key(l.qid, l.variant)]
  if s == nil then
    missing = missing + 1
  else
    slices[#labelled + 1] = slice_of[key(l.qid, l.variant)] or "(none)"
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

-- 95% intervals. rho and tau-b: Fisher's z, tanh(atanh(r) -+ 1.96 se),
-- with Bonett and Wright's (2000) se = sqrt((1 + r^2/2)/(n - 3)) for rho
-- and sqrt(0.437/(n - 4)) for tau-b. kappa: the percentile bootstrap over
-- the labelled items (2,000 resamples, seed 1; resamples where kappa is
-- undefined are left out).
local Z95, RESAMPLES = 1.959963984540054, 2000
local function tanh(x) return 1 - 2 / (math.exp(2 * x) + 1) end
local function fisher(r, se)
  if not r or not se then return nil end
  if math.abs(r) >= 1 then return r, r end
  local z = 0.5 * math.log((1 + r) / (1 - r))
  return tanh(z - Z95 * se), tanh(z + Z95 * se)
end

local S = ev.stats
local function kappa_ci(a, b, opts)
  local k = S.cohen_kappa(a, b, opts)
  if not k then return nil end
  local rng, values = 1, {}
  local function draw(m) -- a 64-bit LCG (Knuth's MMIX constants): the same resamples on every machine
    rng = rng * 6364136223846793005 + 1442695040888963407
    return ((rng >> 33) % m) + 1
  end
  local xa, xb, m = {}, {}, #a
  for _ = 1, RESAMPLES do
    for i = 1, m do
      local j = draw(m)
      xa[i], xb[i] = a[j], b[j]
    end
    local v = S.cohen_kappa(xa, xb, opts)
    if v then values[#values + 1] = v end
  end
  if #values < RESAMPLES / 2 then return nil end
  local q = S.percentile(values, { 2.5, 97.5 })
  return q[1], q[2]
end

local function show(name, v, why, lo, hi, width)
  local interval = lo and ("  [%.3f, %.3f]"):format(lo, hi) or ""
  say(("  %-" .. (width or 26) .. "s %s%s"):format(name, v and ("%.3f"):format(v)
    or ("undefined (" .. tostring(why) .. ")"), interval))
end
local rho, why_rho = S.spearman(judge_scores, labelled)
local rho_lo, rho_hi = fisher(rho, n > 3 and rho and math.sqrt((1 + rho * rho / 2) / (n - 3)))
local tau, why_tau = S.kendall(judge_scores, labelled)
show("Spearman rho", rho, why_rho, rho_lo, rho_hi)
show("Kendall tau-b", tau, why_tau, fisher(tau, n > 4 and math.sqrt(0.437 / (n - 4))))
show("Pearson r", S.pearson(judge_scores, labelled))
local kappa, why_kappa = S.cohen_kappa(judge_bins, labelled)
show("Cohen's kappa", kappa, why_kappa, kappa_ci(judge_bins, labelled))
local qkappa, why_q = S.cohen_kappa(judge_bins, labelled, { weights = "quadratic" })
show("Cohen's kappa (quadratic)", qkappa, why_q, kappa_ci(judge_bins, labelled, { weights = "quadratic" }))

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

-- Per slice (--by): the same statistics over each slice's labelled items.
if opt.by ~= "" then
  local groups, names = {}, {}
  for k = 1, n do
    local v = slices[k]
    if not groups[v] then groups[v], names[#names + 1] = { {}, {}, {} }, v end
    local g = groups[v]
    g[1][#g[1] + 1], g[2][#g[2] + 1], g[3][#g[3] + 1] = judge_scores[k], labelled[k], judge_bins[k]
  end
  table.sort(names)
  say(("\n  by %s"):format(opt.by))
  for _, v in ipairs(names) do
    local js, ls, bins = groups[v][1], groups[v][2], groups[v][3]
    local m = #js
    say(("  %s=%s: %d labelled item%s"):format(opt.by, v, m, m == 1 and "" or "s"))
    local r, why_r = S.spearman(js, ls)
    local lo, hi = fisher(r, m > 3 and r and math.sqrt((1 + r * r / 2) / (m - 3)))
    show("  Spearman rho", r, why_r, lo, hi, 28)
    local t, why_t = S.kendall(js, ls)
    lo, hi = fisher(t, m > 4 and math.sqrt(0.437 / (m - 4)))
    show("  Kendall tau-b", t, why_t, lo, hi, 28)
    local k, why_k = S.cohen_kappa(bins, ls)
    lo, hi = kappa_ci(bins, ls)
    show("  Cohen's kappa", k, why_k, lo, hi, 28)
    local q, why_q2 = S.cohen_kappa(bins, ls, { weights = "quadratic" })
    lo, hi = kappa_ci(bins, ls, { weights = "quadratic" })
    show("  Cohen's kappa (quadratic)", q, why_q2, lo, hi, 28)
  end
end

if n < 50 then
  say(("\nwarning: only %d labelled items; 50 or more are needed before trusting these figures"):format(n))
end
if rho and rho < 0.7 then
  say(("\nwarning: Spearman rho %.3f is under 0.7: the judge does not order items the way the labels do"):format(rho))
end
-- The calibration rule's verdict: Spearman's rho >= 0.7 on >= 50 labels.
local RULE_N, RULE_RHO = 50, 0.7
local function interval() return rho_lo and (" [%.2f, %.2f]"):format(rho_lo, rho_hi) or "" end
if not rho then
  say(("\nno verdict: Spearman's rho is undefined (%s)"):format(tostring(why_rho)))
elseif n < RULE_N then
  say(("\nnot enough labels: %d of the %d the rule needs (%d more); Spearman %.2f%s so far, the rule asks >= %.1f")
    :format(n, RULE_N, RULE_N - n, rho, interval(), RULE_RHO))
elseif rho >= RULE_RHO then
  say(("\njudge agrees with %d labels: Spearman %.2f%s, passes >= %.1f%s"):format(n, rho, interval(), RULE_RHO,
    rho_lo and rho_lo < RULE_RHO and " (the interval reaches below it: more labels would settle it)" or ""))
else
  say(("\njudge disagrees with %d labels: Spearman %.2f%s, fails >= %.1f"):format(n, rho, interval(), RULE_RHO))
end
if not from_store and opt.labels == here .. "/data/simulated_labels.jsonl" then
  say("\nnote: these labels are simulated, drawn at random per kind of answer by the data generator;"
    .. "\nthey test this script, not how well a judge agrees with people (docs/data.md)")
end

assert(ev.sys.mkdir(opt.out))
local path = opt.out .. "/calibrate.txt"
assert(ev.sys.write_atomic(path, table.concat(shown, "\n") .. "\n"))
io.stderr:write("wrote ", path, "\n")
