-- The records of a peer's file, each with the line it starts on: JSON lines
-- and CSV go through evalua's own C readers (strict JSON, RFC 4180 CSV, the
-- line of every record), a JSON document through lua-cjson with the line of
-- each element of its list found by a scan of the text. A record is
-- {line =, value = {key = Lua value}, raw = {key = JSON text of a nested
-- value}}: raw keeps a nested value exactly as written (an empty list stays
-- [], which lua-cjson would read back as {}).
local cjson = require("cjson.safe").new()
cjson.decode_invalid_numbers(false)
local sys = require "evalua._sys"
local T = require "evalua._table"

local M = {}

local PLAIN = { rag = false, fields = {} }

local function fail(msg) sys.input_error(msg) end

local strip_nulls = require("evalua.core.tables").strip_nulls
M.strip_nulls = strip_nulls

-- Records of a C table read with no schema (every cell as written).
local function from_table(tbl, path)
  local out = {}
  for i = 1, #tbl do
    local value, raw = {}, {}
    for _, k in ipairs(tbl:keys(i)) do
      local v, kind = tbl:get(i, k)
      if kind == "json" then
        raw[k] = v
        local d, err = cjson.decode(v)
        if d == nil then fail(("%s:%d: field '%s': %s"):format(path, tbl:line(i), k, tostring(err))) end
        v = strip_nulls(d)
      end
      value[k] = v
    end
    out[i] = { line = tbl:line(i), value = value, raw = raw }
  end
  return out
end

function M.jsonl(path)
  local tbl, hash = T.load(path, PLAIN)
  if not tbl then fail(hash) end
  return from_table(tbl, path), hash
end

function M.csv(path)
  local tbl, hash = T.load_csv(path, PLAIN)
  if not tbl then fail(hash) end
  return from_table(tbl, path), hash
end

function M.read_file(path)
  local f, err = io.open(path, "rb")
  if not f then fail(("cannot read data set: %s"):format(err)) end
  local s = f:read("a")
  f:close()
  return s
end

-- The offsets of the values of the list at the top of a JSON text, or of
-- the lists that are the values of the top object's keys: {[""] = {...}}
-- or {[key] = {...}}. The text is known to be valid JSON (cjson read it).
function M.element_offsets(s)
  local out, stack, keys = {}, {}, {}
  local pos, n = 1, #s
  local want_value = true
  local key_of_top -- the key whose value comes next in the top object
  local last_string
  while pos <= n do
    local p, _, c = s:find('([%[%]{}",:])', pos)
    if not p then break end
    local depth = #stack
    local opens_value = c == "[" or c == "{" or c == '"'
    -- a scalar value (number, true, false, null) between two punctuations
    local gap = s:sub(pos, p - 1)
    if want_value and gap:find("%S") then
      local at = pos + (gap:find("%S") or 1) - 1
      if depth == 1 and stack[1] == "[" then out[""] = out[""] or {}; table.insert(out[""], at) end
      if depth == 2 and stack[1] == "{" and stack[2] == "[" and keys[2] then table.insert(out[keys[2]], at) end
      want_value = false
    end
    if opens_value and want_value then
      if depth == 1 and stack[1] == "[" then out[""] = out[""] or {}; table.insert(out[""], p) end
      if depth == 2 and stack[1] == "{" and stack[2] == "[" and keys[2] then table.insert(out[keys[2]], p) end
    end
    if c == '"' then
      local q = p + 1
      while true do
        local e = s:find('["\\]', q)
        if not e then return out end
        if s:sub(e, e) == "\\" then q = e + 2 else q = e break end
      end
      last_string = s:sub(p + 1, q - 1)
      want_value = false
      pos = q + 1
    else
      if c == "[" or c == "{" then
        stack[#stack + 1] = c
        keys[#stack] = nil
        if c == "[" and #stack == 2 and stack[1] == "{" and key_of_top then
          keys[2] = key_of_top
          out[key_of_top] = out[key_of_top] or {}
        end
        want_value = c == "["
      elseif c == "]" or c == "}" then
        stack[#stack] = nil
        want_value = false
      elseif c == "," then
        want_value = stack[#stack] == "["
      elseif c == ":" then
        if #stack == 1 and stack[1] == "{" then key_of_top = last_string end
        want_value = true
      end
      pos = p + 1
    end
  end
  return out
end

local function line_at(s, offsets)
  local lines, line, from = {}, 1, 1
  for i, off in ipairs(offsets) do
    local _, nl = s:sub(from, off):gsub("\n", "")
    line = line + nl
    from = off + 1
    lines[i] = line
  end
  return lines
end

-- json(path, wrappers) -> records, hash, wrapper: a JSON document holding a
-- list of records, or an object whose key (one of wrappers, in order) holds it.
function M.json(path, wrappers)
  local s = M.read_file(path)
  local doc, err = cjson.decode(s)
  if doc == nil then fail(("%s: not JSON: %s"):format(path, tostring(err))) end
  local offsets = M.element_offsets(s)
  local list, key = doc, ""
  if type(doc) == "table" and doc[1] == nil and next(doc) ~= nil then
    list = nil
    for _, w in ipairs(wrappers or {}) do
      if type(doc[w]) == "table" then list, key = doc[w], w break end
    end
    if not list then
      local names = {}
      for k in pairs(doc) do names[#names + 1] = tostring(k) end
      table.sort(names)
      fail(("%s:1: expected a list of records%s, found an object with %s"):format(path,
        wrappers and #wrappers > 0 and (" or an object with " .. table.concat(wrappers, ", ")) or "",
        table.concat(names, ", ")))
    end
  end
  if type(list) ~= "table" then fail(("%s:1: expected a list of records"):format(path)) end
  local lines = line_at(s, offsets[key] or {})
  local out = {}
  for i, v in ipairs(list) do
    local line = lines[i] or 1
    if type(v) ~= "table" or (v[1] ~= nil) then
      fail(("%s:%d: record %d: expected an object, got %s"):format(path, line, i, v == cjson.null and "null" or type(v)))
    end
    out[i] = { line = line, value = strip_nulls(v), raw = {} }
  end
  return out, sys.sha256(s), key
end

M.decode = cjson.decode
M.null = cjson.null

return M
