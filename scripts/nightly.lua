-- The nightly job: evaluate one pipeline variant on a data set tier, write
-- dated reports, append to the history, compare with the previous run (or
-- a named baseline) and apply the gates. Meant for cron or a systemd timer
-- (README, "Scheduled runs").
--
--   evalua run scripts/nightly.lua --variant hybrid_rerank --label v1.4
--
-- The judge comes from the environment: $OPENAI_BASE_URL (with
-- $OPENAI_API_KEY and $EVALUA_MODEL) selects an OpenAI-compatible judge,
-- otherwise the offline judge runs. A lock file stops two runs overlapping;
-- a run killed midway and started again answers every judge request it had
-- already paid for from the cache in --out.
--
-- With --notify URL (or $EVALUA_NOTIFY_URL, which keeps the secret out of
-- the process list) a failed gate or a significant regression is posted as
-- JSON to a Slack- or Mattermost-compatible webhook.
--
-- Exit status: 0 gates pass, 1 a gate failed, 4 too much unmeasured to
-- decide, 75 another nightly run holds the lock, 2 usage, 3 input error.
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder

local opt, given = ev.cli.parse(arg, {
  usage = "evalua run scripts/nightly.lua [options]",
  description = "Nightly regression run: reports, history, comparison and gates.",
  { "data", here .. "/data/rag_eval.jsonl", "evaluation rows (JSONL or CSV)" },
  { "data-format", "evalua", "the format of --data: evalua's rows, a peer's file or folder, or auto (docs/data.md)",
    choices = ev.dataset.formats },
  { "corpus", here .. "/data/corpus.jsonl", "documents that supply contexts" },
  { "variant", "hybrid_rerank", "the pipeline variant in the data that is under test" },
  { "tier", "smoke", "data set tier: smoke (20 queries), regression (200), deep (2000), all",
    choices = { "smoke", "regression", "deep", "all" } },
  { "seed", 1, "seed of the tier's stratified sample", integer = true },
  { "label", "", "version label for the history (default: the variant)" },
  { "notes", "", "free text kept with the run" },
  { "out", "out/nightly", "folder for dated reports, history, judge cache and lock", path = "out" },
  { "dir", "", "deprecated spelling of --out" },
  { "baseline", "", "compare with this label or run id (default: the previous run)" },
  { "contexts", 3, "retrieved documents given to the judge as context", integer = true, min = 1 },
  { "concurrency", 16, "judge requests in flight", integer = true, min = 1, max = 1000000 },
  { "notify", "", "post a JSON summary to this webhook URL (Slack, Mattermost) when a gate fails or a "
    .. "regression is significant (default: $EVALUA_NOTIFY_URL); the URL is never printed" },
  { "history-jsonl", false, "also write the history in the older JSON-lines format (history.jsonl and "
    .. "runs/), for a history kept in git (a history that has history.jsonl keeps writing it)" },
  { "quiet", false, "no progress on stderr" },
})

if opt.dir ~= "" then
  io.stderr:write("nightly: warning: --dir is deprecated; use --out\n")
  local merge = ev.shard.merging() -- the shards' --dir gives way to a merge's --out
  opt.out = merge and merge.out or opt.dir
end
-- The webhook URL is a secret (it carries the token): checked now, never echoed.
local notify_url = opt.notify ~= "" and opt.notify
  or not ev.sys.sandboxed() and os.getenv("EVALUA_NOTIFY_URL") or nil -- no environment under --sandbox
if notify_url and notify_url ~= "" and not notify_url:match("^https?://") then
  ev.cli.usage_error("%s: the notification URL must start with http:// or https://",
    opt.notify ~= "" and "--notify" or "$EVALUA_NOTIFY_URL")
end

local sys = ev.sys
assert(sys.mkdir(opt.out))
-- Shards of one run work side by side; their merge takes the lock.
local lock, holder = {}, nil
if not ev.shard.current() then lock, holder = sys.lock(opt.out .. "/nightly.lock") end
if not lock then
  io.stderr:write("nightly: another run is in progress: ", holder, "\n")
  return 75
end

