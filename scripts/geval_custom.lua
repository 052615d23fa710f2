-- A judge metric of your own, in plain words: G-Eval turns the criterion
-- into evaluation steps once (print them with --show-steps and pin them with
-- steps = {...}), then scores every answer, sliced by query class and language.
--
--   evalua run scripts/geval_custom.lua                  # offline judge, bundled data
--   evalua run scripts/geval_custom.lua --judge openai   # $OPENAI_BASE_URL, $OPENAI_API_KEY, $EVALUA_MODEL
--
-- The offline judge cannot read a criterion; offline, the metric's own
-- estimate below scores it, and the reports say so. Exit status: 0, or 4
-- when the judge gave no usable answer for more than
-- ev.gate.max_judge_failures of the items (docs/judge.md).
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder

local opt = ev.cli.parse(arg, {
  usage = "evalua run scripts/geval_custom.lua [options]",
  description = "Scores answers with a custom G-Eval criterion: same language as the question, grounded in a retrieved source.",
  { "data", here .. "/data/rag_eval.jsonl", "evaluation rows (JSONL or CSV)" },
  { "data-format", "evalua", "the format of --data: evalua's rows, a peer's file or folder, or auto (docs/data.md)",
    choices = ev.dataset.formats },
  { "corpus", here .. "/data/corpus.jsonl", "documents {id, title, text} that supply contexts" },
  { "out", "out/geval", "folder for the reports", path = "out" },
  { "judge", "offline", "offline, or openai for any OpenAI-compatible server", choices = { "offline", "openai" } },
  { "model", "", "judge model (default: $EVALUA_MODEL)" },
  { "k", 3, "retrieved documents shown to the judge", integer = true, min = 1 },
  { "show-steps", false, "print the evaluation steps and exit" },
  { "quiet", false, "no progress on stderr" },
})

if opt.judge == "offline" and opt.model ~= "" then
  ev.cli.usage_error("--model applies to --judge openai; the offline judge has none")
end

local ds = ev.dataset.load(opt.data, { format = opt["data-format"] })
ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.k)
local judge = ev.cli.try(ev.judge.open, opt.judge == "offline" and "offline"
  or { model = opt.model ~= "" and opt.model or nil })

-- Whether a text is mostly Chinese, Japanese or Korean.
local function cjk(s)
  local n, all = 0, 0
  for _, cp in utf8.codes(s) do
    all = all + 1
    if cp >= 0x3040 and cp <= 0x9FFF or cp >= 0xAC00 and cp <= 0xD7A3 then n = n + 1 end
  end
  return n * 3 > all
end

local grounded = ev.geval {
  name = "same_language_and_sourced",
  criteria = "The Actual Output is written in the language of the Input, and what it states can be traced to the Context "
    .. "(it repeats or closely paraphrases a fact from a retrieved passage). An output in another language, "
    .. "or one whose facts are not in the Context, fails.",
  params = { "input", "actual_output", "context" },
  threshold = 0.6,
  -- Offline, this criterion's estimate: 1 for another script than the
  -- question's, else 1 + 4 x the share of the output's words in the context.
  offline = function(case)
    if cjk(case.input) ~= cjk(case.actual_output) then return 1, "offline: not in the script of the question" end
    local words = {}
    for _, t in ipairs(ev.judge.offline.tokens(case.context)) do words[t] = true end
    local share = ev.judge.offline.support(case.actual_output, words)
    return 1 + math.floor(4 * share + 0.5), ("offline: %d%% of its words are in the context"):format(math.floor(share * 100))
  end,
}

-- Steps are generated here, once, before the rows run concurrently.
local steps, err = grounded:steps(judge)
if opt["show-steps"] then
  if not steps then
    io.stderr:write("geval_custom: the judge gave no steps: ", err, "\n")
    return 4
  end
  for i, s in ipairs(steps) do print(("%d. %s"):format(i, s)) end
  return 0
end

local res = ev.evaluate(ds, { metrics = { grounded }, system = "variant", slices = { "query_class", "language" },
                              judge = judge, quiet = opt.quiet })
local gates = ev.gate.check(res, {}) -- only the judge is held to account
ev.report.print(res)
local paths = ev.report.write(res, { dir = opt.out, name = "geval", formats = { "md", "json", "csv", "html", "junit" },
                                     title = "G-Eval: grounded and same language" })
io.stderr:write("wrote ", table.concat(paths, ", "), "\n")
if not opt.quiet then
  for _, l in ipairs(ev.report.next_steps(res, paths, { judge_option = "--judge openai" })) do io.stderr:write(l, "\n") end
end
return ev.gate.exit_code(gates)
