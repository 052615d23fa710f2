-- The history's SQLite store under stress (issue 29, part 1): two runs
-- writing at once, kill -9 during writes, and a full disk (a small tmpfs)
-- each leave a database that passes PRAGMA integrity_check with every
-- committed run whole: its record, all its items and aggregates.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local sqlite = require "evalua._sqlite"
local sys = require "evalua._sys"

local ITEMS = 300
-- Appends arg[2] runs of ITEMS items to history arg[1], printing each run
-- id once its append returned (committed), flushed at once.
local WRITER = ([[
local ev = require "evalua"
local hist = ev.history.open(arg[1])
local rows = {}
for i = 1, %d do rows[i] = { qid = "q" .. i, c = "c" .. i %% 3, s = i / %d } end
local res = ev.evaluate(rows, { metrics = { { name = "s", fn = function(r) return r.s end } }, slices = { "c" }, ci = false })
for i = 1, tonumber(arg[2]) do
  local rec = hist:append(res, { label = (arg[3] or "w") .. i, notes = ("x"):rep(tonumber(arg[4]) or 10), dashboard = false,
                                 git_commit = false })
  io.stdout:write(rec.run_id, "\n")
  io.stdout:flush()
end
]]):format(ITEMS, ITEMS)

local dir
TestStore = {}
function TestStore:setUp()
  dir = h.tmpdir()
  h.write(dir .. "/writer.lua", WRITER)
end
function TestStore:tearDown() h.sh("rm -rf " .. dir) end

-- The store's state: integrity_check's verdict, and per run id its item
-- and score counts and aggregate rows.
local function inspect(path)
  local db = sqlite.open(path, { readonly = true })
  local verdict = db:rows("PRAGMA integrity_check")[1].integrity_check
  local runs = {}
  for _, r in ipairs(db:rows([[SELECT run_id,
      (SELECT count(*) FROM items i WHERE i.run = r.seq) AS items,
      (SELECT count(*) FROM scores s WHERE s.run = r.seq) AS scores,
      (SELECT count(*) FROM aggregates a WHERE a.run = r.seq) AS aggregates FROM runs r]])) do
    runs[r.run_id] = r
  end
  db:close()
  return verdict, runs
end

