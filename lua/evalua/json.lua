-- JSON for files people diff: object keys sorted, numbers that round-trip
-- exactly (cjson 2.1 keeps only 14 digits), optional indentation.
-- Decoding is cjson's (json.decode = cjson.safe.decode: nil, message on error).
local cjson = require "cjson.safe"
local C = require "evalua._json"

local M = { decode = cjson.decode, null = cjson.null }

-- setmetatable(t, json.array) marks an empty table as [] rather than {}.
M.array = { __jsontype = "array" }

local function number(x)
  if x ~= x or x == math.huge or x == -math.huge then
    error("json: cannot encode NaN or infinity", 0)
  end
  if math.type(x) == "integer" then return tostring(x) end
  if x == math.floor(x) and math.abs(x) < 2^53 then return ("%d"):format(x) end
  local s = ("%.15g"):format(x)
  if tonumber(s) ~= x then s = ("%.17g"):format(x) end
  return s
end

-- The shortest text that reads back as exactly x.
M.number = number

-- encode(value [, {indent = "  ", depth = 0}]) -> string; depth: the
-- nesting level the value sits at, for text placed inside a larger document.
-- Arrays are tables marked with json.array or whose keys are exactly
-- 1..#t; object keys are sorted; the encoder is C (host/l_json.c).
function M.encode(v, opts)
  return C.encode(v, opts and opts.indent, opts and opts.depth or 0)
end

return M
