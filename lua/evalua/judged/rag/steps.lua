-- The judge operations of the RAG metrics: for each, its prompt, the parser
-- of a model's JSON answer and the offline judge's heuristic. Settings of
-- the heuristics are fields of this module (ev.rag.steps).
local E = require "evalua.judged.llm_evaluator"
local offline = require "evalua.judge.offline"
local text = require "evalua.eval.text"
local P = require "evalua.judged.prompts.rag"

local M = {}

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

-- The answer's reason, when it gave one as text.
local function reason_of(answer)
  return type(answer.reason) == "string" and answer.reason or nil
end

-- A parser of {field: number from lo to hi, reason: text}.
local function number_in(field, lo, hi)
  return function(answer)
    local v = type(answer) == "table" and tonumber(answer[field])
    if not v or v ~= v or v < lo or v > hi then
      return nil, ("expected %s as a number from %d to %d"):format(field, lo, hi)
    end
    return v, reason_of(answer)
  end
end

local function parse_single_verdict(answer)
  local v = type(answer) == "table" and E.verdict(answer.verdict)
  if not v then return nil, 'expected {"verdict": 1 or 0}' end
  return v, reason_of(answer)
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

E.step("rag_verdicts", { prompt = P.verdicts, parse = parse_checked, offline = offline_checked, vote = "verdicts" })

-- A grade 0, 1 or 2 (unsupported, partly, fully); nil when unreadable.
local function grade_of(v)
  local g = math.tointeger(tonumber(v))
  if g and g >= 0 and g <= 2 then return g end
  local words = { unsupported = 0, partly = 1, partial = 1, partially = 1, fully = 2, supported = 2 }
  return type(v) == "string" and words[v:lower():match("^%s*(%a+)")] or nil
end

E.step("rag_graded", {
  prompt = P.graded_verdicts,
  vote = "verdicts",
  parse = function(answer, vars)
    local list = type(answer) == "table" and answer.verdicts
    if type(list) ~= "table" then return nil, 'expected {"verdicts": [...]}' end
    if #list ~= #vars.statements then
      return nil, ("%d verdicts for %d statements"):format(#list, #vars.statements)
    end
    local out = {}
    for i, v in ipairs(list) do
      local g = type(v) == "table" and grade_of(v.grade)
      if not g then return nil, ("verdicts[%d] has no grade 0, 1 or 2"):format(i) end
      out[i] = { statement = vars.statements[i], grade = g, reason = type(v.reason) == "string" and v.reason or nil }
    end
    return out
  end,
  offline = function(vars, o)
    return offline.grades(vars.statements, table.concat(vars.contexts, "\n\n"), o.support_threshold)
  end,
})
E.step("rag_recall", { prompt = P.context_recall, parse = parse_checked, offline = offline_checked, vote = "verdicts" })

E.step("rag_precision", {
  prompt = P.context_precision,
  vote = "majority",
  parse = parse_single_verdict,
  offline = function(vars, o)
    if #offline.tokens(vars.reference) == 0 then return nil, "the reference has no words to look for" end
    local v = offline.verdicts({ vars.reference }, vars.context, o.support_threshold)[1]
    return v.verdict, "offline: " .. v.reason
  end,
})

M.offline_relevance_threshold = 1 / 3

E.step("rag_context_relevance", {
  prompt = P.context_relevance,
  vote = "concat", -- samples may list a passage's statements differently: all of them count
  parse = function(answer) return parse_verdict_list(answer, nil, "verdicts") end,
  offline = function(vars)
    local out = {}
    for i, s in ipairs(offline.sentences(vars.context)) do
      local share, why = offline.relevance(vars.question, s)
      if not share then return nil, why end
      out[i] = { statement = s, verdict = share >= M.offline_relevance_threshold and 1 or 0,
                 reason = "offline: " .. why }
    end
    return out
  end,
})

E.step("rag_questions", {
  prompt = P.questions,
  vote = "concat",
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
  -- Without a model there is nothing to write the questions an answer
  -- replies to: the answer's own words would score a correct short answer
  -- ("7 days") 0, which reads as a broken metric.
  offline = function()
    return nil, "the offline judge cannot write the questions an answer replies to; "
      .. "answer_relevance needs a model judge (offline, sas compares answers with gold answers)"
  end,
})

E.step("rag_answer_relevance", {
  prompt = P.answer_relevance,
  vote = "mean",
  parse = number_in("relevance", 0, 1),
  -- Question words in the answer score a correct short answer ("7 days"
  -- to "How long are refunds valid?") 0, as for the embedding mode: no
  -- heuristic here says how well an answer addresses its question.
  offline = function()
    return nil, "the offline judge cannot rate how well an answer addresses its question; "
      .. "answer_relevance_direct needs a model judge"
  end,
})

local function parse_yes_no(answer)
  local v = type(answer) == "table" and type(answer.verdict) == "string" and answer.verdict:upper():match("^%s*(%a+)")
  if v ~= "YES" and v ~= "NO" then return nil, 'expected {"verdict": "YES" or "NO"}' end
  return v, reason_of(answer)
end

local function offline_in_line(vars, o)
  if #offline.tokens(vars.response) == 0 then return nil, "the answer has no words to look for" end
  local v = offline.verdicts({ vars.response }, vars.context, o.support_threshold)[1]
  return v.verdict == 1 and "YES" or "NO", "offline: " .. v.reason
end

E.step("rag_relevancy", { prompt = P.relevancy, parse = parse_yes_no, offline = offline_in_line, vote = "majority" })
E.step("rag_relevancy_refine", {
  prompt = P.relevancy_refine, parse = parse_yes_no, vote = "majority",
  offline = function(vars, o)
    if vars.previous == "YES" then return "YES", "offline: the earlier verdict was YES" end
    return offline_in_line(vars, o)
  end,
})

-- SQuAD token F1 (ev.text): the offline judge's grading of an answer.
local token_f1 = text.token_f1

E.step("rag_correctness", {
  prompt = P.correctness,
  vote = "mean",
  parse = number_in("score", 1, 5),
  offline = function(vars)
    if #offline.tokens(vars.reference) == 0 then return nil, "the reference has no words to compare with" end
    local f1 = token_f1(vars.answer, vars.reference)
    return math.floor(1 + 4 * f1 + 0.5), ("offline: 1 + 4 x token F1 with the reference (F1 %.2f)"):format(f1)
  end,
})


E.step("rag_pairwise", {
  prompt = P.pairwise,
  vote = "majority",
  parse = function(answer)
    local b = type(answer) == "table" and type(answer.better) == "string" and answer.better:match("^%s*(.-)%s*$")
    if b then b = b:upper() == "TIE" and "tie" or b:upper() end
    if b ~= "A" and b ~= "B" and b ~= "tie" then return nil, 'expected {"better": "A", "B" or "tie"}' end
    return b, reason_of(answer)
  end,
  -- Each answer's merit is its token F1 with the reference. Without one,
  -- question words in an answer say nothing of which answer is better.
  offline = function(vars)
    if not vars.reference or #offline.tokens(vars.reference) == 0 then
      return nil, "the offline judge compares answers only with a reference; pairwise without one needs a model judge"
    end
    local a, b = token_f1(vars.first, vars.reference), token_f1(vars.second, vars.reference)
    local why = ("offline: token F1 with the reference %.2f for A, %.2f for B"):format(a, b)
    if math.abs(a - b) < 1e-9 then return "tie", why end
    return a > b and "A" or "B", why
  end,
})


return M
