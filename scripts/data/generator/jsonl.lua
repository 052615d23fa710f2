-- JSON lines with a fixed key order and UTF-8 text kept as is (cjson would
-- order keys by its hash table and escape "/").
local cjson = require "cjson"

local M = {}

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

function M.string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

-- items encoded with fmt (default: as strings)
function M.list(items, fmt)
  fmt = fmt or M.string
  local parts = {}
  for i, v in ipairs(items) do parts[i] = fmt(v) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- fields: array of { key, already-encoded value }
function M.object(fields)
  local parts = {}
  for i, f in ipairs(fields) do parts[i] = M.string(f[1]) .. ": " .. f[2] end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- Writes one line per entry, checking that each parses as JSON.
function M.write(path, lines)
  local f, err = io.open(path, "w")
  if not f then error("cannot write " .. err, 0) end
  for i, line in ipairs(lines) do
    if not cjson.decode(line) then error(string.format("%s: line %d is not JSON", path, i), 0) end
    f:write(line, "\n")
  end
  f:close()
end

return M
