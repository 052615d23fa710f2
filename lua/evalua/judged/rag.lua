-- ev.rag: the judged RAG metrics. Each is a metric table for ev.evaluate
-- and a constructor of configured copies:
--
--   metrics = { "faithfulness", ev.rag.context_precision,
--               ev.rag.faithfulness{ threshold = 0.8, prompts = { verdicts = ev.template.file("v.txt") } } }
--
-- A metric returns {score=, reason=, ...details} or {unmeasured = true,
-- reason=}; never NaN, never 0 for "could not measure". Every judge call
-- goes through a registered judge operation, so the offline judge answers
-- it with a documented heuristic. Formulas: docs/judged_metrics.md.
local E = require "evalua.judged.llm_evaluator"
local offline = require "evalua.judge.offline"
local options = require "evalua.core.options"
local P = require "evalua.judged.prompts.rag"
local inputs = require "evalua.judged.rag.inputs"
local formulas = require "evalua.judged.rag.formulas"
local steps = require "evalua.judged.rag.steps"

local M = { prompts = P, steps = steps, average_precision = formulas.average_precision,
            reconcile = formulas.reconcile, pack = inputs.pack }

local field, read = inputs.field, inputs.read

local function threshold_of(o, default)
  local t = o.threshold == nil and default or o.threshold
  if t ~= nil and type(t) ~= "number" then error("threshold must be a number", 3) end
  return t
end

local function finish(out, threshold)
  if threshold and out.score then out.pass = out.score >= threshold end
  return out
end

