-- The value and threshold kinds of ev.assertions: each kind checks a value
-- as a user wrote it (in a script, a data row or a promptfoo config) and
-- converts it once into what the check reads, or says why it cannot decide.
-- promptfoo's value forms: a string, a number (read as its text, as
-- JavaScript's String() gives it), a list, "a, b" for the -any/-all types,
-- and file://path (a .json file decoded, any other file as its text).
local json = require "evalua.core.json"
local regex = require "evalua._regex"
local schema = require "evalua.experiment.assertions_schema"
local J = require "evalua.experiment.assertions_json"

local M = { values = {}, thresholds = {} }
local V = M.values

-- At most 60 bytes of s, cut before a character, not inside one.
local function clip(s)
  if #s <= 60 then return s end
  local cut = 57
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xC0 == 0x80 do cut = cut - 1 end
  return s:sub(1, cut) .. "..."
end
M.clip = clip

local function finite(v) return math.type(v) ~= nil and v == v and v ~= math.huge and v ~= -math.huge end
M.finite = finite

-- A number as JavaScript's String() writes it: 5, not 5.0.
local function js_string(v)
  if math.type(v) == "integer" then return tostring(v) end
  if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return ("%d"):format(v) end
  return json.number(v)
end
M.js_string = js_string

function M.show(v)
  if type(v) == "string" then return (("%q"):format(clip(v)):gsub("\\\n", "\\n")) end
  if type(v) == "table" then
    local ok, s = pcall(json.encode, v)
    return ok and s or tostring(v)
  end
  if math.type(v) == "float" and finite(v) then return js_string(v) end
  return tostring(v)
end
local show = M.show

local function is_list(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  if mt and mt.__jsontype == "object" then return false end
  return v[1] ~= nil or next(v) == nil
end
M.is_list = is_list

-- ---- file:// values ---------------------------------------------------------

-- file://path relative to base (the folder of the file that names it, or
-- the working folder): a .json file is decoded, any other is its text.
function M.file_value(v, what, base)
  local path = v:sub(8)
  if path == "" then return nil, what .. ": file:// names no file" end
  if (path:find(":[%w_]+$") and not path:find("^%a:")) or path:find("%.[cm]?js$") or path:find("%.ts$")
     or path:find("%.py$") or path:find("%.rb$") then
    return nil, ("%s: %s: a script that computes the value is promptfoo's form; write a lua assertion"):format(what, v)
  end
  if not path:find("^/") and base and base ~= "" then path = base:gsub("/*$", "/") .. path end
  local f, err = io.open(path, "rb")
  if not f then return nil, ("%s: cannot read %s: %s"):format(what, v, tostring(err)) end
  local text = f:read("a")
  f:close()
  if path:find("%.json$") then
    local decoded, jerr = J.decode(text)
    if decoded == nil then return nil, ("%s: %s is not JSON: %s"):format(what, v, tostring(jerr)) end
    return decoded
  end
  if path:find("%.ya?ml$") then
    local ok, yaml = pcall(require, "evalua.core.yaml")
    if not ok then return nil, ("%s: %s: YAML files are read by the promptfoo runner only"):format(what, v) end
    local decoded, yerr = yaml.decode(text)
    if decoded == nil then return nil, ("%s: %s is not YAML: %s"):format(what, v, tostring(yerr)) end
    return decoded
  end
  return (text:gsub("\r?\n$", ""))
end

