-- The tools an agent provider offers (docs/agents.md, "Experimenting"):
-- each is {name =, description =, parameters = a JSON schema, run =
-- function(arguments, ctx) -> text | table} (or the OpenAI form {type =
-- "function", ["function"] = {...}, run = ...}); a tool without run is
-- answered from recorded fixtures ({name =, arguments =, output =} rows,
-- a list or a JSONL file), a call matching one by name and equal arguments.
local equal = require "evalua.agent.equal"
local caught = require "evalua.core.caught"
local json = require "evalua.core.json"
local options = require "evalua.core.options"

local M = {}

local TOOL_KEYS = options.set { "name", "description", "parameters", "run", "type", "function" }

local function object_marked(v)
  -- an empty JSON object stays an object on the wire (the judge's encoder
  -- writes an empty table as [])
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = object_marked(x) end
  if next(out) == nil and not getmetatable(v) then return setmetatable(out, { __jsontype = "object" }) end
  return setmetatable(out, getmetatable(v))
end

local function read_fixtures(spec, what)
  if spec == nil then return {} end
  local list = spec
  if type(spec) == "string" then
    list = {}
    local n = 0
    local f, err = io.open(spec, "rb")
    if not f then error(("%s: fixtures: %s"):format(what, err), 0) end
    for line in f:lines() do
      n = n + 1
      if line:find("%S") then
        local v, why = json.decode(line)
        if type(v) ~= "table" then f:close(); error(("%s:%d: not a JSON object: %s"):format(spec, n, tostring(why)), 0) end
        v._line = n
        list[#list + 1] = v
      end
    end
    f:close()
  end
  if type(list) ~= "table" then error(what .. ": fixtures must be a file name or a list of {name =, arguments =, output =}", 0) end
  local out = {}
  for i, fx in ipairs(list) do
    local where = type(spec) == "string" and ("%s:%d"):format(spec, fx._line) or ("%s: fixtures[%d]"):format(what, i)
    if type(fx.name) ~= "string" or fx.name == "" then error(where .. ": field 'name': expected the tool's name", 0) end
    if fx.arguments ~= nil and type(fx.arguments) ~= "table" then
      error(where .. ": field 'arguments': expected an object (the arguments decoded)", 0)
    end
    if fx.output == nil then error(where .. ": field 'output': missing (the tool's answer)", 0) end
    out[#out + 1] = { name = fx.name, arguments = fx.arguments or {}, output = fx.output }
  end
  return out
end

-- set(list, fixtures, what) -> {specs = the OpenAI tools list to send,
-- by_name = {name -> {run =}}, fixtures =, names = "a, b"}
function M.set(list, fixtures, what)
  if type(list) ~= "table" or #list == 0 then error(what .. ": tools must be a non-empty list of tools", 0) end
  local specs, by_name, names = {}, {}, {}
  for i, t in ipairs(list) do
    local w = ("%s: tools[%d]"):format(what, i)
    if type(t) ~= "table" then error(w .. ": expected a tool {name =, parameters =, run =}", 0) end
    for k in pairs(t) do
      if not TOOL_KEYS[k] then error(("%s: unknown key '%s' (name, description, parameters, run)"):format(w, tostring(k)), 0) end
    end
    local f = t["function"] or t
    if type(f.name) ~= "string" or not f.name:match("^[%w_-]+$") then
      error(w .. ": name must be letters, digits, '_' or '-'", 0)
    end
    if by_name[f.name] then error(("%s: a second tool named '%s'"):format(w, f.name), 0) end
    if f.parameters ~= nil and type(f.parameters) ~= "table" then error(w .. ": parameters must be a JSON schema table", 0) end
    if t.run ~= nil and type(t.run) ~= "function" then error(w .. ": run must be a function(arguments, ctx)", 0) end
    specs[i] = { type = "function", ["function"] = { name = f.name, description = f.description,
                                                     parameters = object_marked(f.parameters or { type = "object", properties = {} }) } }
    by_name[f.name] = { run = t.run }
    names[i] = f.name
  end
  local fx = read_fixtures(fixtures, what)
  for _, x in ipairs(fx) do
    local tool = by_name[x.name]
    if not tool then error(("%s: fixtures: '%s' is not one of the tools (%s)"):format(what, x.name, table.concat(names, ", ")), 0) end
    if tool.run then
      error(("%s: fixtures: '%s' has a run function too; a tool is answered by one or the other"):format(what, x.name), 0)
    end
  end
  return { specs = specs, by_name = by_name, fixtures = fx, names = table.concat(names, ", ") }
end

local function as_text(v)
  if type(v) == "string" then return v end
  local ok, s = pcall(json.encode, v)
  if ok then return s end
  return nil, "cannot encode the answer as JSON: " .. tostring(s)
end

-- answer(set, call, ctx) -> content, error | nil: the tool message's text,
-- and what went wrong (also said to the model in the content).
function M.answer(set, call, ctx)
  local tool = set.by_name[call.name]
  if not tool then
    local why = ("no tool named '%s' (the tools: %s)"):format(call.name, set.names)
    return "error: " .. why, why
  end
  if not call.arguments then
    local why = "the arguments are not JSON: " .. tostring(call.why)
    return "error: " .. why, why
  end
  if tool.run then
    local ok, out = pcall(tool.run, call.arguments, ctx)
    if not ok then
      if caught.fatal(out) then error(out, 0) end
      local why = ("tool '%s' raised: %s"):format(call.name, tostring(out))
      return "error: " .. why, why
    end
    local text, why = as_text(out)
    if not text then return "error: " .. why, ("tool '%s': %s"):format(call.name, why) end
    return text
  end
  for _, fx in ipairs(set.fixtures) do
    if fx.name == call.name and equal.equal(fx.arguments, call.arguments) then return (as_text(fx.output)) end
  end
  local why = ("no recorded answer for %s %s"):format(call.name, json.encode(call.arguments))
  return "error: " .. why, why
end

return M
