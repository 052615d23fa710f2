-- Prompt experiment: one judge metric run with two or more prompt variants
-- over the same rows, side by side per query class, each variant tested
-- against the first with paired tests on the items both measured.
--
--   evalua run scripts/prompt_experiment.lua                        # faithfulness, offline judge
--   evalua run scripts/prompt_experiment.lua --judge openai         # a model judge reads the prompts
--   evalua run scripts/prompt_experiment.lua --metric correctness --variant terse=my_prompt.txt
local ev = require "evalua"

local opt = ev.cli.parse(arg, {
  usage = "evalua run scripts/prompt_experiment.lua [options]",
  description = "Compares prompt variants of a judge metric on the same rows, per query class, with paired tests.",
  { "data", "scripts/data/rag_eval.jsonl", "evaluation rows (JSONL or CSV)" },
  { "corpus", "scripts/data/corpus.jsonl", "documents {id, title, text} that supply contexts" },
  { "k", 3, "retrieved documents given to the judge" },
  { "metric", "faithfulness", "the judge metric whose prompt varies",
    choices = { "faithfulness", "context_precision", "correctness" } },
  { "variant", {}, "another variant NAME=FILE: FILE (a template) replaces the system message of the judging step",
    list = true },
  { "judge", "offline", "offline, or openai for any OpenAI-compatible server", choices = { "offline", "openai" } },
  { "model", "", "judge model (default: $EVALUA_MODEL)" },
  { "concurrency", 16, "judge requests in flight" },
  { "resamples", 10000, "permutation test resamples" },
  { "seed", 1, "permutation test seed" },
  { "quiet", false, "no progress on stderr" },
})

-- The step each metric's prompt variants replace, and a built-in alternative
-- to its default prompt: stricter about what counts.
local STEP = { faithfulness = "verdicts", context_precision = "verdict", correctness = "grade" }
local STRICT = {
  faithfulness = [[You check statements against a context, strictly. A statement gets verdict 1 only when the context states it explicitly, with the same numbers, names and conditions; a statement that needs any inference, rounding or outside knowledge gets verdict 0.

Reply with JSON only, one entry per statement, in order:
{"verdicts": [{"statement": "the statement", "verdict": 0, "reason": "one sentence"}]}]],
  context_precision = [[You judge one retrieved passage, strictly. Verdict 1 only when the passage itself states the expected answer (or, for a multi-part answer, one part of it) in so many words; related background gets verdict 0.

Reply with JSON only: {"reason": "one sentence", "verdict": 0}]],
  correctness = [[You grade an answer against a reference, strictly, from 1 to 5: 5 only when every fact of the reference is present and nothing is wrong; 4 when one minor detail is missing; 3 when a fact is missing or imprecise; 2 when a stated fact is wrong; 1 when the answer is unrelated or refuses.

Reply with JSON only: {"reason": "one or two sentences", "score": 3}]],
}

local variants = { { name = "default" }, { name = "strict", prompt = { system = STRICT[opt.metric] } } }
for _, spec in ipairs(opt.variant) do
  local name, path = spec:match("^([%w_%-]+)=(.+)$")
  if not name then ev.cli.usage_error("--variant expects NAME=FILE, got '%s'", spec) end
  variants[#variants + 1] = { name = name, prompt = { system = ev.template.file(path) } }
end

local ds = ev.dataset.load(opt.data)
ds:attach_contexts(ev.dataset.corpus(opt.corpus), math.tointeger(opt.k) or 3)
local judge = ev.judge.open(opt.judge == "offline" and "offline" or {
  model = opt.model ~= "" and opt.model or nil, concurrency = opt.concurrency })

local metrics = {}
for i, v in ipairs(variants) do
  v.metric = ev.rag[opt.metric] { name = ("%s[%s]"):format(opt.metric, v.name), prompts = { [STEP[opt.metric]] = v.prompt } }
  metrics[i] = v.metric
end

local res = ev.evaluate(ds, { metrics = metrics, slices = { "query_class" }, judge = judge,
                              concurrency = opt.concurrency, quiet = opt.quiet })

-- Paired scores of variant v against the first, over items measured by both.
local function pairs_of(items, v)
  local a, b, changed = {}, {}, 0
  for _, it in ipairs(items) do
    local x, y = it.scores[variants[1].metric.name], it.scores[v.metric.name]
    if x ~= nil and y ~= nil then
      a[#a + 1], b[#b + 1] = x, y
      if x ~= y then changed = changed + 1 end
    end
  end
  return a, b, changed
end

local function fmt_p(t) return t and t.p and ("%.4f"):format(t.p) or "-" end

local function cell(items, v)
  local sum, n = 0, 0
  for _, it in ipairs(items) do
    local s = it.scores[v.metric.name]
    if s ~= nil then sum, n = sum + s, n + 1 end
  end
  return n > 0 and ("%.3f (%d/%d)"):format(sum / n, n, #items) or ("- (0/%d)"):format(#items)
end

local function line(label, items)
  local out = { ("%-12s %4d  %-16s"):format(label, #items, cell(items, variants[1])) }
  for i = 2, #variants do
    local v = variants[i]
    local a, b, changed = pairs_of(items, v)
    local delta = #a > 0 and ("%+.3f"):format((ev.stats.mean(b)) - (ev.stats.mean(a))) or "-"
    local perm = #a > 1 and ev.stats.paired_permutation(b, a, { resamples = math.tointeger(opt.resamples), seed = math.tointeger(opt.seed) }) or nil
    local t = #a > 1 and ev.stats.paired_ttest(b, a) or nil
    out[#out + 1] = ("  %-16s %7s %7d %8s %8s"):format(cell(items, v), delta, changed, fmt_p(perm), fmt_p(t))
  end
  return table.concat(out)
end

print(("metric: %s, step '%s'; judge: %s; %d rows; each variant against '%s': paired permutation test (%d resamples, seed %d) and paired t-test")
  :format(opt.metric, STEP[opt.metric], judge.kind == "offline" and "offline" or judge.model, #ds.rows, variants[1].name, opt.resamples, opt.seed))
local head = { ("%-12s %4s  %-16s"):format("query_class", "n", variants[1].name) }
for i = 2, #variants do
  head[#head + 1] = ("  %-16s %7s %7s %8s %8s"):format(variants[i].name, "delta", "changed", "p(perm)", "p(t)")
end
print(table.concat(head))
local classes = {}
for _, it in ipairs(res.items) do classes[it.slices.query_class] = classes[it.slices.query_class] or {} end
local names = {}
for c in pairs(classes) do names[#names + 1] = c end
table.sort(names)
for _, it in ipairs(res.items) do table.insert(classes[it.slices.query_class], it) end
print(line("all", res.items))
for _, c in ipairs(names) do print(line(c, classes[c])) end
for _, v in ipairs(variants) do
  local n, first = 0, nil
  for _, it in ipairs(res.items) do
    local why = it.unmeasured[v.metric.name]
    if why then n, first = n + 1, first or why end
  end
  if n > 0 then print(("%s: %d of %d unmeasured (first: %s)"):format(v.name, n, #res.items, first)) end
end
if judge.kind == "offline" then
  print("note: the offline judge does not read prompts, so its variants agree; run with --judge openai to compare prompts")
end
