-- The --sandbox profile, applied by the host once, before the script runs.
-- What is enforced in C (the file-access policy, CPU, time and memory
-- limits) stays enforced whatever a script does here; this file removes the
-- ways out of Lua (processes, C modules, bytecode, debug), lets the
-- script require evalua's public modules only, and builds the script's
-- globals from an allow-list, as Redis does: explicit lists of
-- functions, copied into read-only tables with locked metatables, so nothing
-- new is reachable by default and nothing the library uses can be changed.
local sys = require "evalua._sys"

local M = {}

-- What a sandboxed script sees. Anything not listed is absent (nil); the
-- names in REFUSED are present and raise a message saying why.
local BUILTINS = {
  "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "print", "rawequal", "rawget",
  "rawlen", "rawset", "select", "setmetatable", "tonumber", "tostring", "type", "xpcall", "warn",
  "_VERSION", "require", "load", "loadfile", "dofile", "collectgarbage",
}
local LIBRARIES = {
  string = { "byte", "char", "dump", "find", "format", "gmatch", "gsub", "len", "lower", "match", "pack",
             "packsize", "rep", "reverse", "sub", "unpack", "upper" },
  table = { "concat", "insert", "move", "pack", "remove", "sort", "unpack" },
  math = { "abs", "acos", "asin", "atan", "ceil", "cos", "deg", "exp", "floor", "fmod", "huge", "log", "max",
           "maxinteger", "min", "mininteger", "modf", "pi", "rad", "random", "randomseed", "sin", "sqrt", "tan",
           "tointeger", "type", "ult" },
  utf8 = { "char", "charpattern", "codepoint", "codes", "len", "offset" },
  coroutine = { "close", "create", "isyieldable", "resume", "running", "status", "wrap", "yield" },
  os = { "clock", "date", "difftime", "time", "remove", "rename", "execute", "exit", "getenv", "tmpname" },
  io = { "close", "input", "lines", "open", "output", "read", "write", "type", "stdin", "stdout", "stderr",
         "popen", "tmpfile" },
}
local REFUSED = {
  ["os.execute"] = "os.execute", ["os.exit"] = "os.exit (return a status from the script instead)",
  ["os.getenv"] = "os.getenv", ["os.tmpname"] = "os.tmpname", ["io.popen"] = "io.popen",
  ["io.tmpfile"] = "io.tmpfile", ["package.loadlib"] = "package.loadlib",
  ["package.searchpath"] = "package.searchpath",
}
local GC_OPTIONS = { collect = true, count = true, step = true, isrunning = true }

local function refuse(name)
  return function()
    error("sandbox: " .. name .. " is not available in --sandbox mode", 2)
  end
end

-- A read-only view of real. Its metatable is locked, and pairs iterates
-- through a closure, so the view never hands out the table behind it.
local function readonly(name, real)
  return setmetatable({}, {
    __index = real,
    __newindex = function(_, k)
      error(("sandbox: the '%s' table is read-only (cannot set '%s')"):format(name, tostring(k)), 2)
    end,
    __pairs = function(self)
      return function(_, k) return next(real, k) end, self, nil
    end,
    __len = function() return #real end,
    __metatable = "sandbox: locked",
  })
end

-- evalua's own modules are frozen in place: the table every library file
-- holds stays the same table (so markers such as json.array keep their
-- identity), but its fields move behind a locked metatable, where a script
-- can read them and cannot change them.
local function freeze(t, name)
  local mt = getmetatable(t)
  if type(t) ~= "table" or mt == "sandbox: locked" then return t end
  mt = mt or {}
  local hidden = {}
  for k, v in next, t do hidden[k] = v end
  for k in next, hidden do rawset(t, k, nil) end
  -- the evalua table loads submodules on use, keeping them itself (it never
  -- rawsets): a tail call, so its errors name the script's line
  local lazy = type(mt.__index) == "function" and mt.__index
  setmetatable(t, {
    __index = not lazy and hidden or function(self, k)
      local v = hidden[k]
      if v ~= nil then return v end
      return lazy(self, k)
    end,
    __newindex = function(_, k)
      error(("sandbox: the module '%s' is read-only (cannot set '%s')"):format(name, tostring(k)), 2)
    end,
    __pairs = function(self) return function(_, k) return next(hidden, k) end, self, nil end,
    __len = function() return #hidden end,
    __call = mt.__call,
    __metatable = "sandbox: locked",
  })
  return t
