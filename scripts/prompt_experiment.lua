-- Prompt experiment: two or more prompt variants over the same rows, side by
-- side per query class, each variant tested against the first with paired
-- tests on the items both measured. The variants change either the judge's
-- prompt (--target judge) or the prompt of the system under test, whose
-- answers come from an OpenAI-compatible endpoint (--target system).
--
--   evalua run scripts/prompt_experiment.lua                        # faithfulness judge prompts, offline judge
--   evalua run scripts/prompt_experiment.lua --judge openai         # a model judge reads the prompts
--   evalua run scripts/prompt_experiment.lua --metric correctness --variant terse=my_prompt.txt
--   evalua run scripts/prompt_experiment.lua --target system --metric token_f1   # answers from $OPENAI_BASE_URL
--
-- Exit status: 0, or 4 when the judge gave no usable answer for more than
-- ev.gate.max_judge_failures of a variant's items (docs/judge.md).
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder

local opt = ev.cli.parse(arg, {
  usage = "evalua run scripts/prompt_experiment.lua [options]",
  description = "Compares prompt variants (of a judge metric, or of the system under test) on the same rows, "
    .. "per query class, with paired tests.",
  { "data", here .. "/data/rag_eval.jsonl", "evaluation rows (JSONL or CSV)" },
  { "data-format", "evalua", "the format of --data: evalua's rows, a peer's file or folder, or auto (docs/data.md)",
    choices = ev.dataset.formats },
  { "corpus", here .. "/data/corpus.jsonl", "documents {id, title, text} that supply contexts" },
  { "k", 3, "retrieved documents in the contexts", integer = true, min = 1 },
  { "target", "judge", "what the variants change", choices = { "judge", "system" } },
  { "metric", "faithfulness", "the metric compared (token_f1 needs --target system)",
    choices = { "faithfulness", "context_precision", "correctness", "token_f1" } },
  { "variant", {}, "another variant NAME=FILE: FILE (a template) replaces the system message of the varied prompt",
    list = true },
  { "judge", "offline", "offline, or openai for any OpenAI-compatible server", choices = { "offline", "openai" } },
  { "model", "", "judge model (default: $EVALUA_MODEL)" },
  { "pipeline", "hybrid_rerank", "--target system: the pipeline variant whose retrieval gives the contexts" },
  { "system-url", "", "--target system: base URL of the system's endpoint (default: $OPENAI_BASE_URL)" },
  { "system-model", "", "--target system: the system's model (default: $EVALUA_MODEL)" },
  { "concurrency", 16, "requests in flight", integer = true, min = 1, max = 1000000 },
  { "out", "out/prompt_experiment", "folder for the printed table (prompt_experiment.txt)", path = "out" },
  { "resamples", 10000, "permutation test resamples", integer = true, min = 1 },
  { "seed", 1, "permutation test seed", integer = true },
  { "quiet", false, "no progress on stderr" },
})

