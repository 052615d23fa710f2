-- The JSON (compact) and CSV reports of one run written REPS times each
-- after one load and evaluate: a line per report with its wall and CPU
-- seconds (bench/dataplane/reports.sh compares two builds with it).
-- usage: evalua run bench/dataplane/reports.lua ROWS.jsonl OUTDIR REPS
local ev = require "evalua"
local path, out, reps = arg[1], arg[2], math.tointeger(tonumber(arg[3] or "5"))
assert(path and out and reps, "usage: evalua run bench/dataplane/reports.lua ROWS.jsonl OUTDIR REPS")
local clock, cpu = ev.sys.monotonic, ev.sys.cputime
local res = ev.evaluate(ev.dataset.load(path), {
  metrics = { "recall@5", "mrr", "ndcg@10", "exact_match", "token_f1" },
  slices = { "query_class", "variant" }, ci = {}, meta = { time = "2026-01-01T00:00:00Z" },
})
for _, format in ipairs { "json", "csv" } do
  for i = 1, reps do
    local t, c = clock(), cpu()
    ev.report.write(res, { dir = out, name = "reports", formats = { format } })
    print(("%s %d %.3f %.3f"):format(format, i, clock() - t, cpu() - c))
  end
end
