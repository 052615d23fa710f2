-- JSON Schema draft-07 for is-json, contains-json, json-schema and the
-- tool-call types: every validation keyword of the draft (type, enum,
-- const, multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum,
-- maxLength, minLength, pattern (PCRE2), items, additionalItems, maxItems,
-- minItems, uniqueItems, contains, maxProperties, minProperties, required,
-- properties, patternProperties, additionalProperties, dependencies,
-- propertyNames, if/then/else, allOf, anyOf, oneOf, not, format), boolean
-- schemas, and $ref within the document (#, #/json/pointer, #anchor $ids).
-- A keyword the draft does not have, an unknown format or a $ref to
-- another document is refused when the schema is read, so a schema never
-- passes by being ignored. Beside $ref, other keywords are ignored, as the
-- draft says. The formats checked are listed in FORMATS (docs/assertions.md).
local J = require "evalua.experiment.assertions_json"
local options = require "evalua.core.options"
local regex = require "evalua._regex"

local M = {}

local ANNOTATIONS = { "$schema", "$id", "$comment", "title", "description", "default", "examples", "readOnly",
                      "writeOnly", "contentMediaType", "contentEncoding", "definitions" }
local SCHEMA_KEYS = { "items", "additionalItems", "contains", "additionalProperties", "propertyNames", "if", "then",
                      "else", "not" }
local SCHEMA_LISTS = { "allOf", "anyOf", "oneOf" }
local SCHEMA_MAPS = { "properties", "patternProperties", "definitions" }
local NUMBERS = { "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum" }
local COUNTS = { "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties" }
local OTHER = { "type", "enum", "const", "pattern", "uniqueItems", "required", "dependencies", "format", "$ref" }

local KEYWORDS, KEYWORD_LIST = {}, {}
for _, list in ipairs { ANNOTATIONS, SCHEMA_KEYS, SCHEMA_LISTS, SCHEMA_MAPS, NUMBERS, COUNTS, OTHER } do
  for _, k in ipairs(list) do
    if not KEYWORDS[k] then KEYWORDS[k] = true; KEYWORD_LIST[#KEYWORD_LIST + 1] = k end
  end
end
local TYPES = { object = true, array = true, string = true, number = true, integer = true, boolean = true,
                null = true }

-- ---- formats ------------------------------------------------------------------

local function date_ok(y, m, d)
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  local days = { 31, (y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0)) and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
  return m >= 1 and m <= 12 and d >= 1 and d <= days[m]
end

local function time_ok(t)
  local h, mi, s, rest = t:match("^(%d%d):(%d%d):(%d%d)(.*)$")
  if not h then return false end
  rest = rest:gsub("^%.%d+", "")
  local zone_ok = rest:find("^[zZ]$") or rest:find("^[-+]%d%d:%d%d$")
  if not zone_ok then return false end
  local zh, zm = rest:match("^[-+](%d%d):(%d%d)$")
  if zh and (tonumber(zh) > 23 or tonumber(zm) > 59) then return false end
  return tonumber(h) <= 23 and tonumber(mi) <= 59 and tonumber(s) <= 60
end

local function ipv4_ok(s)
  local parts = { s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$") }
  if #parts ~= 4 then return false end
  for _, p in ipairs(parts) do
    if #p > 3 or tonumber(p) > 255 or (#p > 1 and p:sub(1, 1) == "0") then return false end
  end
  return true
end

local function ipv6_ok(s)
  if not s:find("^[%x:.]+$") or s:find(":::") then return false end
  local head, tail = s:match("^(.-)::(.*)$")
  local groups = 0
  local function count(part)
    if part == "" then return true end
    for g in (part .. ":"):gmatch("([^:]*):") do
      if g == "" then return false end
      if g:find("%.") then
        if not ipv4_ok(g) then return false end
        groups = groups + 2
      elseif #g > 4 then return false
      else groups = groups + 1 end
    end
    return true
  end
  if head then
    if s:find("::.*::") then return false end
    return count(head) and count(tail) and groups < 8
  end
  return count(s) and groups == 8
end

local function hostname_ok(s)
  if #s == 0 or #s > 253 then return false end
  for label in (s .. "."):gmatch("([^.]*)%.") do
    if #label == 0 or #label > 63 or not label:find("^[%w]([%w-]*[%w])?$") and not label:find("^%w$") then
      return false
    end
  end
  return true
end

local function pointer_ok(s)
  if s == "" then return true end
  if s:sub(1, 1) ~= "/" then return false end
  return not s:gsub("~[01]", ""):find("~")
end

local function email_ok(s)
  return s:find("^[^@%s]+@[^@%s]+$") ~= nil and not s:find("^%.") and not s:find("%.%.") and not s:find("%.@")
end

M.FORMATS = {
  ["date-time"] = function(s)
    local y, m, d, t = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[tT](.+)$")
    return y ~= nil and date_ok(y, m, d) and time_ok(t)
  end,
  date = function(s)
    local y, m, d = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
    return y ~= nil and date_ok(y, m, d)
  end,
  time = time_ok,
  email = function(s) return email_ok(s) and not s:find("[\128-\255]") end,
  ["idn-email"] = email_ok,
  hostname = hostname_ok,
  ipv4 = ipv4_ok,
  ipv6 = ipv6_ok,
  uri = function(s) return s:find("^%a[%w+.-]*:[^%s]*$") ~= nil and not s:find("[\"<>\\^`{|}]") end,
  ["uri-reference"] = function(s) return not s:find("[%s\"<>\\^`{|}]") end,
  uuid = function(s) return s:find("^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$") ~= nil end,
  regex = function(s) return regex.compile(s) ~= nil end,
  ["uri-template"] = function(s)
    local depth = 0
    for ch in s:gmatch("[{}]") do
      depth = depth + (ch == "{" and 1 or -1)
      if depth < 0 or depth > 1 then return false end
    end
    return depth == 0
  end,
  ["json-pointer"] = pointer_ok,
  ["relative-json-pointer"] = function(s)
    local n, rest = s:match("^(%d+)(.*)$")
    return n ~= nil and (#n == 1 or n:sub(1, 1) ~= "0") and (rest == "#" or pointer_ok(rest))
  end,
}

-- The internationalised forms: the same shapes, with non-ASCII letters allowed.
M.FORMATS["idn-hostname"] = function(s) return hostname_ok((s:gsub("[\192-\247][\128-\191]*", "x"))) end
M.FORMATS.iri = function(s) return M.FORMATS.uri(s) end
M.FORMATS["iri-reference"] = M.FORMATS["uri-reference"]

local FORMAT_NAMES = {}
for k in pairs(M.FORMATS) do FORMAT_NAMES[#FORMAT_NAMES + 1] = k end
table.sort(FORMAT_NAMES)

-- ---- JSON values ------------------------------------------------------------------

local function type_of(v)
  if v == J.null then return "null" end
  local t = type(v)
  if t == "number" then return v == math.floor(v) and "integer" or "number" end -- 3.0 is an integer
  if t == "table" then
    local mt = getmetatable(v)
    if mt and mt.__jsontype then return mt.__jsontype end
    if v[1] ~= nil then return "array" end
    return next(v) == nil and "array|object" or "object"
  end
  return t
end
M.type_of = type_of

local function matches_type(want, v)
  local got = type_of(v)
  if want == got then return true end
  if want == "number" and got == "integer" then return true end
  return got == "array|object" and (want == "array" or want == "object")
end

local function is_array(v) local t = type_of(v); return t == "array" or t == "array|object" end
local function is_object(v) local t = type_of(v); return t == "object" or t == "array|object" end

local function encode(v)
  local ok, s = pcall(require("evalua.core.json").encode, v)
  return ok and s or tostring(v)
end

-- ---- reading a schema ---------------------------------------------------------------

-- The schema a JSON pointer names inside root, or nil.
local function pointer(root, ref)
  local node = root
  local path = ref:sub(2)
  if path == "" then return node end
  if path:sub(1, 1) ~= "/" then return nil end
  for part in path:sub(2):gmatch("([^/]*)") do
    part = part:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
    part = part:gsub("~1", "/"):gsub("~0", "~")
    if type(node) ~= "table" then return nil end
    local nxt = node[part]
    if nxt == nil and math.tointeger(tonumber(part)) then nxt = node[math.tointeger(tonumber(part)) + 1] end
    node = nxt
    if node == nil then return nil end
  end
  return node
end

-- ---- base URIs and $ref -----------------------------------------------------------

local function remove_dots(path)
  local out = {}
  for seg in (path .. "/"):gmatch("([^/]*)/") do
    if seg == ".." then if #out > 1 then out[#out] = nil end
    elseif seg ~= "." then out[#out + 1] = seg end
  end
  local joined = table.concat(out, "/")
  if path:sub(-1) == "/" and joined:sub(-1) ~= "/" then joined = joined .. "/" end
  return joined
end

-- RFC 3986 reference resolution, enough for $id and $ref.
local function resolve_uri(base, ref)
  if ref:find("^%a[%w+.-]*:") then return ref end
  local b = base:gsub("#.*$", "")
  if ref:sub(1, 1) == "#" or ref == "" then return b .. ref end
  if b == "" then return ref end
  local scheme, rest = b:match("^(%a[%w+.-]*:)(.*)$")
  if not scheme then scheme, rest = "", b end
  local auth, path = "", rest
  if rest:sub(1, 2) == "//" then auth = rest:match("^//[^/]*"); path = rest:sub(#auth + 1) end
  if ref:sub(1, 2) == "//" then return scheme .. ref end
  local frag = ref:match("#.*$") or ""
  local rpath = ref:sub(1, #ref - #frag)
  if rpath:sub(1, 1) == "/" then return scheme .. auth .. remove_dots(rpath) .. frag end
  local dir = path:match("^(.*/)") or (auth ~= "" and "/" or "")
  return scheme .. auth .. remove_dots(dir .. rpath) .. frag
end
M.resolve_uri = resolve_uri

local NOT_SCHEMAS = { enum = true, const = true, examples = true, default = true, required = true }

-- The document's index: each subschema's base URI, and the schemas its
-- $ids name (whole URIs, and "uri#name" anchors). Beside $ref, $id is
-- ignored, as every other keyword.
local function index(root)
  local idx = { base = {}, ids = {}, anchors = {} }
  local function walk(node, base)
    if type(node) ~= "table" or node == J.null or idx.base[node] then return end
    if type(node["$id"]) == "string" and node["$ref"] == nil then
      base = resolve_uri(base, node["$id"])
      local doc, frag = base:match("^([^#]*)#?(.*)$")
      if frag ~= "" then idx.anchors[doc .. "#" .. frag] = node end
      if doc ~= "" and node["$id"]:sub(1, 1) ~= "#" then idx.ids[doc] = node end
    end
    idx.base[node] = base
    for k, v in pairs(node) do
      if not NOT_SCHEMAS[k] and type(v) == "table" then walk(v, base) end
    end
  end
  walk(root, "")
  idx.root_doc = (idx.base[root] or ""):gsub("#.*$", "")
  return idx
end

-- The schema ref names from node, or nil.
local function resolve(root, ref, state, node)
  state.index = state.index or index(root)
  local idx = state.index
  local abs = resolve_uri(idx.base[node] or idx.root_doc, ref)
  local docpart, frag = abs:match("^([^#]*)#?(.*)$")
  local doc = idx.ids[docpart] or ((docpart == "" or docpart == idx.root_doc) and root or nil)
  if doc == nil then return nil end
  if frag == "" then return doc end
  if frag:sub(1, 1) == "/" then return pointer(doc, "#" .. frag) end
  return idx.anchors[docpart .. "#" .. frag]
end

local validate

local function validate_keys(s, what, root, state)
  for k in pairs(s) do
    if not KEYWORDS[k] then
      return nil, ("%s: schema keyword '%s' is not a JSON Schema draft-07 keyword%s"):format(what, tostring(k),
        options.suggest(tostring(k), KEYWORD_LIST))
    end
  end
  if s["$ref"] ~= nil then
    if type(s["$ref"]) ~= "string" then return nil, what .. ".$ref: expected a reference" end
    if resolve(root, s["$ref"], state, s) == nil then
      return nil, ("%s.$ref: '%s' names nothing in this schema (references to other documents are not read)")
        :format(what, s["$ref"])
    end
  end
  return true
end

local function validate_values(s, what)
  local types = type(s.type) == "table" and s.type or { s.type }
  for _, t in ipairs(types) do
    if not TYPES[t] then return nil, ("%s.type: unknown type '%s'"):format(what, tostring(t)) end
  end
  if s.required ~= nil and not is_array(s.required) then return nil, what .. ".required: expected a list" end
  if s.enum ~= nil and not is_array(s.enum) then return nil, what .. ".enum: expected a list" end
  for _, k in ipairs(NUMBERS) do
    local v = s[k]
    if v ~= nil and (type(v) ~= "number" or v ~= v) then return nil, ("%s.%s: expected a number"):format(what, k) end
  end
  if s.multipleOf ~= nil and s.multipleOf <= 0 then return nil, what .. ".multipleOf: expected a number > 0" end
  for _, k in ipairs(COUNTS) do
    local v = s[k]
    if v ~= nil and (type(v) ~= "number" or v < 0 or v ~= math.floor(v)) then
      return nil, ("%s.%s: expected a whole number >= 0"):format(what, k)
    end
  end
  if s.pattern ~= nil then
    if type(s.pattern) ~= "string" then return nil, what .. ".pattern: expected a regular expression" end
    local re, err = regex.compile(s.pattern)
    if not re then return nil, ("%s.pattern: bad regular expression: %s"):format(what, err) end
  end
  if s.format ~= nil and not M.FORMATS[s.format] then
    return nil, ("%s.format: '%s' is not a format evalua checks (%s)"):format(what, tostring(s.format),
      table.concat(FORMAT_NAMES, ", "))
  end
  return true
end

local function validate_children(s, what, root, state)
  for _, k in ipairs(SCHEMA_KEYS) do
    local sub = s[k]
    if sub ~= nil then
      if k == "items" and type(sub) == "table" and is_array(sub) and (sub[1] ~= nil or type_of(sub) == "array") then
        for i, x in ipairs(sub) do
          local ok, why = validate(x, ("%s.items[%d]"):format(what, i - 1), root, state)
          if not ok then return nil, why end
        end
      else
        local ok, why = validate(sub, what .. "." .. k, root, state)
        if not ok then return nil, why end
      end
    end
  end
  for _, k in ipairs(SCHEMA_LISTS) do
    if s[k] ~= nil then
      if not is_array(s[k]) or #s[k] == 0 then return nil, ("%s.%s: expected a non-empty list of schemas"):format(what, k) end
      for i, x in ipairs(s[k]) do
        local ok, why = validate(x, ("%s.%s[%d]"):format(what, k, i - 1), root, state)
        if not ok then return nil, why end
      end
    end
  end
  for _, k in ipairs(SCHEMA_MAPS) do
    if s[k] ~= nil then
      if type(s[k]) ~= "table" then return nil, ("%s.%s: expected an object of schemas"):format(what, k) end
      for name, x in pairs(s[k]) do
        if k == "patternProperties" and not regex.compile(name) then
          return nil, ("%s.patternProperties: bad regular expression '%s'"):format(what, tostring(name))
        end
        local ok, why = validate(x, ("%s.%s.%s"):format(what, k, tostring(name)), root, state)
        if not ok then return nil, why end
      end
    end
  end
  if s.dependencies ~= nil then
    for name, d in pairs(s.dependencies) do
      if not (type(d) == "table" and is_array(d) and (d[1] ~= nil or type_of(d) == "array")) then
        local ok, why = validate(d, ("%s.dependencies.%s"):format(what, tostring(name)), root, state)
        if not ok then return nil, why end
      end
    end
  end
  return true
end

function validate(s, what, root, state)
  if type(s) == "boolean" then return true end
  if type(s) ~= "table" or s == J.null or (type_of(s) == "array" and s[1] ~= nil) then
    return nil, what .. ": expected a schema (an object or true/false)"
  end
  root, state = root or s, state or {}
  if state[s] then return true end
  state[s] = true
  local ok, why = validate_keys(s, what, root, state)
  if ok then ok, why = validate_values(s, what) end
  if ok then ok, why = validate_children(s, what, root, state) end
  return ok, why
end

-- validate(schema, what) -> true | nil, why
function M.validate(s, what) return validate(s, what) end

-- ---- checking a value ---------------------------------------------------------------

local check

local function check_type(s, v, path)
  if s.type == nil then return nil end
  local types = type(s.type) == "table" and s.type or { s.type }
  for _, t in ipairs(types) do if matches_type(t, v) then return nil end end
  local got = type_of(v):gsub("array|object", "empty list")
  return ("%s: expected %s, got %s"):format(path, table.concat(types, " or "), got)
end

local function check_number(s, v, path)
  local function say(what, bound) return ("%s: %s is %s %s"):format(path, encode(v), what, encode(bound)) end
  if s.minimum and v < s.minimum then return say("under the minimum", s.minimum) end
  if s.maximum and v > s.maximum then return say("over the maximum", s.maximum) end
  if s.exclusiveMinimum and v <= s.exclusiveMinimum then return say("not above the exclusiveMinimum", s.exclusiveMinimum) end
  if s.exclusiveMaximum and v >= s.exclusiveMaximum then return say("not under the exclusiveMaximum", s.exclusiveMaximum) end
  if s.multipleOf then
    local q = v / s.multipleOf
    if q ~= q or math.abs(q) == math.huge or math.abs(q - math.floor(q + 0.5)) > 1e-9 * math.max(1, math.abs(q)) then
      return say("not a multiple of", s.multipleOf)
    end
  end
end

local function check_string(s, v, path)
  local n = utf8.len(v) or #v
  local unit = n == 1 and "character" or "characters"
  if s.minLength and n < s.minLength then return ("%s: %d %s, fewer than minLength %d"):format(path, n, unit, s.minLength) end
  if s.maxLength and n > s.maxLength then return ("%s: %d %s, more than maxLength %d"):format(path, n, unit, s.maxLength) end
  if s.pattern then
    local re = regex.compile(s.pattern)
    local at, err = re:find(v)
    if at == nil then return ("%s: pattern /%s/ could not be checked: %s"):format(path, s.pattern, err) end
    if not at then return ("%s: %s does not match the pattern /%s/"):format(path, encode(v), s.pattern) end
  end
  if s.format and not M.FORMATS[s.format](v) then
    return ("%s: %s is not a valid %s"):format(path, encode(v), s.format)
  end
end

local function check_array(s, v, path, root, state)
  local n = #v
  local unit = n == 1 and "item" or "items"
  if s.minItems and n < s.minItems then return ("%s: %d %s, fewer than minItems %d"):format(path, n, unit, s.minItems) end
  if s.maxItems and n > s.maxItems then return ("%s: %d %s, more than maxItems %d"):format(path, n, unit, s.maxItems) end
  if s.uniqueItems == true then
    for i = 1, n do
      for j = i + 1, n do
        if J.equal(v[i], v[j]) then return ("%s: items %d and %d are equal (uniqueItems)"):format(path, i - 1, j - 1) end
      end
    end
  end
  local items = s.items
  if type(items) == "table" and is_array(items) and (items[1] ~= nil or type_of(items) == "array") then
    for i, x in ipairs(v) do
      local sub = items[i]
      if sub == nil then sub = s.additionalItems end
      if sub ~= nil then
        local why = check(sub, x, ("%s[%d]"):format(path, i - 1), root, state)
        if why then return why end
      end
    end
  elseif items ~= nil then
    for i, x in ipairs(v) do
      local why = check(items, x, ("%s[%d]"):format(path, i - 1), root, state)
      if why then return why end
    end
  end
  if s.contains ~= nil then
    for _, x in ipairs(v) do if not check(s.contains, x, path, root, state) then return nil end end
    return ("%s: no item matches the contains schema"):format(path)
  end
end

local sorted_keys = require("evalua.core.tables").sorted_keys

local function check_object(s, v, path, root, state)
  local keys = sorted_keys(v)
  if s.minProperties and #keys < s.minProperties then
    return ("%s: %d properties, fewer than minProperties %d"):format(path, #keys, s.minProperties)
  end
  if s.maxProperties and #keys > s.maxProperties then
    return ("%s: %d properties, more than maxProperties %d"):format(path, #keys, s.maxProperties)
  end
  for _, k in ipairs(s.required or {}) do
    if v[k] == nil then return ("%s: required key '%s' is missing"):format(path, k) end
  end
  for _, k in ipairs(keys) do
    local matched = false
    local sub = s.properties and s.properties[k]
    if sub ~= nil then
      matched = true
      local why = check(sub, v[k], path .. "." .. tostring(k), root, state)
      if why then return why end
    end
    for _, p in ipairs(s.patternProperties and sorted_keys(s.patternProperties) or {}) do
      if regex.compile(p):find(tostring(k)) then
        matched = true
        local why = check(s.patternProperties[p], v[k], path .. "." .. tostring(k), root, state)
        if why then return why end
      end
    end
    local extra = s.additionalProperties
    if not matched and extra ~= nil and extra ~= true then
      if extra == false then return ("%s: key '%s' is not allowed (additionalProperties is false)"):format(path, k) end
      local why = check(extra, v[k], path .. "." .. tostring(k), root, state)
      if why then return why end
    end
    if s.propertyNames ~= nil then
      local why = check(s.propertyNames, tostring(k), path .. " key " .. encode(tostring(k)), root, state)
      if why then return why end
    end
  end
  for _, name in ipairs(s.dependencies and sorted_keys(s.dependencies) or {}) do
    if v[name] ~= nil then
      local d = s.dependencies[name]
      if type(d) == "table" and is_array(d) and (d[1] ~= nil or type_of(d) == "array") then
        for _, k in ipairs(d) do
          if v[k] == nil then return ("%s: key '%s' needs key '%s' (dependencies)"):format(path, name, k) end
        end
      else
        local why = check(d, v, path, root, state)
        if why then return why end
      end
    end
  end
end

local function check_combinators(s, v, path, root, state)
  for i, sub in ipairs(s.allOf or {}) do
    local why = check(sub, v, path, root, state)
    if why then return ("%s (allOf[%d])"):format(why, i - 1) end
  end
  if s.anyOf then
    local first
    for _, sub in ipairs(s.anyOf) do
      local why = check(sub, v, path, root, state)
      if not why then first = nil; break end
      first = first or why
    end
    if first then return ("%s: matches none of anyOf (first: %s)"):format(path, first) end
  end
  if s.oneOf then
    local n = 0
    for _, sub in ipairs(s.oneOf) do if not check(sub, v, path, root, state) then n = n + 1 end end
    if n ~= 1 then return ("%s: matches %d of oneOf, not exactly 1"):format(path, n) end
  end
  if s["not"] ~= nil and not check(s["not"], v, path, root, state) then
    return ("%s: matches the schema of not"):format(path)
  end
  if s["if"] ~= nil then
    local branch
    if check(s["if"], v, path, root, state) == nil then branch = s["then"] else branch = s["else"] end
    if branch ~= nil then return check(branch, v, path, root, state) end
  end
end

function check(s, v, path, root, state)
  if s == true then return nil end
  if s == false then return path .. ": no value is allowed here (false schema)" end
  if s["$ref"] ~= nil then
    local target = resolve(root, s["$ref"], state, s)
    state.depth = (state.depth or 0) + 1
    if state.depth > 200 then return path .. ": $ref nests too deeply" end
    local why = check(target, v, path, root, state)
    state.depth = state.depth - 1
    return why
  end
  local why = check_type(s, v, path)
  if why then return why end
  if s.enum ~= nil then
    local found = false
    for _, e in ipairs(s.enum) do if J.equal(e, v) then found = true; break end end
    if not found then return ("%s: %s is not one of %s"):format(path, encode(v), encode(s.enum)) end
  end
  if s.const ~= nil and not J.equal(s.const, v) then
    return ("%s: %s is not the const %s"):format(path, encode(v), encode(s.const))
  end
  local t = type_of(v)
  if type(v) == "number" then why = check_number(s, v, path)
  elseif type(v) == "string" then why = check_string(s, v, path)
  elseif t == "array" then why = check_array(s, v, path, root, state)
  elseif t == "object" then why = check_object(s, v, path, root, state)
  elseif t == "array|object" then why = check_array(s, v, path, root, state) or check_object(s, v, path, root, state) end
  if why then return why end
  return check_combinators(s, v, path, root, state)
end

-- check(schema, value [, path]) -> nil when value fits, else why
function M.check(s, v, path)
  return check(s, v, path or "$", s, {})
end

return M
