-- ev.report: every format is a function (results, opts) -> string, so a
-- user's own format is one short Lua function registered next to these.
--
--   ev.report.print(res)                                   -- terminal table on stdout
--   ev.report.write(res, { dir = "out", name = "rag_report",
--                          formats = { "md", "json", "csv", "html", "junit" } })
--   ev.report.register("slack", function(res, opts) return "..." end, "txt")
local shard = require "evalua.shard"
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
  if shard.skip(res) then return end
  opts = opts or {}
  if opts.color == nil then opts.color = sys.isatty("stdout") end
  io.stdout:write(M.render(res, "terminal", opts))
end

-- The folder files are written into before they move into dir: beside dir
-- (DIR.tmp-PID), or inside it when only dir is writable (--sandbox with
-- dir = --out).
local function staging(dir)
  dir = dir:gsub("(.)/+$", "%1")
  local tmp = ("%s.tmp-%d"):format(dir, sys.getpid())
  if not sys.path_allowed(tmp, "w") then tmp = ("%s/.tmp-%d"):format(dir, sys.getpid()) end
  assert(sys.mkdir(tmp))
  return dir, tmp
end

-- Moves the finished files into place: the whole folder in one rename when
-- dir does not exist yet, else file by file (each rename is atomic).
local function publish(tmp, dir, files)
  local paths = {}
  for i, file in ipairs(files) do paths[i] = dir .. "/" .. file end
  if not sys.stat(dir) and os.rename(tmp, dir) then return paths end
  assert(sys.mkdir(dir))
  for i, file in ipairs(files) do assert(os.rename(tmp .. "/" .. file, paths[i])) end
  assert(os.remove(tmp))
  return paths
end

-- write(res, {dir=, name=, formats=}) -> list of paths written. Every
-- report is written into a temporary folder first, so a run killed midway
-- leaves at most that folder, never a partial dir.
function M.write(res, opts)
  if shard.skip(res) then return {} end
  local name, formats = opts.name or "report", {}
  for i, fmt in ipairs(opts.formats or { "md", "json" }) do formats[i] = format_of(fmt) end
  local dir, tmp = staging(opts.dir or "out")
  local files = {}
  for _, f in ipairs(formats) do
    files[#files + 1] = ("%s.%s"):format(name, f.ext)
    local path = tmp .. "/" .. files[#files]
    if f.stream then f.stream(res, opts, path) -- streamed to its file (JSON and CSV)
    else assert(sys.write_atomic(path, f.fn(res, opts))) end
  end
  return publish(tmp, dir, files)
end

return M
