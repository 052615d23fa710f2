-- What the peer formats share: reading a file by its extension, checking a
-- peer's field by its own name (so an error says 'retrieved_contexts', the
-- key the user wrote), list cells of CSV files, and the output record.
local records = require "evalua.data.formats.records"
local pyliteral = require "evalua.data.formats.pyliteral"
local json = require "evalua.core.json"
local sys = require "evalua._sys"

local M = { null = records.null }

-- A mapping error: raised as FILE:LINE: field '...': ... by the loader.
local Bad = {}
Bad.__index = Bad
function M.bad(field, fmt, ...)
  error(setmetatable({ field = field, msg = fmt:format(...) }, Bad), 0)
end
function M.is_bad(e) return getmetatable(e) == Bad end

function M.typename(v)
  if v == records.null then return "null" end
  if type(v) == "table" then return v[1] ~= nil and "a list" or next(v) == nil and "an empty list or object" or "an object" end
  if math.type(v) then return "a number" end
  return type(v) == "string" and "a string" or type(v) == "boolean" and "a boolean" or type(v)
end

function M.is_list(v)
  if type(v) ~= "table" then return false end
  local n = 0
  for _ in pairs(v) do n = n + 1 end
  return n == #v
end

function M.is_object(v)
  return type(v) == "table" and v ~= records.null and (next(v) == nil or v[1] == nil)
end

-- The file's records by its extension: .jsonl/.ndjson, .json, .csv.
function M.read(path, wrappers)
  local ext = (path:match("%.([%w]+)$") or ""):lower()
  if ext == "csv" then
    local recs, hash = records.csv(path)
    return recs, hash, "csv"
  end
  if ext == "json" then
    local recs, hash, key = records.json(path, wrappers)
    return recs, hash, "json", key
  end
  local recs, hash = records.jsonl(path)
  return recs, hash, "jsonl"
end

-- A CSV cell that holds a list or an object: JSON ([..] or {..}), else a
-- Python literal as str() writes it (['a', 'b']); nil when it is neither.
function M.structured(cell)
  if type(cell) ~= "string" then return cell end
  local s = cell:match("^%s*(.-)%s*$")
  local c = s:sub(1, 1)
  if c ~= "[" and c ~= "{" and c ~= "(" then return nil end
  local v = records.decode(s)
  if v ~= nil then return records.strip_nulls(v) end
  local p, why = pyliteral.parse(s, records.null)
  if p == nil then return nil, why end
  return records.strip_nulls(p)
end

-- A field that must be a string (a number is refused: ids and texts stay
-- as written).
function M.string(v, field)
  if v == nil then return nil end
  if type(v) ~= "string" then M.bad(field, "expected a string, got %s", M.typename(v)) end
  return v
end

-- A list of strings: a list, or in a CSV cell a JSON or Python list, or a
-- text split at sep when sep is given (DeepEval joins contexts with '|').
function M.strings(v, field, csv, sep)
  if v == nil then return nil end
  if type(v) == "string" and csv then
    local parsed, why = M.structured(v)
    if parsed == nil and why then M.bad(field, "not a list: %s: %s", why, v:sub(1, 60)) end
    if parsed == nil then
      if not sep then M.bad(field, "expected a list of strings (JSON or Python: ['a', 'b']), got '%s'", v:sub(1, 60)) end
      v = M.split(v, sep)
    else
      v = parsed
    end
  elseif type(v) == "string" and sep then
    v = M.split(v, sep)
  end
  if not M.is_list(v) then M.bad(field, "expected a list of strings, got %s", M.typename(v)) end
  for i, s in ipairs(v) do
    if type(s) ~= "string" then M.bad(("%s[%d]"):format(field, i), "expected a string, got %s", M.typename(s)) end
  end
  return setmetatable(v, json.array)
end

function M.split(s, sep)
  local out, from = {}, 1
  while true do
    local a, b = s:find(sep, from, true)
    if not a then out[#out + 1] = s:sub(from) break end
    out[#out + 1] = s:sub(from, a - 1)
    from = b + 1
  end
  return out
end

-- A list or object field, parsed from a CSV cell when it is text.
function M.value(v, field, csv)
  if type(v) == "string" and csv then
    local parsed, why = M.structured(v)
    if parsed == nil then M.bad(field, "expected a list or an object (JSON or Python), got '%s'%s", v:sub(1, 60),
        why and (" (" .. why .. ")") or "") end
    return parsed
  end
  return v
end

-- Ids as strings: BEIR and MS MARCO ids are text in their TSV files.
function M.id(v, field)
  if math.type(v) == "integer" then return tostring(v) end
  if type(v) ~= "string" or v == "" then M.bad(field, "expected an id (a non-empty string), got %s", M.typename(v)) end
  return v
end

function M.input_error(msg) sys.input_error(msg) end

-- The record of a mapped row: out.row[key] = value; out.raw[key] = JSON
-- text written as is; out.from[key] = the peer's field it came from.
function M.new_row(line)
  return { line = line, row = {}, raw = {}, from = {} }
end

-- Keeps the record's keys that no mapping took, under their own names; a
-- key that a mapped one already took is an error naming both.
function M.keep(out, rec, used)
  local names = {}
  for k in pairs(rec.value) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    if not used[k] then
      if out.row[k] ~= nil then
        M.bad(k, "the record has this key and '%s' maps to it too; rename one", out.from[k] or "?")
      end
      out.row[k], out.raw[k] = rec.value[k], rec.raw[k]
    end
  end
  return out
end

function M.set(out, key, value, from)
  if value == nil then return end
  if out.row[key] ~= nil and out.from[key] ~= from then
    M.bad(from, "the record has this key and '%s' too, and both give %s; keep one", out.from[key], key)
  end
  out.row[key], out.from[key] = value, from
end

return M
