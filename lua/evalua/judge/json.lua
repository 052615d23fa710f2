-- JSON for the judge: a canonical encoder (sorted keys, so one request has
-- one text and one cache key) and a lenient decoder for model answers
-- (code fences, leading prose, trailing commas). NaN and infinities are
-- refused both ways: a judge answer never smuggles NaN into a score.
local cjson = require("cjson.safe").new()
cjson.decode_invalid_numbers(false)
cjson.encode_invalid_numbers(false)
cjson.decode_max_depth(100)

local J = { null = cjson.null }

local encode_string = cjson.encode
local concat, sort, fmt, mtype = table.concat, table.sort, string.format, math.type

local function number_text(v)
  if v ~= v or v == math.huge or v == -math.huge then
    error("cannot encode NaN or infinity in a judge request", 0)
  end
  if mtype(v) == "integer" then return fmt("%d", v) end
  if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return fmt("%d", math.tointeger(v)) end
  local s = fmt("%.15g", v)
  if tonumber(s) ~= v then s = fmt("%.17g", v) end
  return s
end

local function is_array(t)
  local n = #t
  if n == 0 then return next(t) == nil end
  for k in pairs(t) do
    if mtype(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local encode_value

local function encode_table(t, out, depth)
  if depth > 100 then error("judge request nested too deeply", 0) end
  if is_array(t) then
    out[#out + 1] = "["
    for i = 1, #t do
      if i > 1 then out[#out + 1] = "," end
      encode_value(t[i], out, depth + 1)
    end
    out[#out + 1] = "]"
    return
  end
  local keys = {}
  for k in pairs(t) do
    if type(k) ~= "string" then
      error("judge request tables need string keys (got a " .. type(k) .. " key)", 0)
    end
    keys[#keys + 1] = k
  end
  sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = encode_string(k)
    out[#out + 1] = ":"
    encode_value(t[k], out, depth + 1)
  end
  out[#out + 1] = "}"
end

function encode_value(v, out, depth)
  local t = type(v)
  if t == "string" then
    out[#out + 1] = encode_string(v)
  elseif t == "number" then
    out[#out + 1] = number_text(v)
  elseif t == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif v == nil or v == cjson.null then
    out[#out + 1] = "null"
  elseif t == "table" then
    encode_table(v, out, depth)
  else
    error("cannot encode a " .. t .. " in a judge request", 0)
  end
end

-- Canonical JSON text of v: object keys sorted, numbers in their shortest
-- exact form, integral floats as integers.
function J.encode(v)
  local out = {}
  encode_value(v, out, 0)
  return concat(out)
end

-- Strict decoding (NaN refused); nil, message on failure.
function J.decode(s)
  return cjson.decode(s)
end

-- Removes commas directly before a closing bracket, outside strings. Jumps
-- from one quote, backslash or comma to the next, so a long answer costs a
-- few pieces, not a string per byte.
local function drop_trailing_commas(s)
  if not s:find(",%s*[%]}]") then return s end
  local out, i, in_str = {}, 1, false
  while true do
    local j = s:find(in_str and '[\\"]' or '[",]', i)
    if not j then break end
    local c = s:sub(j, j)
    if c == "\\" then
      out[#out + 1] = s:sub(i, j + 1)
      i = j + 2
    elseif c == '"' then
      out[#out + 1] = s:sub(i, j)
      in_str, i = not in_str, j + 1
    else -- a comma outside a string
      out[#out + 1] = s:sub(i, s:match("^%s*[%]}]", j + 1) and j - 1 or j)
      i = j + 1
    end
  end
  out[#out + 1] = s:sub(i)
  return concat(out)
end

-- True when every number in v is finite: 1e400 decodes to infinity, which
-- must not become a score.
local function finite(v, depth)
  if type(v) == "number" then return v == v and v ~= math.huge and v ~= -math.huge end
  if type(v) ~= "table" or depth > 100 then return true end
  for _, x in pairs(v) do
    if not finite(x, depth + 1) then return false end
  end
  return true
end

-- The JSON object or array in a model's answer: the text itself, the inside
-- of a ``` fence, or the span from the first { (or [) to the last } (or ]),
-- each also tried without trailing commas. Returns the decoded table, or
-- nil and a message. NaN and infinities (1e400 included) are refused.
function J.lenient(text)
  if type(text) ~= "string" then return nil, "the answer is not text" end
  local candidates = { text, text:match("```[%w_-]*%s*\n(.-)\n?%s*```") }
  local first = text:find("[{%[]")
  if first then
    local close = text:sub(first, first) == "{" and "}" or "]"
    local last
    for i = #text, first, -1 do
      if text:byte(i) == close:byte() then last = i; break end
    end
    if last and (first > 1 or last < #text) then candidates[#candidates + 1] = text:sub(first, last) end
  end
  local err
  for _, c in ipairs(candidates) do
    local plain = drop_trailing_commas(c)
    for _, s in ipairs { c, plain ~= c and plain or nil } do
      local v, e = cjson.decode(s)
      if type(v) == "table" then
        if not finite(v, 0) then return nil, "the answer holds a number that is not finite" end
        return v
      end
      err = err or e
    end
  end
  if not first then return nil, "no JSON object in the answer" end
  return nil, "invalid JSON in the answer: " .. tostring(err)
end

-- Removes JSON nulls from the string-keyed fields of t, recursively, so a
-- caller sees nil where the server sent null.
function J.denull(t, depth)
  depth = depth or 0
  if type(t) ~= "table" or depth > 50 then return t end
  for k, v in pairs(t) do
    if v == cjson.null then
      if type(k) == "string" then t[k] = nil end
    elseif type(v) == "table" then
      J.denull(v, depth + 1)
    end
  end
  return t
end

return J