local function lines_of(path)
  local out = {}
  local f = io.open(path)
  if not f then return out end
  for l in f:lines() do out[#out + 1] = l end
  f:close()
  return out
end

-- Every committed run whole: ITEMS items with one score each, and the
-- aggregates of "all" and the three classes.
local function assert_whole(runs, ids)
  for _, id in ipairs(ids) do
    local r = runs[id]
    lu.assertNotNil(r, "committed run " .. id .. " is missing")
    lu.assertEquals({ r.items, r.scores, r.aggregates }, { ITEMS, ITEMS, 4 }, id)
  end
end

function TestStore:test_two_runs_writing_at_once()
  h.sh(("cd %s && (%s run writer.lua h 12 A > a.out & %s run writer.lua h 12 B > b.out & wait)"):format(
    dir, h.bin, h.bin))
  local verdict, runs = inspect(dir .. "/h/history.db")
  lu.assertEquals(verdict, "ok")
  local a, b = lines_of(dir .. "/a.out"), lines_of(dir .. "/b.out")
  lu.assertEquals({ #a, #b }, { 12, 12 })
  assert_whole(runs, a)
  assert_whole(runs, b)
  local n = 0
  for _ in pairs(runs) do n = n + 1 end
  lu.assertEquals(n, 24)
end

-- A writer killed with SIGKILL at moments spread over its appends, eight
-- times: the store stays sound, and every run whose append returned is
-- there whole (a run cut off midway is not there at all).
function TestStore:test_kill_9_during_writes()
  local committed = {}
  for k = 1, 8 do
    local out = ("%s/kill%d.out"):format(dir, k)
    local p = io.popen(("cd %s && exec %s run writer.lua h 1000 K%d 20000 > %s 2>/dev/null & echo $!"):format(
      dir, h.bin, k, out))
    local pid = p:read("l")
    p:close()
    local deadline = sys.monotonic() + 20
    while #lines_of(out) < 1 and sys.monotonic() < deadline do sys.sleep(0.01) end
    sys.sleep(0.013 * k) -- into some later append, at a different point each time
    h.sh("kill -9 " .. pid)
    sys.sleep(0.1)
    for _, id in ipairs(lines_of(out)) do committed[#committed + 1] = id end
    local verdict, runs = inspect(dir .. "/h/history.db")
    lu.assertEquals(verdict, "ok", "after kill " .. k)
    assert_whole(runs, committed)
    for id, r in pairs(runs) do lu.assertEquals(r.items, ITEMS, "a partial run " .. id) end
  end
  lu.assertTrue(#committed >= 8)
  -- and the next run appends on top
  local r = h.run(("cd %s && %s run writer.lua h 1 after"):format(dir, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
end

-- A writer that kills itself (SIGKILL) inside its append's transaction,
-- after every item row is written and pages have spilled to the log (20,000
-- items with long reasons), before COMMIT: the store keeps the runs before.
function TestStore:test_kill_9_inside_the_transaction()
  lu.assertEquals(h.run(("cd %s && %s run writer.lua h 2 before"):format(dir, h.bin)).status, 0)
  h.write(dir .. "/suicide.lua", [[
local ev = require "evalua"
local store = require "evalua.history.store"
local insert = store.insert_items
store.insert_items = function(...)
  insert(...)
  os.execute("kill -9 $PPID")
end
local rows = {}
for i = 1, 20000 do rows[i] = { qid = "q" .. i, s = i / 20000 } end
local res = ev.evaluate(rows, { metrics = { { name = "s", fn = function(r) return { score = r.s, reason = ("why"):rep(30) } end } },
                        ci = false })
ev.history.open("h"):append(res, { label = "killed" })
print("not killed")
]])
  local r = h.run(("cd %s && %s run suicide.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 137, r.stdout .. r.stderr)
  local wal = sys.stat(dir .. "/h/history.db-wal")
  lu.assertTrue(wal and wal.size > 1e6, "the log holds the unfinished run's pages")
  local verdict, runs = inspect(dir .. "/h/history.db")
  lu.assertEquals(verdict, "ok")
  local n = 0
  for _, run in pairs(runs) do n = n + 1; lu.assertEquals(run.items, ITEMS) end
  lu.assertEquals(n, 2)
end

-- A full disk: a 1 MiB tmpfs the test mounts (CI runs as root). Appends
-- run until the disk is full; the one that fails says so, naming the
-- database; everything committed before is whole; once room is made,
-- appends go on.
function TestStore:test_a_full_disk()
  local mnt = dir .. "/mnt"
  h.sh("mkdir -p " .. mnt)
  if not h.sh(("mount -t tmpfs -o size=1m tmpfs %s 2>/dev/null"):format(mnt)) then
    print("SKIPPED test_a_full_disk: cannot mount a tmpfs here (needs root, or CAP_SYS_ADMIN)")
    return
  end
  local ok, err = pcall(function()
    h.sh("dd if=/dev/zero of=" .. mnt .. "/filler bs=1k count=300 2>/dev/null")
    local r = h.run(("cd %s && %s run %s/writer.lua h 200 F 2000"):format(mnt, h.bin, dir))
    lu.assertTrue(r.status == 1 or r.status == 3, "status " .. tostring(r.status) .. ": " .. r.stderr)
    lu.assertStrContains(r.stderr, "h/history.db: database or disk is full")
    local ids = {} -- stdout is kept off the full disk
    for id in r.stdout:gmatch("[^\n]+") do ids[#ids + 1] = id end
    lu.assertTrue(#ids >= 1 and #ids < 200, #ids .. " runs committed")
    local verdict, runs = inspect(mnt .. "/h/history.db")
    lu.assertEquals(verdict, "ok")
    assert_whole(runs, ids)
    h.sh("rm " .. mnt .. "/filler")
    r = h.run(("cd %s && %s run %s/writer.lua h 1 G"):format(mnt, h.bin, dir))
    lu.assertEquals(r.status, 0, r.stderr)
    verdict, runs = inspect(mnt .. "/h/history.db")
    lu.assertEquals(verdict, "ok")
    assert_whole(runs, { r.stdout:match("[^\n]+") })
  end)
  h.sh("umount " .. mnt)
  if not ok then error(err, 0) end
end

os.exit(lu.LuaUnit.run(), true)
