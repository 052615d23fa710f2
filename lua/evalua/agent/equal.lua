-- How the values of tool-call arguments compare, for every agent metric
-- (docs/agents.md, "How values compare"): as JSON values, not as their text.
--   numbers   by value: 1 equals 1.0 (JSON has one number type); "10" is a
--             string and never equals 10
--   booleans  only booleans: true equals neither 1 nor "true"
--   strings   byte for byte: case, spaces and Unicode forms count
--   null      only null (an argument whose value is null is read as absent)
--   objects   the same keys with equal values; key order never counts
--   lists     the same length, equal element by element, in order
-- An empty list and an empty object are one value: JSON decoding gives one
-- empty table for both.
local null = require("cjson.safe").null

local M = {}

local function is_list(t)
  local n = #t
  if n == 0 then return next(t) == nil end
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end
M.is_list = is_list

local function equal(a, b)
  if a == b then return true end -- numbers by value, strings, booleans, null, the same table
  if type(a) ~= "table" or type(b) ~= "table" or a == null or b == null then return false end
  local la, lb = is_list(a), is_list(b)
  if la ~= lb then return false end
  if la then
    if #a ~= #b then return false end
    for i = 1, #a do
      if not equal(a[i], b[i]) then return false end
    end
    return true
  end
  for k, v in pairs(a) do
    if b[k] == nil or not equal(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end
M.equal = equal

local function is_object(v) return type(v) == "table" and v ~= null and (next(v) == nil or not is_list(v)) end
M.is_object = is_object

-- subset(a, b): every key of object a is in b with an equal value.
function M.subset(a, b)
  if not (is_object(a) and is_object(b)) then return equal(a, b) end
  for k, v in pairs(a) do
    if b[k] == nil or not equal(v, b[k]) then return false end
  end
  return true
end

-- The value at a dotted key path ("time.start") of an object, or nil.
function M.at_path(t, path)
  local cur = t
  for part in path:gmatch("[^.]+") do
    if not is_object(cur) then return nil end
    cur = cur[part]
    if cur == nil then return nil end
  end
  return cur
end

return M
