-- ev.template: prompt templates. A template is parsed once into a tree and
-- rendered with a table of values; a value is only ever inserted as text,
-- never parsed again, so "{{x}}" inside a value stays literal.
--
--   {{name}} {{row.query}} {{contexts.1}}   a value (dotted paths, list indices)
--   {{x | json}} {{xs | numbered}}          filters, chained left to right
--   {{#xs}}..{{.}}..{{@index}}..{{/xs}}     a section: once per list item, once
--                                           for a truthy value, skipped otherwise
--   {{#x}}..{{else}}..{{/x}}  {{^x}}..{{/x}} an else branch; an inverted section
--   {{! comment }}  {{"{{"}}                 a comment; a literal string
--
-- A value that is missing is an error naming it (use `| default("...")` or a
-- section for optional values). See docs/templates.md.
local json = require "evalua.core.json"
local run = require "evalua.core.run"

local M = {}

local MISSING = setmetatable({}, { __tostring = function() return "<missing>" end })

local Template = {}
Template.__index = Template

local function fail(t, line, fmt, ...)
  error(("template '%s' line %d: " .. fmt):format(t.name, line, ...), 0)
end

-- ---- values -----------------------------------------------------------------

local function is_list(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  return v[1] ~= nil or (mt ~= nil and mt.__jsontype == "array")
end


local function text_of(t, line, what, v)
  local ty = type(v)
  if ty == "string" then return v end
  if ty == "number" then
    if v ~= v then fail(t, line, "'%s' is NaN", what) end
    return json.number(v)
  end
  if ty == "boolean" then return tostring(v) end
  if ty == "table" then
    fail(t, line, "'%s' is a %s; use a section or a filter such as json, join or numbered",
      what, is_list(v) and "list" or "table")
  end
  fail(t, line, "'%s' is a %s and cannot be shown", what, ty)
end

local function list_of(t, line, what, v, filter)
  if type(v) ~= "table" then
    fail(t, line, "filter '%s' needs a list, but '%s' is a %s", filter, what, type(v))
  end
  local out = {}
  for i, x in ipairs(v) do out[i] = text_of(t, line, what .. "." .. i, x) end
  return out
end

-- ---- filters: fn(value, args, t, line, what) -> value --------------------------

local function utf8_prefix(s, n)
  if utf8.len(s) == nil or utf8.len(s) <= n then return s end
  return s:sub(1, utf8.offset(s, n + 1) - 1)
end

local BUILTIN_FILTERS = {
  json = function(v) return json.encode(v) end,
  trim = function(v, _, t, l, w) return (text_of(t, l, w, v):gsub("^%s+", ""):gsub("%s+$", "")) end,
  upper = function(v, _, t, l, w) return text_of(t, l, w, v):upper() end,
  lower = function(v, _, t, l, w) return text_of(t, l, w, v):lower() end,
  join = function(v, a, t, l, w) return table.concat(list_of(t, l, w, v, "join"), a[1] or "\n") end,
  numbered = function(v, _, t, l, w)
    local xs = list_of(t, l, w, v, "numbered")
    for i, x in ipairs(xs) do xs[i] = i .. ". " .. x end
    return table.concat(xs, "\n")
  end,
  bullets = function(v, _, t, l, w)
    local xs = list_of(t, l, w, v, "bullets")
    for i, x in ipairs(xs) do xs[i] = "- " .. x end
    return table.concat(xs, "\n")
  end,
  length = function(v, _, t, l, w)
    if type(v) == "table" then return #v end
    local s = text_of(t, l, w, v)
    return utf8.len(s) or #s
  end,
  truncate = function(v, a, t, l, w)
    local n = math.tointeger(a[1])
    if not n or n < 0 then fail(t, l, "filter 'truncate' needs a whole number of characters") end
    return utf8_prefix(text_of(t, l, w, v), n)
  end,
  indent = function(v, a, t, l, w)
    local pad = (" "):rep(math.tointeger(a[1]) or 2)
    return (pad .. text_of(t, l, w, v):gsub("\n", "\n" .. pad))
  end,
}

-- ev.template.filters: the built-ins, with what a script adds kept in its run
-- (evalua.core.run), so a fresh run has the built-ins only.
M.filters = run.layered("filters", BUILTIN_FILTERS)

-- ---- parsing ------------------------------------------------------------------

local function parse_args(t, line, s)
  local args, pos = {}, 1
  while pos <= #s do
    local str, after = s:match('^%s*"([^"]*)"%s*()', pos)
    if not str then str, after = s:match("^%s*'([^']*)'%s*()", pos) end
    if not str then
      local num
      num, after = s:match("^%s*([%-%d%.]+)%s*()", pos)
      str = tonumber(num)
      if str == nil then fail(t, line, "cannot read filter arguments '%s'", s) end
    end
    args[#args + 1] = str
    pos = after
    local comma = s:match("^,%s*()", pos)
    if comma then pos = comma elseif pos <= #s then fail(t, line, "cannot read filter arguments '%s'", s) end
  end
  return args
end

local function parse_filter(t, line, s)
  local name, args = s:match("^([%w_]+)%s*%((.*)%)$")
  if not name then name, args = s:match("^([%w_]+)$"), "" end
  if not name then fail(t, line, "cannot read filter '%s'", s) end
  if name ~= "default" and not M.filters[name] then fail(t, line, "unknown filter '%s'", name) end
  return { name = name, args = parse_args(t, line, args) }
end

-- Splits "a.b | f(1) | g" on bars outside quotes.
local function split_bars(s)
  local parts, cur, quote = {}, {}, nil
  for ch in s:gmatch(".") do
    if quote then
      if ch == quote then quote = nil end
      cur[#cur + 1] = ch
    elseif ch == '"' or ch == "'" then
      quote = ch
      cur[#cur + 1] = ch
    elseif ch == "|" then
      parts[#parts + 1] = table.concat(cur)
      cur = {}
    else
      cur[#cur + 1] = ch
    end
  end
  parts[#parts + 1] = table.concat(cur)
  for i, p in ipairs(parts) do parts[i] = p:match("^%s*(.-)%s*$") end
  return parts
end
M._split_bars = split_bars -- internal (the underscore): also reads promptfoo's Nunjucks bodies (promptfoo/nunjucks.lua)

local function parse_value(t, line, body)
  local parts = split_bars(body)
  local head = parts[1]
  local node = { kind = "value", line = line, filters = {} }
  local lit = head:match('^"(.*)"$') or head:match("^'(.*)'$")
  if lit then
    node.literal = lit
  elseif head == "." or head:match("^@?[%w_]+$") or head:match("^[%w_]+[%w_%.]*[%w_]$") then
    node.path = head
  else
    fail(t, line, "cannot read '{{%s}}'", body)
  end
  for i = 2, #parts do node.filters[#node.filters + 1] = parse_filter(t, line, parts[i]) end
  return node
end

-- Tokens: strings (text) and tag tables {sigil=, body=, line=}.
local function tokenize(t, src)
  local toks, pos, line = {}, 1, 1
  while true do
    local open = src:find("{{", pos, true)
    if not open then
      if pos <= #src then toks[#toks + 1] = src:sub(pos) end
      return toks
    end
    if open > pos then toks[#toks + 1] = src:sub(pos, open - 1) end
    line = line + select(2, src:sub(pos, open - 1):gsub("\n", ""))
    local close = src:find("}}", open + 2, true)
    if not close then fail(t, line, "'{{' is never closed") end
    local inner = src:sub(open + 2, close - 1)
    local sigil, body = inner:match("^%s*([#^/!]?)%s*(.-)%s*$")
    if inner:match("^%s*else%s*$") then sigil, body = "else", "" end
    toks[#toks + 1] = { sigil = sigil, body = body, line = line }
    line = line + select(2, inner:gsub("\n", ""))
    pos = close + 2
  end
end

-- A block tag alone on its line takes the line with it, so templates can put
-- {{#section}} on a line of its own without leaving blank lines behind.
local function strip_standalone(toks)
  local standalone = {}
  for i, tok in ipairs(toks) do
    if type(tok) == "table" and tok.sigil ~= "" then
      local prev, nxt = toks[i - 1], toks[i + 1]
      local before = prev == nil or (type(prev) == "string" and prev:match("[^\n]*$"):match("^[ \t]*$")
        and (i == 2 or prev:find("\n", 1, true)))
      local after = nxt == nil or (type(nxt) == "string" and nxt:match("^[^\n]*"):match("^[ \t]*\r?$")
        and (i == #toks - 1 or nxt:find("\n", 1, true)))
      standalone[i] = before and after
    end
  end
  for i in pairs(standalone) do
    if standalone[i] then
      if type(toks[i - 1]) == "string" then toks[i - 1] = toks[i - 1]:gsub("[ \t]*$", "") end
      if type(toks[i + 1]) == "string" then
        local s = toks[i + 1]
        toks[i + 1] = s:find("\n", 1, true) and s:gsub("^[ \t]*\r?\n", "", 1) or s:gsub("^[ \t]*$", "")
      end
    end
  end
end

local function build(t, toks)
  local root = { children = {} }
  local stack, cur = { root }, root.children
  for _, tok in ipairs(toks) do
    if type(tok) == "string" then
      if tok ~= "" then cur[#cur + 1] = { kind = "text", text = tok } end
    elseif tok.sigil == "#" or tok.sigil == "^" then
      if not tok.body:match("^@?[%w_][%w_%.]*$") and tok.body ~= "." then
        fail(t, tok.line, "cannot read section name '%s'", tok.body)
      end
      local node = { kind = "section", path = tok.body, inverted = tok.sigil == "^", line = tok.line,
                     children = {}, otherwise = {} }
      cur[#cur + 1] = node
      stack[#stack + 1] = node
      cur = node.children
    elseif tok.sigil == "else" then
      local top = stack[#stack]
      if top == root then fail(t, tok.line, "{{else}} outside a section") end
      cur = top.otherwise
    elseif tok.sigil == "/" then
      local top = stack[#stack]
      if top == root then fail(t, tok.line, "'{{/%s}}' closes no section", tok.body) end
      if top.path ~= tok.body then
        fail(t, tok.line, "'{{/%s}}' closes section '%s' opened on line %d", tok.body, top.path, top.line)
      end
      stack[#stack] = nil
      local parent = stack[#stack]
      cur = parent == root and root.children
        or (parent.in_else and parent.otherwise or parent.children)
    elseif tok.sigil == "!" then
      -- a comment
    else
      cur[#cur + 1] = parse_value(t, tok.line, tok.body)
    end
    if tok.sigil == "else" then stack[#stack].in_else = true end
  end
  if #stack > 1 then
    local top = stack[#stack]
    fail(t, top.line, "section '%s' is never closed", top.path)
  end
  return root.children
end

-- ---- rendering --------------------------------------------------------------------

-- scopes: innermost last; each {value=, index=, first=, last=}
local function lookup(scopes, path)
  if path == "." then return scopes[#scopes].value end
  local meta = path:match("^@(%w+)$")
  if meta then
    for i = #scopes, 1, -1 do
      if scopes[i].index then
        local v = scopes[i][meta]
        if v == nil then return MISSING end
        return v
      end
    end
    return MISSING
  end
  local first, rest = path:match("^([^%.]+)%.?(.*)$")
  local v = MISSING
  for i = #scopes, 1, -1 do
    local s = scopes[i].value
    if type(s) == "table" then
      local x = s[first]
      if x == nil and tonumber(first) then x = s[tonumber(first)] end
      if x ~= nil then v = x break end
    end
  end
  for seg in rest:gmatch("[^%.]+") do
    if type(v) ~= "table" then return MISSING end
    local x = v[seg]
    if x == nil and tonumber(seg) then x = v[tonumber(seg)] end
    if x == nil then return MISSING end
    v = x
  end
  if v == json.null then return MISSING end
  return v
end

local function truthy(v)
  if v == MISSING or v == nil or v == false or v == "" then return false end
  if type(v) == "table" then return next(v) ~= nil end
  return true
end

local render_nodes

local function render_value(t, node, scopes, out)
  local v = node.literal
  local what = node.path or "literal"
  if v == nil then v = lookup(scopes, node.path) end
  for _, f in ipairs(node.filters) do
    if f.name == "default" then
      if v == MISSING then v = f.args[1] == nil and "" or f.args[1] end
    else
      if v == MISSING then fail(t, node.line, "missing variable '%s'", what) end
      v = M.filters[f.name](v, f.args, t, node.line, what)
    end
  end
  if v == MISSING then fail(t, node.line, "missing variable '%s'", what) end
  out[#out + 1] = text_of(t, node.line, what, v)
end

local function render_section(t, node, scopes, out)
  local v = lookup(scopes, node.path)
  local on = truthy(v)
  if node.inverted then
    render_nodes(t, on and node.otherwise or node.children, scopes, out)
    return
  end
  if not on then
    render_nodes(t, node.otherwise, scopes, out)
  elseif is_list(v) then
    local n = #v
    for i = 1, n do
      scopes[#scopes + 1] = { value = v[i], index = i, first = i == 1, last = i == n }
      render_nodes(t, node.children, scopes, out)
      scopes[#scopes] = nil
    end
  else
    scopes[#scopes + 1] = { value = v }
    render_nodes(t, node.children, scopes, out)
    scopes[#scopes] = nil
  end
end

render_nodes = function(t, nodes, scopes, out)
  for _, node in ipairs(nodes) do
    if node.kind == "text" then out[#out + 1] = node.text
    elseif node.kind == "value" then render_value(t, node, scopes, out)
    else render_section(t, node, scopes, out) end
  end
end

-- ---- the public face -----------------------------------------------------------------

-- compile(source [, name]) -> template
function M.compile(source, name)
  if type(source) ~= "string" then
    error(("template: expected the template text as a string, got %s"):format(type(source)), 2)
  end
  local t = setmetatable({ source = source, name = name or "inline" }, Template)
  local toks = tokenize(t, source)
  strip_standalone(toks)
  t.nodes = build(t, toks)
  return t
end

-- file(path [, name]) -> template read from a file; errors name the path.
function M.file(path, name)
  local f, err = io.open(path, "rb")
  if not f then error("template: cannot read " .. tostring(err), 2) end
  local src = f:read("a")
  f:close()
  return M.compile(src, name or path)
end

function M.is_template(x)
  return getmetatable(x) == Template
end

-- load(spec [, name]) -> template from a template, its text, or {file = path}.
function M.load(spec, name)
  if M.is_template(spec) then return spec end
  if type(spec) == "string" then return M.compile(spec, name) end
  if type(spec) == "table" and type(spec.file) == "string" then return M.file(spec.file, name) end
  error(("template%s: expected text, a template or {file = path}, got %s")
    :format(name and (" '" .. name .. "'") or "", type(spec)), 2)
end

-- t:render(vars) -> string
function Template:render(vars)
  if vars ~= nil and type(vars) ~= "table" then
    error(("template '%s': render expects a table of values, got %s"):format(self.name, type(vars)), 2)
  end
  local out = {}
  render_nodes(self, self.nodes, { { value = vars or {} } }, out)
  return table.concat(out)
end

-- t:variables() -> sorted names the template reads at its top level.
function Template:variables()
  local seen, out = {}, {}
  local function walk(nodes, depth)
    for _, n in ipairs(nodes) do
      local first = n.path and n.path:match("^([^%.]+)")
      if first and first ~= "." and not first:match("^@") and depth == 0 and not seen[first] then
        seen[first], out[#out + 1] = true, first
      end
      if n.kind == "section" then
        walk(n.children, depth + 1)
        walk(n.otherwise, depth + 1)
      end
    end
  end
  walk(self.nodes, 0)
  table.sort(out)
  return out
end

Template.__call = Template.render
Template.__tostring = function(t) return "template '" .. t.name .. "'" end

-- render(source, vars) -> string, for one-off use.
function M.render(source, vars, name)
  return M.load(source, name):render(vars)
end

-- ev.template(source [, name]) is ev.template.compile.
return setmetatable(M, { __call = function(_, source, name) return M.compile(source, name) end })
