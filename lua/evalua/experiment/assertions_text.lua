-- The text types of ev.assertions: promptfoo's equals (JSON-aware),
-- contains, icontains, contains-any/-all, icontains-any/-all, starts-with,
-- ends-with, regex (PCRE2), is-json and contains-json (with a JSON Schema),
-- word-count and character-count; and evalua's own lua-pattern,
-- json-schema, min-length, max-length, min-words and max-words.
-- docs/assertions.md says where each differs from promptfoo.
local J = require "evalua.experiment.assertions_json"
local schema = require "evalua.experiment.assertions_schema"
local K = require "evalua.experiment.assertions_values"

local M = {}
local show, clip = K.show, K.clip

-- A regular expression as people write one: /\d+/, unescaped.
local function slashed(s) return "/" .. clip(s):gsub("\n", "\\n") .. "/" end

-- promptfoo splits words at runs of whitespace after trimming.
local function words(s)
  local n = 0
  for _ in s:gmatch("%S+") do n = n + 1 end
  return n
end
M.words = words

-- Characters are code points (JavaScript's Array.from(s).length).
local function chars(s) return utf8.len(s) or #s end

local function has(hay, needle, fold)
  if fold then return hay:lower():find(needle:lower(), 1, true) ~= nil end
  return hay:find(needle, 1, true) ~= nil
end

local function shown(list) return #list == 1 and show(list[1]) or show(list) end

local function any_all(fold, all)
  return function(answer, list)
    local found, missing = {}, {}
    for _, s in ipairs(list) do
      if has(answer, s, fold) then found[#found + 1] = s else missing[#missing + 1] = s end
    end
    if all then
      if #missing == 0 then return true, "contains all of " .. shown(list) end
      return false, "lacks " .. show(missing[1])
    end
    if #found > 0 then return true, "contains " .. show(found[1]) end
    return false, "contains none of " .. shown(list)
  end
end

local function limit(measure, unit, cmp)
  return function(answer, value)
    local n = measure(answer)
    local ok = cmp == "<=" and n <= value or cmp == ">=" and n >= value
    return ok, ("%d %s, %s %s"):format(n, unit, ok and "within" or "outside", cmp .. " " .. tostring(value))
  end
end

local function range(measure, unit)
  return function(answer, r)
    local n = measure(answer)
    local ok = (r.min == nil or n >= r.min) and (r.max == nil or n <= r.max)
    local want = r.min == r.max and ("exactly %d"):format(r.min)
      or r.min and r.max and ("%d to %d"):format(r.min, r.max)
      or r.min and ("at least %d"):format(r.min) or ("at most %d"):format(r.max)
    return ok, ("%d %s, %s %s"):format(n, unit, ok and "within" or "expected", want)
  end
end

-- equals: text byte for byte; a JSON value against the answer decoded.
local function equals(answer, v)
  if v.json ~= nil then
    local decoded = J.decode(answer)
    if decoded == nil then return false, "not JSON, so it cannot equal " .. show(v.json) end
    if J.equal(decoded, v.json) then return true, "equals " .. show(v.json) .. " as JSON" end
    return false, "differs from " .. show(v.json) .. " as JSON"
  end
  if answer == v.text then return true, "equals " .. show(v.text) end
  return false, "differs from " .. show(v.text)
end

local function schema_fit(value, decoded, what)
  if value == nil then return true, what end
  local why = schema.check(value, decoded)
  if why then return false, why end
  return true, what .. " matching the schema"
end

local function json_check(answer, value)
  local decoded, err = J.decode(answer)
  if decoded == nil then return false, "not JSON: " .. tostring(err) end
  return schema_fit(value, decoded, "valid JSON")
end

-- The end of the JSON object starting at i (strings and nesting followed),
-- or nil.
local function object_end(s, i)
  local depth, k, n = 0, i, #s
  while k <= n do
    local ch = s:sub(k, k)
    if ch == '"' then
      k = k + 1
      while k <= n and s:sub(k, k) ~= '"' do
        if s:sub(k, k) == "\\" then k = k + 1 end
        k = k + 1
      end
    elseif ch == "{" or ch == "[" then depth = depth + 1
    elseif ch == "}" or ch == "]" then
      depth = depth - 1
      if depth == 0 then return k end
    end
    k = k + 1
  end
end

-- Every JSON object in the text, outermost first, as promptfoo's
-- contains-json finds them (objects, not bare arrays or numbers).
function M.json_objects(s)
  local out, i = {}, 1
  while true do
    i = s:find("{", i, true)
    if not i then return out end
    local e = object_end(s, i)
    local decoded = e and J.decode(s:sub(i, e))
    if J.is_object(decoded) then
      out[#out + 1] = decoded
      i = e + 1
    else
      i = i + 1
    end
  end
end

local function contains_json(answer, value)
  local found = M.json_objects(answer)
  if #found == 0 then return false, "no JSON object in the output" end
  local first
  for _, x in ipairs(found) do
    local ok, why = schema_fit(value, x, "contains a JSON object")
    if ok then return true, why end
    first = first or why
  end
  return false, ("%d JSON object%s, none matching the schema: %s"):format(#found, #found == 1 and "" or "s", first)
end

local function regex_check(answer, p)
  local first, last = p.re:find(answer)
  if first then return true, ("matches %s at %s"):format(slashed(p.source), show(answer:sub(first, last))) end
  if first == false then return false, "does not match " .. slashed(p.source) end
  return nil, ("regex %s: %s"):format(slashed(p.source), last)
end

local function lua_pattern_check(answer, p)
  local m = answer:match(p)
  if m then return true, ("matches %s at %s"):format(show(p), show(m)) end
  return false, "does not match " .. show(p)
end

function M.add(A)
  local T = A.types
  T.equals = { value = "equals", check = equals,
               shown = function(v) return show(type(v) == "number" and K.js_string(v) or v) end }
  T.contains = { value = "texts", check = any_all(false, true) }
  T.icontains = { value = "texts", check = any_all(true, true) }
  T["contains-any"] = { value = "text_set", check = any_all(false, false) }
  T["icontains-any"] = { value = "text_set", check = any_all(true, false) }
  T["contains-all"] = { value = "text_set", check = any_all(false, true) }
  T["icontains-all"] = { value = "text_set", check = any_all(true, true) }
  T["starts-with"] = { value = "text", check = function(answer, value)
    if answer:sub(1, #value) == value then return true, "starts with " .. show(value) end
    return false, "does not start with " .. show(value)
  end }
  T["ends-with"] = { value = "text", check = function(answer, value)
    if answer:sub(-#value) == value then return true, "ends with " .. show(value) end
    return false, "does not end with " .. show(value)
  end }
  T.regex = { value = "regex", shown = slashed, check = regex_check }
  T["lua-pattern"] = { value = "lua_pattern", check = lua_pattern_check }
  T["is-json"] = { value = "schema", optional = true, check = json_check }
  T["contains-json"] = { value = "schema", optional = true, check = contains_json }
  T["json-schema"] = { value = "schema", check = json_check }
  T["min-length"] = { value = "count", check = limit(chars, "characters", ">=") }
  T["max-length"] = { value = "count", check = limit(chars, "characters", "<=") }
  T["min-words"] = { value = "count", check = limit(words, "words", ">=") }
  T["max-words"] = { value = "count", check = limit(words, "words", "<=") }
  T["word-count"] = { value = "count_range", check = range(words, "words") }
  T["character-count"] = { value = "count_range", check = range(chars, "characters") }
end

return M
