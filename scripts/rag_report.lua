-- The RAG report: retrieval, answer and judged metrics for every pipeline
-- variant in the data, sliced by query class and by language, in every
-- report format. The main job of the README's first command.
--
--   evalua run scripts/rag_report.lua                       # bundled data, offline judge
--   evalua run scripts/rag_report.lua --judge openai        # $OPENAI_BASE_URL, $OPENAI_API_KEY, $EVALUA_MODEL
--   evalua run scripts/rag_report.lua --data mine.jsonl --corpus docs.jsonl --out reports
--
-- Exit status: 0, or 4 when the judge gave no usable answer for more than
-- ev.gate.max_judge_failures of a metric's items (the results are
-- undecided; docs/judge.md), 2 usage, 3 input error.
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder

local opt, given = ev.cli.parse(arg, {
  usage = "evalua run scripts/rag_report.lua [options]",
  description = "Evaluates RAG pipeline variants per query class and language and writes reports.",
  { "data", here .. "/data/rag_eval.jsonl", "evaluation rows (JSONL or CSV, docs/data.md)" },
  { "data-format", "evalua", "the format of --data: evalua's rows, a peer's file or folder, or auto (docs/data.md)",
    choices = ev.dataset.formats },
  { "corpus", here .. "/data/corpus.jsonl", "documents {id, title, text} that supply contexts" },
  { "out", "out", "folder for the reports", path = "out" },
  { "judge", "offline", "offline, or openai for any OpenAI-compatible server", choices = { "offline", "openai" } },
  { "model", "", "judge model (default: $EVALUA_MODEL)" },
  { "k", 5, "rank cutoff for recall, nDCG and the contexts given to the judge", integer = true, min = 1 },
  { "baseline-system", "", "compare every variant with this one on the queries both answered (default: the first variant)" },
  { "format", { "md", "json", "csv", "html", "junit" }, "report formats to write", list = true,
    choices = ev.report.formats },
  { "concurrency", 16, "judge requests in flight", integer = true, min = 1, max = 1000000 },
  { "cache", "", "judge cache folder (default: the judge's own default)" },
  { "lenient", false, "skip bad input rows (listed in the report) instead of stopping" },
  { "dry-run", false, "count the judge requests and tokens without sending any (steps that depend on an answer are not counted)" },
  { "quiet", false, "no progress on stderr" },
})

-- Options that would do nothing are refused before anything is loaded.
if opt.judge == "offline" then
  for _, o in ipairs { "model", "cache" } do
    if opt[o] ~= "" then ev.cli.usage_error("--%s applies to --judge openai; the offline judge has none", o) end
  end
  if given.concurrency then ev.cli.usage_error("--concurrency applies to --judge openai; the offline judge sends no requests") end
end

local ds = ev.dataset.load(opt.data, { mode = opt.lenient and "lenient" or "strict", format = opt["data-format"] })
ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.k)

-- A named baseline variant must be in the data: found before anything is judged.
if opt["baseline-system"] ~= "" then
  local seen, names = {}, {}
  for _, r in ipairs(ds.rows) do
    if r.variant ~= nil and not seen[r.variant] then seen[r.variant], names[#names + 1] = true, tostring(r.variant) end
  end
  if not seen[opt["baseline-system"]] then
    ev.cli.usage_error("--baseline-system: no variant '%s' in %s (variants: %s)", opt["baseline-system"], opt.data,
      table.concat(names, ", "))
  end
end

local judge = ev.cli.try(ev.judge.open, opt.judge == "offline" and "offline" or {
  model = opt.model ~= "" and opt.model or nil,
  concurrency = opt.concurrency,
  cache = opt.cache ~= "" and opt.cache or nil,
  dry_run = opt["dry-run"],
})

-- The row's own language field when it has one; else a guess from the
-- query's script, labelled as a guess: a Han, kana or Hangul character
-- makes it "cjk (guessed)", anything else "other (guessed)".
local function language(row)
  local given = row.language
  if type(given) == "string" and given ~= "" then return given end
  for _, cp in utf8.codes(row.query or "") do
    if cp >= 0x3040 and cp <= 0x9FFF or cp >= 0xAC00 and cp <= 0xD7A3 then return "cjk (guessed)" end
  end
  return "other (guessed)"
end

local k = math.tointeger(opt.k) or opt.k
local res = ev.evaluate(ds, {
  metrics = {
    "recall@" .. k, "mrr", "ndcg@" .. k,
    "exact_match_norm", "token_f1",
    ev.rag.faithfulness, ev.rag.answer_relevance, ev.rag.context_precision, ev.rag.context_recall,
  },
  system = "variant",
  slices = { "query_class", language = language },
  judge = judge,
  concurrency = opt.concurrency,
  quiet = opt.quiet,
})

if opt["dry-run"] then
  local e = judge:estimate()
  print(("dry run: at least %d judge requests, about %d prompt and %d completion tokens%s; nothing was sent"):format(
    e.requests or 0, e.prompt_tokens or 0, e.completion_tokens or 0,
    e.cost and (", about $%.4f"):format(e.cost) or ""))
  return 0
end

-- The variants against one of them, paired by query, with p-values.
if #res.systems > 1 then
  ev.compare.systems(res, { baseline = opt["baseline-system"] ~= "" and opt["baseline-system"] or res.systems[1] })
end

-- No gate of our own: only the judge is held to account (undecided when it failed).
local gates = ev.gate.check(res, {})
ev.report.print(res)
local paths = ev.report.write(res, { dir = opt.out, name = "rag_report", formats = opt.format,
                                     title = "RAG evaluation: " .. opt.data })
if #paths > 0 then io.stderr:write("wrote ", table.concat(paths, ", "), "\n") end
if not opt.quiet then
  for _, l in ipairs(ev.report.next_steps(res, paths, { judge_option = "--judge openai" })) do io.stderr:write(l, "\n") end
end
return ev.gate.exit_code(gates)
