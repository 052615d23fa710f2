-- JSON for the judge: a canonical encoder (sorted keys, so one request has
-- one text and one cache key) and a lenient decoder for model answers
-- (code fences, leading prose, trailing commas). NaN and infinities are
-- refused both ways: a judge answer never smuggles NaN into a score.
local cjson = require("cjson.safe").new()
local number = require("evalua.core.json").number
cjson.decode_invalid_numbers(false)
cjson.encode_invalid_numbers(false)
cjson.decode_max_depth(100)

local J = { null = cjson.null }

local encode_string = cjson.encode
local concat, sort, mtype = table.concat, table.sort, math.type

local function number_text(v)
  if v ~= v or v == math.huge or v == -math.huge then
    error("cannot encode NaN or infinity in a judge request", 0)
  end
  return number(v)
end

local function is_array(t)
  local n = #t
  if n == 0 then
    local mt = getmetatable(t) -- {__jsontype = "object"} keeps an empty table an object ({})
    return next(t) == nil and not (mt and mt.__jsontype == "object")
  end
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

-- The closing quote of the JSON string whose opening quote is at j, past
-- escapes; nil when it never closes.
local function string_end(text, j)
  repeat
    j = text:find('[\\"]', j + 1)
    if not j then return nil end
    local escaped = text:byte(j) == 92
    if escaped then j = j + 1 end
  until not escaped
  return j
end

-- The end of the JSON object or array opening at i (a { or [), skipping
-- strings; nil when it never closes. Jumps from one bracket or quote to the
-- next, so a long answer costs a few pieces, not a step per byte.
local function closing(text, i)
  local depth, j = 0, i
  while j do
    j = text:find('[{}%[%]"]', j)
    if not j then return nil end
    local c = text:byte(j)
    if c == 34 then
      j = string_end(text, j)
    elseif c == 123 or c == 91 then
      depth = depth + 1
    else
      depth = depth - 1
      if depth == 0 then return j end
    end
    j = j and j + 1
  end
end

local function decoded(s)
  local v, e = cjson.decode(s)
  if type(v) ~= "table" then
    local plain = drop_trailing_commas(s)
    if plain ~= s then v = cjson.decode(plain) end
  end
  if type(v) == "table" then return v end
  return nil, e
end

-- Where the answer starts: after the last </think> (reasoning models such
-- as DeepSeek R1 and Qwen3 write their thinking into the content).
local function answer_start(text)
  local from, at = 1, 1
  while true do
    local _, e = text:find("</think>", at, true)
    if not e then return from end
    from, at = e + 1, e + 1
  end
end

-- find(text) -> value, first, last: the JSON object or array in a model's
-- answer and where it is (byte positions in text), or nil and a message.
-- The answer is what follows a <think>...</think> block. Tried in order:
-- the answer as it is, the inside of a ``` fence, then each object or
-- array that closes, left to right in the prose around it; one that does
-- not parse ("{braces}" in a sentence) is passed over whole, so nothing
-- nested in it is taken for the answer, and one that never closes ends
-- the search. Each also without commas before a closing bracket. NaN and
-- infinities (1e400 included) are refused.
function J.find(text)
  if type(text) ~= "string" then return nil, "the answer is not text" end
  local from, err = answer_start(text), nil
  -- value, i, j when text[i..j] is the answer; false, why for a number
  -- that is not finite; nil when it does not parse
  local function try(i, j)
    local v, why = decoded((i == 1 and j == #text) and text or text:sub(i, j))
    if v == nil then
      err = err or why
      return nil
    end
    if not finite(v, 0) then return false, "the answer holds a number that is not finite" end
    return v, i, j
  end
  local s, e = text:find("%S", from), #text
  while e > 0 and text:find("^%s", e) do e = e - 1 end
  if s then
    local v, i, j = try(s, e)
    if v ~= nil then return v or nil, i, j end
  end
  local _, fence = text:find("```[%w_-]*%s*\n", from)
  local close = fence and text:find("\n?%s*```", fence + 1)
  if close then
    local v, i, j = try(fence + 1, close - 1)
    if v ~= nil then return v or nil, i, j end
  end
  local at, seen = from, false
  while true do
    local i = text:find("[{%[]", at)
    local j = i and closing(text, i)
    seen = seen or i ~= nil
    if not j then break end
    local v, first, last = try(i, j)
    if v ~= nil then return v or nil, first, last end
    at = j + 1
  end
  if not seen then return nil, "no JSON object in the answer" end
  return nil, "invalid JSON in the answer: " .. tostring(err)
end

-- lenient(text) -> the decoded table, or nil and a message (J.find without
-- the positions).
function J.lenient(text)
  local v, why = J.find(text)
  if v == nil then return nil, why end
  return v
end

-- The position in text of the value of key in the JSON object opening at
-- i: the value's first byte (past a string's opening quote), or nil. Only
-- the object's own keys count, not those of objects nested in it.
function J.value_at(text, i, key)
  local depth, j = 0, i
  while true do
    j = text:find('[{}%[%]"]', j)
    if not j then return nil end
    local c = text:byte(j)
    if c == 34 then
      local k = string_end(text, j)
      if not k then return nil end
      local _, colon = text:find("^%s*:%s*", k + 1)
      if depth == 1 and colon and cjson.decode(text:sub(j, k)) == key then
        return colon + 1 + (text:byte(colon + 1) == 34 and 1 or 0)
      end
      j = k
    elseif c == 123 or c == 91 then
      depth = depth + 1
    else
      depth = depth - 1
      if depth == 0 then return nil end
    end
    j = j + 1
  end
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
