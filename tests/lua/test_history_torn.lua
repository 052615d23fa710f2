-- The history survives a full disk (issue 13, item 1; issue 29): an append
-- writes a whole run or nothing, into the store (history.db) as into the
-- older history.jsonl, and a torn final line of history.jsonl left by a
-- crash is ignored with a warning when it is imported.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local APPEND = [[
local ev = require "evalua"
local rows = { { qid = "q1", s = 0.5 }, { qid = "q2", s = 0.25 } }
local res = ev.evaluate(ev.dataset.from_rows(rows, "mem"), { metrics = { { name = "s", fn = function(r) return r.s end } } })
local hist = ev.history.open("h", { jsonl = arg[2] == "jsonl" })
hist:append(res, { label = arg[1], notes = ("n"):rep(tonumber(arg[3]) or 3000) })
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

local function integrity()
  local db = require("evalua._sqlite").open(dir .. "/h/history.db", { readonly = true })
  local out = db:rows("PRAGMA integrity_check")[1].integrity_check
  db:close()
  return out
end

function TestTorn.test_a_short_write_leaves_the_store_as_it_was()
  lu.assertEquals(run("append.lua", "v1").stdout, "1\n")
  -- room for the shared-memory index (32 KiB), not for the log of a 200 kB record
  local r = run("append.lua", "v2 store 200000", 40)
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "h/history.db: disk I/O error")
  lu.assertEquals(integrity(), "ok")
  lu.assertEquals(run("count.lua").stdout, "1\n")
  r = run("append.lua", "v3")
  lu.assertEquals(r.stdout, "2\n")
  lu.assertEquals(r.stderr, "")
end

function TestTorn.test_a_short_write_leaves_history_jsonl_as_it_was()
  lu.assertEquals(run("append.lua", "v1 jsonl").stdout, "1\n")
  local before = h.read(dir .. "/h/history.jsonl")
  -- room for the store's pages and part of the next record (each is over 3 KB), not all of it
  local r = run("append.lua", "v2 jsonl", #before // 1024 + 2)
  lu.assertEquals(r.status, 3)
  lu.assertEquals(h.read(dir .. "/h/history.jsonl"), before)
end

function TestTorn.test_a_torn_final_line_is_ignored_with_a_warning_then_removed()
  run("append.lua", "v1 jsonl")
  local f = assert(io.open(dir .. "/h/history.jsonl", "ab"))
  f:write('{"run_id": "20261130T0000', "")
  f:close()
  os.remove(dir .. "/h/history.db") -- a folder of the older format, imported now
  local r = run("count.lua")
  lu.assertEquals(r.status, 0)
  lu.assertEquals(r.stdout, "1\n")
  lu.assertEquals(r.stderr, "evalua: warning: h/history.jsonl:2: ignoring a torn final record "
    .. "(25 bytes without a newline; it is not imported)\n")
  r = run("append.lua", "v2 jsonl")
  lu.assertEquals(r.status, 0)
  lu.assertStrContains(r.stderr, "evalua: warning: h/history.jsonl: removed a torn final record of 25 bytes before appending\n")
  lu.assertEquals(r.stdout, "2\n")
  lu.assertEquals(run("count.lua").stderr, "")
  lu.assertEquals(select(2, h.read(dir .. "/h/history.jsonl"):gsub("\n", "")), 2)
end

os.exit(lu.LuaUnit.run(), true)
