-- The --sandbox profile, applied by the host once, before the script runs.
-- What is enforced in C (the file-access policy, CPU and memory limits) stays
-- enforced whatever a script does here; this file removes the ways out of
-- Lua (processes, C modules, bytecode, debug) and locks the shared tables.
local sys = require "evalua._sys"

local M = {}

local function refuse(name)
  return function()
    error("sandbox: " .. name .. " is not available in --sandbox mode", 2)
  end
end

local function readonly(name, real)
  return setmetatable({}, {
    __index = real,
    __newindex = function(_, k)
      error(("sandbox: the '%s' table is read-only (cannot set '%s')"):format(name, tostring(k)), 2)
    end,
    __pairs = function() return next, real, nil end,
    __len = function() return #real end,
    __metatable = "sandbox: locked",
  })
end

local real_load = load

-- Text chunks only: crafted bytecode can crash the interpreter.
local function text_only_load(chunk, name, _, env)
  if env == nil then return real_load(chunk, name, "t") end
  return real_load(chunk, name, "t", env)
end

-- Raises at the caller's caller, so the message names the script's line.
local function check(path, mode)
  local ok, err = sys.path_allowed(path, mode)
  if not ok then error(err, 3) end
end

local function guard_files()
  local open, lines, input, output = io.open, io.lines, io.input, io.output
  io.open = function(path, mode) -- fails the way io.open fails: nil, message
    local ok, err = sys.path_allowed(path, mode or "r")
    if not ok then return nil, err end
    return open(path, mode)
  end
  io.lines = function(path, ...)
    if path ~= nil then check(path, "r") end
    return lines(path, ...)
  end
  io.input = function(f)
    if type(f) == "string" then check(f, "r") end
    return input(f)
  end
  io.output = function(f)
    if type(f) == "string" then check(f, "w") end
    return output(f)
  end
  local remove, rename = os.remove, os.rename
  os.remove = function(path) check(path, "w"); return remove(path) end
  os.rename = function(a, b) check(a, "w"); check(b, "w"); return rename(a, b) end
  loadfile = function(path, _, env)
    local ok, perr = sys.path_allowed(path, "r")
    if not ok then return nil, perr end
    local f, err = io.open(path, "r")
    if not f then return nil, err end
    local src = f:read("a")
    f:close()
    return text_only_load(src, "@" .. path, "t", env)
  end
  dofile = function(path)
    local f = assert(loadfile(path))
    return f()
  end
end

local function remove_escapes()
  io.popen = refuse("io.popen")
  os.execute = refuse("os.execute")
  os.exit = refuse("os.exit (return a status from the script instead)")
  os.getenv = refuse("os.getenv")
  os.tmpname = refuse("os.tmpname")
  package.loadlib = refuse("package.loadlib")
  package.cpath, package.path = "", ""
  local searchers = package.searchers
  for i = #searchers, 3, -1 do searchers[i] = nil end -- keep preload and the library
  load = text_only_load
  debug = nil
  package.loaded.debug = nil
end

local function lock_tables(registry)
  local libenv = {}
  for k, v in pairs(_G) do libenv[k] = v end
  libenv._G = libenv
  registry["evalua.libenv"] = readonly("library globals", libenv)
  for _, name in ipairs { "string", "table", "math", "utf8", "coroutine", "os", "io", "package" } do
    local proxy = readonly(name, _G[name])
    _G[name] = proxy
    package.loaded[name] = proxy
  end
  local smt = getmetatable("")
  smt.__index = string
  smt.__metatable = readonly("string metatable", smt)
  setmetatable(_G, { __metatable = "sandbox: the global table's metatable is locked" })
end

function M.apply()
  local registry = debug.getregistry()
  guard_files()
  remove_escapes()
  lock_tables(registry)
end

return M
