-- The phases of bench/dataplane's end-to-end run timed one by one: wall
-- and CPU seconds (ev.sys.monotonic, ev.sys.cputime; CPU over wall is the
-- cores used) of load, evaluate (5 metrics, 2 slice dimensions, 95% CIs),
-- the JSON report in each items form, the CSV report; with the bytes each
-- report wrote against the input's.
-- usage: evalua run bench/dataplane/phases.lua ROWS.jsonl OUTDIR
local ev = require "evalua"
local path, out = arg[1], arg[2]
assert(path and out, "usage: evalua run bench/dataplane/phases.lua ROWS.jsonl OUTDIR")
local clock, cpu = ev.sys.monotonic, ev.sys.cputime
local function size(p) local f = assert(io.open(p, "rb")) local n = f:seek("end") f:close() return n end
local input = size(path)
local t, c = clock(), cpu()
local ds = ev.dataset.load(path)
local t_load, c_load = clock() - t, cpu() - c
t, c = clock(), cpu()
local res = ev.evaluate(ds, {
  metrics = { "recall@5", "mrr", "ndcg@10", "exact_match", "token_f1" },
  slices = { "query_class", "variant" }, ci = {},
})
local t_eval, c_eval = clock() - t, cpu() - c
print(("rows %d, input %d MB"):format(res.n, input // 2 ^ 20))
local function line(what, wall, used, extra)
  print(("%-24s %7.3f s wall %7.3f s cpu  %4.2f cores%s"):format(what, wall, used, used / wall, extra or ""))
end
line("load", t_load, c_load)
line("evaluate", t_eval, c_eval)
-- an evalua from before the items option writes its one form (the full one)
local _, why = pcall(ev.report.write, res, { dir = out, formats = { "json" }, items = 0 }) -- refused before any work
local forms = tostring(why):find("unknown option", 1, true) and { { "json" }, { "csv" } }
  or { { "json", "compact" }, { "json", "full" }, { "csv" } }
for _, f in ipairs(forms) do
  t, c = clock(), cpu()
  local p = ev.report.write(res, { dir = out, name = "phase", formats = { f[1] }, items = f[2] })[1]
  local dt, dc = clock() - t, cpu() - c
  local n = size(p)
  line(f[1] .. (f[2] and (" items=" .. f[2]) or ""), dt, dc, ("  %5d MB, %.2fx the input"):format(n // 2 ^ 20, n / input))
end
