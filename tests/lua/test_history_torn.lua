-- The history survives a full disk (issue 13, item 1): an append writes a
-- whole record or nothing, and a torn final line left by a crash is ignored
-- with a warning and removed by the next append.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local APPEND = [[
local ev = require "evalua"
local rows = { { qid = "q1", s = 0.5 }, { qid = "q2", s = 0.25 } }
local res = ev.evaluate(ev.dataset.from_rows(rows, "mem"), { metrics = { { name = "s", fn = function(r) return r.s end } } })
local hist = ev.history.open("h")
hist:append(res, { label = arg[1], notes = ("n"):rep(3000) })
print(#hist:records())
]]
local COUNT = 'print(#require("evalua").history.open("h"):records())'

local dir
TestTorn = {}
function TestTorn.setUp()
  dir = h.tmpdir()
  h.write(dir .. "/append.lua", APPEND)
  h.write(dir .. "/count.lua", COUNT)
end
function TestTorn.tearDown() h.sh("rm -rf " .. dir) end

-- Runs a script of dir under bash with an optional file-size limit in KiB
-- (SIGXFSZ ignored, so write(2) comes back short and then fails with EFBIG:
-- what a full disk does).
local function run(script, args, limit_kib)
  local limit = limit_kib and ("trap '' XFSZ; ulimit -f %d; "):format(limit_kib) or ""
  return h.run(("cd %s && bash -c \"%sexec %s run %s %s\""):format(dir, limit, h.bin, script, args or ""))
end

function TestTorn.test_a_short_write_leaves_the_history_as_it_was()
  lu.assertEquals(run("append.lua", "v1").stdout, "1\n")
  local before = h.read(dir .. "/h/history.jsonl")
  -- room for part of the next record (each is over 3 KB), not all of it
  local r = run("append.lua", "v2", #before // 1024 + 2)
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "cannot append to 'h/history.jsonl': File too large")
  lu.assertEquals(h.read(dir .. "/h/history.jsonl"), before)
  r = run("append.lua", "v3")
  lu.assertEquals(r.stdout, "2\n")
  lu.assertEquals(r.stderr, "")
end

function TestTorn.test_a_torn_final_line_is_ignored_with_a_warning_then_removed()
  run("append.lua", "v1")
  local f = assert(io.open(dir .. "/h/history.jsonl", "ab"))
  f:write('{"run_id": "20261130T0000', "")
  f:close()
  local r = run("count.lua")
  lu.assertEquals(r.status, 0)
  lu.assertEquals(r.stdout, "1\n")
  lu.assertEquals(r.stderr, "evalua: warning: h/history.jsonl:2: ignoring a torn final record "
    .. "(25 bytes without a newline; the next append removes it)\n")
  r = run("append.lua", "v2")
  lu.assertEquals(r.status, 0)
  lu.assertStrContains(r.stderr, "evalua: warning: h/history.jsonl: removed a torn final record of 25 bytes before appending\n")
  lu.assertEquals(r.stdout, "2\n")
  lu.assertEquals(run("count.lua").stderr, "")
end

os.exit(lu.LuaUnit.run(), true)
