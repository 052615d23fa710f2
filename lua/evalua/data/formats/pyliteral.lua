-- Python literals as Python's str() writes lists and dicts into a CSV cell
-- (RAGAS's to_csv does: csv.DictWriter calls str() on a list): strings in
-- single or double quotes with backslash escapes, numbers, True, False,
-- None, lists, tuples and dicts. Only what repr() writes; no expressions.
-- parse(text) -> value | nil, why. None becomes nil inside a dict (an
-- absent key, as JSON's null is in evalua's rows) and json.null in a list.
local M = {}

local ESC = { n = "\n", t = "\t", r = "\r", ["\\"] = "\\", ["'"] = "'", ['"'] = '"', a = "\a", b = "\b",
              f = "\f", v = "\v", ["0"] = "\0" }

local function skip(s, i) return (s:find("[^ \t\r\n]", i)) or #s + 1 end

local parse_value

local function parse_string(s, i)
  local q = s:sub(i, i)
  local out, j = {}, i + 1
  while true do
    local e = s:find("[\\" .. q .. "]", j)
    if not e then return nil, ("unterminated string starting at character %d"):format(i) end
    out[#out + 1] = s:sub(j, e - 1)
    if s:sub(e, e) == q then return table.concat(out), e + 1 end
    local c = s:sub(e + 1, e + 1)
    if c == "u" or c == "x" or c == "U" then
      local len = c == "x" and 2 or c == "u" and 4 or 8
      local hex = s:sub(e + 2, e + 1 + len)
      if #hex ~= len or hex:find("[^%x]") then return nil, ("bad \\%s escape at character %d"):format(c, e) end
      local cp = tonumber(hex, 16)
      if cp > 0x10FFFF then return nil, ("bad \\%s escape at character %d"):format(c, e) end
      out[#out + 1] = utf8.char(cp)
      j = e + 2 + len
    elseif ESC[c] then
      out[#out + 1] = ESC[c]
      j = e + 2
    else
      out[#out + 1] = "\\" .. c -- Python keeps an unknown escape as written
      j = e + 2
    end
  end
end

local MAX_DEPTH = 200 -- deeper is no cell a tool writes, and recursion has a bound

local function parse_items(s, i, close, null, depth)
  local list = {}
  i = skip(s, i)
  if s:sub(i, i) == close then return list, i + 1 end
  while true do
    local v, j = parse_value(s, i, null, depth)
    if type(j) ~= "number" then return nil, j end
    list[#list + 1] = v == nil and null or v
    i = skip(s, j)
    local c = s:sub(i, i)
    if c == close then return list, i + 1 end
    if c ~= "," then return nil, ("expected ',' or '%s' at character %d"):format(close, i) end
    i = skip(s, i + 1)
    if s:sub(i, i) == close then return list, i + 1 end -- a trailing comma
  end
end

local function parse_dict(s, i, null, depth)
  local d = {}
  i = skip(s, i)
  if s:sub(i, i) == "}" then return d, i + 1 end
  while true do
    local k, j = parse_value(s, i, null, depth)
    if type(j) ~= "number" then return nil, j end
    if type(k) ~= "string" and type(k) ~= "number" then return nil, ("a dict key at character %d is not a string"):format(i) end
    i = skip(s, j)
    if s:sub(i, i) ~= ":" then return nil, ("expected ':' at character %d"):format(i) end
    local v
    v, j = parse_value(s, skip(s, i + 1), null, depth)
    if type(j) ~= "number" then return nil, j end
    d[k] = v
    i = skip(s, j)
    local c = s:sub(i, i)
    if c == "}" then return d, i + 1 end
    if c ~= "," then return nil, ("expected ',' or '}' at character %d"):format(i) end
    i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return d, i + 1 end
  end
end

function parse_value(s, i, null, depth)
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == "'" or c == '"' then return parse_string(s, i) end
  if (c == "[" or c == "(" or c == "{") and depth >= MAX_DEPTH then
    return nil, ("nested more than %d deep at character %d"):format(MAX_DEPTH, i)
  end
  if c == "[" then return parse_items(s, i + 1, "]", null, depth + 1) end
  if c == "(" then return parse_items(s, i + 1, ")", null, depth + 1) end
  if c == "{" then return parse_dict(s, i + 1, null, depth + 1) end
  for word, v in pairs { True = true, False = false } do
    if s:sub(i, i + #word - 1) == word then return v, i + #word end
  end
  if s:sub(i, i + 3) == "None" then return nil, i + 4 end
  local num = s:match("^[-+]?%d[%d_]*%.?%d*[eE]?[-+]?%d*", i) or s:match("^[-+]?%.%d+[eE]?[-+]?%d*", i)
  if num then
    local v = tonumber((num:gsub("_", "")))
    if v then return v, i + #num end
  end
  return nil, ("unexpected %s at character %d"):format(c == "" and "end" or ("'" .. c .. "'"), i)
end

-- parse(text, null) -> value | nil, why; the whole text is one literal.
function M.parse(s, null)
  local v, j = parse_value(s, 1, null, 0)
  if type(j) ~= "number" then return nil, j end
  j = skip(s, j)
  if j <= #s then return nil, ("unexpected text after the value at character %d"):format(j) end
  if v == nil then return null end
  return v
end

return M
