-- Reading a promptfoo config: the YAML (evalua._yaml) with the line of each
-- key, the problems found while checking it (every one is collected and all
-- are listed before anything is sent), and the files it names (file://
-- paths, relative to the config's folder, and globs).
local yaml = require "evalua._yaml"
local json = require "evalua.core.json"
local sys = require "evalua._sys"

local M = {}

M.null = yaml.null

-- ---- problems ----------------------------------------------------------------

local Problems = {}
Problems.__index = Problems

function M.problems() return setmetatable({ list = {} }, Problems) end

-- add(file, line, fmt, ...): one problem, "file:line: message".
function Problems:add(file, line, fmt, ...)
  self.list[#self.list + 1] = { file = file, line = line or 0, n = #self.list,
                                text = ("%s:%d: " .. fmt):format(file, line or 0, ...) }
end

-- A problem whose text names its place already ("file:line:col: ...").
function Problems:add_text(file, line, text)
  self.list[#self.list + 1] = { file = file, line = line or 0, n = #self.list, text = text }
end

-- Every problem, by file and line, as one input error (exit status 3).
function Problems:stop_if_any(what)
  if #self.list == 0 then return end
  table.sort(self.list, function(a, b)
    if a.file ~= b.file then return a.file < b.file end
    if a.line ~= b.line then return a.line < b.line end
    return a.n < b.n
  end)
  local lines = {}
  for i, p in ipairs(self.list) do lines[i] = p.text end
  lines[#lines + 1] = ("evalua: %d problem%s in %s; nothing was sent"):format(#self.list,
    #self.list == 1 and "" or "s", what)
  sys.input_error(table.concat(lines, "\n"))
end

-- ---- documents with lines ---------------------------------------------------

-- A decoded document: {file =, lines =, dir =}; where(t, key) is the line of
-- t's key (or of t itself).
local Doc = {}
Doc.__index = Doc

function Doc:line(t, key)
  if self.fixed then return self.fixed end -- a CSV record: every field on its line
  local l = type(t) == "table" and self.lines[t]
  if not l then return 0 end
  return key ~= nil and l[key] or l[0] or 0
end

function M.doc(file, lines, dir) return setmetatable({ file = file, lines = lines or {}, dir = dir }, Doc) end

local function read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("a")
  f:close()
  return s
end
M.read = read

function M.dir_of(path) return path:match("^(.*)/[^/]*$") or "." end

-- A path of the config, relative to its folder unless absolute.
function M.resolve(dir, path)
  if path:sub(1, 1) == "/" or dir == "." then return path end
  return dir .. "/" .. path
end

-- decode(path, text) -> value, doc | nil, "path:line:col: message"
function M.decode_yaml(path, text, dir)
  local v, lines = yaml.decode(text, path)
  if v == nil then return nil, lines end
  return v, M.doc(path, lines, dir or M.dir_of(path))
end

-- load(path) -> the config's value, its doc | raises an input error
function M.load(path)
  local text, err = read(path)
  if not text then sys.input_error(("%s: cannot read the config: %s"):format(path, tostring(err))) end
  local v, doc = M.decode_yaml(path, text)
  if v == nil then sys.input_error(doc) end
  if type(v) ~= "table" or getmetatable(v) == yaml.array then
    sys.input_error(("%s:1: a promptfoo config is a mapping of keys (prompts, providers, tests ...)"):format(path))
  end
  return v, doc
end

-- ---- files named by file:// -------------------------------------------------

local function glob_pattern(g)
  return "^" .. g:gsub("[%^%$%(%)%%%.%[%]%+%-]", "%%%0"):gsub("%*", "[^/]*"):gsub("%?", "[^/]") .. "$"
end

-- files(dir, spec) -> sorted list of paths | nil, why. spec is what follows
-- file://; a * or ? in its last part is a glob over that folder.
function M.files(dir, spec)
  local path = M.resolve(dir, spec)
  local folder, name = path:match("^(.*)/([^/]*)$")
  if not folder then folder, name = ".", path end
  if folder:find("[*?]") then return nil, "a glob may use * and ? in the file name only, not in folders" end
  if not name:find("[*?]") then return { path } end
  local names, err = sys.listdir(folder)
  if not names then return nil, ("cannot list %s: %s"):format(folder, tostring(err)) end
  local pat, out = glob_pattern(name), {}
  for _, n in ipairs(names) do
    if n:match(pat) then out[#out + 1] = (folder == "." and "" or folder .. "/") .. n end
  end
  table.sort(out)
  if #out == 0 then return nil, ("no file matches %s"):format(spec) end
  return out
end

function M.ext(path) return (path:match("%.([%w]+)$") or ""):lower() end

-- A file's value as promptfoo reads a file:// value: .json and .yaml/.yml
-- parsed, anything else its text. nil, why when it cannot be read.
function M.file_value(path)
  local text, err = read(path)
  if not text then return nil, ("cannot read %s: %s"):format(path, tostring(err)) end
  local ext = M.ext(path)
  if ext == "json" then
    local v, why = json.decode(text)
    if v == nil then return nil, ("%s: not JSON: %s"):format(path, tostring(why)) end
    return v
  elseif ext == "yaml" or ext == "yml" then
    local v, why = yaml.decode(text, path)
    if v == nil then return nil, why end
    return v
  elseif ext == "js" or ext == "cjs" or ext == "mjs" or ext == "ts" or ext == "py" then
    return nil, ("%s: a %s file is code; evalua does not run JavaScript or Python from a config"):format(path, ext)
  end
  return text
end

-- ---- checking keys ----------------------------------------------------------

-- keys(t, known, hints) -> the keys of t not in known, by line; hints[k]
-- says why a known promptfoo key is not supported.
function M.unknown_keys(doc, t, known)
  local out = {}
  for k in pairs(t) do
    if not known[k] then out[#out + 1] = k end
  end
  table.sort(out, function(a, b)
    local la, lb = doc:line(t, a), doc:line(t, b)
    if la ~= lb then return la < lb end
    return tostring(a) < tostring(b)
  end)
  return out
end

-- check_keys(problems, doc, t, where, known, hints): one problem per key of
-- t that evalua does not support, naming it and why.
function M.check_keys(problems, doc, t, where, known, hints)
  for _, k in ipairs(M.unknown_keys(doc, t, known)) do
    local hint = hints and hints[k]
    problems:add(doc.file, doc:line(t, k), "%s%s: %s", where ~= "" and (where .. ".") or "", tostring(k),
      hint and ("not supported: " .. hint) or "not a key evalua supports here (it would be ignored, so it is refused)")
  end
end

function M.is_list(v) return type(v) == "table" and (getmetatable(v) == yaml.array or (v[1] ~= nil)) end
function M.is_map(v) return type(v) == "table" and getmetatable(v) ~= yaml.array and not (v[1] ~= nil) end

-- A YAML null is the key left out.
function M.value(v) if v == yaml.null then return nil end return v end

return M
