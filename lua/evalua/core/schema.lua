-- Row schemas: a field name maps to a type; a trailing "!" makes it required.
-- Types: string, number, integer, boolean, any, id (string or integer),
-- T[] (a list of T), ranking (ids, or {id=, score=} tables), grades (a map
-- id -> number), and alternatives such as "string|string[]".
-- check() returns nil or "field 'retrieved[3].score': expected number, got string".
local cjson = require "cjson.safe"

local M = {}

-- The RAG row format users bring (docs/data.md). Only qid is required; a
-- metric that needs a field marks a row without it as unmeasured.
M.rag = {
  qid = "id!",
  query = "string",
  query_class = "string",
  variant = "string",
  language = "string",
  gold_doc_ids = "id[]",
  graded_relevance = "grades",
  gold_answers = "string|string[]",
  retrieved = "ranking",
  contexts = "string[]",
  answer = "string",
}

function M.merge(base, extra)
  local out = {}
  for k, v in pairs(base) do out[k] = v end
  for k, v in pairs(extra or {}) do out[k] = v end
  return out
end

local function typename(v)
  if v == cjson.null then return "null" end
  if math.type(v) == "integer" then return "integer" end
  return type(v)
end

local function is_list(v)
  if type(v) ~= "table" then return false end
  local n = #v
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local check_value -- forward

local simple = {
  string = function(v) return type(v) == "string" end,
  number = function(v) return type(v) == "number" and v == v end,
  integer = function(v) return math.type(v) == "integer" or (type(v) == "number" and v == math.floor(v)) end,
  boolean = function(v) return type(v) == "boolean" end,
  any = function() return true end,
  id = function(v) return type(v) == "string" or math.type(v) == "integer" end,
}

-- Returns nil when v fits t, else (path suffix, expected, got).
function check_value(t, v, path)
  local alternatives = {}
  for alt in t:gmatch("[^|]+") do alternatives[#alternatives + 1] = alt end
  if #alternatives > 1 then
    for _, alt in ipairs(alternatives) do
      if not check_value(alt, v, path) then return nil end
    end
    return path, t:gsub("|", " or "), typename(v)
  end
  local elem = t:match("^(.-)%[%]$")
  if elem then
    if not is_list(v) then return path, "a list", typename(v) end
    for i, x in ipairs(v) do
      local p, want, got = check_value(elem, x, path .. "[" .. i .. "]")
      if p then return p, want, got end
    end
    return nil
  end
  if t == "ranking" then
    if not is_list(v) then return path, "a list of ids or {id=, score=}", typename(v) end
    for i, x in ipairs(v) do
      local p = path .. "[" .. i .. "]"
      if type(x) == "table" then
        if not simple.id(x.id) then return p .. ".id", "a string id", typename(x.id) end
        if x.score ~= nil and not simple.number(x.score) then return p .. ".score", "number", typename(x.score) end
      elseif not simple.id(x) then
        return p, "an id or {id=, score=}", typename(x)
      end
    end
    return nil
  end
  if t == "grades" then
    if type(v) ~= "table" or (next(v) ~= nil and is_list(v)) then return path, "an object id -> grade", typename(v) end
    for k, g in pairs(v) do
      if not simple.number(g) then return path .. "." .. tostring(k), "number", typename(g) end
    end
    return nil
  end
  local f = simple[t]
  if not f then error("schema: unknown type '" .. t .. "'", 0) end
  if f(v) then return nil end
  return path, t, typename(v)
end

-- check(schema, row) -> nil | message naming the first bad field
function M.check(schema, row)
  local names = {}
  for name in pairs(schema) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local t = schema[name]
    local required = t:sub(-1) == "!"
    if required then t = t:sub(1, -2) end
    local v = row[name]
    if v == nil then
      if required then return ("field '%s': missing (expected %s)"):format(name, t) end
    else
      local path, want, got = check_value(t, v, name)
      if path then return ("field '%s': expected %s, got %s"):format(path, want, got) end
    end
  end
  return nil
end

return M