end

local function ours(name) return name == "evalua" or name:sub(1, 7) == "evalua." end

-- Every evalua module loaded from now on is frozen as it loads; those
-- already loaded are frozen now.
local function freeze_modules()
  for name, mod in pairs(package.loaded) do
    if ours(name) then freeze(mod, name) end
  end
  local searchers = package.searchers
  for i, search in ipairs(searchers) do
    searchers[i] = function(name)
      local loader, extra = search(name)
      if type(loader) ~= "function" or not ours(name) then return loader, extra end
      return function(...) return freeze(loader(...), name) end, extra
    end
  end
end

local real_load = load

-- Text chunks only: crafted bytecode can crash the interpreter.
local function text_only_load(chunk, name, _, env)
  if env == nil then return real_load(chunk, name, "t") end
  return real_load(chunk, name, "t", env)
end

local function guard_files()
  local lines, input, output = io.lines, io.input, io.output
  -- The check and the open are one step in C (beneath the allowed folder,
  -- through no symbolic link); it fails the way io.open fails: nil, message.
  io.open = function(path, mode)
    if type(path) ~= "string" then error("bad argument #1 to 'open' (string expected)", 2) end
    return sys.open(path, mode)
  end
  io.lines = function(path, ...)
    if path == nil then return lines(nil, ...) end
    local f, err = sys.open(path, "r")
    if not f then error(err, 2) end
    local it = f:lines(...)
    local function pass(...)
      if (...) == nil then f:close() end
      return ...
    end
    -- as io.lines: the file closes at the end, or when a for loop is left
    return function() return pass(it()) end, nil, nil, f
  end
  io.input = function(f)
    if type(f) == "string" then
      local file, err = sys.open(f, "r")
      if not file then error(err, 2) end
      f = file
    end
    return input(f)
  end
  io.output = function(f)
    if type(f) == "string" then
      local file, err = sys.open(f, "w")
      if not file then error(err, 2) end
      f = file
    end
    return output(f)
  end
  os.remove, os.rename = sys.remove, sys.rename
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

-- Changes to the real tables, which library code also uses.
local function remove_escapes()
  for full, label in pairs(REFUSED) do
    local lib, name = full:match("^(%w+)%.(%w+)$")
    _G[lib][name] = refuse(label)
  end
  package.cpath, package.path = "", ""
  local searchers = package.searchers
  for i = #searchers, 3, -1 do searchers[i] = nil end -- keep preload and the library
  load = text_only_load
  local real_gc = collectgarbage
  collectgarbage = function(opt, ...)
    if opt ~= nil and not GC_OPTIONS[opt] then
      error(("sandbox: collectgarbage(%q) is not available in --sandbox mode"):format(tostring(opt)), 2)
    end
    return real_gc(opt, ...)
  end
  debug = nil
  package.loaded.debug = nil
end

local function copy_of(lib, names)
  local t = {}
  for _, k in ipairs(names) do t[k] = lib[k] end
  return t
end

