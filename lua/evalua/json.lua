-- JSON for files people diff: object keys sorted, numbers that round-trip
-- exactly (cjson 2.1 keeps only 14 digits), optional indentation.
-- Decoding is cjson's (json.decode = cjson.safe.decode: nil, message on error).
local cjson = require "cjson.safe"

local M = { decode = cjson.decode, null = cjson.null }

-- setmetatable(t, json.array) marks an empty table as [] rather than {}.
M.array = { __jsontype = "array" }

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
                  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end

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

local function is_array(t)
  local mt = getmetatable(t)
  if mt and mt.__jsontype == "array" then return true end
  local n = #t
  if n == 0 then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

local function encode(v, out, indent, depth)
  local t = type(v)
  if t == "string" then out[#out + 1] = quote(v)
  elseif t == "number" then out[#out + 1] = number(v)
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif v == nil or v == cjson.null then out[#out + 1] = "null"
  elseif t == "table" then
    if depth > 64 then error("json: nesting deeper than 64 (a cycle?)", 0) end
    local nl = indent and ("\n" .. indent:rep(depth + 1)) or ""
    local close = indent and ("\n" .. indent:rep(depth)) or ""
    local sep = indent and ": " or ":"
    if is_array(v) then
      if #v == 0 then out[#out + 1] = "[]" return end
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = nl
        encode(v[i], out, indent, depth + 1)
      end
      out[#out + 1] = close .. "]"
    else
      local keys = {}
      for k in pairs(v) do
        if type(k) ~= "string" and type(k) ~= "number" then
          error("json: cannot encode a key of type " .. type(k), 0)
        end
        keys[#keys + 1] = tostring(k)
      end
      table.sort(keys)
      if #keys == 0 then out[#out + 1] = "{}" return end
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        local val = v[k]
        if val == nil then val = v[tonumber(k)] end
        out[#out + 1] = nl .. quote(k) .. sep
        encode(val, out, indent, depth + 1)
      end
      out[#out + 1] = close .. "}"
    end
  else
    error("json: cannot encode a " .. t, 0)
  end
end

-- encode(value [, {indent = "  ", depth = 0}]) -> string; depth: the
-- nesting level the value sits at, for text placed inside a larger document.
function M.encode(v, opts)
  local out = {}
  encode(v, out, opts and opts.indent, opts and opts.depth or 0)
  return table.concat(out)
end

return M
