-- Option tables are checked for unknown keys, so a misspelt option
-- (`treshold`) is an error at the caller's line instead of a silent default.
--
--   local options = require "evalua.core.options"
--   local KNOWN = options.set { "threshold", "name" }
--   options.check(opts, KNOWN, "ev.rag.faithfulness", 2)   -- level as for error()
local M = {}

function M.set(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

-- Levenshtein distance of two short option names.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- suggest(key, names) -> " (did you mean 'name'?)" for a near miss, or "".
function M.suggest(key, names)
  if type(key) == "string" then
    for _, n in ipairs(names) do
      if distance(key, n) <= math.max(1, #n // 4) then return (" (did you mean '%s'?)"):format(n) end
    end
  end
  return ""
end

-- hint(key, names) -> the near miss, or the list of names.
function M.hint(key, names)
  local s = M.suggest(key, names)
  if s ~= "" then return s end
  return (" (options: %s)"):format(table.concat(names, ", "))
end

-- check(opts, known, what, level): raises "what: unknown option 'k' ..." at
-- `level` as seen from the function that calls check.
function M.check(opts, known, what, level)
  if type(opts) ~= "table" then return end
  for k in pairs(opts) do
    if not known[k] then
      local names = {}
      for n in pairs(known) do names[#names + 1] = n end
      table.sort(names)
      error(("%s: unknown option '%s'%s"):format(what, tostring(k), M.hint(k, names)), level + 1)
    end
  end
end

return M
