-- Shapes of the files evalua reads back (history records, part files, JSON
-- reports): a damaged or hand-edited file gets "field 'a.b[3]': expected a
-- finite number, got a string" instead of a Lua error deep in the code that reads it.
--
--   local shape = require "evalua.core.shape"
--   local RUN = shape.object { run_id = "string", label = "string?", systems = shape.list("string") }
--   local err = shape.check(RUN, rec)          -- nil, or the message
--
-- A shape is a type name ("string", "number" (finite), "integer", "boolean",
-- "table", "null", "any"), alternatives ("number|null"), with a trailing
-- "?" when the field may be absent; a list, map or object of shapes;
-- shape.optional(s) (absent, or s); or a function(v) that returns nil when
-- v fits, else what was expected. JSON's null fits only where "null" says so.
local json = require "evalua.core.json"

local M = {}

local function finite(v) return v == v and v - v == 0 end

local LEAF = {
  string = { test = function(v) return type(v) == "string" end, want = "a string" },
  number = { test = function(v) return type(v) == "number" and finite(v) end, want = "a finite number" },
  integer = { test = function(v)
    return math.type(v) == "integer" or (type(v) == "number" and finite(v) and v == math.floor(v))
  end, want = "an integer" },
  boolean = { test = function(v) return type(v) == "boolean" end, want = "true or false" },
  table = { test = function(v) return type(v) == "table" end, want = "an object or a list" },
  any = { test = function(v) return v ~= nil end, want = "a value" },
  null = { test = function(v) return v == json.null end, want = "null" },
}

local function is_list(v)
  local n = #v
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local function typename(v)
  if v == json.null then return "null" end
  if type(v) == "table" then return #v > 0 and is_list(v) and "a list" or "an object" end
  if type(v) == "number" then return finite(v) and "a number" or tostring(v) end
  if type(v) == "boolean" then return tostring(v) end
  return "a " .. type(v)
end

-- Shapes in the form check walks: {test=, want=} leaves, {list=}, {map=},
-- {fields=, names=} and {optional=} nodes.
local function compile(s)
  if type(s) == "string" then
    local names, opt = s:match("^([%a|]+)(%??)$")
    local tests, wants = {}, {}
    for name in (names or ""):gmatch("[^|]+") do
      local leaf = assert(LEAF[name], "shape: unknown type '" .. s .. "'")
      tests[#tests + 1], wants[#wants + 1] = leaf.test, leaf.want
    end
    assert(#tests > 0, "shape: unknown type '" .. s .. "'")
    local want = table.concat(wants, " or ")
    if #tests == 1 and opt == "" then return { test = tests[1], want = want } end
    return { test = function(v)
      if v == nil then return opt == "?" end
      for i = 1, #tests do
        if tests[i](v) then return true end
      end
      return false
    end, want = want }
  elseif type(s) == "function" then
    return { test = function(v) return s(v) == nil end, explain = s }
  end
  return s
end

function M.list(of) return { list = compile(of) } end
function M.map(of) return { map = compile(of) } end
function M.optional(of) return { optional = compile(of) } end -- absent, or of

function M.object(fields)
  local names, compiled = {}, {}
  for name, s in pairs(fields) do names[#names + 1], compiled[name] = name, compile(s) end
  table.sort(names)
  return { fields = compiled, names = names }
end

-- Whether v fits s, without building a path for every value: a large file
-- that fits costs one walk; only a misfit is walked again for the message.
local function fits(s, v)
  if s.test then return s.test(v) end
  if s.optional then return v == nil or fits(s.optional, v) end
  if type(v) ~= "table" then return false end
  if s.list then
    if not is_list(v) then return false end
    local of = s.list
    for i = 1, #v do
      if not fits(of, v[i]) then return false end
    end
    return true
  end
  if #v > 0 then return false end
  if s.map then
    local of = s.map
    for _, x in pairs(v) do
      if not fits(of, x) then return false end
    end
    return true
  end
  local fields = s.fields
  for _, name in ipairs(s.names) do
    if not fits(fields[name], v[name]) then return false end
  end
  return true
end

local function fail(path, want, v, quote)
  if v == nil then return ("field '%s': missing (expected %s)"):format(path, want) end
  local got = quote and type(v) == "string" and #v <= 60 and ("%q"):format(v) or typename(v)
  return ("field '%s': expected %s, got %s"):format(path, want, got)
end

local sorted_keys = require("evalua.core.tables").sorted_keys

-- The message for the first misfit, in key order, so it is stable.
local function explain(s, v, path)
  if fits(s, v) then return nil end
  if s.test then return fail(path, s.explain and s.explain(v) or s.want, v, s.explain ~= nil) end
  if s.optional then return explain(s.optional, v, path) end
  if type(v) ~= "table" or (s.list and not is_list(v)) then return fail(path, s.list and "a list" or "an object", v) end
  if s.list then
    for i = 1, #v do
      local err = explain(s.list, v[i], ("%s[%d]"):format(path, i))
      if err then return err end
    end
  end
  if #v > 0 then return fail(path, "an object", v) end
  if s.map then
    for _, k in ipairs(sorted_keys(v)) do
      local err = explain(s.map, v[k], path .. "." .. tostring(k))
      if err then return err end
    end
  end
  for _, name in ipairs(s.names) do
    local err = explain(s.fields[name], v[name], path == "" and name or path .. "." .. name)
    if err then return err end
  end
end

-- check(shape, value [, path]) -> nil | "field 'path': expected ..., got ..."
function M.check(s, v, path)
  s = compile(s)
  if fits(s, v) then return nil end
  return explain(s, v, path or "")
end

return M
