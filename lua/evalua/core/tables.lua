-- Small table helpers the library shares.
local M = {}

-- The keys of t in a stable order (by their string form), so that messages
-- and walks over a table do not change from run to run.
function M.sorted_keys(t)
  local keys = {}
  for k in pairs(t or {}) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

return M
