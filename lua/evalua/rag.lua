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
local E = require "evalua.llm_evaluator"
local offline = require "evalua.judge.offline"
local text = require "evalua.text"
local registry = require "evalua.registry"
local options = require "evalua.options"
local P = require "evalua.prompts.rag"

local M = { prompts = P }

-- ---- rows ---------------------------------------------------------------------

local FIELDS = { question = "query", answer = "answer", contexts = "contexts", reference = "gold_answers" }

-- The text of field `what` in row, or nil and why it is missing. A list of
-- reference answers gives its first; a row's own `reference` wins.
local function field(o, row, what)
  local from = (o.fields or {})[what] or FIELDS[what]
  local v
  if type(from) == "function" then v = from(row) else v = row[from] end
  if what == "reference" and v == nil and from == FIELDS.reference then v = row.reference end
  local name = type(from) == "string" and from or what
  if what == "contexts" then
    if type(v) == "string" then v = { v } end
    if type(v) ~= "table" or #v == 0 then return nil, ("no '%s' in the row"):format(name) end
    for i, c in ipairs(v) do
      if type(c) ~= "string" then return nil, ("'%s[%d]' is not text"):format(name, i) end
    end
    return v
  end
  if type(v) == "table" then v = v[1] end
  if type(v) ~= "string" or not v:find("%S") then return nil, ("no '%s' in the row"):format(name) end
  return v
end

-- Reads the named fields; returns the values table or nil, reason.
local function read(o, row, names)
  local out = {}
  for _, n in ipairs(names) do
    local v, why = field(o, row, n)
    if v == nil then return nil, why end
    out[n] = v
  end
  return out
end

local function threshold_of(o, default)
  local t = o.threshold == nil and default or o.threshold
  if t ~= nil and type(t) ~= "number" then error("threshold must be a number", 4) end
  return t
end

local function finish(out, threshold)
  if threshold and out.score then out.pass = out.score >= threshold end
  return out
end

