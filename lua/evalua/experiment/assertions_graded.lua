-- promptfoo's model-graded types in ev.assertions, asked of ev.evaluate's
-- judge (judge = ..., --judge). llm-rubric, model-graded-closedqa and
-- factuality keep promptfoo's prompts' semantics as judge steps of their
-- own; g-eval, answer-relevance and the context-* types run evalua's
-- judged metrics (ev.geval, ev.rag) over the row. A row's question is its
-- `query` (or `question`, `input`), its contexts `context` or `contexts`.
-- Without a judge, or with the offline judge that cannot read a rubric,
-- each is unmeasured with the reason. docs/assertions.md.
local E = require "evalua.judged.llm_evaluator"
local K = require "evalua.experiment.assertions_values"

local M = {}

local function yes_no(v)
  if v == true or v == false then return v end
  if type(v) == "string" then
    local s = v:lower():match("^%s*(.-)%s*$")
    if s == "true" or s == "yes" or s == "pass" then return true end
    if s == "false" or s == "no" or s == "fail" then return false end
  end
end

E.step("assert_llm_rubric", {
  prompt = {
    system = "You are grading output according to a user-specified rubric. If the statement in the rubric is "
      .. "true, then the output passes the test. Respond with a JSON object "
      .. '{"reason": "<why>", "pass": true or false, "score": <a number from 0 to 1>}.',
    user = "<Output>\n{{output}}\n</Output>\n<Rubric>\n{{rubric}}\n</Rubric>",
  },
  parse = function(answer)
    local pass = type(answer) == "table" and yes_no(answer.pass)
    if pass == nil then return nil, 'expected {"pass": true or false, "score": ..., "reason": ...}' end
    local score = tonumber(answer.score)
    if score == nil then score = pass and 1 or 0 end
    if score ~= score or score < 0 or score > 1 then return nil, "expected score as a number from 0 to 1" end
    return { pass = pass, score = score }, type(answer.reason) == "string" and answer.reason or nil
  end,
})

E.step("assert_closed_qa", {
  prompt = {
    system = "You are assessing a submitted answer on a given task based on a criterion. Answer with a JSON "
      .. 'object {"reason": "<your reasoning, step by step>", "verdict": "Y" or "N"}: Y when the submission '
      .. "meets the criterion, N when it does not.",
    user = "[Task]: {{input}}\n[Submission]: {{output}}\n[Criterion]: {{criterion}}",
  },
  parse = function(answer)
    local v = type(answer) == "table" and type(answer.verdict) == "string" and answer.verdict:upper():match("^%s*([YN])")
    if not v then return nil, 'expected {"verdict": "Y" or "N"}' end
    return v == "Y", type(answer.reason) == "string" and answer.reason or nil
  end,
})

-- promptfoo's factuality choices (OpenAI evals' fact template) and the
-- score each gives by default.
local CHOICES = {
  A = { "subset", 1 }, B = { "superset", 1 }, C = { "agree", 1 }, D = { "disagree", 0 }, E = { "differButFactual", 1 },
}

E.step("assert_factuality", {
  prompt = {
    system = "You are comparing a submitted answer to an expert answer on a given question. Ignore differences "
      .. "in style, grammar or punctuation. Choose one: (A) the submission is a subset of the expert answer and "
      .. "fully consistent with it; (B) it is a superset and fully consistent; (C) it contains all the same "
      .. "details; (D) there is a disagreement between them; (E) they differ, but the differences do not matter "
      .. 'for factuality. Answer with a JSON object {"choice": "A".."E", "reason": "<why>"}.',
    user = "[Question]: {{input}}\n[Expert]: {{expected}}\n[Submission]: {{output}}",
  },
  parse = function(answer)
    local c = type(answer) == "table" and type(answer.choice) == "string" and answer.choice:upper():match("^%s*%(?([A-E])")
    if not c then return nil, 'expected {"choice": "A", "B", "C", "D" or "E"}' end
    return c, type(answer.reason) == "string" and answer.reason or nil
  end,
})

local function question_of(row)
  local q = row.query or row.question or row.input
  if type(q) == "table" then q = q[1] end
  return type(q) == "string" and q or ""
end

local function contexts_of(row)
  local c = row.context
  if c == nil then c = row.contexts end
  return c
end

local function ask(ctx, step, vars)
  local judge, why = E.judge_of(ctx)
  if not judge then return nil, why end
  local r = judge:ask(step, vars)
  if not r.ok then return nil, tostring(r.error) end
  return r
end