-- Checks `prompts` against the steps a metric has and compiles them.
local function prompts_of(o, name, steps)
  local given = o.prompts or {}
  if type(given) ~= "table" then error(name .. ": prompts must be a table of step = prompt", 3) end
  for k in pairs(given) do
    if not steps[k] then
      local names = {}
      for s in pairs(steps) do names[#names + 1] = s end
      table.sort(names)
      error(("%s: no prompt step '%s' (its steps: %s)"):format(name, tostring(k), table.concat(names, ", ")), 3)
    end
  end
  local out = {}
  for step, base in pairs(steps) do out[step] = E.prompt(base, given[step], name .. "." .. step) end
  return out
end


-- ---- the metrics ---------------------------------------------------------------------

local failed = E.failure

local makers, known = {}, {}
local COMMON = { "name", "description", "prompts", "fields", "samples", "temperature" }

-- extra: the metric's own option names besides COMMON.
local function define(name, description, make, extra)
  local names = { table.unpack(COMMON) }
  for _, k in ipairs(extra) do names[#names + 1] = k end
  makers[name], known[name] = make, options.set(names)
  M[name] = make { name = name, description = description }
end

local function base(o, name, description)
  return E.metric { name = o.name or name, judged = true, description = o.description or description,
                    higher_is_better = true, options = o, make = makers[name], known = known[name],
                    what = "ev.rag." .. name }
end

-- The row function of a judged metric: it checks for a judge and for the
-- fields that score(judge, v, row) reads, so each metric only judges.
-- hint is added to a missing-field reason.
local function row_fn(o, fields, score, hint)
  return function(row, ctx)
    local judge, why = E.judge_of(ctx)
    if not judge then return E.unmeasured(why) end
    local v, missing = read(o, row, fields)
    if not v then return E.unmeasured(hint and missing .. hint or missing) end
    return score(judge, v, row)
  end
end

-- weights option -> function(statement, i) -> weight.
local function weigher(w)
  if w == nil or w == "equal" then return nil end
  if w == "words" then return function(statement) return #offline.content_tokens(statement) end end
  if type(w) == "function" then return w end
  error("faithfulness: weights must be \"equal\", \"words\" or a function(statement, i) -> number", 3)
end

-- sum_i w_i s_i / sum_i w_i over the statements' scores s_i (a verdict, or
-- a grade / 2); nil and why when no statement weighs anything.
local function weighted_share(checked, weigh)
  local sum, total = 0, 0
  for i, x in ipairs(checked) do
    local w = 1
    if weigh then
      w = weigh(x.statement, i)
      if type(w) ~= "number" or w ~= w or w < 0 or w == math.huge then
        error(("faithfulness: the weight of statement %d is %s, not a number >= 0"):format(i, tostring(w)), 0)
      end
      x.weight = w
    end
    sum, total = sum + w * (x.grade and x.grade / 2 or x.verdict), total + w
  end
  if total == 0 then return nil, "every statement weighs 0" end
  return sum / total
end

local function faithfulness_reason(checked, graded)
  local full, part = 0, 0
  for _, x in ipairs(checked) do
    if graded then
      full, part = full + (x.grade == 2 and 1 or 0), part + (x.grade == 1 and 1 or 0)
    else
      full = full + x.verdict
    end
  end
  if graded then
    return ("%d of %d statements are fully and %d partly supported by the contexts"):format(full, #checked, part)
  end
  return ("%d of %d statements are supported by the contexts"):format(full, #checked)
end

define("faithfulness", "share of the answer's statements that the contexts support", function(o)
  local m = base(o, "faithfulness", o.description)
  local sampling = E.sampling_of(o, "ev.rag.faithfulness", 2)
  local graded = o.graded == true
  if o.graded ~= nil and type(o.graded) ~= "boolean" then error("faithfulness: graded must be true or false", 2) end
  local weigh = weigher(o.weights)
  local prompts = prompts_of(o, "faithfulness",
    { statements = P.statements, verdicts = graded and P.graded_verdicts or P.verdicts })
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "answer", "contexts" }, function(judge, v, row)
    v.question = field(o, row, "question") or ""
    local r = E.ask(judge, "rag_statements", { question = v.question, answer = v.answer }, prompts.statements)
    if not r.ok then return failed("statements", r) end
    if #r.value == 0 then return E.unmeasured("the answer makes no statements to check") end
    local c = E.ask(judge, graded and "rag_graded" or "rag_verdicts", { contexts = v.contexts, statements = r.value },
      prompts.verdicts, sampling)
    if not c.ok then return failed("verdicts", c) end
    local score, why = weighted_share(c.value, weigh)
    if not score then return E.unmeasured(why, { verdicts = c.value }) end
    local reason = faithfulness_reason(c.value, graded)
    if weigh then reason = reason .. (o.weights == "words" and " (weighted by words)" or " (weighted)") end
    return finish(E.sampled({ score = score, verdicts = c.value, reason = reason }, c), threshold)
  end)
  return m
end, { "threshold", "graded", "weights" })

define("context_recall", "share of the reference's sentences that the contexts support", function(o)
  local m = base(o, "context_recall", o.description)
  local sampling = E.sampling_of(o, "ev.rag.context_recall", 2)
  local prompts = prompts_of(o, "context_recall", { verdicts = P.context_recall })
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "reference", "contexts" }, function(judge, v, row)
    local sentences = offline.sentences(v.reference)
    if #sentences == 0 then return E.unmeasured("the reference has no sentences") end
    local c = E.ask(judge, "rag_recall", { question = field(o, row, "question") or "", contexts = v.contexts,
                                           statements = sentences }, prompts.verdicts, sampling)
    if not c.ok then return failed("verdicts", c) end
    local found = 0
    for _, x in ipairs(c.value) do found = found + x.verdict end
    return finish(E.sampled({ score = found / #c.value, verdicts = c.value,
                    reason = ("%d of %d reference sentences are found in the contexts"):format(found, #c.value) }, c),
                  threshold)
  end)
  return m
end, { "threshold" })

define("context_precision", "rank-weighted average precision of the chunks judged useful", function(o)
  local m = base(o, "context_precision", o.description)
  local sampling = E.sampling_of(o, "ev.rag.context_precision", 2)
  local prompts = prompts_of(o, "context_precision", { verdict = P.context_precision })
  local against = o.against or "reference"
  if against ~= "reference" and against ~= "answer" then
    error("context_precision: against must be \"reference\" or \"answer\"", 2)
  end
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  local hint = against == "reference" and " (against = \"answer\" judges by the answer instead)" or nil
  m.fn = row_fn(o, { "question", against, "contexts" }, function(judge, v)
    local verdicts, flags = {}, {}
    for k, chunk in ipairs(v.contexts) do
      local r = E.ask(judge, "rag_precision", { question = v.question, reference = v[against], context = chunk,
                                                rank = k }, prompts.verdict, sampling)
      if not r.ok then return failed(("chunk %d"):format(k), r) end
      verdicts[k] = { rank = k, verdict = r.value, reason = r.reason, agreement = r.agreement }
      flags[k] = r.value
    end
    local useful = 0
    for _, f in ipairs(flags) do useful = useful + f end
    return finish({ score = formulas.average_precision(flags), verdicts = verdicts, samples = sampling and sampling.samples,
                    reason = ("%d of %d chunks judged useful"):format(useful, #flags) }, threshold)
  end, hint)
  return m
end, { "threshold", "against" })

define("context_relevance", "share of the contexts' statements that are relevant to the question", function(o)
  local m = base(o, "context_relevance", o.description)
  local sampling = E.sampling_of(o, "ev.rag.context_relevance", 2)
  local prompts = prompts_of(o, "context_relevance", { verdicts = P.context_relevance })
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "question", "contexts" }, function(judge, v)
    local per, relevant, total = {}, 0, 0
    for k, chunk in ipairs(v.contexts) do
      local r = E.ask(judge, "rag_context_relevance", { question = v.question, context = chunk }, prompts.verdicts,
        sampling)
      if not r.ok then return failed(("chunk %d"):format(k), r) end
      local n = 0
      for _, x in ipairs(r.value) do n = n + x.verdict end
      per[k] = { rank = k, relevant = n, statements = r.value }
      relevant, total = relevant + n, total + #r.value
    end
    if total == 0 then return E.unmeasured("the contexts make no statements") end
    return finish({ score = relevant / total, contexts = per, samples = sampling and sampling.samples,
                    reason = ("%d of %d context statements are relevant"):format(relevant, total) }, threshold)
  end)
  return m
end, { "threshold" })

local function relevance_direct(o, prompts, judge, v, sampling)
  local r = E.ask(judge, "rag_answer_relevance", { question = v.question, answer = v.answer }, prompts.direct, sampling)
  if not r.ok then return failed("relevance", r) end
  return E.sampled({ score = r.value, reason = r.reason, mode = "direct" }, r)
end

local function relevance_embedding(o, prompts, judge, v, sampling)
  local n = math.tointeger(o.n or 3)
  local r = E.ask(judge, "rag_questions", { answer = v.answer, n = n }, prompts.questions, sampling)
  if not r.ok then return failed("questions", r) end
  local qs, all_nc = r.value, true
  for _, q in ipairs(qs) do all_nc = all_nc and q.noncommittal == 1 end
  if all_nc then
    return { score = 0, questions = qs, mode = "embedding", reason = "every generated question is noncommittal" }
  end
  local texts = {}
  for i, q in ipairs(qs) do texts[i] = q.question end
  local sims, errs = judge:similarity({ v.question }, { texts }, { model = o.embed_model })
  if not sims[1] then -- every error of similarity() is the judge's: a failed or inconsistent embedding
    return E.unmeasured("embeddings: " .. tostring(errs[1])
      .. " (answer_relevance{mode = \"direct\"} needs no embeddings endpoint)", { judge_failed = true })
  end
  local sum = 0
  for i, q in ipairs(qs) do
    q.cosine = sims[1][i]
    sum = sum + q.cosine
  end
  return { score = sum / #qs, questions = qs, mode = "embedding",
           reason = ("mean cosine of %d generated questions with the question"):format(#qs) }
end

define("answer_relevance", "how well the answer addresses the question (generated questions vs the real one)",
  function(o)
    local m = base(o, "answer_relevance", o.description)
    local sampling = E.sampling_of(o, "ev.rag.answer_relevance", 2)
    local mode = o.mode or "embedding"
    if mode ~= "embedding" and mode ~= "direct" then
      error("answer_relevance: mode must be \"embedding\" or \"direct\"", 2)
    end
    local n = o.n or 3
    if math.tointeger(n) == nil or n < 1 then error("answer_relevance: n must be a whole number >= 1", 2) end
    local prompts = prompts_of(o, "answer_relevance", { questions = P.questions, direct = P.answer_relevance })
    local threshold = threshold_of(o, 0.5)
    m.threshold = threshold
    m.fn = row_fn(o, { "question", "answer" }, function(judge, v)
      local run = mode == "direct" and relevance_direct or relevance_embedding
      return finish(run(o, prompts, judge, v, sampling), threshold)
    end)
    return m
  end, { "threshold", "mode", "n", "embed_model" })

M.answer_relevance_direct = M.answer_relevance { name = "answer_relevance_direct", mode = "direct",
  description = "the judge's 0-1 rating of how well the answer addresses the question" }


define("relevancy", "YES when the answer is in line with the contexts (LlamaIndex's relevancy)", function(o)
  local m = base(o, "relevancy", o.description)
  local sampling = E.sampling_of(o, "ev.rag.relevancy", 2)
  local mode = o.mode or "refine"
  if mode ~= "refine" and mode ~= "per_source" then
    error("relevancy: mode must be \"refine\" or \"per_source\"", 2)
  end
  local budget = o.budget or 6000
  if type(budget) ~= "number" or budget < 1 then error("relevancy: budget must be a number of characters", 2) end
  local prompts = prompts_of(o, "relevancy", { check = P.relevancy, refine = P.relevancy_refine })
  local threshold = threshold_of(o, mode == "refine" and 1 or 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "question", "answer", "contexts" }, function(judge, v)
    local steps = {}
    if mode == "per_source" then
      local yes = 0
      for k, chunk in ipairs(v.contexts) do
        local r = E.ask(judge, "rag_relevancy", { query = v.question, response = v.answer, context = chunk },
          prompts.check, sampling)
        if not r.ok then return failed(("chunk %d"):format(k), r) end
        steps[k] = { rank = k, verdict = r.value, reason = r.reason }
        if r.value == "YES" then yes = yes + 1 end
      end
      return finish({ score = yes / #steps, verdicts = steps, mode = mode,
                      reason = ("%d of %d chunks support the answer"):format(yes, #steps) }, threshold)
    end
    local verdict = "NO"
    for k, group in ipairs(inputs.pack(v.contexts, budget)) do
      local name, p = "rag_relevancy", prompts.check
      if k > 1 then name, p = "rag_relevancy_refine", prompts.refine end
      local r = E.ask(judge, name, { query = v.question, response = v.answer, context = group, previous = verdict }, p,
        sampling)
      if not r.ok then return failed(("part %d"):format(k), r) end
      steps[k] = { part = k, verdict = r.value, reason = r.reason }
      verdict = r.value
      if verdict == "YES" then break end -- a refine pass keeps YES: the rest cannot change it
    end
    return finish({ score = verdict == "YES" and 1 or 0, verdict = verdict, steps = steps, mode = mode,
                    reason = steps[#steps].reason }, threshold)
  end)
  return m
end, { "threshold", "mode", "budget" })

define("correctness", "1-5 grade of the answer against the reference, passing at 4", function(o)
  local m = base(o, "correctness", o.description)
  local sampling = E.sampling_of(o, "ev.rag.correctness", 2)
  local prompts = prompts_of(o, "correctness", { grade = P.correctness })
  local threshold = threshold_of(o, 4)
  m.threshold = threshold
  m.fn = row_fn(o, { "question", "answer", "reference" }, function(judge, v)
    local r = E.ask(judge, "rag_correctness", v, prompts.grade, sampling)
    if not r.ok then return failed("grade", r) end
    return finish(E.sampled({ score = r.value, reason = r.reason }, r), threshold)
  end)
  return m
end, { "threshold" })

-- Semantic answer similarity of rows: the cosine of each answer's embedding
-- with its closest gold answer's, every text embedded once per call.
local function sas_rows(o, threshold, rows, ctx)
  local out, answers, golds, at = {}, {}, {}, {}
  local judge, why = E.judge_of(ctx)
  for i = 1, #rows do
    local a, missing = field(o, rows[i], "answer")
    local g, none
    if a then g, none = inputs.references(o, rows[i]) end
    if not judge then out[i] = E.unmeasured(why)
    elseif not g then out[i] = E.unmeasured(missing or none)
    else answers[#answers + 1], golds[#golds + 1], at[#at + 1] = a, g, i end
  end
  if #answers == 0 then return out end
  local sims, errs = judge:similarity(answers, golds, { model = o.embed_model })
  for k, i in ipairs(at) do
    local cos = sims[k]
    if not cos then -- every error of similarity() is the judge's: a failed or inconsistent embedding
      out[i] = E.unmeasured("embeddings: " .. tostring(errs[k]), { judge_failed = true })
    else
      local best = 1
      for j = 2, #cos do if cos[j] > cos[best] then best = j end end
      out[i] = finish({ score = cos[best], gold = best, cosines = cos,
                        reason = ("cosine %.3f with gold answer %d of %d"):format(cos[best], best, #cos) }, threshold)
    end
  end
  return out
end

define("sas", "semantic answer similarity: embedding cosine of the answer with the closest gold answer",
  function(o)
    local m = base(o, "sas", o.description)
    if o.samples ~= nil or o.temperature ~= nil then
      error("ev.rag.sas: samples and temperature do not apply: embeddings are deterministic", 2)
    end
    local threshold = threshold_of(o, nil)
    m.threshold = threshold
    m.batch = function(rows, ctx) return sas_rows(o, threshold, rows, ctx) end
    m.fn = function(row, ctx) return sas_rows(o, threshold, { row }, ctx)[1] end
    return m
  end, { "threshold", "embed_model" })

-- compare(judge, {question=, a=, b=, reference=} [, prompt [, sampling]])
-- -> both orders judged and reconciled, or unmeasured when either order
-- fails. position_bias is "first" or "second" when the judge preferred the
-- same position in both orders (so the answers' order, not their content,
-- decided), else nil.
function M.compare(judge, v, prompt, sampling)
  local base_vars = { question = v.question, reference = v.reference }
  local function ask(first, second)
    local vars = { first = first, second = second }
    for k, x in pairs(base_vars) do vars[k] = x end
    return E.ask(judge, "rag_pairwise", vars, prompt, sampling)
  end
  local r1 = ask(v.a, v.b)
  if not r1.ok then return failed("A shown first", r1) end
  local r2 = ask(v.b, v.a)
  if not r2.ok then return failed("B shown first", r2) end
  local out = formulas.reconcile(r1.value, r2.value)
  out.reasons = { r1.reason, r2.reason }
  out.position_bias = r1.value == r2.value and ({ A = "first", B = "second" })[r1.value] or nil
  out.samples = sampling and sampling.samples
  local words = { A = "A is better", B = "B is better", tie = "a tie", inconsistent = "inconsistent" }
  out.reason = ("%s (A shown first: %s; B shown first: %s)"):format(words[out.verdict],
    words[out.orders[1]], words[out.orders[2]])
  if out.position_bias then out.reason = out.reason .. ": the " .. out.position_bias .. " position won both times" end
  return out
end

-- The position-bias rate of a pairwise metric in results res: the share of
-- measured comparisons where the judge preferred the same position in both
-- orders. {n =, first =, second =, rate =} (rate nil without comparisons).
function M.position_bias(res, name)
  name = name or "pairwise"
  local out = { n = 0, first = 0, second = 0 }
  for _, d in pairs(res.details and res.details[name] or {}) do
    if type(d) == "table" and d.orders then
      out.n = out.n + 1
      if d.position_bias then out[d.position_bias] = out[d.position_bias] + 1 end
    end
  end
  if out.n > 0 then out.rate = (out.first + out.second) / out.n end
  return out
end

define("pairwise", "1 when answer A is better than answer B, 0 when worse, 0.5 for a tie or an inconsistent verdict",
  function(o)
    local m = base(o, "pairwise", o.description)
    local sampling = E.sampling_of(o, "ev.rag.pairwise", 2)
    local prompts = prompts_of(o, "pairwise", { compare = P.pairwise })
    local fa, fb = o.a or "answer", o.b or "answer_b"
    m.fn = function(row, ctx)
      local judge, why = E.judge_of(ctx)
      if not judge then return E.unmeasured(why) end
      local q, missing = field(o, row, "question")
      if not q then return E.unmeasured(missing) end
      local a, b = row[fa], row[fb]
      if type(a) ~= "string" then return E.unmeasured(("no '%s' in the row"):format(fa)) end
      if type(b) ~= "string" then return E.unmeasured(("no '%s' in the row"):format(fb)) end
      local ref = o.reference ~= false and field(o, row, "reference") or nil
      return M.compare(judge, { question = q, a = a, b = b, reference = ref }, prompts.compare, sampling)
    end
    return m
  end, { "a", "b", "reference" })

local JUDGED = { "faithfulness", "answer_relevance", "answer_relevance_direct", "context_precision",
                 "context_recall", "context_relevance", "relevancy", "correctness", "sas" }

-- The judged metrics by name, as ev.evaluate finds them (evalua.core.registry
-- reads a run's own metrics first, so a script's metric of the same name wins).
M.metrics = {}
for _, name in ipairs(JUDGED) do M.metrics[name] = M[name] end

return M

