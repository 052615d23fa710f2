-- The harness of the suites that run promptfoo configs (evalua run
-- promptfooconfig.yaml) against the mock server: one mock per suite, reset
-- before each test; a config's folder copied fresh; the run itself.
local h = require "tests.lua.helpers"
local mock = require "tests.mock.mock"

local M = { src = os.getenv("EVALUA_SRC") or "." }

-- suite() -> a LuaUnit class whose tests find the mock, reset, in M.server.
function M.suite()
  local S = {}
  function S.setUp()
    M.server = M.server or mock.start()
    M.server:reset()
  end
  return S
end

-- copy(from) -> a fresh folder holding a copy of folder from's files.
function M.copy(from)
  local dir = h.tmpdir()
  h.sh(("cp -r %s/. %s/"):format(from, dir))
  return dir
end

-- run(dir, env, args) -> {status, stdout, stderr} of `ENV evalua run
-- promptfooconfig.yaml --quiet --out DIR/out ARGS` in dir.
function M.run(dir, env, args)
  return h.run(("cd %s && %s %s run promptfooconfig.yaml --quiet --out %s/out %s"):format(dir, env, h.bin, dir, args))
end

return M
