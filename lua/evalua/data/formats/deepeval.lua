-- DeepEval's test cases and datasets as EvaluationDataset.save_as writes
-- them (JSON, JSONL, CSV) and as Confident AI exports them (camelCase
-- keys, {"goldens": [...]}): LLMTestCase and Golden rows become evaluation
-- rows, ConversationalTestCase and ConversationalGolden rows (turns)
-- conversation rows in the OpenAI chat format of docs/agents.md.
local c = require "evalua.data.formats.common"
local json = require "evalua.core.json"

local M = { name = "deepeval" }

M.WRAPPERS = { "goldens", "test_cases", "testCases", "conversational_goldens", "conversationalGoldens",
               "conversational_test_cases", "conversationalTestCases" }

-- DeepEval's snake_case names and the camelCase ones of its serialisation.
local ALIAS = {
  actualOutput = "actual_output", expectedOutput = "expected_output", retrievalContext = "retrieval_context",
  toolsCalled = "tools_called", expectedTools = "expected_tools", additionalMetadata = "additional_metadata",
  sourceFile = "source_file", customColumnKeyValues = "custom_column_key_values",
  expectedOutcome = "expected_outcome", userDescription = "user_description", chatbotRole = "chatbot_role",
  inputParameters = "input_parameters",
}

function M.claims(keys)
  if keys.input ~= nil and keys.qid == nil then return true end
  for _, k in ipairs { "actual_output", "actualOutput", "expected_output", "expectedOutput", "retrieval_context",
                       "retrievalContext", "turns" } do
    if keys[k] ~= nil then return true end
  end
  return false
end

-- v[name] under either spelling; the name it was found under.
local function get(v, name)
  if v[name] ~= nil then return v[name], name end
  for camel, snake in pairs(ALIAS) do
    if snake == name and v[camel] ~= nil then return v[camel], camel end
  end
end

-- A DeepEval ToolCall {name, input_parameters, output, ...}.
local function tool(t, field)
  if not c.is_object(t) or type(t.name) ~= "string" or t.name == "" then c.bad(field, "expected a ToolCall {name =, input_parameters =}") end
  local params, pname = get(t, "input_parameters")
  if params ~= nil and not c.is_object(params) then
    c.bad(field .. "." .. pname, "expected an object, got %s", c.typename(params))
  end
  return t.name, params or {}, t.output
end

local function tool_list(v, field, csv)
  v = c.value(v, field, csv)
  if not c.is_list(v) then c.bad(field, "expected a list of ToolCalls, got %s", c.typename(v)) end
  return v
end

local function output_text(o)
  if o == nil then return "" end
  if type(o) == "string" then return o end
  return json.encode(o)
end