-- Checks `prompts` against the steps a metric has and compiles them.
local function prompts_of(o, name, steps)
  local given = o.prompts or {}
  if type(given) ~= "table" then error(name .. ": prompts must be a table of step = prompt", 4) end
  for k in pairs(given) do
    if not steps[k] then
      local names = {}
      for s in pairs(steps) do names[#names + 1] = s end
      table.sort(names)
      error(("%s: no prompt step '%s' (its steps: %s)"):format(name, tostring(k), table.concat(names, ", ")), 4)
    end
  end
  local out = {}
  for step, base in pairs(steps) do out[step] = E.prompt(base, given[step], name .. "." .. step) end
  return out
end

-- ---- judge operations -------------------------------------------------------

local function parse_verdict_list(answer, want, key)
  local list = type(answer) == "table" and answer[key]
  if type(list) ~= "table" then return nil, ('expected {"%s": [...]}'):format(key) end
  if want and #list ~= want then return nil, ("%d verdicts for %d statements"):format(#list, want) end
  local out = {}
  for i, v in ipairs(list) do
    local verdict = type(v) == "table" and E.verdict(v.verdict)
    if not verdict then return nil, ("%s[%d] has no verdict 1 or 0"):format(key, i) end
    out[i] = { verdict = verdict, statement = type(v.statement) == "string" and v.statement or nil,
               reason = type(v.reason) == "string" and v.reason or nil }
  end
  return out
end

-- Statements checked against a context: the list given, in order.
local function parse_checked(answer, vars)
  local out, err = parse_verdict_list(answer, #vars.statements, "verdicts")
  if not out then return nil, err end
  for i, v in ipairs(out) do v.statement = vars.statements[i] end
  return out
end

local function offline_checked(vars, o)
  return offline.verdicts(vars.statements, table.concat(vars.contexts, "\n\n"), o.support_threshold)
end

local function parse_single_verdict(answer)
  local v = type(answer) == "table" and E.verdict(answer.verdict)
  if not v then return nil, 'expected {"verdict": 1 or 0}' end
  return v, type(answer.reason) == "string" and answer.reason or nil
end

E.step("rag_statements", {
  prompt = P.statements,
  parse = function(answer)
    local list = type(answer) == "table" and answer.statements
    if type(list) ~= "table" then return nil, 'expected {"statements": [...]}' end
    local out = {}
    for i, s in ipairs(list) do
      if type(s) ~= "string" then return nil, ("statements[%d] is not a string"):format(i) end
      if s:find("%S") then out[#out + 1] = s end
    end
    return out
  end,
  offline = function(vars)
    return offline.claims(vars.answer), "offline: one statement per sentence; refusals make none"
  end,
})

E.step("rag_verdicts", { prompt = P.verdicts, parse = parse_checked, offline = offline_checked })
E.step("rag_recall", { prompt = P.context_recall, parse = parse_checked, offline = offline_checked })

E.step("rag_precision", {
  prompt = P.context_precision,
  parse = parse_single_verdict,
  offline = function(vars, o)
    local v = offline.verdicts({ vars.reference }, vars.context, o.support_threshold)[1]
    return v.verdict, "offline: " .. v.reason
  end,
})

M.offline_relevance_threshold = 1 / 3

E.step("rag_context_relevance", {
  prompt = P.context_relevance,
  parse = function(answer) return parse_verdict_list(answer, nil, "verdicts") end,
  offline = function(vars)
    local out = {}
    for i, s in ipairs(offline.sentences(vars.context)) do
      local share, why = offline.relevance(vars.question, s)
      out[i] = { statement = s, verdict = share >= M.offline_relevance_threshold and 1 or 0,
                 reason = "offline: " .. why }
    end
    return out
  end,
})

-- Answers that decline to answer, for the offline judge.
M.noncommittal_patterns = {
  "i don't know", "i do not know", "not sure", "cannot answer", "can't answer", "no information",
  "unable to answer", "不知道", "无法回答", "不清楚", "没有相关信息", "わかりません", "分かりません",
}

local function noncommittal(text)
  local low = text:lower()
  for _, p in ipairs(M.noncommittal_patterns) do
    if low:find(p, 1, true) then return 1 end
  end
  return 0
end

E.step("rag_questions", {
  prompt = P.questions,
  parse = function(answer)
    local list = type(answer) == "table" and answer.questions
    if type(list) ~= "table" then return nil, 'expected {"questions": [...]}' end
    local out = {}
    for i, q in ipairs(list) do
      if type(q) ~= "table" or type(q.question) ~= "string" then
        return nil, ("questions[%d] has no question text"):format(i)
      end
      local nc = E.verdict(q.noncommittal)
      if nc == nil then return nil, ("questions[%d] has no noncommittal 1 or 0"):format(i) end
      if q.question:find("%S") then out[#out + 1] = { question = q.question, noncommittal = nc } end
    end
    if #out == 0 then return nil, "no questions" end
    return out
  end,
  -- The answer's first n sentences stand in for generated questions.
  offline = function(vars)
    local out, nc = {}, noncommittal(vars.answer)
    for i, s in ipairs(offline.sentences(vars.answer)) do
      if i > vars.n then break end
      out[i] = { question = s, noncommittal = nc }
    end
    if #out == 0 then out[1] = { question = vars.answer, noncommittal = nc } end
    return out, "offline: the answer's sentences stand in for generated questions"
  end,
})

E.step("rag_answer_relevance", {
  prompt = P.answer_relevance,
  parse = function(answer)
    local v = type(answer) == "table" and tonumber(answer.relevance)
    if not v or v ~= v or v < 0 or v > 1 then return nil, "expected relevance as a number from 0 to 1" end
    return v, type(answer.reason) == "string" and answer.reason or nil
  end,
  offline = function(vars)
    local v, why = offline.relevance(vars.question, vars.answer)
    return v, "offline: " .. why
  end,
})

local function parse_yes_no(answer)
  local v = type(answer) == "table" and type(answer.verdict) == "string" and answer.verdict:upper():match("^%s*(%a+)")
  if v ~= "YES" and v ~= "NO" then return nil, 'expected {"verdict": "YES" or "NO"}' end
  return v, type(answer.reason) == "string" and answer.reason or nil
end

local function offline_in_line(vars, o)
  local v = offline.verdicts({ vars.response }, vars.context, o.support_threshold)[1]
  return v.verdict == 1 and "YES" or "NO", "offline: " .. v.reason
end

E.step("rag_relevancy", { prompt = P.relevancy, parse = parse_yes_no, offline = offline_in_line })
E.step("rag_relevancy_refine", {
  prompt = P.relevancy_refine, parse = parse_yes_no,
  offline = function(vars, o)
    if vars.previous == "YES" then return "YES", "offline: the earlier verdict was YES" end
    return offline_in_line(vars, o)
  end,
})

-- SQuAD token F1 (ev.text): the offline judge's grading of an answer.
local token_f1 = text.token_f1

E.step("rag_correctness", {
  prompt = P.correctness,
  parse = function(answer)
    local v = type(answer) == "table" and tonumber(answer.score)
    if not v or v ~= v or v < 1 or v > 5 then return nil, "expected score as a number from 1 to 5" end
    return v, type(answer.reason) == "string" and answer.reason or nil
  end,
  offline = function(vars)
    local f1 = token_f1(vars.answer, vars.reference)
    return math.floor(1 + 4 * f1 + 0.5), ("offline: 1 + 4 x token F1 with the reference (F1 %.2f)"):format(f1)
  end,
})

-- How well an answer does for the offline pairwise judge: its token F1 with
-- the reference, or without one, the share of question words it contains.
local function offline_merit(vars, text)
  if vars.reference then return token_f1(text, vars.reference) end
  return (offline.relevance(vars.question, text))
end

E.step("rag_pairwise", {
  prompt = P.pairwise,
  parse = function(answer)
    local b = type(answer) == "table" and type(answer.better) == "string" and answer.better:match("^%s*(.-)%s*$")
    if b then b = b:upper() == "TIE" and "tie" or b:upper() end
    if b ~= "A" and b ~= "B" and b ~= "tie" then return nil, 'expected {"better": "A", "B" or "tie"}' end
    return b, type(answer.reason) == "string" and answer.reason or nil
  end,
  offline = function(vars)
    local a, b = offline_merit(vars, vars.first), offline_merit(vars, vars.second)
    local what = vars.reference and "token F1 with the reference" or "share of question words"
    local why = ("offline: %s %.2f for A, %.2f for B"):format(what, a, b)
    if math.abs(a - b) < 1e-9 then return "tie", why end
    return a > b and "A" or "B", why
  end,
})

-- ---- scoring (pure functions, tested on their own) --------------------------------

-- Rank-weighted average precision over verdicts in rank order:
-- sum_k (precision@k * v_k) / (number of useful chunks); 0 when none is useful.
function M.average_precision(verdicts)
  local hits, sum = 0, 0
  for k, v in ipairs(verdicts) do
    if v == 1 then
      hits = hits + 1
      sum = sum + hits / k
    end
  end
  if hits == 0 then return 0 end
  return sum / hits
end

-- Pairwise verdicts of both orders -> one result. first: the verdict when A
-- was shown first; swapped: the verdict (in the labels the judge saw) when B
-- was shown first. A = 1, B = 0, tie = 0.5 per order; the score is their mean.
function M.reconcile(first, swapped)
  local back = ({ A = "B", B = "A", tie = "tie" })[swapped]
  local value = { A = 1, B = 0, tie = 0.5 }
  local score = (value[first] + value[back]) / 2
  local verdict
  if first == back then verdict = first
  elseif score > 0.5 then verdict = "A"
  elseif score < 0.5 then verdict = "B"
  else verdict = "inconsistent" end
  return { score = score, verdict = verdict, agreement = first == back, orders = { first, back } }
end

-- ---- the metrics ---------------------------------------------------------------------

local function failed(step, r)
  return E.unmeasured(("%s: %s"):format(step, r.error or "the judge failed"))
end

local makers, known = {}, {}
local COMMON = { "name", "description", "prompts", "fields" }

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

define("faithfulness", "share of the answer's statements that the contexts support", function(o)
  local m = base(o, "faithfulness", o.description)
  local prompts = prompts_of(o, "faithfulness", { statements = P.statements, verdicts = P.verdicts })
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "answer", "contexts" }, function(judge, v, row)
    v.question = field(o, row, "question") or ""
    local r = E.ask(judge, "rag_statements", { question = v.question, answer = v.answer }, prompts.statements)
    if not r.ok then return failed("statements", r) end
    if #r.value == 0 then return E.unmeasured("the answer makes no statements to check") end
    local c = E.ask(judge, "rag_verdicts", { contexts = v.contexts, statements = r.value }, prompts.verdicts)
    if not c.ok then return failed("verdicts", c) end
    local supported = 0
    for _, x in ipairs(c.value) do supported = supported + x.verdict end
    return finish({ score = supported / #c.value, verdicts = c.value,
                    reason = ("%d of %d statements are supported by the contexts"):format(supported, #c.value) },
                  threshold)
  end)
  return m
end, { "threshold" })

define("context_recall", "share of the reference's sentences that the contexts support", function(o)
  local m = base(o, "context_recall", o.description)
  local prompts = prompts_of(o, "context_recall", { verdicts = P.context_recall })
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "reference", "contexts" }, function(judge, v, row)
    local sentences = offline.sentences(v.reference)
    if #sentences == 0 then return E.unmeasured("the reference has no sentences") end
    local c = E.ask(judge, "rag_recall", { question = field(o, row, "question") or "", contexts = v.contexts,
                                           statements = sentences }, prompts.verdicts)
    if not c.ok then return failed("verdicts", c) end
    local found = 0
    for _, x in ipairs(c.value) do found = found + x.verdict end
    return finish({ score = found / #c.value, verdicts = c.value,
                    reason = ("%d of %d reference sentences are found in the contexts"):format(found, #c.value) },
                  threshold)
  end)
  return m
end, { "threshold" })

define("context_precision", "rank-weighted average precision of the chunks judged useful", function(o)
  local m = base(o, "context_precision", o.description)
  local prompts = prompts_of(o, "context_precision", { verdict = P.context_precision })
  local against = o.against or "reference"
  if against ~= "reference" and against ~= "answer" then
    error("context_precision: against must be \"reference\" or \"answer\"", 3)
  end
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  local hint = against == "reference" and " (against = \"answer\" judges by the answer instead)" or nil
  m.fn = row_fn(o, { "question", against, "contexts" }, function(judge, v)
    local verdicts, flags = {}, {}
    for k, chunk in ipairs(v.contexts) do
      local r = E.ask(judge, "rag_precision", { question = v.question, reference = v[against], context = chunk,
                                                rank = k }, prompts.verdict)
      if not r.ok then return failed(("chunk %d"):format(k), r) end
      verdicts[k] = { rank = k, verdict = r.value, reason = r.reason }
      flags[k] = r.value
    end
    local useful = 0
    for _, f in ipairs(flags) do useful = useful + f end
    return finish({ score = M.average_precision(flags), verdicts = verdicts,
                    reason = ("%d of %d chunks judged useful"):format(useful, #flags) }, threshold)
  end, hint)
  return m
end, { "threshold", "against" })

define("context_relevance", "share of the contexts' statements that are relevant to the question", function(o)
  local m = base(o, "context_relevance", o.description)
  local prompts = prompts_of(o, "context_relevance", { verdicts = P.context_relevance })
  local threshold = threshold_of(o, 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "question", "contexts" }, function(judge, v)
    local per, relevant, total = {}, 0, 0
    for k, chunk in ipairs(v.contexts) do
      local r = E.ask(judge, "rag_context_relevance", { question = v.question, context = chunk }, prompts.verdicts)
      if not r.ok then return failed(("chunk %d"):format(k), r) end
      local n = 0
      for _, x in ipairs(r.value) do n = n + x.verdict end
      per[k] = { rank = k, relevant = n, statements = r.value }
      relevant, total = relevant + n, total + #r.value
    end
    if total == 0 then return E.unmeasured("the contexts make no statements") end
    return finish({ score = relevant / total, contexts = per,
                    reason = ("%d of %d context statements are relevant"):format(relevant, total) }, threshold)
  end)
  return m
end, { "threshold" })

local function relevance_direct(o, prompts, judge, v)
  local r = E.ask(judge, "rag_answer_relevance", { question = v.question, answer = v.answer }, prompts.direct)
  if not r.ok then return failed("relevance", r) end
  return { score = r.value, reason = r.reason, mode = "direct" }
end

local function relevance_embedding(o, prompts, judge, v)
  local n = math.tointeger(o.n or 3)
  local r = E.ask(judge, "rag_questions", { answer = v.answer, n = n }, prompts.questions)
  if not r.ok then return failed("questions", r) end
  local qs, all_nc = r.value, true
  for _, q in ipairs(qs) do all_nc = all_nc and q.noncommittal == 1 end
  if all_nc then
    return { score = 0, questions = qs, mode = "embedding", reason = "every generated question is noncommittal" }
  end
  local texts = {}
  for i, q in ipairs(qs) do texts[i] = q.question end
  local cosines, err = judge:similarity(v.question, texts, o.embed_model)
  if not cosines then
    return E.unmeasured("embeddings: " .. tostring(err)
      .. " (answer_relevance{mode = \"direct\"} needs no embeddings endpoint)")
  end
  local sum = 0
  for i, q in ipairs(qs) do
    q.cosine = cosines[i]
    sum = sum + q.cosine
  end
  return { score = sum / #qs, questions = qs, mode = "embedding",
           reason = ("mean cosine of %d generated questions with the question"):format(#qs) }
end

define("answer_relevance", "how well the answer addresses the question (generated questions vs the real one)",
  function(o)
    local m = base(o, "answer_relevance", o.description)
    local mode = o.mode or "embedding"
    if mode ~= "embedding" and mode ~= "direct" then
      error("answer_relevance: mode must be \"embedding\" or \"direct\"", 3)
    end
    local n = o.n or 3
    if math.tointeger(n) == nil or n < 1 then error("answer_relevance: n must be a whole number >= 1", 3) end
    local prompts = prompts_of(o, "answer_relevance", { questions = P.questions, direct = P.answer_relevance })
    local threshold = threshold_of(o, 0.5)
    m.threshold = threshold
    m.fn = row_fn(o, { "question", "answer" }, function(judge, v)
      local run = mode == "direct" and relevance_direct or relevance_embedding
      return finish(run(o, prompts, judge, v), threshold)
    end)
    return m
  end, { "threshold", "mode", "n", "embed_model" })

M.answer_relevance_direct = M.answer_relevance { name = "answer_relevance_direct", mode = "direct",
  description = "the judge's 0-1 rating of how well the answer addresses the question" }

-- Contexts packed in order into groups of at most budget characters (a
-- longer single context is a group of its own).
function M.pack(contexts, budget)
  local groups, cur, size = {}, {}, 0
  for _, c in ipairs(contexts) do
    if #cur > 0 and size + #c > budget then
      groups[#groups + 1] = table.concat(cur, "\n\n")
      cur, size = {}, 0
    end
    cur[#cur + 1] = c
    size = size + #c
  end
  if #cur > 0 then groups[#groups + 1] = table.concat(cur, "\n\n") end
  return groups
end

define("relevancy", "YES when the answer is in line with the contexts (LlamaIndex's relevancy)", function(o)
  local m = base(o, "relevancy", o.description)
  local mode = o.mode or "refine"
  if mode ~= "refine" and mode ~= "per_source" then
    error("relevancy: mode must be \"refine\" or \"per_source\"", 3)
  end
  local budget = o.budget or 6000
  if type(budget) ~= "number" or budget < 1 then error("relevancy: budget must be a number of characters", 3) end
  local prompts = prompts_of(o, "relevancy", { check = P.relevancy, refine = P.relevancy_refine })
  local threshold = threshold_of(o, mode == "refine" and 1 or 0.5)
  m.threshold = threshold
  m.fn = row_fn(o, { "question", "answer", "contexts" }, function(judge, v)
    local steps = {}
    if mode == "per_source" then
      local yes = 0
      for k, chunk in ipairs(v.contexts) do
        local r = E.ask(judge, "rag_relevancy", { query = v.question, response = v.answer, context = chunk }, prompts.check)
        if not r.ok then return failed(("chunk %d"):format(k), r) end
        steps[k] = { rank = k, verdict = r.value, reason = r.reason }
        if r.value == "YES" then yes = yes + 1 end
      end
      return finish({ score = yes / #steps, verdicts = steps, mode = mode,
                      reason = ("%d of %d chunks support the answer"):format(yes, #steps) }, threshold)
    end
    local verdict = "NO"
    for k, group in ipairs(M.pack(v.contexts, budget)) do
      local name, p = "rag_relevancy", prompts.check
      if k > 1 then name, p = "rag_relevancy_refine", prompts.refine end
      local r = E.ask(judge, name, { query = v.question, response = v.answer, context = group, previous = verdict }, p)
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
  local prompts = prompts_of(o, "correctness", { grade = P.correctness })
  local threshold = threshold_of(o, 4)
  m.threshold = threshold
  m.fn = row_fn(o, { "question", "answer", "reference" }, function(judge, v)
    local r = E.ask(judge, "rag_correctness", v, prompts.grade)
    if not r.ok then return failed("grade", r) end
    return finish({ score = r.value, reason = r.reason }, threshold)
  end)
  return m
end, { "threshold" })

-- compare(judge, {question=, a=, b=, reference=} [, prompt]) -> both orders
-- judged and reconciled, or unmeasured when either order fails.
function M.compare(judge, v, prompt)
  local base_vars = { question = v.question, reference = v.reference }
  local function ask(first, second)
    local vars = { first = first, second = second }
    for k, x in pairs(base_vars) do vars[k] = x end
    return E.ask(judge, "rag_pairwise", vars, prompt)
  end
  local r1 = ask(v.a, v.b)
  if not r1.ok then return failed("A shown first", r1) end
  local r2 = ask(v.b, v.a)
  if not r2.ok then return failed("B shown first", r2) end
  local out = M.reconcile(r1.value, r2.value)
  out.reasons = { r1.reason, r2.reason }
  local words = { A = "A is better", B = "B is better", tie = "a tie", inconsistent = "inconsistent" }
  out.reason = ("%s (A shown first: %s; B shown first: %s)"):format(words[out.verdict],
    words[out.orders[1]], words[out.orders[2]])
  return out
end

define("pairwise", "1 when answer A is better than answer B, 0 when worse, 0.5 for a tie or an inconsistent verdict",
  function(o)
    local m = base(o, "pairwise", o.description)
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
      return M.compare(judge, { question = q, a = a, b = b, reference = ref }, prompts.compare)
    end
    return m
  end, { "a", "b", "reference" })

for _, name in ipairs { "faithfulness", "answer_relevance", "answer_relevance_direct", "context_precision",
                        "context_recall", "context_relevance", "relevancy", "correctness" } do
  registry.register(M[name])
end

return M
