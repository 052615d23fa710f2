-- ev.report: every format is a function (results, opts) -> string, so a
-- user's own format is one short Lua function registered next to these.
--
--   ev.report.print(res)                                   -- terminal table on stdout
--   ev.report.write(res, { dir = "out", name = "rag_report",
--                          formats = { "md", "json", "csv", "html", "junit" } })
--   ev.report.register("slack", function(res, opts) return "..." end, "txt")
local C = require "evalua._report"
local json = require "evalua.core.json"
local sys = require "evalua._sys"
local options = require "evalua.core.options"
local run = require "evalua.core.run"

local M = {}

local builtin = {
  terminal = { module = "evalua.report.terminal", ext = "txt" },
  md = { module = "evalua.report.markdown", ext = "md" },
  json = { module = "evalua.report.json", ext = "json" },
  csv = { module = "evalua.report.csv", ext = "csv" },
  html = { module = "evalua.report.html", ext = "html" },
  junit = { module = "evalua.report.junit", ext = "junit.xml" },
}
builtin.markdown = builtin.md

-- The formats a script registered live in its run (evalua.core.run).
local function custom() return run.current().formats end

-- The options each call reads (a misspelt one is an error, not a default);
-- a format of one's own adds those it reads (register's opts.options).
local RENDER = { "title", "color", "width" }
local WRITE = { "dir", "name", "formats", "title" }
local PRINT = { "color", "width" }

-- register(name, fn [, ext [, {options = {...}}]]): a format of one's own,
-- or one that replaces a built-in format of the same name. Its file ends
-- in ext (default: the name); write refuses two formats of one file name.
function M.register(name, fn, ext, opts)
  if type(name) ~= "string" or not name:match("^[%w_-]+$") then
    error("ev.report.register: a format name is a word (letters, digits, '_', '-')", 2)
  end
  if type(fn) ~= "function" then error("ev.report.register: a format is a function(results, opts)", 2) end
  ext = ext or name
  if type(ext) ~= "string" or not ext:match("^[%w_.-]+$") then
    error("ev.report.register: the extension is a word such as \"txt\"", 2)
  end
  options.check(opts, options.set { "options" }, "ev.report.register", 2)
  custom()[name] = { fn = fn, ext = ext, options = opts and opts.options or {} }
end