-- The baseline: a named run, or the previous one. An unknown name is a
-- usage error, found before anything is evaluated or paid for.
-- --history-jsonl starts the older format; a history that has it keeps it anyway
local hist = ev.history.open(opt.out .. "/history", { jsonl = opt["history-jsonl"] or nil })
local baseline
if opt.baseline ~= "" then
  baseline = hist:find(opt.baseline)
  if not baseline then
    local known = {}
    for _, r in ipairs(hist:records()) do known[#known + 1] = r.label or r.run_id end
    io.stderr:write(("evalua: no run labelled or identified '%s' in %s/history (%s)\n"):format(opt.baseline,
      opt.out, #known > 0 and ("runs: " .. table.concat(known, ", ")) or "it has no runs yet"))
    ev.exit(2)
  end
else
  baseline = hist:latest()
end

-- Data: the variant's rows, then the tier's sample, stratified by query class.
local ds = ev.dataset.load(opt.data, { format = opt["data-format"] }):filter(function(r) return r.variant == opt.variant end)
if #ds.rows == 0 then
  io.stderr:write(("nightly: no rows with variant '%s' in %s\n"):format(opt.variant, opt.data))
  return 2
end
if opt.tier ~= "all" then ds = ds:sample { tier = opt.tier, by = "query_class", seed = opt.seed } end
ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.contexts)

if given.concurrency and not ev.judge.configured() then
  ev.cli.usage_error("--concurrency applies to a model judge ($EVALUA_MODEL); the offline judge sends no requests")
end
local judge = ev.judge.configured() and ev.cli.try(ev.judge.open, { cache = opt.out .. "/cache", concurrency = opt.concurrency })
  or ev.judge.open("offline")

local label = opt.label ~= "" and opt.label or opt.variant
local res = ev.evaluate(ds, {
  metrics = { "recall@5", "mrr", "ndcg@5", "token_f1", ev.rag.faithfulness, ev.rag.context_recall },
  slices = { "query_class", "language" },
  judge = judge, concurrency = opt.concurrency, quiet = opt.quiet,
  meta = { label = label, notes = opt.notes ~= "" and opt.notes or nil, variant = opt.variant,
           tier = opt.tier },
})
if res.shard then return 0 end -- the part is written; the merge compares, gates and reports

if baseline then ev.compare(res, hist, baseline) end
hist:trend(res, 10)

-- Gates: thresholds per tier of query classes, and no significant regression.
local gates = ev.gate.check(res, {
  tiers = { by = "query_class", P0 = { "factoid" }, P1 = { "how-to" }, P2 = { "comparison" } },
  thresholds = {
    ["recall@5"] = { P0 = 0.7, P1 = 0.5, P2 = 0.3 },
    faithfulness = { all = 0.6 },
  },
  max_regressions = 0,
  min_coverage = 0.8,
})

-- A dated folder per run; runs within one second get -2, -3 (the lock makes this race-free).
local folder = opt.out .. "/reports/" .. os.date("!%Y-%m-%dT%H%M%SZ")
local base, n = folder, 1
while sys.stat(folder) do
  n = n + 1
  folder = base .. "-" .. n
end
-- items = "full": each item keeps its row, which evalua view shows (the sampled rows are not the data file's)
ev.report.write(res, { dir = folder, name = "nightly", formats = { "md", "json", "csv", "html", "junit" },
                       title = ("Nightly: %s (%s tier)"):format(label, opt.tier), items = "full" })
hist:append(res, { label = label, notes = res.meta.notes, report = folder .. "/nightly.html" })
ev.report.print(res) -- --quiet silences progress only: a cron log keeps the table and the gates
local status = ev.gate.exit_code(gates)
if notify_url and notify_url ~= "" then
  local n = ev.notify.send(notify_url, res, { title = ("nightly %s (%s tier)"):format(label, opt.tier),
                                              report = folder .. "/nightly.html" })
  if n.error then io.stderr:write("nightly: warning: the notification was not sent: ", n.error, "\n")
  elseif n.sent then io.stderr:write("nightly: notified: ", n.why, "\n") end
end
io.stderr:write(("nightly: reports in %s; gates: %s\n"):format(folder,
  status == 0 and "pass" or status == 1 and "FAILED" or "undecided"))
lock:unlock()
return status
