-- A strict JSON reader for outputs (RFC 8259, as JavaScript's JSON.parse
-- reads it): no NaN, Infinity, hex numbers, leading zeros, trailing commas
-- or comments, which cjson accepts. Arrays and objects come back marked
-- (json.array, M.object metatables), so [] and {} stay apart for a JSON
-- Schema; numbers without fraction or exponent that fit are integers;
-- null is json.null. Nesting is bounded at 512 levels.
local json = require "evalua.core.json"

local M = { object = { __jsontype = "object" }, array = json.array, null = json.null }

local ESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
local MAX_DEPTH = 512

local function fail(pos, what) error({ json_error = ("%s at character %d"):format(what, pos) }, 0) end

local function skip(s, i) return s:find("[^ \t\r\n]", i) or #s + 1 end

local value

local function str(s, i)
  local out, k = {}, i + 1
  while true do
    local j = s:find('["\\%c]', k)
    if not j then fail(i, "unterminated string") end
    out[#out + 1] = s:sub(k, j - 1)
    local ch = s:sub(j, j)
    if ch == '"' then return table.concat(out), j + 1 end
    if ch ~= "\\" then fail(j, "control character in a string") end
    local e = s:sub(j + 1, j + 1)
    if ESC[e] then out[#out + 1], k = ESC[e], j + 2
    elseif e == "u" then
      local hex = s:match("^%x%x%x%x", j + 2)
      if not hex then fail(j, "bad \\u escape") end
      local cp, nk = tonumber(hex, 16), j + 6
      if cp >= 0xD800 and cp <= 0xDBFF then
        local lo = s:match("^\\u(%x%x%x%x)", nk)
        lo = lo and tonumber(lo, 16)
        if lo and lo >= 0xDC00 and lo <= 0xDFFF then cp, nk = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00), nk + 6
        else cp = 0xFFFD end
      elseif cp >= 0xDC00 and cp <= 0xDFFF then cp = 0xFFFD end
      out[#out + 1], k = utf8.char(cp), nk
    else fail(j, "bad escape") end
  end
end

local function num(s, i)
  local j = i
  if s:sub(j, j) == "-" then j = j + 1 end
  local int = s:match("^%d+", j)
  if not int or (#int > 1 and int:sub(1, 1) == "0") then fail(i, "bad number") end
  j = j + #int
  local frac = s:match("^%.%d+", j)
  if s:sub(j, j) == "." and not frac then fail(i, "bad number") end
  j = j + (frac and #frac or 0)
  local exp = s:match("^[eE][-+]?%d+", j)
  if s:sub(j, j):find("[eE]") and not exp then fail(i, "bad number") end
  j = j + (exp and #exp or 0)
  local text = s:sub(i, j - 1)
  local v = tonumber(text)
  if frac or exp or math.type(v) ~= "integer" then v = v + 0.0 end
  if v ~= v then fail(i, "bad number") end -- 1e400 is JSON and reads as infinity, as in JavaScript
  return v, j
end

local function list(s, i, depth)
  local out, n = setmetatable({}, M.array), 0
  i = skip(s, i + 1)
  if s:sub(i, i) == "]" then return out, i + 1 end
  while true do
    local v
    v, i = value(s, i, depth)
    n = n + 1
    out[n] = v
    i = skip(s, i)
    local ch = s:sub(i, i)
    if ch == "]" then return out, i + 1 end
    if ch ~= "," then fail(i, "expected , or ]") end
    i = skip(s, i + 1)
  end
end

local function object(s, i, depth)
  local out = setmetatable({}, M.object)
  i = skip(s, i + 1)
  if s:sub(i, i) == "}" then return out, i + 1 end
  while true do
    if s:sub(i, i) ~= '"' then fail(i, "expected a key") end
    local k
    k, i = str(s, i)
    i = skip(s, i)
    if s:sub(i, i) ~= ":" then fail(i, "expected :") end
    local v
    v, i = value(s, skip(s, i + 1), depth)
    out[k] = v
    i = skip(s, i)
    local ch = s:sub(i, i)
    if ch == "}" then return out, i + 1 end
    if ch ~= "," then fail(i, "expected , or }") end
    i = skip(s, i + 1)
  end
end

function value(s, i, depth)
  if depth > MAX_DEPTH then fail(i, "nested too deeply") end
  local ch = s:sub(i, i)
  if ch == "{" then return object(s, i, depth + 1) end
  if ch == "[" then return list(s, i, depth + 1) end
  if ch == '"' then return str(s, i) end
  if ch == "-" or ch:find("%d") then return num(s, i) end
  if s:sub(i, i + 3) == "true" then return true, i + 4 end
  if s:sub(i, i + 4) == "false" then return false, i + 5 end
  if s:sub(i, i + 3) == "null" then return M.null, i + 4 end
  if ch == "" then fail(i, "unexpected end") end
  fail(i, "unexpected character " .. ("%q"):format(ch))
end

-- decode(text) -> value | nil, why
function M.decode(s)
  if type(s) ~= "string" then return nil, "not text" end
  local ok, v, i = pcall(function()
    local x, j = value(s, skip(s, 1), 0)
    return x, skip(s, j)
  end)
  if not ok then
    if type(v) == "table" and v.json_error then return nil, v.json_error end
    error(v, 0)
  end
  if i <= #s then return nil, ("unexpected text after the value at character %d"):format(i) end
  if v == nil then return nil, "no value" end
  return v
end

-- Whether a table is a JSON array (marked, or a plain Lua sequence).
function M.is_array(v)
  if type(v) ~= "table" or v == M.null then return false end
  local mt = getmetatable(v)
  if mt and mt.__jsontype then return mt.__jsontype == "array" end
  return v[1] ~= nil or next(v) == nil
end

function M.is_object(v)
  if type(v) ~= "table" or v == M.null then return false end
  local mt = getmetatable(v)
  if mt and mt.__jsontype then return mt.__jsontype == "object" end
  return next(v) ~= nil and v[1] == nil
end

-- Equality of JSON values: numbers by value (1 = 1.0), arrays in order,
-- objects by keys; an array never equals an object, even empty.
function M.equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" or a == M.null or b == M.null then return false end
  local aa, ba = M.is_array(a), M.is_array(b)
  if aa ~= ba then return false end
  if aa then
    if #a ~= #b then return false end
    for i = 1, #a do if not M.equal(a[i], b[i]) then return false end end
    return true
  end
  for k, v in pairs(a) do if b[k] == nil or not M.equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

return M
