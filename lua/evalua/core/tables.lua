-- Small table helpers the library shares.
local cjson = require "cjson"

local M = {}

-- Removes the JSON nulls (cjson.null) that are object members, in place and
-- at every depth, so that an absent key and a null one mean the same
-- ("missing" has one meaning in evalua's rows); returns v. Nulls in lists
-- stay, since removing them would shift the items.
local function strip_nulls(v)
  if type(v) ~= "table" then return v end
  for k, x in pairs(v) do
    if x == cjson.null then
      if type(k) == "string" then v[k] = nil end
    else
      strip_nulls(x)
    end
  end
  return v
end
M.strip_nulls = strip_nulls

-- The keys of t in a stable order (by their string form), so that messages
-- and walks over a table do not change from run to run.
function M.sorted_keys(t)
  local keys = {}
  for k in pairs(t or {}) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

return M
