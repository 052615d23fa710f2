-- The prompt matrix: every prompt template (prompts/*.txt) x provider x
-- question, scored with assertions and answer metrics, summarised per cell
-- (prompt x provider) and written as reports, with a side-by-side HTML view. Runs offline by default: the
-- offline provider is an extractive heuristic over the retrieved passages.
--
--   evalua run scripts/prompt_matrix.lua                              # prompts/*.txt x offline
--   evalua run scripts/prompt_matrix.lua --provider offline --provider openai   # $OPENAI_BASE_URL, $EVALUA_MODEL
--   evalua run scripts/prompt_matrix.lua --prompts my_prompts/ --min-pass 0.9   # exit 1 below 90% passing
local ev = require "evalua"

local opt = ev.cli.parse(arg, {
  usage = "evalua run scripts/prompt_matrix.lua [options]",
  description = "Runs prompt templates x providers over the data, checks assertions and prints a matrix summary.",
  { "data", "scripts/data/rag_eval.jsonl", "rows (JSONL or CSV); a row's `assert` list is checked too" },
  { "corpus", "scripts/data/corpus.jsonl", "documents {id, title, text} that supply contexts" },
  { "pipeline", "hybrid_rerank", "the variant whose retrieval gives the contexts (\"\" for every row)" },
  { "k", 3, "retrieved documents in the contexts" },
  { "prompts", "prompts", "folder of prompt templates (*.txt), each a cell's prompt" },
  { "provider", { "offline" }, "offline, or openai for any OpenAI-compatible server", list = true,
    choices = { "offline", "openai" } },
  { "model", "", "openai: the model (default: $EVALUA_MODEL)" },
  { "base-url", "", "openai: the server (default: $OPENAI_BASE_URL)" },
  { "max-words", 60, "assertion: an answer has at most this many words" },
  { "min-pass", 0, "gate: the share of cases each cell must pass (0: no gate)" },
  { "out", "out", "folder for the reports" },
  { "format", { "md", "json" }, "report formats to write", list = true },
  { "concurrency", 16, "requests in flight" },
  { "cache", "", "cache folder for provider answers (default: the judge's)" },
  { "dry-run", false, "count the requests without sending any" },
  { "quiet", false, "no progress on stderr" },
})

local ds = ev.dataset.load(opt.data)
if opt.pipeline ~= "" then ds = ds:filter(function(row) return row.variant == opt.pipeline end) end
if ds.n == 0 then ev.input_error(("%s: no rows of pipeline '%s'"):format(opt.data, opt.pipeline)) end
ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.k)
if opt["dry-run"] then ev.provider.dry_run(true) end

local providers = {}
for _, name in ipairs(opt.provider) do
  providers[#providers + 1] = name == "offline" and ev.provider.offline() or ev.provider.openai {
    model = opt.model ~= "" and opt.model or nil, base_url = opt["base-url"] ~= "" and opt["base-url"] or nil,
    concurrency = opt.concurrency, cache = opt.cache ~= "" and opt.cache or nil,
  }
end

local out = ev.generate(ds, { prompts = opt.prompts, providers = providers, concurrency = opt.concurrency,
                              quiet = opt.quiet })

-- Assertions: a gold answer appears (from the data's gold_answers), the
-- answer stays short and does not give up; rows may add their own.
local checks = {
  { name = "mentions a gold answer", type = "icontains-any", field = "gold_answers" },
  { name = "at most " .. opt["max-words"] .. " words", type = "max-words", value = opt["max-words"] },
  { name = "does not give up", type = "not-icontains-any", value = { "couldn't find", "do not contain", "not contain" } },
}
local res = ev.evaluate(out, {
  metrics = { ev.assertions.metric(checks), "token_f1", "exact_match_norm" },
  system = "system", slices = { "query_class" }, ci = false, quiet = opt.quiet,
})

if opt["dry-run"] then
  local n = 0
  for _, p in ipairs(providers) do n = n + (p:stats().dry_run or 0) end
  print(("dry run: %d cells x %d rows, %d requests not in the cache; nothing was sent"):format(#out.cells, ds.n, n))
  return 0
end

-- The matrix summary: one line per cell.
local function mean_of(row_field, system)
  local sum, n = 0, 0
  for i = 1, out.n do
    local r = out.rows[i]
    if r.system == system and type(r[row_field]) == "number" then sum, n = sum + r[row_field], n + 1 end
  end
  return n > 0 and sum / n or nil, sum
end


print(("%-22s %5s %8s %8s %8s %9s %10s %7s"):format("cell (prompt/provider)", "n", "pass", "f1", "f1 p10",
  "latency", "cost", "failed"))
for _, cell in ipairs(out.cells) do
  local s = cell.system
  local a, f = res:agg(s, "assertions"), res:agg(s, "token_f1")
  local passed = 0
  for _, x in ipairs(res:scores_of(s, "assertions")) do if x >= 1 then passed = passed + 1 end end
  local p10 = f.measured > 0 and ev.stats.percentile(res:scores_of(s, "token_f1"), 10) or nil
  local lat = mean_of("latency_ms", s)
  local _, cost = mean_of("cost", s)
  local failed = 0
  for i = 1, out.n do
    if out.rows[i].system == s and out.rows[i].output_error then failed = failed + 1 end
  end
  print(("%-22s %5d %8s %8s %8s %9s %10s %7d"):format(s, a.n, ("%d/%d"):format(passed, a.n),
    f.mean and ("%.3f"):format(f.mean) or "-", p10 and ("%.3f"):format(p10) or "-",
    lat and ("%.0f ms"):format(lat) or "-", ("$%.4f"):format(cost), failed))
end

local paths = ev.report.write(res, { dir = opt.out, name = "prompt_matrix", formats = opt.format,
                                     title = "Prompt matrix: " .. opt.data })
paths[#paths + 1] = ev.matrix_view.write(res, opt.out .. "/prompt_matrix_side_by_side.html",
                                         { title = "Prompt matrix: " .. opt.data })
if #paths > 0 and not opt.quiet then io.stderr:write("wrote ", table.concat(paths, ", "), "\n") end
if opt["min-pass"] == 0 then return 0 end
local gates = ev.gate.check(res, { pass_share = { assertions = opt["min-pass"] } })
for _, g in ipairs(gates) do print(("gate %s %s: %s"):format(g.system, g.status, g.message)) end
return ev.gate.exit_code(gates)