-- The names of every format, built-in and registered, sorted.
function M.formats()
  local out = {}
  local own = custom()
  for name in pairs(builtin) do if not own[name] then out[#out + 1] = name end end
  for name in pairs(own) do out[#out + 1] = name end
  table.sort(out)
  return out
end

local function format_of(name, level)
  local f = custom()[name] or builtin[name]
  if not f then
    error(("unknown report format '%s' (formats: %s)"):format(tostring(name), table.concat(M.formats(), ", ")),
      level + 1)
  end
  if not f.fn then
    local mod = require(f.module)
    -- a table format streams itself to a file: {render = fn, write = fn(res, opts, path)},
    -- with the options it reads and their check (options, check = fn(opts, what, level))
    if type(mod) == "table" then f.fn, f.stream, f.options, f.check = mod.render, mod.write, mod.options, mod.check
    else f.fn = mod end
  end
  return f
end

-- Checks opts against the names a call reads and the options of formats.
local function check(opts, names, formats, what)
  if opts ~= nil and type(opts) ~= "table" then error(what .. ": options must be a table", 3) end
  local known = options.set(names)
  for _, f in ipairs(formats) do
    for _, o in ipairs(f.options or {}) do known[o] = true end
  end
  options.check(opts, known, what, 3)
  for _, f in ipairs(formats) do
    if f.check then f.check(opts or {}, what, 4) end
  end
end

-- render(res, format [, opts]) -> string
function M.render(res, name, opts)
  local f = format_of(name, 2)
  check(opts, RENDER, { f }, "ev.report.render")
  return f.fn(res, opts or {})
end

function M.print(res, opts)
  check(opts, PRINT, {}, "ev.report.print")
  if res:is_part() then return end
  local o, term = {}, require "evalua.report.terminal"
  for k, v in pairs(opts or {}) do o[k] = v end
  if o.color == nil then o.color = term.color_ok() end -- a terminal, NO_COLOR unset, TERM not dumb
  if o.width == nil then o.width = term.columns() end   -- $COLUMNS, else the terminal's; none for a file
  io.stdout:write(format_of("terminal", 2).fn(res, o))
end

-- The formats of write's opts, checked: a list of names whose files differ.
local function write_formats(opts, name)
  local list = opts.formats or { "md", "json" }
  if type(list) ~= "table" then
    error(("ev.report.write: formats must be a list of names, such as {\"md\"} (got %s)"):format(type(list)), 3)
  end
  local formats, by_file = {}, {}
  for _, fmt in ipairs(list) do
    local f = format_of(fmt, 3)
    local file = ("%s.%s"):format(name, f.ext)
    local other = by_file[file]
    if other and other.f ~= f then
      error(("ev.report.write: formats '%s' and '%s' would both write %s; register one with another extension")
        :format(other.name, fmt, file), 3)
    end
    if not other then formats[#formats + 1], by_file[file] = f, { f = f, name = fmt } end
  end
  return formats
end

-- Calls fn(...), which writes the report file named file (nil: the
-- staging folder itself); a file that cannot be written (a full disk, a
-- folder that cannot be made) is an input error naming it as the user will
-- look for it, with no traceback (exit status 3), and the staging folder
-- goes, leaving dir as it was. Any other error passes through as it is.
local function written(dir, file, fn, ...)
  local out = table.pack(pcall(fn, ...))
  if out[1] then return table.unpack(out, 2, out.n) end
  local err = out[2]
  local what = type(err) == "string" and err:match("cannot write .*$")
  if not what then error(err, 0) end
  if file then what = ("cannot write %s: %s"):format(file, what:match(": ([^:]+)$") or what) end
  sys.input_error(("evalua: %s; the reports in %s are as they were"):format(what, dir))
end

-- write(res, {dir=, name=, formats=}) -> list of paths written. The files
-- are rendered into a staging folder beside dir (inside it when only dir is
-- writable), which then takes dir's place at once; a run killed midway
-- leaves dir as it was, and the next write removes what it left
-- (host/runtime/stage.h, docs/evaluate.md).
function M.write(res, opts)
  if type(opts) ~= "table" then error("ev.report.write: options must be a table {dir=, name=, formats=}", 2) end
  local name = opts.name or "report"
  local formats = write_formats(opts, name)
  check(opts, WRITE, formats, "ev.report.write")
  if res:is_part() then return {} end
  local dir = (opts.dir or "out"):gsub("(.)/+$", "%1")
  local stage <close>, tmp = written(dir, nil, C.stage, dir)
  local files, replaced = {}, {}
  for i, f in ipairs(formats) do
    files[i] = ("%s.%s"):format(name, f.ext)
    local path, shown = tmp .. "/" .. files[i], dir .. "/" .. files[i]
    if f.stream then replaced[i] = written(dir, shown, f.stream, res, opts, path) -- streamed to its file (JSON and CSV)
    else
      local text = f.fn(res, opts) -- a format's own error keeps its traceback
      -- the built-in text formats take invalid UTF-8 from the data as JSON
      -- and CSV do: U+FFFD each, counted for the warning below
      if f.module then text, replaced[i] = json.utf8(text) end
      written(dir, shown, function() assert(sys.write_atomic(path, text)) end)
    end
  end
  written(dir, nil, stage.publish, stage, files)
  local paths = {}
  for i, file in ipairs(files) do
    paths[i] = dir .. "/" .. file
    json.say_replaced(paths[i], replaced[i] or 0)
  end
  return paths
end

-- next_steps(res, paths [, {judge_option = "--judge openai"}]) -> lines: what
-- a user does after a run (the bundled scripts print them on stderr): open
-- the HTML report among paths; when the offline judge gave the judged
-- scores and the script has an option for a real judge, how to use one.
function M.next_steps(res, paths, opts)
  options.check(opts, options.set { "judge_option" }, "ev.report.next_steps", 2)
  local lines = {}
  for _, p in ipairs(paths or {}) do
    if p:match("%.html$") then
      lines[#lines + 1] = ("next: open %s in a browser: intervals, charts, the lowest items with their reasons"):format(p)
    end
  end
  local judge = res.meta and res.meta.judge
  if opts and opts.judge_option and judge and judge.model == "offline" then
    lines[#lines + 1] = ("%s judged scores come from the offline heuristic judge; for a model's, add %s and set"
      .. " $OPENAI_BASE_URL, $OPENAI_API_KEY, $EVALUA_MODEL"):format(#lines > 0 and "     " or "next:", opts.judge_option)
  end
  return lines
end

return M
