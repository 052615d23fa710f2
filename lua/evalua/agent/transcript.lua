-- A conversation as the text a judge reads: one numbered line block per
-- message, tool calls with their arguments as JSON, tool answers named by
-- the tool they answer.
--
--   [2] user: Where is my order A17?
--   [3] assistant calls lookup_order {"order_id":"A17"}
--   [4] tool lookup_order: {"status": "packed"}
--   [5] assistant: Your order A17 is packed.
local data = require "evalua.agent.data"
local json = require "evalua.judge.json"

local M = {}

-- Arguments as canonical JSON ({} for none: an empty table encodes as []).
local function encoded(args)
  if next(args) == nil then return "{}" end
  return json.encode(args)
end

local function args_text(call)
  if call.arguments then return encoded(call.arguments) end
  return tostring(call.raw) .. " (not JSON)"
end

-- render(messages [, {from = 1, number = true}]) -> text. messages is a
-- list in the OpenAI format (checked by the caller).
function M.render(messages, opts)
  opts = opts or {}
  local names, lines = {}, {}
  for m = 1, #messages do
    local msg = messages[m]
    local tag = opts.number == false and "" or ("[%d] "):format((opts.from or 1) + m - 1)
    local text = data.text(msg.content)
    if msg.role == "assistant" then
      if text:find("%S") then lines[#lines + 1] = ("%sassistant: %s"):format(tag, text) end
      for _, c in ipairs(type(msg.tool_calls) == "table" and msg.tool_calls or {}) do
        local f = type(c) == "table" and c["function"] or {}
        local args = data.arguments(f.arguments == nil and "{}" or f.arguments)
        local call = { arguments = args, raw = f.arguments }
        if c.id then names[c.id] = f.name end
        lines[#lines + 1] = ("%sassistant calls %s %s"):format(tag, tostring(f.name), args_text(call))
      end
    elseif msg.role == "tool" then
      lines[#lines + 1] = ("%stool %s: %s"):format(tag, names[msg.tool_call_id] or "(unknown)", text)
    else
      lines[#lines + 1] = ("%s%s: %s"):format(tag, msg.role, text)
    end
  end
  return table.concat(lines, "\n")
end

-- The calls as a JSON list [{"name": ..., "arguments": {...}}] for a judge.
function M.calls(calls)
  local out = {}
  for i, c in ipairs(calls) do
    local args = c.arguments and encoded(c.arguments) or json.encode(tostring(c.raw) .. " (not JSON)")
    out[i] = ('{"name": %s, "arguments": %s}'):format(json.encode(c.name), args)
  end
  return "[" .. table.concat(out, ", ") .. "]"
end

-- The text of the user's messages, joined: what the user asked for.
function M.user_input(messages)
  local out = {}
  for _, msg in ipairs(messages) do
    if msg.role == "user" then out[#out + 1] = data.text(msg.content) end
  end
  return table.concat(out, "\n")
end

return M
