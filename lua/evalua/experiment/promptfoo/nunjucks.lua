-- promptfoo's templates are Nunjucks; evalua's are ev.template. This turns
-- the Nunjucks that prompts, assertion values and http bodies use into an
-- ev.template: {{ var }}, dotted paths, x[0] and x["k"] indexes, filters
-- with arguments, {# comments #}, {{- -}} whitespace control, and the tags
-- if/elif/else/endif (over a variable) and for/else/endfor as sections.
-- Other tags and expressions (a + b, x if y else z) are refused naming
-- their line, never rendered wrongly. Nunjucks' filters that
-- ev.template lacks are added to the run's filter table (M.install).
-- docs/promptfoo.md lists the filters and where they differ.
local template = require "evalua.experiment.template"
local json = require "evalua.core.json"
local caught = require "evalua.core.caught"

local M = {}

local function text(v)
  if type(v) == "string" then return v end
  if type(v) == "number" then return json.number(v) end
  if type(v) == "boolean" then return tostring(v) end
  return json.encode(v)
end

local function list(v, name)
  if type(v) ~= "table" then error(("filter '%s' needs a list"):format(name), 0) end
  return v
end

-- Nunjucks filters missing from ev.template's built-ins, by Nunjucks' rules.
M.FILTERS = {
  dump = function(v) return json.encode(v) end,
  safe = function(v) return v end, -- promptfoo renders without HTML escaping, so safe changes nothing
  string = function(v) return text(v) end,
  capitalize = function(v)
    local s = text(v):lower()
    return (s:gsub("^%l", string.upper))
  end,
  title = function(v) return (text(v):lower():gsub("(%w)(%w*)", function(a, b) return a:upper() .. b end)) end,
  first = function(v)
    if type(v) == "string" then return v:sub(1, (utf8.offset(v, 2) or #v + 1) - 1) end
    return list(v, "first")[1] or ""
  end,
  last = function(v)
    if type(v) == "string" then return v:sub(utf8.offset(v, -1) or 1) end
    local l = list(v, "last")
    return l[#l] or ""
  end,
  replace = function(v, a)
    local from, to = text(a[1] or ""), text(a[2] or "")
    if from == "" then return text(v) end
    local s, out, pos = text(v), {}, 1
    while true do
      local i, j = s:find(from, pos, true)
      if not i then break end
      out[#out + 1] = s:sub(pos, i - 1) .. to
      pos = j + 1
    end
    return table.concat(out) .. s:sub(pos)
  end,
  int = function(v) local n = tonumber(v) return n and math.tointeger(n < 0 and math.ceil(n) or math.floor(n)) or 0 end,
  float = function(v) return (tonumber(v) or 0) + 0.0 end,
  abs = function(v) return math.abs(tonumber(v) or 0) end,
  round = function(v, a)
    local n, p = tonumber(v) or 0, math.tointeger(a[1]) or 0
    local f = 10 ^ p
    local r = (n >= 0 and math.floor(n * f + 0.5) or -math.floor(-n * f + 0.5)) / f
    return p == 0 and math.tointeger(r) or r
  end,
  wordcount = function(v)
    local n = 0
    for _ in text(v):gmatch("%w+") do n = n + 1 end
    return n
  end,
  reverse = function(v)
    if type(v) == "string" then
      local cs = {}
      for _, c in utf8.codes(v) do table.insert(cs, 1, utf8.char(c)) end
      return table.concat(cs)
    end
    local out = {}
    for i = #list(v, "reverse"), 1, -1 do out[#out + 1] = v[i] end
    return out
  end,
  sort = function(v)
    local out = {}
    for i, x in ipairs(list(v, "sort")) do out[i] = x end
    table.sort(out, function(a, b) return text(a) < text(b) end)
    return out
  end,
  urlencode = function(v)
    return (text(v):gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
  end,
  escape = function(v)
    return (text(v):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                                      ["'"] = "&#39;" }))
  end,
}
M.FILTERS.e = M.FILTERS.escape
-- promptfoo's own filter: a JSON text parsed (promptfoo adds load to Nunjucks)
M.FILTERS.load = function(v)
  if type(v) ~= "string" then return v end
  local x, why = json.decode(v)
  if x == nil then error("filter 'load': not JSON: " .. tostring(why), 0) end
  return x
end
-- (x | load).a.b: the path after a parenthesised expression, as a filter
M.FILTERS.pf_path = function(v, a)
  for seg in tostring(a[1] or ""):gmatch("[^%.]+") do
    if type(v) ~= "table" then return nil end
    local x = v[seg]
    if x == nil and tonumber(seg) then x = v[tonumber(seg)] end
    v = x
  end
  if v == nil then error(("no value at '%s'"):format(tostring(a[1])), 0) end
  return v
end

-- Filter names as Nunjucks spells them -> ev.template's.
local RENAMED = { d = "default", tojson = "dump" }

-- Adds the Nunjucks filters to the current run's filter table.
function M.install()
  for name, fn in pairs(M.FILTERS) do
    if rawget(template.filters, name) == nil then template.filters[name] = fn end
  end
end

-- x[0] -> x.1, x["k"] / x['k'] -> x.k (Nunjucks indexes from 0).
local function path_of(expr)
  local out = expr:gsub("%[%s*(%d+)%s*%]", function(n) return "." .. (tonumber(n) + 1) end)
  out = out:gsub("%[%s*\"([%w_]+)\"%s*%]", ".%1"):gsub("%[%s*'([%w_]+)'%s*%]", ".%1")
  return out
end

local expression

-- The for loops open while converting, innermost last: their variables.
local loops = {}

-- A path inside loops: the innermost loop's variable is the section's
-- element (".", or its fields), loop.index/first/last are @index/@first/@last.
local function in_loop(head)
  local var = loops[#loops]
  if not var then return head end
  local meta = head:match("^loop%.(%w+)$")
  if meta == "index" or meta == "first" or meta == "last" then return "@" .. meta end
  if head:match("^loop%.") then return nil, ("'%s' is not supported (loop.index, loop.first, loop.last are)"):format(head) end
  if head == var then return "." end
  local rest = head:sub(#var + 2)
  if head:sub(1, #var + 1) == var .. "." then return rest end
  for i = 1, #loops - 1 do
    if head == loops[i] or head:sub(1, #loops[i] + 1) == loops[i] .. "." then
      return nil, ("the outer loop's variable '%s' inside an inner loop is not supported"):format(loops[i])
    end
  end
  return head
end

-- "(inner).a[0]": the inner expression converted, then its path as a filter.
local function grouped(body)
  local inner, rest = body:match("^%s*(%b())(.*)$")
  if not inner then return nil end
  local tail, filters = rest:match("^([%.%[][^|]*)(.*)$")
  if not tail then return nil end
  local path = path_of(tail:match("^(.-)%s*$")):gsub("^%.", "")
  if not path:match("^[%w_%.]+$") then return nil end
  local e, why = expression(inner:sub(2, -2))
  if not e then return nil, why end
  return ("%s | pf_path('%s')%s"):format(e, path, filters:match("^%s*$") and "" or (" " .. filters:match("^%s*(.-)%s*$")))
end

-- One {{ ... }} body in ev.template's syntax, or nil and why.
function expression(body)
  if body:match("^%s*%(") then
    local e, why = grouped(body)
    if e then return e end
    if why then return nil, why end
  end
  local parts = template._split_bars(body)
  local head = parts[1]
  if not (head:match('^"[^"]*"$') or head:match("^'[^']*'$")) then
    head = path_of(head)
    if not head:match("^[%a_][%w_]*$") and not head:match("^[%a_][%w_%.]*[%w_]$") then
      return nil, ("the Nunjucks expression '{{ %s }}' is not supported (a variable, a dotted path or an index, "
        .. "with filters)"):format(body)
    end
    local why
    head, why = in_loop(head)
    if not head then return nil, why end
  end
  for i = 2, #parts do
    local name, rest = parts[i]:match("^([%a_][%w_]*)(.*)$")
    if not name then return nil, ("cannot read the filter '%s'"):format(parts[i]) end
    parts[i] = (RENAMED[name] or name) .. rest
  end
  parts[1] = head
  return table.concat(parts, " | ")
end

-- A tag's path (if x, for y in xs), converted, or nil and why.
local function tag_path(p)
  p = path_of(p)
  if not p:match("^[%a_][%w_%.]*$") then return nil, ("cannot read '%s' (a variable or a dotted path)"):format(p) end
  return in_loop(p)
end

-- {% if %}, {% elif %}, {% else %}, {% endif %}, {% for x in xs %},
-- {% endfor %} as ev.template sections, which the frames gather: an if is
-- an inverted section whose else part is the then part ({{^x}}B{{else}}A{{/x}}
-- renders A in the same scope when x is truthy), a for a section over the list.
local function open_if(frames, path, neg, chained, line)
  frames[#frames + 1] = { kind = "if", path = path, neg = neg, chained = chained, line = line, main = {} }
end

local function close_frame(f)
  local main, other = table.concat(f.main), f.other and table.concat(f.other)
  if f.kind == "for" then
    return ("{{#%s}}%s%s{{/%s}}"):format(f.path, main, other and ("{{else}}" .. other) or "", f.path)
  end
  if f.neg then return ("{{^%s}}%s%s{{/%s}}"):format(f.path, main, other and ("{{else}}" .. other) or "", f.path) end
  return ("{{^%s}}%s{{else}}%s{{/%s}}"):format(f.path, other or "", main, f.path)
end

local function buffer(frames)
  local f = frames[#frames]
  return f.other or f.main
end

-- One tag: nil, or why it cannot be converted.
local function tag(frames, inner, line)
  local t = inner:match("^%s*(.-)%s*$")
  local word, rest = t:match("^(%a+)%s*(.-)$")
  if word == "if" or word == "elif" then
    local neg, p = rest:match("^(not%s+)(.+)$")
    p = p or rest
    local path, why = tag_path(p)
    if not path then return ("{%% %s %%}: %s (conditions are a variable or 'not' a variable)"):format(t, why) end
    if word == "elif" then
      local f = frames[#frames]
      if f.kind ~= "if" or f.other then return "{% elif %} outside an if" end
      f.other = {}
    end
    open_if(frames, path, neg ~= nil, word == "elif", line)
  elseif word == "else" and rest == "" then
    local f = frames[#frames]
    if not f.kind or f.other then return "{% else %} outside an if or a for" end
    f.other = {}
  elseif word == "endif" and rest == "" then
    while true do
      local f = frames[#frames]
      if f.kind ~= "if" then return "{% endif %} closes no if" end
      frames[#frames] = nil
      local b = buffer(frames)
      b[#b + 1] = close_frame(f)
      if not f.chained then break end
    end
  elseif word == "for" then
    local var, p = rest:match("^([%a_][%w_]*)%s+in%s+(.+)$")
    if not var then return ("{%% %s %%}: a loop is 'for x in list'"):format(t) end
    local path, why = tag_path(p)
    if not path then return ("{%% %s %%}: %s"):format(t, why) end
    frames[#frames + 1] = { kind = "for", path = path, line = line, main = {} }
    loops[#loops + 1] = var
  elseif word == "endfor" and rest == "" then
    local f = frames[#frames]
    if f.kind ~= "for" then return "{% endfor %} closes no for" end
    frames[#frames] = nil
    loops[#loops] = nil
    local b = buffer(frames)
    b[#b + 1] = close_frame(f)
  else
    return ("the Nunjucks tag '{%% %s %%}' is not supported: evalua converts if, elif, else and for, not set, "
      .. "macro, include or other tags"):format(t)
  end
  return nil
end

-- convert(source) -> ev.template text | nil, why, line (1-based, in source).
function M.convert(source)
  loops = {}
  local frames = { { main = {} } }
  local pos, line = 1, 1
  local trim_next = false
  while true do
    local out = buffer(frames)
    local open, kind = source:find("{[{%%#]", pos)
    local chunk = source:sub(pos, (open or #source + 1) - 1)
    if trim_next then chunk = chunk:gsub("^%s+", "") end
    trim_next = false
    kind = open and source:sub(open + 1, open + 1)
    local closer = kind == "{" and "}}" or kind == "%" and "%}" or "#}"
    local dash = open and source:sub(open + 2, open + 2) == "-"
    if dash then chunk = chunk:gsub("%s+$", "") end
    out[#out + 1] = chunk
    if not open then break end
    line = line + select(2, source:sub(pos, open - 1):gsub("\n", ""))
    local close = source:find(closer, open + 2, true)
    if not close then return nil, ("'{%s' is never closed"):format(kind), line end
    local inner = source:sub(open + (dash and 3 or 2), close - 1)
    if inner:sub(-1) == "-" then inner, trim_next = inner:sub(1, -2), true end
    if kind == "%" then
      local why = tag(frames, inner, line)
      if why then return nil, why, line end
    elseif kind == "{" then
      local expr, why = expression(inner)
      if not expr then return nil, why, line end
      out[#out + 1] = "{{" .. expr .. "}}"
    end
    line = line + select(2, source:sub(open, close):gsub("\n", ""))
    pos = close + #closer
  end
  if #frames > 1 then
    local f = frames[#frames]
    return nil, ("{%% %s %%} is never closed"):format(f.kind), f.line
  end
  return table.concat(frames[1].main)
end

-- compile(source, name) -> template | nil, why, line: the Nunjucks text
-- converted and compiled; why without the line, which comes apart.
function M.compile(source, name)
  local text_, why, line = M.convert(source)
  if not text_ then return nil, why, line end
  local ok, t = pcall(template.compile, text_, name)
  if ok then return t end
  caught.pass_on(t)
  local l, msg = tostring(t):match("line (%d+): (.*)$")
  return nil, msg or tostring(t), tonumber(l) or 1
end

-- Whether s holds a template tag at all (plain strings need no template).
function M.has_tags(s)
  return type(s) == "string" and (s:find("{{", 1, true) or s:find("{%", 1, true) or s:find("{#", 1, true)) ~= nil
end

-- render(t, vars) -> text | nil, why: a missing variable is an error, not "".
function M.render(t, vars)
  local ok, s = pcall(t.render, t, vars)
  if ok then return s end
  caught.pass_on(s)
  return nil, (tostring(s):gsub("^template '[^']*' line %d+: ", ""))
end

return M
