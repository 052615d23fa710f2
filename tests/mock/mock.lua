-- Starts and stops tests/mock/mock_openai.py for a LuaUnit suite. The server
-- watches this process and exits with it, so a failing or crashing test
-- never leaves it behind; stop() ends it at once.
local sys = require "evalua._sys"
local cjson = require "cjson"
local C = require "evalua._client"

local M = {}
local Mock = {}
Mock.__index = Mock

local src = os.getenv("EVALUA_SRC") or "."
local script = src .. "/tests/mock/mock_openai.py"

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function capture(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return out
end

-- start("--latency-ms 50") -> mock with .url (".../v1"), .root, .port, .pid
function M.start(args)
  local dir = capture("mktemp -d"):match("%S+")
  local pid = capture(("python3 %s --port-file %s/port --watch-pid %d %s >%s/log 2>&1 & echo $!")
    :format(script, dir, sys.getpid(), args or "", dir)):match("%d+")
  local deadline, port = sys.monotonic() + 15, nil
  while not port and sys.monotonic() < deadline do
    port = tonumber((read(dir .. "/port") or ""):match("%d+"))
    if not port then sys.sleep(0.02) end
  end
  if not port then
    os.execute("kill " .. pid .. " 2>/dev/null")
    error("the mock server did not start: " .. (read(dir .. "/log") or "no log"))
  end
  local root = ("http://127.0.0.1:%d"):format(port)
  return setmetatable({ pid = pid, port = port, dir = dir, root = root, url = root .. "/v1" }, Mock)
end

-- Control requests go through a bare engine (evalua._client): much quicker
-- than a client process per call; the numbers are the server's own.
function Mock:control(path, data)
  self.engine = self.engine or C.engine { base_url = self.root, api_key_env = false, max_retries = 0 }
  local id = self.engine:submit(path, data or "{}")
  while true do
    for _, d in ipairs(self.engine:poll(1000)) do
      if d.id == id then
        if d.error then error("mock control " .. path .. ": " .. d.error) end
        return cjson.decode(d.body)
      end
    end
  end
end

function Mock:stats() return self:control("/_mock/stats") end
function Mock:requests() return self:control("/_mock/requests").requests end
function Mock:reset() return self:control("/_mock/reset") end
function Mock:latency(ms) return self:control("/_mock/config", ('{"latency_ms": %d}'):format(ms)) end
-- Server behaviours (tests/mock/mock_openai.py); config{} restores the defaults.
function Mock:config(t) return self:control("/_mock/config", cjson.encode(t or {})) end

-- A judge on this mock for tests: no cache, no key, backoff in milliseconds;
-- defaults, then opts, override those.
function Mock:judge(defaults, opts)
  local o = { base_url = self.url, model = "m", cache = false, api_key_env = false, backoff_ms = 1,
              max_backoff_ms = 5 }
  for _, t in ipairs { defaults or {}, opts or {} } do
    for k, v in pairs(t) do o[k] = v end
  end
  return require("evalua").judge.open(o)
end

function Mock:stop()
  if self.engine then self.engine:close() end
  os.execute(("kill %s 2>/dev/null; rm -rf %s"):format(self.pid, self.dir))
end

-- A directive for the mock inside a message: mock.say{faults = {"500"}}.
function M.say(t)
  return "<<mock " .. cjson.encode(t) .. ">>"
end

return M
