-- The load of a JSONL file timed alone: wall and CPU seconds on one line.
-- With "write", the loaded rows are then written out whole into OUTDIR (a
-- JSON report with items = "full", which re-encodes every field of every
-- row) so that two builds' loads can be compared byte for byte (load.sh).
-- usage: evalua run bench/dataplane/load.lua ROWS.jsonl [OUTDIR write]
local ev = require "evalua"
local path, out = arg[1], arg[3] == "write" and arg[2]
assert(path, "usage: evalua run bench/dataplane/load.lua ROWS.jsonl [OUTDIR write]")
local t, c = ev.sys.monotonic(), ev.sys.cputime()
local ds = ev.dataset.load(path)
print(("%.3f %.3f"):format(ev.sys.monotonic() - t, ev.sys.cputime() - c))
if out then
  local res = ev.evaluate(ds, { metrics = { "mrr", "token_f1" }, ci = false })
  ev.report.write(res, { dir = out, name = "load", formats = { "json" }, items = "full" })
end
