-- ev.report: every format is a function (results, opts) -> string, so a
-- user's own format is one short Lua function registered next to these.
--
--   ev.report.print(res)                                   -- terminal table on stdout
--   ev.report.write(res, { dir = "out", name = "rag_report",
--                          formats = { "md", "json", "csv", "html", "junit" } })
--   ev.report.register("slack", function(res, opts) return "..." end, "txt")
local sys = require "evalua._sys"

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

local custom = {}

function M.register(name, fn, ext)
  if type(fn) ~= "function" then error("report.register: a format is a function(results, opts)", 2) end
  custom[name] = { fn = fn, ext = ext or name }
end

local function format_of(name)
  local f = custom[name] or builtin[name]
  if not f then error(("unknown report format '%s'"):format(tostring(name)), 3) end
  if not f.fn then
    local mod = require(f.module)
    -- a table format streams itself to a file: {render = fn, write = fn(res, opts, path)}
    if type(mod) == "table" then f.fn, f.stream = mod.render, mod.write else f.fn = mod end
  end
  return f
end

-- render(res, format [, opts]) -> string
function M.render(res, name, opts)
  return format_of(name).fn(res, opts or {})
end

function M.print(res, opts)
  opts = opts or {}
  if opts.color == nil then opts.color = sys.isatty("stdout") end
  io.stdout:write(M.render(res, "terminal", opts))
end

-- write(res, {dir=, name=, formats=}) -> list of paths written
function M.write(res, opts)
  local dir, name = opts.dir or "out", opts.name or "report"
  assert(sys.mkdir(dir))
  local paths = {}
  for _, fmt in ipairs(opts.formats or { "md", "json" }) do
    local f = format_of(fmt)
    local path = ("%s/%s.%s"):format(dir, name, f.ext)
    if f.stream then f.stream(res, opts, path)
    else assert(sys.write_atomic(path, f.fn(res, opts))) end
    paths[#paths + 1] = path
  end
  return paths
end

return M