-- The calls of one answer as an assistant message with tool_calls and a
-- tool message for each call whose output is known.
local function call_messages(list, field, msgs, counter)
  local calls, answers = {}, {}
  for k, t in ipairs(list) do
    local name, params, output = tool(t, ("%s[%d]"):format(field, k))
    counter.n = counter.n + 1
    local id = "call_" .. counter.n
    calls[k] = { id = id, type = "function", ["function"] = { name = name, arguments = json.encode(params) } }
    if output ~= nil then answers[#answers + 1] = { role = "tool", tool_call_id = id, content = output_text(output) } end
  end
  if #calls == 0 then return end
  msgs[#msgs + 1] = { role = "assistant", tool_calls = calls }
  for _, a in ipairs(answers) do msgs[#msgs + 1] = a end
end

local function expected_calls(list, field)
  local out = {}
  for k, t in ipairs(list) do
    local name, params, output = tool(t, ("%s[%d]"):format(field, k))
    out[k] = { name = name, arguments = params, output = output }
  end
  return setmetatable(out, json.array)
end

-- retrieval_context and context: lists, or in CSV and JSONL files the
-- texts joined with '|' (DeepEval's join_context).
local function contexts(v, field, csv)
  if v == nil then return nil end
  if type(v) == "string" and not csv then return c.strings(v, field, false, "|") end
  return c.strings(v, field, csv, "|")
end

-- A RetrievedContextData item as save_as writes it,
-- "deepeval_source=SOURCE,deepeval_context=TEXT": its text is the context,
-- its source kept in retrieval_context_sources (nil where an item has none).
local function unmark(list, out)
  if not list then return nil end
  local sources, any = {}, false
  for i, item in ipairs(list) do
    local src, text = item:match("^deepeval_source=(.-),deepeval_context=(.*)$")
    if src then list[i], sources[i], any = text, src, true end
  end
  if any then
    for i = 1, #list do if sources[i] == nil then sources[i] = json.null end end
    out.row.retrieval_context_sources = setmetatable(sources, json.array)
  end
  return list
end

local SINGLE = { input = true, actual_output = true, expected_output = true, retrieval_context = true,
                 tools_called = true, expected_tools = true }

local function single(rec, v, out, csv)
  c.set(out, "query", c.string(v.input, "input"), "input")
  local a, an = get(v, "actual_output")
  c.set(out, "answer", c.string(a, an), an)
  local e, en = get(v, "expected_output")
  if c.string(e, en) then c.set(out, "gold_answers", setmetatable({ e }, json.array), en) end
  local r, rn = get(v, "retrieval_context")
  c.set(out, "contexts", unmark(contexts(r, rn, csv), out), rn)
  if v.context ~= nil then out.row.context = contexts(v.context, "context", csv) end
  local called, cn = get(v, "tools_called")
  if called ~= nil then
    local msgs = { { role = "user", content = v.input or "" } }
    call_messages(tool_list(called, cn, csv), cn, msgs, { n = 0 })
    if a ~= nil then msgs[#msgs + 1] = { role = "assistant", content = a } end
    c.set(out, "messages", msgs, cn)
  end
  local ex, exn = get(v, "expected_tools")
  if ex ~= nil then c.set(out, "expected_tool_calls", expected_calls(tool_list(ex, exn, csv), exn), exn) end
  return { context = true }
end

-- turns: DeepEval's Turn {role, content, tools_called, retrieval_context},
-- or the older form, a list of LLMTestCase {input, actual_output}.
local function conversation(v, out, csv)
  -- a list, or its JSON text (DeepEval's parse_turns takes either, in any file)
  local turns = c.value(v.turns, "turns", type(v.turns) == "string")
  if not c.is_list(turns) then c.bad("turns", "expected a list of turns {role =, content =}, got %s", c.typename(turns)) end
  local msgs, counter = {}, { n = 0 }
  for i, t in ipairs(turns) do
    local path = ("turns[%d]"):format(i)
    if not c.is_object(t) then c.bad(path, "expected a turn {role =, content =}, got %s", c.typename(t)) end
    if t.role == nil and t.input ~= nil then -- an LLMTestCase turn
      msgs[#msgs + 1] = { role = "user", content = c.string(t.input, path .. ".input") }
      local called, cn = get(t, "tools_called")
      if called ~= nil then call_messages(tool_list(called, path .. "." .. cn), path .. "." .. cn, msgs, counter) end
      local a, an = get(t, "actual_output")
      if a ~= nil then msgs[#msgs + 1] = { role = "assistant", content = c.string(a, path .. "." .. an) } end
    else
      if t.role ~= "user" and t.role ~= "assistant" then
        c.bad(path .. ".role", "expected \"user\" or \"assistant\", got %s",
          type(t.role) == "string" and ("'" .. t.role .. "'") or c.typename(t.role))
      end
      if type(t.content) ~= "string" then c.bad(path .. ".content", "expected a string, got %s", c.typename(t.content)) end
      local called, cn = get(t, "tools_called")
      if called ~= nil and t.role == "assistant" then
        call_messages(tool_list(called, path .. "." .. cn), path .. "." .. cn, msgs, counter)
      elseif called ~= nil then
        c.bad(path .. "." .. cn, "only an assistant turn calls tools")
      end
      msgs[#msgs + 1] = { role = t.role, content = t.content }
    end
  end
  c.set(out, "messages", msgs, "turns")
  for _, k in ipairs { "scenario", "expected_outcome", "chatbot_role", "user_description" } do
    local x, xn = get(v, k)
    if x ~= nil then c.set(out, k, c.string(x, xn), xn) end
  end
  if v.context ~= nil then out.row.context = contexts(v.context, "context", csv) end
  return { context = true, scenario = true, expected_outcome = true, chatbot_role = true, user_description = true }
end

-- map(rec, i, csv) -> the row of DeepEval test case or golden i. Keys that
-- do not map are kept under their snake_case names; turns is kept as written.
function M.map(rec, i, csv)
  local v, out = rec.value, c.new_row(rec.line)
  out.row.qid = i
  local used
  if v.turns ~= nil then
    used = conversation(v, out, csv)
  else
    if v.input == nil then c.bad("input", "missing (a DeepEval test case has input; a conversation has turns)") end
    used = single(rec, v, out, csv)
    for k in pairs(SINGLE) do used[k] = true end
  end
  for camel, snake in pairs(ALIAS) do
    if v[camel] ~= nil then
      if used[snake] then used[camel] = true
      elseif v[snake] == nil then
        v[snake], rec.raw[snake], used[camel] = v[camel], rec.raw[camel], true
      end
    end
  end
  if csv then
    for _, k in ipairs { "additional_metadata", "custom_column_key_values" } do
      if type(v[k]) == "string" then v[k] = c.value(v[k], k, csv) end
    end
  end
  return c.keep(out, rec, used)
end

return M
