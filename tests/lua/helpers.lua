-- Shared helpers for the LuaUnit suites: temporary folders, files, and
-- running a child evalua (the binary under test, $EVALUA) on a script.
local H = {}

local bin = os.getenv("EVALUA") or (os.getenv("PWD") .. "/build/evalua")
H.bin = bin

function H.sh(cmd)
  local ok, how, code = os.execute(cmd)
  return ok, how, code
end

function H.tmpdir()
  local p = io.popen("mktemp -d")
  local dir = p:read("l")
  p:close()
  return dir
end

function H.write(path, data)
  H.sh("mkdir -p '" .. path:match("^(.*)/[^/]*$") .. "'")
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
end

function H.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- Runs a command; returns {status=, stdout=, stderr=}.
function H.run(cmd)
  local dir = H.tmpdir()
  local ok, how, code = os.execute(("%s > %s/out 2> %s/err"):format(cmd, dir, dir))
  local r = { status = how == "exit" and code or 128 + code,
              stdout = H.read(dir .. "/out"), stderr = H.read(dir .. "/err") }
  H.sh("rm -rf " .. dir)
  return r
end

-- Writes code to script.lua in a fresh folder and runs `ENV evalua run OPTS script.lua ARGS`.
function H.run_script(code, opts, args, env)
  local dir = H.tmpdir()
  H.write(dir .. "/script.lua", code)
  local r = H.run(("cd %s && %s %s run %s script.lua %s"):format(dir, env or "", bin, opts or "", args or ""))
  H.sh("rm -rf " .. dir)
  return r
end

-- Asserts that f(...) raises "bad argument #arg to '...' (detail ...".
function H.fails_with_argument_error(arg, detail, f, ...)
  local lu = require "luaunit"
  local ok, msg = pcall(f, ...)
  lu.assertFalse(ok)
  lu.assertStrContains(msg, ("bad argument #%d to '"):format(arg))
  lu.assertStrContains(msg, "' (" .. detail)
end

return H
