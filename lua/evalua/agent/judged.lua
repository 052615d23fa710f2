-- The judged agent metrics over a whole conversation's calls and outcome
-- (docs/agents.md): argument_correctness and task_completion (DeepEval),
-- agent_goal_accuracy with and without a reference and topic_adherence
-- (RAGAS). Each step is a judge operation (agent_*), so its answer is
-- checked before it enters the cache, voted over `samples` where the step
-- says how, and answered by the offline judge only where a stated
-- heuristic means something (goal accuracy against a reference). A
-- denominator that would be empty leaves the row unmeasured with the reason.
local E = require "evalua.judged.llm_evaluator"
local options = require "evalua.core.options"
local offline = require "evalua.judge.offline"
local data = require "evalua.agent.data"
local transcript = require "evalua.agent.transcript"
local P = require "evalua.agent.prompts"

local M = { prompts = P }

-- ---- the shape of a judged agent metric ------------------------------------------

local COMMON = { "name", "description", "prompts", "fields", "threshold" }

-- The text of a row field (renamed by the metric's `fields`), or nil, why.
function M.field(o, row, key)
  local from = (o.fields or {})[key] or key
  local v = row[from]
  if type(v) ~= "string" or not v:find("%S") then return nil, ("no '%s' in the row"):format(from) end
  return v
end

local function prompts_of(o, name, steps)
  local given = o.prompts or {}
  if type(given) ~= "table" then error(name .. ": prompts must be a table of step = prompt", 0) end
  for k in pairs(given) do
    if not steps[k] then
      local names = {}
      for s in pairs(steps) do names[#names + 1] = s end
      table.sort(names)
      error(("%s: no prompt step '%s' (its steps: %s)"):format(name, tostring(k), table.concat(names, ", ")), 0)
    end
  end
  local out = {}
  for step, base in pairs(steps) do out[step] = E.prompt(base, given[step], name .. "." .. step) end
  return out
end

-- define{name=, description=, steps = {step = prompt}, options = {...},
-- sampled = true when a step votes, strict = true for DeepEval's
-- strict_mode, build = fn(o, prompts, sampling) -> score(judge, p, row)}:
-- a metric table, callable with options for a configured copy.
function M.define(def)
  local names = { table.unpack(COMMON) }
  for _, k in ipairs(def.options or {}) do names[#names + 1] = k end
  if def.sampled then names[#names + 1], names[#names + 2] = "samples", "temperature" end
  if def.strict then names[#names + 1] = "strict_mode" end
  local known = options.set(names)
  local what = "ev.agent." .. def.name
  local function make(o)
    local ok, m = pcall(function()
      local prompts = prompts_of(o, def.name, def.steps)
      local sampling = def.sampled and E.sampling_of(o, what, 1) or nil
      local threshold = o.threshold == nil and 0.5 or o.threshold
      if type(threshold) ~= "number" or threshold < 0 or threshold > 1 then
        error(def.name .. ": threshold must be a number from 0 to 1", 0)
      end
      if o.strict_mode ~= nil and type(o.strict_mode) ~= "boolean" then
        error(def.name .. ": strict_mode must be true or false", 0)
      end
      local strict = o.strict_mode == true
      if strict then threshold = 1 end
      if o.fields ~= nil and type(o.fields) ~= "table" then error(def.name .. ": fields must be a table {field = row key}", 0) end
      local score = def.build(o, prompts, sampling)
      local m = E.metric { name = o.name or def.name, judged = true, description = o.description or def.description,
                           higher_is_better = true, options = o, make = make, known = known, what = what,
                           threshold = threshold, check = data.check }
      m.fn = function(row, ctx)
        local judge, why = E.judge_of(ctx)
        if not judge then return E.unmeasured(why) end
        local p, bad = data.row(row)
        if not p then return E.unmeasured(bad) end
        if not p.messages then return E.unmeasured("the row has no messages (a conversation)") end
        local out = score(judge, p, row)
        if out.score then
          if strict and out.score < threshold then out.score = 0 end
          out.pass = out.score >= threshold
        end
        return out
      end
      return m
    end)
    if not ok then error(m, 3) end
    return m
  end
  return make {}, make
end

-- The share of "yes" among verdicts {verdict = 1 | 0} (1 = yes).
local function share_yes(list)
  local yes = 0
  for _, v in ipairs(list) do yes = yes + v.verdict end
  return yes / #list, yes
end
M.share_yes = share_yes

-- A list of verdicts {verdict = 1 | 0, reason =}, n of them, under key.
function M.parse_verdicts(answer, n, key)
  local list = type(answer) == "table" and answer[key or "verdicts"]
  if type(list) ~= "table" then return nil, ('expected {"%s": [...]}'):format(key or "verdicts") end
  if #list ~= n then return nil, ("%d verdicts for %d items"):format(#list, n) end
  local out = {}
  for i, v in ipairs(list) do
    local verdict = type(v) == "table" and E.verdict(v.verdict)
    if not verdict then return nil, ("verdicts[%d] has no verdict yes or no"):format(i) end
    out[i] = { verdict = verdict, reason = type(v.reason) == "string" and v.reason or nil }
  end
  return out
end

function M.parse_verdict(answer)
  local v = type(answer) == "table" and E.verdict(answer.verdict)
  if not v then return nil, 'expected {"verdict": "yes" or "no"}' end
  return v, type(answer.reason) == "string" and answer.reason or nil
end

-- The offline judge's answer for a step it cannot estimate.
function M.no_heuristic(what)
  return function() return nil, ("the offline judge cannot %s: this metric needs a model judge"):format(what) end
end

local function strings(answer, key)
  local list = type(answer) == "table" and answer[key]
  if type(list) ~= "table" then return nil, ('expected {"%s": ["...", ...]}'):format(key) end
  local out = {}
  for i, s in ipairs(list) do
    if type(s) ~= "string" then return nil, ("%s[%d] is not text"):format(key, i) end
    if s:find("%S") then out[#out + 1] = s end
  end
  return out
end
M.strings = strings

local function text_keys(answer, keys)
  if type(answer) ~= "table" then return nil, "expected a JSON object" end
  local out = {}
  for _, k in ipairs(keys) do
    if type(answer[k]) ~= "string" or not answer[k]:find("%S") then return nil, ("expected %s as text"):format(k) end
    out[k] = answer[k]
  end
  return out
end

-- ---- judge operations ---------------------------------------------------------------

E.step("agent_arguments", {
  prompt = P.arguments, vote = "verdicts",
  parse = function(answer, vars) return M.parse_verdicts(answer, vars.n) end,
  offline = M.no_heuristic("tell whether a call's arguments fit the request"),
})

E.step("agent_task_outcome", {
  prompt = P.task_outcome,
  parse = function(answer) return text_keys(answer, { "task", "outcome" }) end,
  offline = M.no_heuristic("read the task and outcome of a conversation"),
})

E.step("agent_task_verdict", {
  prompt = P.task_verdict, vote = "mean",
  parse = function(answer)
    local v = type(answer) == "table" and tonumber(answer.verdict)
    if not v or v ~= v or v < 0 or v > 1 then return nil, "expected verdict as a number from 0 to 1" end
    return v, type(answer.reason) == "string" and answer.reason or nil
  end,
  offline = M.no_heuristic("tell how far an outcome achieves a task"),
})

-- Offline: the goal is the first user message and the end state the last
-- assistant text, a heuristic the comparison below can use against a
-- reference.
E.step("agent_goal_state", {
  prompt = P.goal_state,
  parse = function(answer) return text_keys(answer, { "user_goal", "end_state" }) end,
  offline = function(vars)
    if not vars.goal_text or not vars.end_text then return nil, "offline: the conversation has no user message and answer" end
    return { user_goal = vars.goal_text, end_state = vars.end_text },
      "offline: the first user message and the last assistant text"
  end,
})

E.step("agent_goal_compare", {
  prompt = P.goal_compare, vote = "majority", parse = M.parse_verdict,
  offline = function(vars, o)
    if not vars.with_reference then
      return nil, "the offline judge cannot tell whether an inferred goal was reached: this metric needs a model judge"
    end
    if #offline.content_tokens(vars.desired) == 0 then return nil, "the expected outcome has no words to look for" end
    local v = offline.verdicts({ vars.desired }, vars.achieved, o.support_threshold)[1]
    return v.verdict, "offline: " .. v.reason
  end,
})

E.step("agent_topics", {
  prompt = P.topics,
  parse = function(answer) return strings(answer, "topics") end,
  offline = M.no_heuristic("list the topics of a conversation"),
})

local function flag(v)
  if v == true or v == false then return v end
  local x = E.verdict(v)
  if x == nil then return nil end
  return x == 1
end

E.step("agent_topic_verdicts", {
  prompt = P.topic_verdicts,
  parse = function(answer, vars)
    local list = type(answer) == "table" and answer.verdicts
    if type(list) ~= "table" then return nil, 'expected {"verdicts": [...]}' end
    if #list ~= vars.n then return nil, ("%d verdicts for %d topics"):format(#list, vars.n) end
    local out = {}
    for i, v in ipairs(list) do
      local answered, on = type(v) == "table" and flag(v.answered), type(v) == "table" and flag(v.on_topic)
      if answered == nil or on == nil then return nil, ("verdicts[%d] needs answered and on_topic as true or false"):format(i) end
      out[i] = { topic = vars.list[i], answered = answered, on_topic = on }
    end
    return out
  end,
  offline = M.no_heuristic("tell which topics a conversation answered"),
})

-- ---- the metrics --------------------------------------------------------------------

local function messages_of(p) return p.messages.messages end

M.argument_correctness = M.define {
  name = "argument_correctness", sampled = true, strict = true,
  description = "DeepEval's argument correctness: the share of tool calls whose arguments the judge finds right",
  steps = { verdicts = P.arguments },
  build = function(_, prompts, sampling)
    return function(judge, p)
      local calls = p.messages.calls
      if #calls == 0 then return E.unmeasured("no tool calls to judge") end
      local r = E.ask(judge, "agent_arguments", { conversation = transcript.render(messages_of(p)),
                                                  calls = transcript.calls(calls), n = #calls }, prompts.verdicts, sampling)
      if not r.ok then return E.failure("verdicts", r) end
      for i, v in ipairs(r.value) do v.call = calls[i].name end
      local score, yes = share_yes(r.value)
      return E.sampled({ score = score, verdicts = r.value,
                         reason = ("%d of %d calls have the right arguments"):format(yes, #calls) }, r)
    end
  end,
}

M.task_completion = M.define {
  name = "task_completion", sampled = true, strict = true, options = { "task" },
  description = "DeepEval's task completion: how far the outcome the agent reached achieves the user's task (0-1)",
  steps = { outcome = P.task_outcome, verdict = P.task_verdict },
  build = function(o, prompts, sampling)
    if o.task ~= nil and (type(o.task) ~= "string" or not o.task:find("%S")) then
      error("task_completion: task must be a text", 0)
    end
    return function(judge, p)
      local conv = transcript.render(messages_of(p))
      local r = E.ask(judge, "agent_task_outcome", { conversation = conv }, prompts.outcome)
      if not r.ok then return E.failure("outcome", r) end
      local task = o.task or r.value.task
      local v = E.ask(judge, "agent_task_verdict", { task = task, outcome = r.value.outcome }, prompts.verdict, sampling)
      if not v.ok then return E.failure("verdict", v) end
      return E.sampled({ score = v.value, task = task, outcome = r.value.outcome, reason = v.reason }, v)
    end
  end,
}

local function goal_accuracy(with_reference)
  return function(o, prompts, sampling)
    return function(judge, p, row)
      local desired, why
      if with_reference then
        desired, why = M.field(o, row, "expected_outcome")
        if not desired then return E.unmeasured(why) end
      end
      local msgs = messages_of(p)
      local goal_text, end_text
      for _, m in ipairs(msgs) do
        local t = data.text(m.content)
        if m.role == "user" and not goal_text and t:find("%S") then goal_text = t end
        if m.role == "assistant" and t:find("%S") then end_text = t end
      end
      local s = E.ask(judge, "agent_goal_state", { conversation = transcript.render(msgs), goal_text = goal_text,
                                                    end_text = end_text }, prompts.state)
      if not s.ok then return E.failure("state", s) end
      desired = desired or s.value.user_goal
      local c = E.ask(judge, "agent_goal_compare", { desired = desired, achieved = s.value.end_state,
                                                     with_reference = with_reference }, prompts.compare, sampling)
      if not c.ok then return E.failure("compare", c) end
      return E.sampled({ score = c.value, desired = desired, end_state = s.value.end_state, reason = c.reason }, c)
    end
  end
end

M.agent_goal_accuracy = M.define {
  name = "agent_goal_accuracy", sampled = true,
  description = "RAGAS's agent goal accuracy with a reference: 1 when the end state is the expected outcome",
  steps = { state = P.goal_state, compare = P.goal_compare },
  build = goal_accuracy(true),
}

M.agent_goal_accuracy_without_reference = M.define {
  name = "agent_goal_accuracy_without_reference", sampled = true,
  description = "RAGAS's agent goal accuracy without a reference: 1 when the end state is the goal the user expressed",
  steps = { state = P.goal_state, compare = P.goal_compare },
  build = goal_accuracy(false),
}

local MODES = { precision = true, recall = true, f1 = true }

M.topic_adherence = M.define {
  name = "topic_adherence", options = { "mode" },
  description = "RAGAS's topic adherence: precision, recall or F1 of the topics answered against the reference topics",
  steps = { topics = P.topics, verdicts = P.topic_verdicts },
  build = function(o, prompts)
    local mode = o.mode or "f1"
    if not MODES[mode] then error("topic_adherence: mode must be \"precision\", \"recall\" or \"f1\"", 0) end
    return function(judge, p, row)
      local refs = row[(o.fields or {}).reference_topics or "reference_topics"]
      if type(refs) ~= "table" or #refs == 0 then return E.unmeasured("no 'reference_topics' in the row") end
      for i, t in ipairs(refs) do
        if type(t) ~= "string" then return E.unmeasured(("reference_topics[%d] is not text"):format(i)) end
      end
      local conv = transcript.render(messages_of(p))
      local t = E.ask(judge, "agent_topics", { conversation = conv }, prompts.topics)
      if not t.ok then return E.failure("topics", t) end
      if #t.value == 0 then return E.unmeasured("the judge found no topics in the conversation") end
      local json = require "evalua.judge.json"
      local v = E.ask(judge, "agent_topic_verdicts", { conversation = conv, list = t.value, n = #t.value,
                                                       topics = json.encode(t.value), reference_topics = json.encode(refs) },
        prompts.verdicts)
      if not v.ok then return E.failure("verdicts", v) end
      local tp, fp, fn = 0, 0, 0
      for _, x in ipairs(v.value) do
        if x.answered and x.on_topic then tp = tp + 1
        elseif x.answered then fp = fp + 1
        elseif x.on_topic then fn = fn + 1 end
      end
      local precision = tp + fp > 0 and tp / (tp + fp) or nil
      local recall = tp + fn > 0 and tp / (tp + fn) or nil
      local out = { topics = v.value, precision = precision, recall = recall,
                    reason = ("%d topics answered and on topic, %d answered off topic, %d on topic refused"):format(tp, fp, fn) }
      if mode == "precision" then out.score = precision
      elseif mode == "recall" then out.score = recall
      elseif precision and recall then
        out.score = (precision + recall) > 0 and 2 * precision * recall / (precision + recall) or 0
      end
      if out.score == nil then
        out.unmeasured = true
        out.reason = ("%s is 0/0: %s"):format(mode == "f1" and (precision and "recall" or "precision") or mode, out.reason)
      end
      return out
    end
  end,
}

M.NAMES = { "argument_correctness", "task_completion", "agent_goal_accuracy", "agent_goal_accuracy_without_reference",
            "topic_adherence" }

return M
