-- The files `evalua init [DIR]` writes (host/cli/init_cmd.c): a new evaluation
-- project that a user then edits. `mode` "755" marks a program.
local M = {}

M.files = {}

M.files[1] = { name = "data.jsonl", content = [==[
{"qid": "q1", "query": "How long are deleted files kept?", "query_class": "factoid", "gold_doc_ids": ["kb-retention"], "gold_answers": ["30 days"], "retrieved": ["kb-retention", "kb-trash"], "contexts": ["Deleted files stay in the trash for 30 days, then they are removed for good.", "The trash can be emptied by hand at any time."], "answer": "Deleted files are kept for 30 days."}
{"qid": "q2", "query": "How do I restore a file deleted 40 days ago?", "query_class": "how-to", "gold_doc_ids": ["kb-retention", "kb-backup"], "graded_relevance": {"kb-retention": 1, "kb-backup": 2}, "gold_answers": ["ask support to restore it from the weekly backup"], "retrieved": [{"id": "kb-trash", "score": 3.2}, {"id": "kb-backup", "score": 2.9}, {"id": "kb-retention", "score": 1.1}], "contexts": ["The trash can be emptied by hand at any time.", "A weekly backup keeps every file for 90 days; support restores files from it on request.", "Deleted files stay in the trash for 30 days, then they are removed for good."], "answer": "After 30 days, ask support to restore it from the weekly backup."}
{"qid": "q3", "query": "Which plans include audit logs?", "query_class": "factoid", "gold_doc_ids": ["kb-plans"], "gold_answers": ["the Business and Enterprise plans"], "retrieved": ["kb-pricing", "kb-security"], "contexts": ["Plans are billed per user and month.", "Files are encrypted at rest and in transit."], "answer": "Audit logs come with every plan from $10 a month."}
]==] }

M.files[2] = { name = "eval.lua", content = [==[
-- The evaluation of this project: `evalua run eval.lua` (offline judge),
-- `evalua run eval.lua --judge openai` ($OPENAI_BASE_URL, $OPENAI_API_KEY,
-- $EVALUA_MODEL). Rows: data.jsonl, one JSON object per line.
local ev = require "evalua"
local here = ev.cli.script_dir(arg)

local opt = ev.cli.parse(arg, {
  usage = "evalua run eval.lua [options]",
  { "data", here .. "/data.jsonl", "evaluation rows (JSONL or CSV)" },
  { "out", "out", "folder for the reports", path = "out" },
  { "judge", "offline", "offline, or openai for any OpenAI-compatible server", choices = { "offline", "openai" } },
  { "quiet", false, "no progress on stderr" },
})

-- A metric of your own: every number in the answer appears in the contexts.
ev.register("numbers_grounded", function(row)
  local contexts = table.concat(row.contexts or {}, "\n")
  local seen = false
  for n in row.answer:gmatch("%d+") do
    seen = true
    if not contexts:find(n, 1, true) then return { score = 0, reason = n .. " is in no context" } end
  end
  if not seen then return { unmeasured = true, reason = "the answer has no number" } end
  return { score = 1, reason = "every number is in the contexts" }
end)

-- A criterion in plain words, scored by the judge (G-Eval). The offline
-- judge cannot read it: offline it is unmeasured; --judge openai scores it.
local actionable = ev.geval {
  name = "actionable",
  criteria = "The Actual Output answers the Input directly and tells the user what to do or what to expect, "
    .. "using only facts from the Context.",
  params = { "input", "actual_output", "context" },
}

local res = ev.evaluate(ev.dataset.load(opt.data), {
  metrics = { "recall@5", "mrr", "token_f1", "numbers_grounded", "faithfulness", actionable },
  slices = { "query_class" },
  judge = ev.cli.try(ev.judge.open, opt.judge == "offline" and "offline" or {}),
  quiet = opt.quiet,
})
-- Gates decide the exit status: 0 pass, 1 fail, 4 too much unmeasured to
-- decide (also when the judge gave no usable answer for a metric's items).
local gates = ev.gate.check(res, { thresholds = { ["recall@5"] = { all = 0.5 } } })
ev.report.print(res)
ev.report.write(res, { dir = opt.out, name = "eval", formats = { "md", "json", "html", "junit" } })
return ev.gate.exit_code(gates)
]==] }

M.files[3] = { name = "nightly.sh", mode = "755", content = [==[
#!/bin/sh
# Runs eval.lua into a dated report folder and exits with its status
# (0 gates pass, 1 a gate failed, 4 too much unmeasured or the judge failed,
# 2 usage, 3 bad input).
#
# cron, every night at 02:30:
#   30 2 * * * /path/to/project/nightly.sh >> /path/to/project/out/cron.log 2>&1
#
# systemd: /etc/systemd/system/evalua-nightly.service
#   [Service]
#   Type=oneshot
#   ExecStart=/path/to/project/nightly.sh
#   EnvironmentFile=-/etc/evalua/judge.env
#   SuccessExitStatus=1 4
# and /etc/systemd/system/evalua-nightly.timer, enabled with
# `systemctl enable --now evalua-nightly.timer`:
#   [Timer]
#   OnCalendar=*-*-* 02:30:00
#   Persistent=true
#   [Install]
#   WantedBy=timers.target
set -eu
cd "$(dirname "$0")"
judge=offline
[ -n "${OPENAI_BASE_URL:-}" ] && judge=openai
exec evalua run eval.lua --judge "$judge" --quiet --out "out/$(date -u +%Y-%m-%dT%H%M%SZ)"
]==] }

M.files[4] = { name = "README.md", content = [==[
# An evaluation project made with `evalua init`
`data.jsonl` holds the rows to evaluate, one JSON object per line (qid, query, retrieved, contexts, answer, gold_*).
`eval.lua` defines the metrics (one of your own, one G-Eval criterion) and the gate; run it with `evalua run eval.lua`.
`nightly.sh` runs it into `out/<date>/`, with cron and systemd examples inside; a real judge: `--judge openai`.
Reference: `man evalua`, and the docs installed with evalua (`/usr/share/doc/evalua`).
]==] }

return M
