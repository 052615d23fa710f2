-- The JSON-schema subset of the is-json, json-schema and
-- is-valid-openai-tools-call assertions: type (object, array, string,
-- number, integer, boolean, null, or a list of them), required, properties,
-- additionalProperties (false or a schema), items, enum, minimum, maximum,
-- minLength, maxLength, minItems, maxItems, and the annotations description,
-- title and default. Other keywords are refused when the schema is read, so
-- a schema never passes by being ignored.
local json = require "evalua.core.json"

local M = {}

local KEYWORDS = { type = true, required = true, properties = true, items = true, enum = true,
                   description = true, title = true, default = true, additionalProperties = true,
                   minimum = true, maximum = true, minLength = true, maxLength = true, minItems = true,
                   maxItems = true }
local BOUNDS = { minimum = "number", maximum = "number", minLength = "count", maxLength = "count",
                 minItems = "count", maxItems = "count" }
local TYPES = { object = true, array = true, string = true, number = true, integer = true, boolean = true,
                null = true }

local function is_array(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  return (mt ~= nil and mt.__jsontype == "array") or v[1] ~= nil or next(v) == nil
end

local function type_of(v)
  if v == json.null then return "null" end
  local t = type(v)
  if t == "number" then return v == math.floor(v) and "integer" or "number" end -- JSON: 3.0 is an integer
  if t == "table" then
    local mt = getmetatable(v)
    if mt and mt.__jsontype == "object" then return "object" end
    if v[1] ~= nil or (mt and mt.__jsontype == "array") then return "array" end
    return next(v) == nil and "array|object" or "object"
  end
  return t
end

local function matches_type(want, v)
  local got = type_of(v)
  if want == got then return true end
  if want == "number" and got == "integer" then return true end
  return got == "array|object" and (want == "array" or want == "object")
end

-- validate(schema, what) -> true | nil, why
function M.validate(s, what)
  if type(s) ~= "table" then return nil, what .. ": expected a schema table" end
  for k in pairs(s) do
    if not KEYWORDS[k] then
      return nil, ("%s: schema keyword '%s' is not supported (type, required, properties, additionalProperties, "
        .. "items, enum, minimum, maximum, minLength, maxLength, minItems, maxItems)"):format(what, tostring(k))
    end
  end
  for _, t in ipairs(type(s.type) == "table" and s.type or { s.type }) do
    if not TYPES[t] then return nil, ("%s.type: unknown type '%s'"):format(what, tostring(t)) end
  end
  if s.required ~= nil and not is_array(s.required) then return nil, what .. ".required: expected a list" end
  if s.enum ~= nil and (not is_array(s.enum) or #s.enum == 0) then return nil, what .. ".enum: expected a list" end
  for k, kind in pairs(BOUNDS) do
    local v = s[k]
    if v ~= nil and (type(v) ~= "number" or v ~= v or math.abs(v) == math.huge
                     or (kind == "count" and (v < 0 or v ~= math.floor(v)))) then
      return nil, ("%s.%s: expected %s"):format(what, k, kind == "count" and "a whole number >= 0" or "a number")
    end
  end
  for name, sub in pairs(s.properties or {}) do
    local ok, why = M.validate(sub, ("%s.properties.%s"):format(what, tostring(name)))
    if not ok then return nil, why end
  end
  local extra = s.additionalProperties
  if extra ~= nil and extra ~= true and extra ~= false then
    local ok, why = M.validate(extra, what .. ".additionalProperties")
    if not ok then return nil, why end
  end
  if s.items ~= nil then return M.validate(s.items, what .. ".items") end
  return true
end

local function equal(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  return json.encode(a) == json.encode(b)
end

-- check(schema, value [, path]) -> nil when value fits, else why
function M.check(s, v, path)
  path = path or "$"
  if s.type ~= nil then
    local ok = false
    for _, t in ipairs(type(s.type) == "table" and s.type or { s.type }) do ok = ok or matches_type(t, v) end
    if not ok then
      return ("%s: expected %s, got %s"):format(path, type(s.type) == "table" and table.concat(s.type, " or ") or s.type,
        (type_of(v):gsub("array|object", "empty list")))
    end
  end
  if s.enum ~= nil then
    local found = false
    for _, e in ipairs(s.enum) do found = found or equal(e, v) end
    if not found then return ("%s: %s is not one of %s"):format(path, json.encode(v), json.encode(s.enum)) end
  end
  if type(v) == "table" then
    for _, k in ipairs(s.required or {}) do
      if v[k] == nil then return ("%s: required key '%s' is missing"):format(path, k) end
    end
    local keys = {}
    for k in pairs(s.properties or {}) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      if v[k] ~= nil then
        local why = M.check(s.properties[k], v[k], path .. "." .. k)
        if why then return why end
      end
    end
    local extra = s.additionalProperties
    if extra ~= nil and extra ~= true and type_of(v) ~= "array" then
      local names = {}
      for k in pairs(v) do
        if not (s.properties and s.properties[k] ~= nil) then names[#names + 1] = tostring(k) end
      end
      table.sort(names)
      for _, k in ipairs(names) do
        if extra == false then return ("%s: key '%s' is not allowed (additionalProperties is false)"):format(path, k) end
        local why = M.check(extra, v[k], path .. "." .. k)
        if why then return why end
      end
    end
    if s.items then
      for i, x in ipairs(v) do
        local why = M.check(s.items, x, ("%s[%d]"):format(path, i - 1))
        if why then return why end
      end
    end
  end
  return M.bounds(s, v, path)
end

-- The numeric and size bounds of s on v: nil, or why v is outside them.
function M.bounds(s, v, path)
  if type(v) == "number" then
    if s.minimum and v < s.minimum then return ("%s: %s is under the minimum %s"):format(path, json.encode(v), json.encode(s.minimum)) end
    if s.maximum and v > s.maximum then return ("%s: %s is over the maximum %s"):format(path, json.encode(v), json.encode(s.maximum)) end
  elseif type(v) == "string" then
    local n = utf8.len(v) or #v
    local unit = n == 1 and "character" or "characters"
    if s.minLength and n < s.minLength then return ("%s: %d %s, fewer than minLength %d"):format(path, n, unit, s.minLength) end
    if s.maxLength and n > s.maxLength then return ("%s: %d %s, more than maxLength %d"):format(path, n, unit, s.maxLength) end
  elseif type(v) == "table" and type_of(v) ~= "object" then
    local n = #v
    local unit = n == 1 and "item" or "items"
    if s.minItems and n < s.minItems then return ("%s: %d %s, fewer than minItems %d"):format(path, n, unit, s.minItems) end
    if s.maxItems and n > s.maxItems then return ("%s: %d %s, more than maxItems %d"):format(path, n, unit, s.maxItems) end
  end
  return nil
end

return M