local function llm_rubric(answer, rubric, _, c, ctx)
  local r, why = ask(ctx, "assert_llm_rubric", { output = answer, rubric = rubric })
  if not r then return nil, "llm-rubric: " .. why end
  local pass = r.value.pass
  if c.threshold ~= nil then pass = pass and r.value.score >= c.threshold end
  return pass, ("score %s%s"):format(K.show(r.value.score), r.reason and (": " .. r.reason) or ""), r.value.score
end

local function closed_qa(answer, criterion, row, _, ctx)
  local r, why = ask(ctx, "assert_closed_qa", { input = question_of(row), output = answer, criterion = criterion })
  if not r then return nil, "model-graded-closedqa: " .. why end
  return r.value, (r.value and "meets the criterion" or "does not meet the criterion")
    .. (r.reason and (": " .. r.reason) or "")
end

local function factuality(answer, expected, row, c, ctx)
  local r, why = ask(ctx, "assert_factuality", { input = question_of(row), expected = expected, output = answer })
  if not r then return nil, "factuality: " .. why end
  local choice = CHOICES[r.value]
  local score = c.keys.scores and c.keys.scores[choice[1]] or choice[2]
  return score > 0, ("choice %s (%s), score %s%s"):format(r.value, choice[1], K.show(score),
    r.reason and (": " .. r.reason) or ""), score
end

-- factuality's scores per choice, promptfoo's options.factuality.
local function choice_scores(v, what)
  if type(v) ~= "table" then return nil, what .. ": expected {subset =, superset =, agree =, disagree =, differButFactual =}" end
  local names = {}
  for _, ch in pairs(CHOICES) do names[ch[1]] = true end
  for k, x in pairs(v) do
    if not names[k] then return nil, ("%s.%s: not a choice (subset, superset, agree, disagree, differButFactual)"):format(what, tostring(k)) end
    if not (K.finite(x) and x >= 0 and x <= 1) then return nil, ("%s.%s: expected a number from 0 to 1"):format(what, k) end
  end
  return v
end

-- A judged metric of evalua run on the row, its result as a verdict.
local function metric_check(label, make)
  return function(answer, value, row, c, ctx)
    c.made = c.made or {}
    local key = type(value) == "string" and value or ""
    local m = c.made[key] or make(value, c)
    c.made[key] = m
    local r = m.fn(setmetatable({ answer = answer }, { __index = row }), ctx)
    if type(r) ~= "table" or r.unmeasured or r.score == nil then
      return nil, ("%s: %s"):format(label, type(r) == "table" and tostring(r.reason or r.error) or "no result")
    end
    local pass = r.score >= c.threshold
    return pass, ("%s %.4f %s %s%s"):format(label, r.score, pass and ">=" or "<", K.show(c.threshold),
      r.reason and (": " .. r.reason) or ""), math.max(0, math.min(1, r.score))
  end
end

local function rag(name, extra)
  return function(value, c)
    local fields = { question = question_of, contexts = contexts_of }
    if extra then extra(fields, value) end
    return require("evalua.judged.rag")[name] { fields = fields, threshold = c.threshold }
  end
end

local function geval(value, c)
  c.geval = c.geval or require("evalua.judged.geval").new {
    name = "g-eval", criteria = value, params = { "input", "actual_output" }, scale = { 0, 10 },
    threshold = c.threshold, fields = { input = question_of },
  }
  return c.geval
end

function M.add(A)
  A.values.choice_scores = choice_scores
  local T = A.types
  T["llm-rubric"] = { value = "text", threshold = "share", optional_threshold = true, check = llm_rubric }
  T["model-graded-closedqa"] = { value = "text", check = closed_qa }
  T["closed-qa"] = T["model-graded-closedqa"]
  T.factuality = { value = "text", keys = { scores = choice_scores }, check = factuality }
  T["model-graded-factuality"] = T.factuality
  T["g-eval"] = { value = "text", threshold = "share", threshold_default = 0.7, check = metric_check("G-Eval", geval) }
  T["answer-relevance"] = { threshold = "share", threshold_default = 0, of_row = true,
                            check = metric_check("answer relevance", rag("answer_relevance")) }
  T["context-faithfulness"] = { threshold = "share", threshold_default = 0, of_row = true,
                                check = metric_check("context faithfulness", rag("faithfulness")) }
  T["context-relevance"] = { threshold = "share", threshold_default = 0, of_row = true,
                             check = metric_check("context relevance", rag("context_relevance")) }
  T["context-recall"] = { value = "text", threshold = "share", threshold_default = 0, check = metric_check("context recall",
    rag("context_recall", function(fields, value) fields.reference = function() return value end end)) }
end

return M
