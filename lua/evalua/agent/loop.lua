-- The agent loop of ev.generate (docs/agents.md, "Experimenting"): the
-- rendered prompt is the system message; each user turn of the row (the
-- user messages of its `messages`, else its `query`) is sent, and while the
-- model answers with tool calls, each call is answered by its tool (a Lua
-- function or a recorded fixture) and the model is asked again, up to
-- max_steps model calls for the whole conversation. What goes wrong with a
-- call (an unknown tool, arguments that are not JSON, a tool that raised,
-- no recorded answer) is told to the model as the tool's answer and kept
-- in tool_errors; the loop goes on. The output is the whole trajectory.
local data = require "evalua.agent.data"
local tools_mod = require "evalua.agent.tools"

local M = {}

M.max_steps = 8

-- The user turns of a row: its user messages, or its query.
function M.user_turns(row)
  if row.messages ~= nil then
    local turns = {}
    for _, m in ipairs(type(row.messages) == "table" and row.messages or {}) do
      if type(m) == "table" and m.role == "user" then turns[#turns + 1] = { role = "user", content = m.content } end
    end
    if #turns > 0 then return turns end
    return nil, "the row's messages hold no user message"
  end
  if type(row.query) == "string" and row.query:find("%S") then return { { role = "user", content = row.query } } end
  return nil, "the row has no user turn (messages with a user message, or a query)"
end

-- A model's assistant message as the trajectory keeps it: every call with
-- an id (call_STEP_K when the model gave none) and its arguments as sent.
local function normalized(msg, step)
  local out = { role = "assistant" }
  if type(msg.content) == "string" then out.content = msg.content end
  local calls = type(msg.tool_calls) == "table" and msg.tool_calls or {}
  if #calls > 0 then
    out.tool_calls = {}
    for k, c in ipairs(calls) do
      local f = type(c) == "table" and (c["function"] or c) or {}
      local args = f.arguments
      if type(args) == "table" then args = require("evalua.judge.json").encode(args) end
      out.tool_calls[k] = { id = type(c.id) == "string" and c.id ~= "" and c.id or ("call_%d_%d"):format(step, k),
                            type = "function",
                            ["function"] = { name = type(f.name) == "string" and f.name or "", arguments = args or "{}" } }
    end
  end
  if out.content == nil and out.tool_calls == nil then out.content = "" end
  return out
end

local function add(total, r)
  for _, k in ipairs { "latency_ms", "prompt_tokens", "completion_tokens", "cost" } do
    if type(r[k]) == "number" then total[k] = (total[k] or 0) + r[k] end
  end
  total.cached = total.cached and r.cached == true
end

-- run{step = fn(messages, k) -> {ok = true, message =, latency_ms=, ...} |
-- {ok = false, error =}, tools = a tool set (agent/tools.lua), max_steps =,
-- system = text, row =} -> a provider's result with messages, steps,
-- stop_reason ("final" | "max_steps"), tool_errors, answer (the last reply).
function M.run(o)
  local turns, why = M.user_turns(o.row)
  if not turns then return { ok = false, error = why } end
  local messages, errors, steps = {}, {}, 0
  if o.system and o.system:find("%S") then messages[1] = { role = "system", content = o.system } end
  local out = { ok = true, cached = true }
  local stop = "final"
  for _, turn in ipairs(turns) do
    messages[#messages + 1] = turn
    while true do
      if steps >= o.max_steps then stop = "max_steps" break end
      steps = steps + 1
      local r = o.step(messages, steps)
      add(out, r)
      if not r.ok then
        return { ok = false, error = ("step %d: %s"):format(steps, tostring(r.error)), dry_run = r.dry_run,
                 messages = messages, steps = steps, tool_errors = #errors > 0 and errors or nil }
      end
      local msg = normalized(r.message, steps)
      messages[#messages + 1] = msg
      if not msg.tool_calls then break end
      for _, c in ipairs(msg.tool_calls) do
        local args, bad = data.arguments(c["function"].arguments)
        local content, err = tools_mod.answer(o.tools, { name = c["function"].name, arguments = args, why = bad },
          { row = o.row, call = c, messages = messages })
        if err then errors[#errors + 1] = { id = c.id, error = err } end
        messages[#messages + 1] = { role = "tool", tool_call_id = c.id, content = content }
      end
    end
    if stop == "max_steps" then break end
  end
  local answer
  local last = messages[#messages]
  if stop == "final" and last.role == "assistant" then answer = last.content end
  out.messages, out.steps, out.stop_reason, out.answer = messages, steps, stop, answer
  out.tool_errors = #errors > 0 and errors or nil
  return out
end

return M
