-- The judged conversation metrics (docs/agents.md), after DeepEval's
-- conversational ones: knowledge_retention, role_adherence,
-- conversation_completeness, turn_relevancy (a verdict per user turn over
-- a sliding window of turns) and conversational_geval (G-Eval over the
-- whole conversation, or over windows of turns). A turn is a user message
-- and everything up to the next one; the judged message of a turn is its
-- last assistant text.
local E = require "evalua.judged.llm_evaluator"
local options = require "evalua.core.options"
local data = require "evalua.agent.data"
local transcript = require "evalua.agent.transcript"
local J = require "evalua.agent.judged"
local P = require "evalua.agent.prompts"

local M = {}

-- Turns of a conversation: {from =, to =, reply =} per user turn that has
-- an assistant text (reply: that message's index; to: the reply's index).
local function units(conv)
  local msgs, out, cur = conv.messages, {}, nil
  for m, msg in ipairs(msgs) do
    if msg.role == "user" then
      cur = { from = m }
    elseif cur and msg.role == "assistant" and data.text(msg.content):find("%S") then
      cur.reply, cur.to = m, m
      if out[#out] ~= cur then out[#out + 1] = cur end
    end
  end
  return out
end
M.units = units

-- The messages of units k - size + 1 .. k, and the number of the first.
local function window(conv, list, k, size)
  local first = list[math.max(1, k - size + 1)].from
  return table.move(conv.messages, first, list[k].to, 1, {}), first
end

local function window_size(o, default)
  local n = o.window_size
  if n == nil then return default end
  if math.tointeger(n) == nil or n < 1 then error("turn_relevancy: window_size must be a whole number >= 1", 0) end
  return math.tointeger(n)
end

-- ---- judge operations ---------------------------------------------------------------

E.step("agent_knowledge", {
  prompt = P.knowledge,
  parse = function(answer)
    local facts = type(answer) == "table" and answer.facts
    if type(facts) ~= "table" then return nil, 'expected {"facts": {...}}' end
    local out = {}
    for k, v in pairs(facts) do
      if type(k) == "string" and (type(v) == "string" or type(v) == "number" or type(v) == "boolean") then
        out[#out + 1] = ("%s: %s"):format(k, tostring(v))
      elseif type(k) ~= "number" then
        return nil, ("facts.%s is not a text, number or boolean"):format(tostring(k))
      end
    end
    table.sort(out)
    return out
  end,
  offline = J.no_heuristic("extract the facts a user stated"),
})

E.step("agent_retention", {
  prompt = P.retention, vote = "majority", parse = J.parse_verdict,
  offline = J.no_heuristic("tell whether a message forgets what the user said"),
})

E.step("agent_role", {
  prompt = P.role,
  parse = function(answer, vars)
    local list = type(answer) == "table" and answer.out_of_character
    if type(list) ~= "table" then return nil, 'expected {"out_of_character": [...]}' end
    local out, seen = {}, {}
    for i, v in ipairs(list) do
      local k = type(v) == "table" and math.tointeger(tonumber(v.index))
      if not k then return nil, ("out_of_character[%d] has no index"):format(i) end
      if not vars.assistant[k] then return nil, ("out_of_character[%d]: message %d is not an assistant message"):format(i, k) end
      if not seen[k] then
        seen[k] = true
        out[#out + 1] = { index = k, reason = type(v.reason) == "string" and v.reason or nil }
      end
    end
    return out
  end,
  offline = J.no_heuristic("tell whether an assistant keeps to its role"),
})

E.step("agent_intentions", {
  prompt = P.intentions,
  parse = function(answer) return J.strings(answer, "intentions") end,
  offline = J.no_heuristic("list what a user wanted"),
})

E.step("agent_intention_verdicts", {
  prompt = P.intention_verdicts, vote = "verdicts",
  parse = function(answer, vars) return J.parse_verdicts(answer, vars.n) end,
  offline = J.no_heuristic("tell whether a user's intentions were met"),
})

E.step("agent_turn_relevancy", {
  prompt = P.turn_relevancy, vote = "majority", parse = J.parse_verdict,
  offline = J.no_heuristic("tell whether a reply is relevant to the conversation"),
})

-- ---- the metrics --------------------------------------------------------------------

M.knowledge_retention = J.define {
  name = "knowledge_retention", sampled = true, strict = true,
  description = "DeepEval's knowledge retention: the share of assistant messages that keep what the user said before",
  steps = { facts = P.knowledge, verdict = P.retention },
  build = function(_, prompts, sampling)
    return function(judge, p)
      local msgs = p.messages.messages
      local facts, verdicts = {}, {}
      for m, msg in ipairs(msgs) do
        local text = data.text(msg.content)
        if msg.role == "user" then
          local r = E.ask(judge, "agent_knowledge", { previous = transcript.render(table.move(msgs, 1, m - 1, 1, {})),
                                                      message = text }, prompts.facts)
          if not r.ok then return E.failure(("facts of message %d"):format(m), r) end
          table.move(r.value, 1, #r.value, #facts + 1, facts)
        elseif msg.role == "assistant" and text:find("%S") and #facts > 0 then
          local r = E.ask(judge, "agent_retention", { facts = table.concat(facts, "\n"), message = text },
            prompts.verdict, sampling)
          if not r.ok then return E.failure(("message %d"):format(m), r) end
          verdicts[#verdicts + 1] = { message = m, forgot = r.value == 1, reason = r.reason }
        end
      end
      if #verdicts == 0 then return E.unmeasured("no assistant message comes after a fact the user stated") end
      local kept = 0
      for _, v in ipairs(verdicts) do if not v.forgot then kept = kept + 1 end end
      return { score = kept / #verdicts, verdicts = verdicts, facts = facts,
               reason = ("%d of %d assistant messages keep what the user said"):format(kept, #verdicts) }
    end
  end,
}

M.role_adherence = J.define {
  name = "role_adherence", strict = true,
  description = "DeepEval's role adherence: the share of assistant messages that keep to the assistant's role",
  steps = { verdicts = P.role },
  build = function(o, prompts)
    return function(judge, p, row)
      local role, why = J.field(o, row, "chatbot_role")
      if not role then return E.unmeasured(why) end
      local assistant, n = {}, 0
      for m, msg in ipairs(p.messages.messages) do
        if msg.role == "assistant" and data.text(msg.content):find("%S") then assistant[m], n = true, n + 1 end
      end
      if n == 0 then return E.unmeasured("no assistant message with text to judge") end
      local r = E.ask(judge, "agent_role", { role = role, conversation = transcript.render(p.messages.messages),
                                             assistant = assistant }, prompts.verdicts)
      if not r.ok then return E.failure("verdicts", r) end
      return { score = (n - #r.value) / n, out_of_character = r.value,
               reason = ("%d of %d assistant messages break the role"):format(#r.value, n) }
    end
  end,
}

M.conversation_completeness = J.define {
  name = "conversation_completeness", sampled = true, strict = true,
  description = "DeepEval's conversation completeness: the share of the user's intentions the assistant met",
  steps = { intentions = P.intentions, verdicts = P.intention_verdicts },
  build = function(_, prompts, sampling)
    return function(judge, p)
      local conv = transcript.render(p.messages.messages)
      local r = E.ask(judge, "agent_intentions", { conversation = conv }, prompts.intentions)
      if not r.ok then return E.failure("intentions", r) end
      if #r.value == 0 then return E.unmeasured("the judge found no user intention in the conversation") end
      local v = E.ask(judge, "agent_intention_verdicts", { conversation = conv, n = #r.value,
                                                           intentions = require("evalua.judge.json").encode(r.value) },
        prompts.verdicts, sampling)
      if not v.ok then return E.failure("verdicts", v) end
      for i, x in ipairs(v.value) do x.intention = r.value[i] end
      local score, yes = J.share_yes(v.value)
      return E.sampled({ score = score, verdicts = v.value,
                         reason = ("%d of %d intentions met"):format(yes, #r.value) }, v)
    end
  end,
}

M.turn_relevancy = J.define {
  name = "turn_relevancy", sampled = true, strict = true, options = { "window_size" },
  description = "DeepEval's turn relevancy: the share of turns whose reply is relevant, each judged with the turns before it",
  steps = { verdict = P.turn_relevancy },
  build = function(o, prompts, sampling)
    local size = window_size(o, 10)
    return function(judge, p)
      local list = units(p.messages)
      if #list == 0 then return E.unmeasured("no turn with an assistant reply to judge") end
      local verdicts = {}
      for k in ipairs(list) do
        local msgs, first = window(p.messages, list, k, size)
        local r = E.ask(judge, "agent_turn_relevancy", { conversation = transcript.render(msgs, { from = first }) },
          prompts.verdict, sampling)
        if not r.ok then return E.failure(("turn %d"):format(k), r) end
        verdicts[k] = { turn = k, message = list[k].reply, verdict = r.value, reason = r.reason }
      end
      local score, yes = J.share_yes(verdicts)
      return { score = score, verdicts = verdicts, reason = ("%d of %d replies relevant"):format(yes, #list) }
    end
  end,
}

-- ---- conversational G-Eval ----------------------------------------------------------

local GEVAL = { "name", "criteria", "steps", "params", "rubric", "scale", "threshold", "strict", "samples",
                "temperature", "logprobs", "top_logprobs", "prompts", "description", "offline", "window", "fields" }
local GEVAL_KNOWN = options.set(GEVAL)
local TURN_PARAMS = { turns = true, scenario = true, expected_outcome = true, chatbot_role = true, context = true }

-- ev.agent.conversational_geval{name=, criteria= | steps=, params = {"turns", "scenario", ...},
-- window = n | nil, scale = {0, 10}, ...} -> metric. The conversation is
-- G-Eval's "Turns" (lua/evalua/judged/geval.lua does the rest: steps, score,
-- logprob weighting, samples); with window = n each turn is scored with
-- the n turns up to it and the score is their mean.
function M.conversational_geval(o)
  if type(o) ~= "table" then error("ev.agent.conversational_geval: expected a table of options", 2) end
  options.check(o, GEVAL_KNOWN, "ev.agent.conversational_geval", 2)
  local params = { "turns" }
  for i, p in ipairs(o.params or {}) do
    if not TURN_PARAMS[p] then
      error(("conversational_geval: params[%d] '%s' is not one of turns, scenario, expected_outcome, chatbot_role, context")
        :format(i, tostring(p)), 2)
    end
    if p ~= "turns" then params[#params + 1] = p end
  end
  local size = o.window
  if size ~= nil and (math.tointeger(size) == nil or size < 1) then
    error("conversational_geval: window must be a whole number >= 1 (turns), or nil for the whole conversation", 2)
  end
  local g = {}
  for k, v in pairs(o) do if k ~= "window" then g[k] = v end end
  g.params, g.scale = params, o.scale or { 0, 10 }
  g.fields = setmetatable({ turns = function(row) return transcript.render(row.messages) end }, { __index = o.fields })
  local ok, inner = pcall(require("evalua.judged.geval").new, g)
  if not ok then error((tostring(inner):gsub("^[^:]*:%d+: ", "")), 2) end
  local m = E.metric { name = inner.name, judged = true, description = inner.description, higher_is_better = true,
                       threshold = inner.threshold, options = o, make = M.conversational_geval, known = GEVAL_KNOWN,
                       what = "ev.agent.conversational_geval", check = data.check }
  m.steps = function(_, judge) return inner:steps(judge) end
  m.fn = function(row, ctx)
    local p, bad = data.row(row)
    if not p then return E.unmeasured(bad) end
    if not p.messages then return E.unmeasured("the row has no messages (a conversation)") end
    if not size then return inner.fn(setmetatable({ messages = p.messages.messages }, { __index = row }), ctx) end
    local list = units(p.messages)
    if #list == 0 then return E.unmeasured("no turn with an assistant reply to score") end
    local per, sum = {}, 0
    for k in ipairs(list) do
      local msgs = window(p.messages, list, k, size)
      local r = inner.fn(setmetatable({ messages = msgs }, { __index = row }), ctx)
      if r.unmeasured then
        r.reason = ("turn %d: %s"):format(k, tostring(r.reason))
        return r
      end
      per[k] = { turn = k, score = r.score, reason = r.reason, weighted = r.weighted }
      sum = sum + r.score
    end
    local score = sum / #list
    return { score = score, turns = per, pass = score >= inner.threshold,
             reason = ("mean of %d turns, each with up to %d turns before it"):format(#list, size - 1) }
  end
  return m
end

M.NAMES = { "knowledge_retention", "role_adherence", "conversation_completeness", "turn_relevancy" }

return M