-- What is printed is also kept, for --out.
local shown = {}
local function say(line)
  print(line)
  shown[#shown + 1] = line
end

-- ---- the variants ------------------------------------------------------------

-- Judge target: the step of each metric whose prompt varies, and a built-in
-- alternative to its default: stricter about what counts.
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

-- System target: the answering prompt, with the row's fields as variables.
local ANSWER_USER = "{{#contexts}}[{{@index}}] {{.}}\n{{/contexts}}\nQuestion: {{query}}"
local ANSWER = {
  default = [[Answer the question from the numbered passages only, in the language of the question, in one or two sentences. If the passages do not contain the answer, say so.]],
  cite = [[Answer the question from the numbered passages only, in the language of the question, in one or two sentences, and end each sentence with the number of the passage it comes from, like [2]. If the passages do not contain the answer, say so.]],
}

local function extra_variants(variants)
  for _, spec in ipairs(opt.variant) do
    local name, path = spec:match("^([%w_%-]+)=(.+)$")
    if not name then ev.cli.usage_error("--variant expects NAME=FILE, got '%s'", spec) end
    local f, err = io.open(path, "rb")
    if not f then ev.cli.usage_error("--variant %s: %s", name, err) end
    f:close()
    variants[#variants + 1] = { name = name, system = ev.template.file(path) }
  end
  return variants
end

if opt.target == "judge" and not STEP[opt.metric] then
  ev.cli.usage_error("--metric %s compares no judge prompt; use it with --target system", opt.metric)
end
if opt.judge == "offline" and opt.model ~= "" then
  ev.cli.usage_error("--model applies to --judge openai; the offline judge has none")
end
for _, o in ipairs { "system-url", "system-model" } do
  if opt[o] ~= "" and opt.target ~= "system" then ev.cli.usage_error("--%s applies to --target system", o) end
end
if opt.target == "system" and opt.metric == "context_precision" then
  ev.cli.usage_error("--metric context_precision does not read the answer; pick another for --target system")
end

local variants
if opt.target == "judge" then
  variants = extra_variants { { name = "default" }, { name = "strict", system = STRICT[opt.metric] } }
else
  variants = extra_variants { { name = "default", system = ANSWER.default }, { name = "cite", system = ANSWER.cite } }
end

-- ---- running ------------------------------------------------------------------------

local ds = ev.dataset.load(opt.data, { format = opt["data-format"] })
ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.k)
local judge = ev.cli.try(ev.judge.open, opt.judge == "offline" and "offline" or {
  model = opt.model ~= "" and opt.model or nil, concurrency = opt.concurrency })
local quiet = opt.quiet

local function metric_for(v)
  if opt.metric == "token_f1" then return "token_f1" end
  local o = { name = ("%s[%s]"):format(opt.metric, v.name) }
  if opt.target == "judge" then o.prompts = { [STEP[opt.metric]] = v.system and { system = v.system } or nil } end
  return ev.rag[opt.metric](o)
end

-- The exit status: 4 once an evaluation's judge failed (ev.gate).
local status = 0
local function held_to_account(res)
  status = math.max(status, ev.gate.exit_code(ev.gate.check(res, {})))
end

-- Judge target: every variant's metric on every row, in one evaluation.
-- Returns the items and scores[v][i], reasons[v][i] (unmeasured).
local function judge_runs()
  local metrics = {}
  for i, v in ipairs(variants) do metrics[i] = metric_for(v) end
  local res = ev.evaluate(ds, { metrics = metrics, slices = { "query_class" }, judge = judge,
                                concurrency = opt.concurrency, quiet = quiet })
  held_to_account(res)
  local scores, reasons = {}, {}
  for vi, m in ipairs(metrics) do
    scores[vi], reasons[vi] = {}, {}
    for i, it in ipairs(res.items) do
      scores[vi][i], reasons[vi][i] = it.scores[m.name], it.unmeasured[m.name]
    end
  end
  return res.items, scores, reasons
end

-- System target: each variant's answers to the pipeline's rows, then the metric on them.
local function system_runs()
  local rows = ds:filter(function(r) return r.variant == opt.pipeline end).rows
  if #rows == 0 then ev.cli.usage_error("no rows of pipeline '%s' in %s", opt.pipeline, opt.data) end
  local sut = ev.cli.try(ev.judge.open, { base_url = opt["system-url"] ~= "" and opt["system-url"] or nil,
                                          model = opt["system-model"] ~= "" and opt["system-model"] or nil,
                                          concurrency = opt.concurrency })
  local user = ev.template(ANSWER_USER, "answer/user")
  local items, scores, reasons = nil, {}, {}
  for vi, v in ipairs(variants) do
    local sys = ev.template.load(v.system, v.name .. "/system")
    local answered = ev.map(rows, function(row)
      local r = sut:chat { messages = { { role = "system", content = sys:render(row) },
                                        { role = "user", content = user:render(row) } }, temperature = 0 }
      local copy = {}
      for k, x in pairs(row) do copy[k] = x end
      copy.answer = r.ok and r.text or nil
      return copy
    end, { concurrency = opt.concurrency, quiet = quiet, label = "answering (" .. v.name .. ")" })
    local res = ev.evaluate(answered, { metrics = { metric_for(v) }, slices = { "query_class" }, judge = judge,
                                        concurrency = opt.concurrency, quiet = quiet })
    held_to_account(res)
    local name = res.metrics[1].name
    items, scores[vi], reasons[vi] = res.items, {}, {}
    for i, it in ipairs(res.items) do scores[vi][i], reasons[vi][i] = it.scores[name], it.unmeasured[name] end
  end
  return items, scores, reasons
end

local items, scores, reasons
if opt.target == "judge" then items, scores, reasons = judge_runs() else items, scores, reasons = system_runs() end

-- ---- the table ------------------------------------------------------------------------

local function fmt_p(t) return t and t.p and ("%.4f"):format(t.p) or "-" end

local function cell(idx, vi)
  local sum, n = 0, 0
  for _, i in ipairs(idx) do
    local s = scores[vi][i]
    if s ~= nil then sum, n = sum + s, n + 1 end
  end
  return n > 0 and ("%.3f (%d/%d)"):format(sum / n, n, #idx) or ("- (0/%d)"):format(#idx)
end

-- Variant vi against the first over the items both measured.
local function comparison(idx, vi)
  local a, b, changed = {}, {}, 0
  for _, i in ipairs(idx) do
    local x, y = scores[1][i], scores[vi][i]
    if x ~= nil and y ~= nil then
      a[#a + 1], b[#b + 1] = x, y
      if x ~= y then changed = changed + 1 end
    end
  end
  local delta = #a > 0 and ("%+.3f"):format(ev.stats.mean(b) - ev.stats.mean(a)) or "-"
  local perm = #a > 1 and ev.stats.paired_permutation(b, a, { resamples = opt.resamples,
                                                              seed = opt.seed }) or nil
  local t = #a > 1 and ev.stats.paired_ttest(b, a) or nil
  return ("  %-16s %7s %7d %8s %8s"):format(cell(idx, vi), delta, changed, fmt_p(perm), fmt_p(t))
end

local function line(label, idx)
  local out = { ("%-12s %4d  %-16s"):format(label, #idx, cell(idx, 1)) }
  for vi = 2, #variants do out[#out + 1] = comparison(idx, vi) end
  return table.concat(out)
end

local varied = opt.target == "judge" and ("the judge's '%s' prompt"):format(STEP[opt.metric])
  or ("the answering prompt (pipeline %s)"):format(opt.pipeline)
say(("metric: %s; varied: %s; judge: %s; %d items; each variant against '%s': "
  .. "paired permutation test (%d resamples, seed %d) and paired t-test"):format(opt.metric, varied,
  judge.kind == "offline" and "offline" or judge.model, #items, variants[1].name, opt.resamples, opt.seed))
local head = { ("%-12s %4s  %-16s"):format("query_class", "n", variants[1].name) }
for vi = 2, #variants do
  head[#head + 1] = ("  %-16s %7s %7s %8s %8s"):format(variants[vi].name, "delta", "changed", "p(perm)", "p(t)")
end
say(table.concat(head))

local all, by_class, classes = {}, {}, {}
for i, it in ipairs(items) do
  all[i] = i
  local c = it.slices.query_class
  if not by_class[c] then by_class[c], classes[#classes + 1] = {}, c end
  table.insert(by_class[c], i)
end
table.sort(classes)
say(line("all", all))
for _, c in ipairs(classes) do say(line(c, by_class[c])) end

for vi, v in ipairs(variants) do
  local n, first = 0, nil
  for i = 1, #items do
    if reasons[vi][i] then n, first = n + 1, first or reasons[vi][i] end
  end
  if n > 0 then say(("%s: %d of %d unmeasured (first: %s)"):format(v.name, n, #items, first)) end
end
if opt.target == "judge" and judge.kind == "offline" then
  say("note: the offline judge does not read prompts, so its variants agree; run with --judge openai to compare prompts")
end

assert(ev.sys.mkdir(opt.out))
local path = opt.out .. "/prompt_experiment.txt"
assert(ev.sys.write_atomic(path, table.concat(shown, "\n") .. "\n"))
io.stderr:write("wrote ", path, "\n")
return status
