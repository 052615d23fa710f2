-- The shape of the deterministic agent metrics. Each is a metric table
-- ev.evaluate runs on rows, and callable two ways:
--   ev.agent.tool_correctness(actual, reference [, options]) -> {score=, reason=, ...}
--   ev.agent.tool_correctness{options}                        -> a configured metric
-- (one argument: options; two or three: a score), with the options under
-- the names the peer uses. A metric checks every row's agent fields before
-- any metric runs (agent/data.lua), so bad input stops the run up front.
local data = require "evalua.agent.data"

local M = {}

local Metric = {}
Metric.__index = Metric
Metric.__tostring = function(self) return "metric " .. self.name end

local function parse(def, o, level)
  local own = {}
  for k, v in pairs(o or {}) do
    if k ~= "name" and k ~= "description" then own[k] = v end
  end
  local ok, parsed = pcall(def.options, own)
  if not ok then error(parsed, level + 1) end
  return parsed
end

local function make(def, o)
  local parsed = parse(def, o, 3)
  if o.name ~= nil and (type(o.name) ~= "string" or o.name == "") then error(def.name .. ": name must be a string", 3) end
  local m = setmetatable({ name = o.name or def.name, description = o.description or def.description,
                           higher_is_better = true, options = o, def = def, parsed = parsed,
                           threshold = parsed.threshold, check = data.check }, Metric)
  m.fn = function(row)
    local p, why = data.row(row)
    if not p then return { unmeasured = true, reason = why } end
    local actual, reference = def.reads(p)
    if actual == nil then return { unmeasured = true, reason = reference } end
    return def.compute(actual, reference, parsed)
  end
  return m
end

Metric.__call = function(self, a, b, c)
  local def = self.def
  if b == nil then
    if type(a) ~= "table" then error(("%s{...}: expected a table of options"):format(self.name), 2) end
    local merged = {}
    for k, v in pairs(self.options) do merged[k] = v end
    for k, v in pairs(a) do merged[k] = v end
    return make(def, merged)
  end
  if c ~= nil and type(c) ~= "table" then error(def.name .. ": options must be a table", 2) end
  local parsed = c and parse(def, c, 2) or self.parsed
  local actual, reference = def.given(a, b)
  if actual == nil then error(def.name .. ": " .. reference, 2) end
  return def.compute(actual, reference, parsed)
end

-- define{name=, description=, options = fn(o) -> parsed (raises), compute =
-- fn(actual, reference, parsed) -> result, reads = fn(parsed row) ->
-- actual, reference | nil, why, given = fn(a, b) -> actual, reference | nil, why}
function M.define(def)
  return make(def, {})
end

M.Metric = Metric

-- Readers shared by the metrics over calls.
function M.row_calls(p)
  if not p.messages then return nil, "the row has no messages (the calls made are read from them)" end
  if not p.expected then return nil, "the row has no expected_tool_calls" end
  return p.messages.calls, p.expected
end

function M.given_calls(a, b)
  local actual, why = data.calls(a, "actual")
  if not actual then return nil, why end
  local reference
  reference, why = data.calls(b, "reference")
  if not reference then return nil, why end
  return actual, reference
end

return M
