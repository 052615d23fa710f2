-- The client engine's memory counts against --mem-limit (host/client/engine.h
-- client_meter, charged in l_client.c): requests waiting with their bodies
-- and answers' buffers end the run at the cap with its message, as Lua's
-- own allocations do; under the cap nothing changes, and every byte is
-- given back when the requests are done.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start("--no-record") -- megabyte bodies: the server keeps none
local say = mockmod.say

local function run(code, opts)
  return h.run_script(code, opts, mock.url, ("EVALUA_SRC=%s"):format(os.getenv("EVALUA_SRC") or "."))
end

local SUBMIT = [[
local C = require "evalua._client"
local e = C.engine { base_url = arg[1], api_key_env = false, concurrency = 1 }
local body = ('{"model":"m","messages":[{"role":"user","content":"%s"}]}'):format(("x"):rep(1 << 20))
for i = 1, 64 do e:submit("/chat/completions", body .. (" "):rep(i)) end
print("queued 64 MB")
]]

function test_queued_request_bodies_end_the_run_at_the_cap()
  local r = run(SUBMIT, "--mem-limit 16")
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stdout, "")
  lu.assertEquals(r.stderr, "evalua: memory limit of 16 MB exceeded (--mem-limit)\n")
  -- under a cap with room the same script queues them all
  lu.assertEquals(run(SUBMIT, "--mem-limit 128").stdout, "queued 64 MB\n")
end

local ANSWER = [[
local ev = require "evalua"
local judge = ev.judge.open { base_url = arg[1], model = "m", cache = false, api_key_env = false,
                              max_response_bytes = 100 << 20 }
local r = judge:chat { messages = { { role = "user", content = '<<mock {"answer_bytes": %d}>>' } } }
print(r.ok, #r.text)
]]

function test_an_answer_larger_than_the_cap_leaves_ends_the_run()
  local r = run(ANSWER:format(24 << 20), "--mem-limit 16")
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, "evalua: memory limit of 16 MB exceeded (--mem-limit)\n")
  r = run(ANSWER:format(1 << 20), "--mem-limit 16")
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "true\t1048576\n")
end

function test_every_charged_byte_is_given_back()
  -- 40 requests of 1 MB one after another under a 16 MB cap: each one's
  -- bytes must be given back when it is done, or the sixteenth would not fit
  local r = run([[
local C = require "evalua._client"
local e = C.engine { base_url = arg[1], api_key_env = false }
local body = ('{"model":"m","messages":[{"role":"user","content":"%s'):format(("x"):rep(1 << 20))
for i = 1, 40 do
  e:submit("/chat/completions", body .. i .. '"}]}')
  local done
  repeat done = e:poll(1000)[1] until done
  assert(not done.error, done.error)
end
print(e:pending())
]], "--mem-limit 16")
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "0\n")
end

local status = lu.LuaUnit.run()
mock:stop()
os.exit(status, true)
