-- The run bench/view opens: bench/dataplane/gen.lua's rows through four
-- built-in metrics, sliced by query class, two systems (variant), written
-- as evalua's JSON report.
-- usage: evalua run bench/view/make_run.lua ROWS.jsonl OUTDIR
local ev = require "evalua"
local ds = ev.dataset.load(arg[1])
local res = ev.evaluate(ds, { metrics = { "recall@5", "mrr", "ndcg@10", "token_f1" },
                              slices = { "query_class" }, system = "variant", ci = {} })
ev.report.write(res, { dir = arg[2], name = "run", formats = { "json" } })
