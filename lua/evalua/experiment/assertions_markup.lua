-- The markup and query types of ev.assertions: is-xml and contains-xml
-- (libxml2; value: the element paths that must exist, "root.item.name", as
-- a list, "a, b" or {requiredElements = {...}}), is-html and
-- contains-html (libxml2's HTML parser), is-sql and contains-sql (SQLite's own parser; value
-- {databaseType = "SQLite"} at most). host/bindings/l_xml.c,
-- l_sqlparse.c; docs/assertions.md says how each differs from promptfoo.
-- libxml2 is opened by the first XML or HTML check, not when assertions
-- load (host/bindings/xml_load.c).
local function xml() return require "evalua._xml" end
local sqlparse = require "evalua._sqlparse"
local K = require "evalua.experiment.assertions_values"

local M = {}
local show = K.show

-- The required elements of is-xml: a list, "a, b", or {requiredElements =}.
local function elements(v, what)
  if type(v) == "table" and not K.is_list(v) then
    for k in pairs(v) do
      if k ~= "requiredElements" then return nil, ("%s.%s: not a key here (requiredElements)"):format(what, tostring(k)) end
    end
    v, what = v.requiredElements, what .. ".requiredElements"
  end
  return K.values.text_set(v, what)
end

local function missing(paths, want)
  local have = {}
  for _, p in ipairs(paths) do have[p] = true end
  local out = {}
  for _, w in ipairs(want or {}) do if not have[w] then out[#out + 1] = w end end
  return out
end

local function xml_verdict(paths, want)
  local lack = missing(paths, want)
  if #lack > 0 then return false, "XML lacks the elements " .. table.concat(lack, ", ") end
  return true, want and "well-formed XML with " .. table.concat(want, ", ") or "well-formed XML"
end

local function is_xml(answer, want)
  local paths, why, line = xml().check(answer)
  if not paths then return false, ("not well-formed XML (line %d): %s"):format(line, why) end
  return xml_verdict(paths, want)
end

-- Spans of text that may be XML: from each "<name" to the last matching
-- "</name>" (or its own "/>"), the longest first.
local function xml_spans(s)
  local out = {}
  for start, name in s:gmatch("()<([%a_\128-\255][%w_.:\128-\255-]*)") do
    local close = "</" .. name .. ">"
    local last
    local at = s:find(close, start, true)
    while at do last = at + #close - 1; at = s:find(close, at + 1, true) end
    if last then out[#out + 1] = { s = start, e = last } end
    local self_end = s:match("^<[^<>]-/>()", start)
    if self_end then out[#out + 1] = { s = start, e = self_end - 1 } end
  end
  table.sort(out, function(a, b)
    if a.e - a.s ~= b.e - b.s then return a.e - a.s > b.e - b.s end
    return a.s < b.s
  end)
  return out
end

-- contains-xml: a well-formed fragment with every required path, as
-- promptfoo reads it: paths count from each fragment's own root, a
-- fragment inside a well-formed one is not read again, and the paths of
-- several top-level fragments together may meet the requirement.
local function contains_xml(answer, want)
  local spans = xml_spans(answer)
  if #spans == 0 then return false, "no XML in the output" end
  local containers, union, first = {}, {}, nil
  for _, sp in ipairs(spans) do
    local inside = false
    for _, c in ipairs(containers) do
      if sp.s >= c.s and sp.e <= c.e then inside = true; break end
    end
    if not inside then
      local paths = xml().check(answer:sub(sp.s, sp.e))
      if paths then
        containers[#containers + 1] = sp
        local ok, why = xml_verdict(paths, want)
        if ok then return true, "contains " .. why end
        first = first or why
        for _, p in ipairs(paths) do union[#union + 1] = p end
      end
    end
  end
  if #containers == 0 then return false, "no well-formed XML in the output" end
  if #containers > 1 and #missing(union, want) == 0 then
    return true, ("contains well-formed XML with %s, across %d fragments"):format(table.concat(want, ", "), #containers)
  end
  return false, first
end

-- is-html: libxml2's HTML parser finds an element HTML knows (a custom
-- element with a hyphen counts), and no text stands outside the elements
-- unless the output has its own <body>.
local function is_html(answer)
  if answer:find("^%s*$") then return false, "the output is empty" end
  if #answer > xml().max_bytes then return nil, "the output is longer than is-html reads" end
  local r = xml().html(answer)
  if r.text_outside then return false, "text stands outside the HTML elements" end
  if r.elements == 0 and not (r.first and r.first:find("-", 1, true)) then
    return false, "no HTML element in the output" .. (r.first and (" (<" .. r.first .. "> is not HTML)") or "")
  end
  return true, ("HTML with %d element%s"):format(r.elements + r.unknown, r.elements + r.unknown == 1 and "" or "s")
end

-- contains-html: an element HTML knows (or a custom one, with a hyphen)
-- that the output opens itself, anywhere in it.
local function contains_html(answer)
  if #answer > xml().max_bytes then return nil, "the output is longer than contains-html reads" end
  local r = xml().html(answer)
  if r.elements > 0 or (r.first and r.first:find("-", 1, true)) then
    return true, ("contains HTML (%d element%s)"):format(r.elements + r.unknown, r.elements + r.unknown == 1 and "" or "s")
  end
  return false, "no HTML element in the output" .. (r.first and (" (<" .. r.first .. "> is not HTML)") or "")
end

local DIALECTS = { sqlite = true }

local function sql_options(v, what)
  if type(v) ~= "table" or K.is_list(v) then return nil, what .. ": expected {databaseType = \"SQLite\"}" end
  for k, x in pairs(v) do
    if k == "databaseType" then
      if type(x) ~= "string" or not DIALECTS[x:lower()] then
        return nil, ("%s.databaseType: evalua checks SQLite's dialect only, not %s"):format(what, show(x))
      end
    elseif k == "allowedTables" or k == "allowedColumns" then
      return nil, ("%s.%s: not supported: evalua checks syntax, not which tables a query reads"):format(what, k)
    else
      return nil, ("%s.%s: not a key here (databaseType)"):format(what, tostring(k))
    end
  end
  return v
end

local function sql_check(text)
  local n, why = sqlparse.check(text)
  if not n then return false, "not valid SQL (SQLite): " .. why end
  return true, ("valid SQL (SQLite), %d statement%s"):format(n, n == 1 and "" or "s")
end

local function is_sql(answer) return sql_check(answer) end

-- contains-sql: the ```sql (or plain ```) blocks of the output, else all of it.
local function contains_sql(answer)
  local blocks = {}
  for lang, body in answer:gmatch("```(%w*)[ \t]*\r?\n(.-)```") do
    if lang == "" or lang:lower() == "sql" then blocks[#blocks + 1] = body end
  end
  if #blocks == 0 then return sql_check(answer) end
  local first
  for _, b in ipairs(blocks) do
    local ok, why = sql_check(b)
    if ok then return true, "contains " .. why end
    first = first or why
  end
  return false, first
end

function M.add(A)
  A.values.xml_elements = elements
  A.values.sql_options = sql_options
  local T = A.types
  T["is-xml"] = { value = "xml_elements", optional = true, check = is_xml }
  T["contains-xml"] = { value = "xml_elements", optional = true, check = contains_xml }
  T["is-html"] = { check = is_html }
  T["contains-html"] = { check = contains_html }
  T["is-sql"] = { value = "sql_options", optional = true, check = is_sql }
  T["contains-sql"] = { value = "sql_options", optional = true, check = contains_sql }
end

return M
