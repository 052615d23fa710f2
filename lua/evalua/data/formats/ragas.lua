-- RAGAS's EvaluationDataset as its to_jsonl, to_csv and to_list write it
-- (docs/data.md, "RAGAS"): SingleTurnSample rows become evaluation rows,
-- MultiTurnSample rows (user_input a list of messages) conversation rows
-- in the OpenAI chat format of docs/agents.md. RAGAS 0.1's columns
-- (question, contexts, answer, ground_truth) are read too.
local c = require "evalua.data.formats.common"
local json = require "evalua.core.json"

local M = { name = "ragas" }

-- Keys whose presence in a first record says "RAGAS" (auto detection).
function M.claims(keys)
  if keys.user_input then return true end
  return keys.question ~= nil and (keys.ground_truth ~= nil or keys.ground_truths ~= nil or keys.contexts ~= nil)
end

M.WRAPPERS = { "samples" }

local ROLE = { human = "user", ai = "assistant", tool = "tool" }

-- RAGAS's messages -> OpenAI chat messages. RAGAS gives a ToolMessage no
-- call id: it answers the AI message's calls in order, as RAGAS's own
-- validator pairs them; each call gets the id call_N (N counts the row's calls).
local function messages(list, field)
  if not c.is_list(list) then c.bad(field, "expected a list of messages {type =, content =}, got %s", c.typename(list)) end
  local out, pending, n = {}, {}, 0
  for i, m in ipairs(list) do
    local path = ("%s[%d]"):format(field, i)
    if not c.is_object(m) then c.bad(path, "expected a message {type =, content =}, got %s", c.typename(m)) end
    local role = ROLE[m.type == nil and "human" or m.type] -- no type: a HumanMessage, as pydantic reads it
    if not role then
      c.bad(path .. ".type", "expected \"human\", \"ai\" or \"tool\" (RAGAS's HumanMessage, AIMessage, ToolMessage), got %s",
        type(m.type) == "string" and ("'" .. m.type .. "'") or c.typename(m.type))
    end
    local content = m.content
    if content ~= nil and type(content) ~= "string" then content = json.encode(content) end
    local msg = { role = role, content = content }
    if role == "assistant" and m.tool_calls ~= nil then
      if not c.is_list(m.tool_calls) then c.bad(path .. ".tool_calls", "expected a list of {name =, args =}, got %s", c.typename(m.tool_calls)) end
      local calls = {}
      for k, tc in ipairs(m.tool_calls) do
        local p = ("%s.tool_calls[%d]"):format(path, k)
        if not c.is_object(tc) or type(tc.name) ~= "string" then c.bad(p, "expected {name =, args =}") end
        local args = tc.args
        if args == nil then args = {} end
        if not c.is_object(args) then c.bad(p .. ".args", "expected an object, got %s", c.typename(args)) end
        n = n + 1
        local id = "call_" .. n
        calls[k] = { id = id, type = "function", ["function"] = { name = tc.name, arguments = json.encode(args) } }
        pending[#pending + 1] = id
      end
      if #calls > 0 then msg.tool_calls = calls end
      if msg.content == "" and #calls > 0 then msg.content = nil end
    elseif m.tool_calls ~= nil and m.tool_calls ~= c.null then
      c.bad(path .. ".tool_calls", "only an AI message makes tool calls (this one is %s)", m.type)
    end
    if role == "tool" then
      local id = table.remove(pending, 1)
      if not id then c.bad(path, "a ToolMessage that answers no tool call of an AI message before it") end
      msg.tool_call_id = id
      msg.content = msg.content or ""
    elseif role ~= "assistant" then
      pending = {} -- a human message ends the calls waiting for answers
    end
    if role ~= "tool" and role ~= "assistant" and msg.content == nil then c.bad(path .. ".content", "missing") end
    if role == "assistant" and msg.content == nil and not msg.tool_calls then msg.content = "" end
    out[i] = msg
  end
  return out
end

local function tool_calls(list, field)
  if not c.is_list(list) then c.bad(field, "expected a list of {name =, args =}, got %s", c.typename(list)) end
  local out = {}
  for i, tc in ipairs(list) do
    local p = ("%s[%d]"):format(field, i)
    if not c.is_object(tc) or type(tc.name) ~= "string" then c.bad(p, "expected {name =, args =}") end
    local args = tc.args
    if args ~= nil and not c.is_object(args) then c.bad(p .. ".args", "expected an object, got %s", c.typename(args)) end
    out[i] = { name = tc.name, arguments = args or {} }
  end
  return setmetatable(out, json.array)
end

-- The keys each kind of sample maps; every other key is kept.
local SINGLE = {
  user_input = true, response = true, reference = true, retrieved_contexts = true,
  retrieved_context_ids = true, reference_context_ids = true, rubrics = true,
  question = true, answer = true, contexts = true, ground_truth = true, ground_truths = true,
  reference_contexts = true, multi_responses = true,
}
local MULTI = { user_input = true, reference = true, reference_tool_calls = true, reference_topics = true, rubrics = true }

local function ids(v, field, csv)
  v = c.value(v, field, csv)
  if not c.is_list(v) then c.bad(field, "expected a list of ids, got %s", c.typename(v)) end
  local out = {}
  for i, x in ipairs(v) do out[i] = c.id(x, ("%s[%d]"):format(field, i)) end
  return setmetatable(out, json.array)
end

-- map(rec, i, csv) -> the evaluation row of RAGAS sample i.
function M.map(rec, i, csv)
  local v, out = rec.value, c.new_row(rec.line)
  out.row.qid = i
  local input = v.user_input
  if csv and type(input) == "string" and input:find("^%s*%[") then
    -- a multi-turn sample's messages, as str() writes them; a question that
    -- merely starts with "[" stays a question
    local list = c.structured(input)
    if type(list) == "table" and c.is_object(list[1]) and (list[1].type ~= nil or list[1].content ~= nil) then input = list end
  end
  if type(input) == "table" then -- a MultiTurnSample
    c.set(out, "messages", messages(input, "user_input"), "user_input")
    c.set(out, "expected_outcome", c.string(v.reference, "reference"), "reference")
    if v.reference_tool_calls ~= nil then
      c.set(out, "expected_tool_calls", tool_calls(c.value(v.reference_tool_calls, "reference_tool_calls", csv),
        "reference_tool_calls"), "reference_tool_calls")
    end
    if v.reference_topics ~= nil then
      c.set(out, "reference_topics", c.strings(v.reference_topics, "reference_topics", csv), "reference_topics")
    end
  else
    c.set(out, "query", c.string(input, "user_input"), "user_input")
    c.set(out, "query", c.string(v.question, "question"), "question")
    c.set(out, "answer", c.string(v.response, "response"), "response")
    c.set(out, "answer", c.string(v.answer, "answer"), "answer")
    local ref = c.string(v.reference, "reference")
    if ref then c.set(out, "gold_answers", setmetatable({ ref }, json.array), "reference") end
    local gt = c.string(v.ground_truth, "ground_truth")
    if gt then c.set(out, "gold_answers", setmetatable({ gt }, json.array), "ground_truth") end
    if v.ground_truths ~= nil then c.set(out, "gold_answers", c.strings(v.ground_truths, "ground_truths", csv), "ground_truths") end
    c.set(out, "contexts", c.strings(v.retrieved_contexts, "retrieved_contexts", csv), "retrieved_contexts")
    c.set(out, "contexts", c.strings(v.contexts, "contexts", csv), "contexts")
    if v.retrieved_context_ids ~= nil then
      c.set(out, "retrieved", ids(v.retrieved_context_ids, "retrieved_context_ids", csv), "retrieved_context_ids")
    end
    if v.reference_context_ids ~= nil then
      c.set(out, "gold_doc_ids", ids(v.reference_context_ids, "reference_context_ids", csv), "reference_context_ids")
    end
    for _, k in ipairs { "reference_contexts", "multi_responses" } do
      if v[k] ~= nil then out.row[k], out.raw[k], out.from[k] = c.strings(v[k], k, csv), rec.raw[k], k end
    end
  end
  if v.rubrics ~= nil then out.row.rubrics, out.raw.rubrics = c.value(v.rubrics, "rubrics", csv), rec.raw.rubrics end
  return c.keep(out, rec, type(input) == "table" and MULTI or SINGLE)
end

return M