-- What a sandboxed script may require: "evalua", the paths of its public
-- modules (init.lua's list: ev.text is "evalua.eval.text") and the standard
-- libraries. Library code keeps the real require: its chunks run with the
-- library's globals (registry "evalua.libenv", host/runtime/searcher.c), loaded
-- before or beside the script's, so the library reaches its internal
-- modules ("evalua.core.run", "evalua._table") and a script does not.
local function allowed_modules(public)
  local ok, names = { evalua = true, _G = true, package = true }, {}
  for name in pairs(LIBRARIES) do ok[name] = true end
  for name, path in pairs(public) do ok[path], names[#names + 1] = true, name end
  for old, path in pairs(require "evalua.core.moved") do -- old names, for one release
    if ok[path] then ok[old] = true end
  end
  table.sort(names)
  return ok, table.concat(names, ", ")
end

local function refuse_module(name, names)
  error(("sandbox: module '%s' is not available in --sandbox mode (a script requires \"evalua\", "
    .. "the standard libraries and the public modules: %s)"):format(tostring(name), names), 3)
end

-- A view of t holding only the allowed keys.
local function only(name, t, ok)
  return setmetatable({}, {
    __index = function(_, k) if ok[k] then return t[k] end end,
    __newindex = function(_, k)
      error(("sandbox: the '%s' table is read-only (cannot set '%s')"):format(name, tostring(k)), 2)
    end,
    __pairs = function(self)
      local function step(_, k)
        local v
        repeat k, v = next(t, k) until k == nil or ok[k]
        return k, v
      end
      return step, self, nil
    end,
    __metatable = "sandbox: locked",
  })
end

-- The script's package table: require finds the allowed modules only, and
-- what it reads (searchers, preload, loaded) is visible for those and not
-- changeable.
local function script_package(ok, names)
  local searchers = {}
  for i, search in ipairs(copy_of(package.searchers, { 1, 2 })) do
    searchers[i] = function(name)
      if not ok[name] then return "\n\tno module '" .. tostring(name) .. "' for a sandboxed script" end
      return search(name)
    end
  end
  local p = { path = "", cpath = "", config = package.config, loadlib = package.loadlib,
              searchpath = package.searchpath,
              loaded = only("package.loaded", package.loaded, ok),
              preload = only("package.preload", package.preload, ok),
              searchers = readonly("package.searchers", searchers) }
  local real_require = require
  local function script_require(name)
    if not ok[name] then refuse_module(name, names) end
    return real_require(name)
  end
  return readonly("package", p), script_require
end

-- The script's globals: only what the lists name.
local function script_env(ok, names)
  local env = {}
  for _, k in ipairs(BUILTINS) do env[k] = _G[k] end
  -- rawset would put a field in front of a frozen module's own
  local real_rawset = rawset
  env.rawset = function(t, k, v)
    if type(t) ~= "table" then
      error(("bad argument #1 to 'rawset' (table expected, got %s)"):format(type(t)), 2)
    end
    if getmetatable(t) == "sandbox: locked" then
      error(("sandbox: rawset on a locked table (cannot set '%s')"):format(tostring(k)), 2)
    end
    return real_rawset(t, k, v)
  end
  for name, list in pairs(LIBRARIES) do env[name] = readonly(name, copy_of(_G[name], list)) end
  env.package, env.require = script_package(ok, names)
  env._G = env
  return env
end

-- Metatables shared with library code: the string metatable and the file
-- handles' (io.open results) cannot be read or changed by a script. The
-- string methods are looked up through a function, since a table there
-- would be reachable (getmetatable("").__index) and open to rawset.
local function lock_metatables(registry)
  local smt, strings = getmetatable(""), string
  smt.__index = function(_, k) return strings[k] end
  smt.__metatable = readonly("string metatable", smt)
  local fmt = registry["FILE*"]
  if type(fmt) == "table" then fmt.__metatable = "sandbox: locked" end
end

function M.apply()
  local registry = debug.getregistry()
  guard_files()
  remove_escapes()
  local libenv = {}
  for k, v in pairs(_G) do libenv[k] = v end
  libenv._G = libenv
  registry["evalua.libenv"] = readonly("library globals", libenv)
  local ok, names = allowed_modules(getmetatable(require "evalua").__public)
  freeze_modules()
  local env = script_env(ok, names)
  -- require("string"), package.loaded._G and the like give the script's views
  for name in pairs(LIBRARIES) do package.loaded[name] = env[name] end
  package.loaded._G, package.loaded.package = env, env.package
  lock_metatables(registry)
  setmetatable(env, { __metatable = "sandbox: the global table's metatable is locked" })
  registry[2] = env -- LUA_RIDX_GLOBALS: the script's chunk and load() get env
end

return M
