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
  return C.number(x)
end

-- The shortest text that reads back as exactly x: the C encoder's own
-- formatter (host/bindings/l_json.c), the one number formatter of evalua.
M.number = number

-- encode(value [, {indent = "  ", depth = 0, replaced = false}]) -> string
-- [, n]; depth: the nesting level the value sits at, for text placed inside
-- a larger document. Arrays are tables marked with json.array or whose keys
-- are exactly 1..#t; object keys are sorted; the encoder is C
-- (host/bindings/l_json.c). Text that is not valid UTF-8 (a judge's answer, a label
-- in another encoding) is written with U+FFFD for each invalid sequence;
-- with replaced = true their number n is returned too.
function M.encode(v, opts)
  local text, n = C.encode(v, opts and opts.indent, opts and opts.depth or 0)
  if opts and opts.replaced then return text, n end
  return text
end

-- utf8(s) -> s with U+FFFD for each invalid UTF-8 sequence (s itself when
-- valid), and their number: the same rule for text that is not JSON.
M.utf8 = C.utf8

-- A file written with n replacements says so on stderr, once, with n.
function M.say_replaced(path, n)
  if n > 0 then
    io.stderr:write(("evalua: warning: %s: %d invalid UTF-8 sequence%s (from the data, a judge's answer or a label) "
      .. "written as U+FFFD\n"):format(path, n, n == 1 and "" or "s"))
  end
end

return M
