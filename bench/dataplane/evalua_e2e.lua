-- evalua end to end on the benchmark file: load, 5 built-in metrics, two
-- slice dimensions, 95% CIs, JSON and CSV reports (and, with a third
-- argument, every report format).
-- usage: evalua run bench/dataplane/evalua_e2e.lua ROWS.jsonl OUTDIR [all] [system-field]
local ev = require "evalua"
local path, out, all, system = arg[1], arg[2], arg[3] == "all", arg[4]
local ds = ev.dataset.load(path)
local res = ev.evaluate(ds, {
  metrics = { "recall@5", "mrr", "ndcg@10", "exact_match", "token_f1" },
  slices = { "query_class", "variant" }, system = system, ci = {},
})
ev.report.write(res, { dir = out, name = "bench",
  formats = all and { "json", "csv", "md", "html", "junit" } or { "json", "csv" } })
local a = res:agg(res.systems[1], "token_f1")
print(("rows %d  token_f1 %.6f  recall@5 %.6f"):format(res.n, a.mean, res:agg(res.systems[1], "recall@5").mean))
