-- An agent row's trajectory for the item page: each step (message), its
-- tool calls with their arguments and the tool's answer, and where it left
-- the reference, marked by the rule of the HTML report's trajectory view
-- (evalua.agent.view.compare: calls the expected calls do not hold,
-- arguments that differ, expected calls never made, failed calls).
local data = require "evalua.agent.data"
local agent_view = require "evalua.agent.view"

local M = {}

-- of(row) -> {steps, missing, score, stop_reason}, or nil when the row has
-- no messages, or {error = why} when they do not parse.
function M.of(row)
  if type(row) ~= "table" or row.messages == nil then return nil end
  local p, why = data.row(row)
  if not p then return { error = why } end
  if not p.messages then return nil end
  local marks, missing, score = agent_view.compare(p.messages.calls, p.expected)
  local at, names = {}, {}
  for _, c in ipairs(p.messages.calls) do
    at[c.message] = at[c.message] or {}
    table.insert(at[c.message], c)
  end
  local steps = {}
  for m, msg in ipairs(p.messages.messages) do
    local calls = {}
    for _, c in ipairs(at[m] or {}) do
      names[c.id or ""] = c.name
      local mark = marks[c.position]
      local err = c.id and p.errors[c.id]
      calls[#calls + 1] = { name = c.name, arguments = c.arguments, raw = c.arguments == nil and tostring(c.raw) or nil,
                            mark = err and "left" or mark and mark.cls or nil,
                            why = mark and mark.text or nil, error = err }
    end
    steps[m] = { n = m, role = msg.role, text = data.text(msg.content), calls = setmetatable(calls, require("evalua.core.json").array),
                 tool = msg.role == "tool" and (names[msg.tool_call_id] or msg.tool_call_id) or nil }
  end
  local miss = {}
  for i, e in ipairs(missing) do miss[i] = { name = e.name, arguments = e.arguments } end
  local json = require "evalua.core.json"
  return { steps = setmetatable(steps, json.array), missing = setmetatable(miss, json.array), score = score,
           expected = p.expected ~= nil, stop_reason = row.stop_reason }
end

return M