-- The value with a file:// string replaced by the file's value.
function M.resolve(v, what, base)
  if type(v) == "string" and v:sub(1, 7) == "file://" then return M.file_value(v, what, base) end
  if is_list(v) then
    local out
    for i, x in ipairs(v) do
      if type(x) == "string" and x:sub(1, 7) == "file://" then
        local got, why = M.file_value(x, ("%s[%d]"):format(what, i), base)
        if got == nil then return nil, why end
        out = out or table.move(v, 1, #v, 1, {})
        out[i] = got
      end
    end
    return out or v
  end
  return v
end

-- ---- strings ----------------------------------------------------------------

local function one_text(v, what, empty_ok)
  if type(v) == "number" and finite(v) then v = js_string(v) end
  if type(v) == "table" then return nil, what .. ": expected one string, not a list" end
  if type(v) ~= "string" then return nil, what .. ": expected a string" end
  if v == "" and not empty_ok then
    return nil, what .. ": an empty string is in every answer, so the check cannot tell answers apart"
  end
  return v
end
M.one_text = one_text

-- One non-empty string or number (starts-with, ends-with).
function V.text(v, what) return one_text(v, what) end

-- One string, possibly empty.
function V.string(v, what) return one_text(v, what, true) end

-- equals: a string or number compares as text; a list or object as JSON
-- with the answer decoded.
function V.equals(v, what)
  if type(v) == "table" then return { json = v } end
  if type(v) == "boolean" then return { text = tostring(v) } end
  local s, why = one_text(v, what, true)
  if not s then return nil, (why:gsub("expected a string$", "expected a string, a number or a JSON value")) end
  return { text = s }
end

local function text_list(list, what)
  if not is_list(list) or #list == 0 then return nil, what .. ": expected a string or a non-empty list of strings" end
  local out = {}
  for i, s in ipairs(list) do
    local ok, why = one_text(s, ("%s[%d]"):format(what, i))
    if not ok then return nil, why end
    out[i] = ok
  end
  return out
end

-- contains, icontains: a string or a number; a list (evalua's own form:
-- every item) also.
function V.texts(v, what)
  if type(v) ~= "table" then
    local s, why = one_text(v, what)
    if not s then return nil, (why:gsub("expected a string$", "expected a string or a list of strings")) end
    return { s }
  end
  return text_list(v, what)
end

-- promptfoo's comma-separated values: fields split at commas, each
-- trimmed of spaces and tabs; a field in double quotes keeps its commas,
-- with "" or \" for a quote and \\ for a backslash inside. Returns the
-- list, or nil and why (an unterminated quote, text after a closing quote).
function M.split_commas(s)
  local out, i, n = {}, 1, #s
  while true do
    i = s:find("[^ \t]", i) or n + 1
    if s:sub(i, i) == '"' then
      local buf, j = {}, i + 1
      while true do
        local ch = s:sub(j, j)
        if ch == "" then return nil, "an unterminated quoted field" end
        if ch == '"' and s:sub(j + 1, j + 1) == '"' then buf[#buf + 1], j = '"', j + 2
        elseif ch == '"' then j = j + 1; break
        elseif ch == "\\" and (s:sub(j + 1, j + 1) == '"' or s:sub(j + 1, j + 1) == "\\") then
          buf[#buf + 1], j = s:sub(j + 1, j + 1), j + 2
        else buf[#buf + 1], j = ch, j + 1 end
      end
      out[#out + 1] = table.concat(buf)
      i = s:find("[^ \t]", j) or n + 1
      if i <= n and s:sub(i, i) ~= "," then return nil, "text after a quoted field where a comma belongs" end
    else
      local j = s:find(",", i, true) or n + 1
      out[#out + 1] = s:sub(i, j - 1):match("^[ \t]*(.-)[ \t]*$")
      i = j
    end
    if i > n then return out end
    i = i + 1
  end
end

-- The -any and -all types: a list, or a string of comma-separated values.
function V.text_set(v, what)
  if type(v) == "string" and v ~= "" then
    local list, why = M.split_commas(v)
    if not list then return nil, ("%s: %s (promptfoo's comma-separated values)"):format(what, why) end
    return text_list(list, what)
  end
  if type(v) ~= "table" then
    local s, why = one_text(v, what)
    if not s then return nil, (why:gsub("expected a string$", "expected a list of strings or \"a, b\"")) end
    return { s }
  end
  return text_list(v, what)
end

-- References of the overlap scores (rouge-n, bleu, gleu, meteor): a string
-- or a list of them.
function V.references(v, what)
  if type(v) == "table" then return text_list(v, what) end
  local s, why = one_text(v, what)
  if not s then return nil, why end
  return { s }
end

-- ---- numbers ----------------------------------------------------------------

-- A count bound: a whole number >= 0.
function V.count(v, what)
  if type(v) == "string" and tonumber(v) then v = tonumber(v) end
  if math.type(v) == nil then return nil, what .. ": expected a number" end
  if not finite(v) then return nil, what .. ": expected a finite number" end
  if v < 0 then return nil, what .. ": expected a number >= 0, got " .. show(v) end
  if v ~= math.floor(v) then return nil, what .. ": expected a whole number, got " .. show(v) end
  return math.tointeger(v) or v
end

-- word-count and character-count: an exact count or {min =, max =}.
function V.count_range(v, what)
  if type(v) ~= "table" then
    local n, why = V.count(v, what)
    if n == nil then return nil, (why:gsub("expected a number$", "expected a number or {min =, max =}")) end
    return { min = n, max = n }
  end
  if is_list(v) then return nil, what .. ": expected a number or {min =, max =}, not a list" end
  for k in pairs(v) do
    if k ~= "min" and k ~= "max" then return nil, ("%s.%s: not a key here (min, max)"):format(what, tostring(k)) end
  end
  if v.min == nil and v.max == nil then return nil, what .. ": give min, max or both" end
  local out = {}
  for _, k in ipairs { "min", "max" } do
    if v[k] ~= nil then
      local n, why = V.count(v[k], what .. "." .. k)
      if n == nil then return nil, why end
      out[k] = n
    end
  end
  if out.min and out.max and out.min > out.max then
    return nil, ("%s: min %s is above max %s"):format(what, show(out.min), show(out.max))
  end
  return out
end

-- ---- patterns and schemas ---------------------------------------------------

-- A PCRE2 pattern, compiled once.
function V.regex(v, what)
  local s, why = one_text(v, what)
  if not s then return nil, why end
  local re, err = regex.compile(s)
  if not re then
    if err:find("\\u", 1, true) then err = err .. " (write \\x{HHHH} for a code point)" end
    return nil, ("%s: bad regular expression: %s"):format(what, err)
  end
  return { re = re, source = s }
end

-- A Lua pattern (string.find), checked by a trial find.
function V.lua_pattern(v, what)
  local s, why = one_text(v, what)
  if not s then return nil, why end
  local ok, err = pcall(string.find, "", s)
  if not ok then return nil, what .. ": bad Lua pattern: " .. tostring(err):gsub("^.-: ", "") end
  return s
end

-- A JSON Schema (a table, or its JSON text as promptfoo allows).
function V.schema(v, what)
  if type(v) == "string" then
    local decoded = J.decode(v)
    if decoded == nil then return nil, what .. ": expected a schema (an object, or its JSON text)" end
    v = decoded
  end
  local ok, why = schema.validate(v, what)
  if not ok then return nil, why end
  return v
end

-- ---- thresholds -------------------------------------------------------------

M.thresholds = {
  share = { what = "a number from 0 to 1", ok = function(v) return finite(v) and v >= 0 and v <= 1 end },
  ms = { what = "a number of milliseconds >= 0", ok = function(v) return finite(v) and v >= 0 end },
  usd = { what = "an amount in USD >= 0", ok = function(v) return finite(v) and v >= 0 end },
  distance = { what = "an edit distance >= 0", ok = function(v) return finite(v) and v >= 0 end },
  positive = { what = "a number > 0", ok = function(v) return finite(v) and v > 0 end },
  score = { what = "a finite number", ok = finite },
}

return M
