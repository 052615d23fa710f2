-- ev.report.write into a folder is all or nothing, also under kill -9
-- (issue 13, item 2; issue 26, items 9 and 12): the files are rendered into
-- a staging folder that takes the folder's place in one exchange; a writer
-- killed at any point leaves the folder wholly old or wholly new, and the
-- next write removes what it left, on a full disk too. Each kill is at a
-- point the writer reaches and says so ($EVALUA_TEST_PAUSE), so nothing
-- here depends on timing.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

-- Writes report files whose every line says arg[1]: Markdown, JSON, CSV
-- and a format of its own, into arg[2] (default out) as arg[3] (default r).
local SCRIPT = [[
local ev = require "evalua"
local v = arg[1]
ev.report.register("says", function() return ("%s\n"):format(v):rep(tonumber(arg[4] or 1)) end, "txt")
local res = ev.evaluate(ev.dataset.from_rows({ { qid = v, s = 0.5 } }, "mem"),
                        { metrics = { { name = "s", fn = function(r) return r.s end } } })
print(table.concat(ev.report.write(res, { dir = arg[2] or "out", name = arg[3] or "r", title = v,
                                          formats = { "md", "json", "csv", "says" } }), " "))
]]
local FILES = { "r.md", "r.json", "r.csv", "r.txt" }

local function ls(dir)
  local p = io.popen("cd " .. dir .. " && find . | sort")
  local out = p:read("a")
  p:close()
  return out
end

local function run(dir, args)
  return h.run(("cd %s && %s run s.lua %s"):format(dir, h.bin, args))
end

-- Runs `evalua ARGS` in dir with a pause at point (the FIFO at fifo), reads
-- the writer's word that it is there, kills it with SIGKILL and waits for
-- it (it is this process's child: the shell execs it).
local function kill_at_with(dir, fifo, point, args)
  h.sh(("rm -f %s && mkfifo %s"):format(fifo, fifo))
  local p = io.popen(("cd %s && echo $$ && EVALUA_TEST_PAUSE=%s:%s exec %s %s > /dev/null 2>&1")
    :format(dir, point, fifo, h.bin, args))
  local pid = p:read("l")
  local said = io.popen("timeout 60 head -n 1 " .. fifo):read("l")
  h.sh("kill -9 " .. pid)
  p:close()
  h.sh("rm -f " .. fifo)
  lu.assertEquals(said, point)
end

local function kill_at(dir, point, args)
  kill_at_with(dir, dir .. "/pause.fifo", point, "run s.lua " .. args)
end

-- Which version each report file of dir/out holds ("v1", "v2" ...).
local function versions(dir, files, out)
  local seen = {}
  for i, f in ipairs(files or FILES) do
    local text = h.read(("%s/%s/%s"):format(dir, out or "out", f)) or ""
    seen[i] = text:match("(v%d+)") or "none"
  end
  return table.concat(seen, " ")
end

local function staging_left(dir)
  return (ls(dir):gsub("[^\n]*pause[^\n]*\n", "")):match("evalua%-%a+%-%d+%-%d+") ~= nil
end

local dir
TestWrite = {}
function TestWrite:setUp()
  dir = h.tmpdir()
  h.write(dir .. "/s.lua", SCRIPT)
end
function TestWrite:tearDown() h.sh("rm -rf " .. dir) end

-- Killed once the files are staged: the folder is wholly old. The next
-- write, killed as well, first removes the staging folder the first left;
-- the one after that removes the second's and completes.
function TestWrite:test_killed_before_the_exchange_the_folder_is_old_and_the_next_write_cleans_up()
  lu.assertEquals(run(dir, "v1").status, 0)
  kill_at(dir, "report-staged", "v2")
  lu.assertEquals(versions(dir), "v1 v1 v1 v1")
  kill_at(dir, "report-staged", "v3")
  lu.assertEquals(versions(dir), "v1 v1 v1 v1")
  local _, staged = ls(dir):gsub("%./out%.evalua%-tmp%-%d+%-%d+\n", "")
  lu.assertEquals(staged, 1)
  local r = run(dir, "v4")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "out/r.md out/r.json out/r.csv out/r.txt\n")
  lu.assertEquals(versions(dir), "v4 v4 v4 v4")
  lu.assertEquals(ls(dir), ".\n./out\n./out/r.csv\n./out/r.json\n./out/r.md\n./out/r.txt\n./s.lua\n")
end

-- Killed right after the exchange: the folder is wholly new; the old one,
-- left under the staging name, goes with the next write. Other files in the
-- folder and its permissions are kept.
function TestWrite:test_killed_after_the_exchange_the_folder_is_new_and_keeps_what_else_it_held()
  lu.assertEquals(run(dir, "v1").status, 0)
  h.write(dir .. "/out/keep.txt", "mine")
  h.sh("chmod 750 " .. dir .. "/out")
  local inode = io.popen("stat -c %i " .. dir .. "/out"):read("l")
  kill_at(dir, "report-exchanged", "v2")
  lu.assertEquals(versions(dir), "v2 v2 v2 v2")
  lu.assertNotEquals(io.popen("stat -c %i " .. dir .. "/out"):read("l"), inode) -- a new folder in its place
  lu.assertEquals(io.popen("stat -c %a " .. dir .. "/out"):read("l"), "750")
  lu.assertEquals(h.read(dir .. "/out/keep.txt"), "mine")
  lu.assertTrue(staging_left(dir))
  lu.assertEquals(run(dir, "v3 out other").status, 0)
  lu.assertFalse(staging_left(dir))
  lu.assertEquals(versions(dir), "v2 v2 v2 v2")
  lu.assertEquals(versions(dir, { "other.md", "other.txt" }), "v3 v3")
  lu.assertEquals(h.read(dir .. "/out/keep.txt"), "mine")
end

-- A folder that holds a folder cannot be exchanged without taking that
-- folder away: its files move one rename each. A writer killed between two
-- renames leaves a mix, which the next write into it finishes first.
function TestWrite:test_with_a_subfolder_files_move_and_a_killed_move_is_finished_by_the_next_write()
  lu.assertEquals(run(dir, "v1").status, 0)
  h.write(dir .. "/out/history/keep.txt", "mine")
  local inode = io.popen("stat -c %i " .. dir .. "/out"):read("l")
  kill_at(dir, "report-moving", "v2")
  lu.assertEquals(versions(dir), "v2 v1 v1 v1") -- the first file moved, then the kill
  lu.assertStrMatches(ls(dir), ".*%./out%.evalua%-pub%-%d+%-%d+\n.*")
  local r = run(dir, "v3 out other")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(versions(dir), "v2 v2 v2 v2")
  lu.assertEquals(versions(dir, { "other.md", "other.json", "other.csv", "other.txt" }), "v3 v3 v3 v3")
  lu.assertFalse(staging_left(dir))
  lu.assertEquals(io.popen("stat -c %i " .. dir .. "/out"):read("l"), inode)
  lu.assertEquals(h.read(dir .. "/out/history/keep.txt"), "mine")
end

-- Two runs writing other reports into one folder at once: every report of
-- both arrives whole (each exchange carries what the other put there).
function TestWrite:test_two_writers_into_one_folder_lose_nothing()
  lu.assertEquals(run(dir, "v0").status, 0)
  h.sh(("cd %s && (for i in 1 2 3 4 5 6; do %s run s.lua v$i out a; done > /dev/null 2>&1 &"
    .. " for i in 1 2 3 4 5 6; do %s run s.lua v$i out b; done > /dev/null 2>&1; wait)"):format(dir, h.bin, h.bin))
  local names = {}
  for _, n in ipairs { "a", "b", "r" } do
    for _, ext in ipairs { "md", "json", "csv", "txt" } do names[#names + 1] = n .. "." .. ext end
  end
  lu.assertEquals(versions(dir, names), "v6 v6 v6 v6 v6 v6 v6 v6 v0 v0 v0 v0")
  lu.assertFalse(staging_left(dir))
end

-- A run that exits from inside a format (no kill: os.exit skips every
-- close) leaves its staging folder and no report folder; the next write
-- removes it.
function TestWrite:test_a_run_that_exits_while_writing_leaves_no_report_folder()
  h.write(dir .. "/x.lua", [[
local ev = require "evalua"
local res = ev.evaluate(ev.dataset.from_rows({ { qid = "q1", s = 0.5 } }, "mem"),
                        { metrics = { { name = "s", fn = function(r) return r.s end } } })
ev.report.register("die", function() os.exit(9) end, "txt")
ev.report.write(res, { dir = "out/reports/today", formats = { "md", "die" } })]])
  local r = h.run(("cd %s && %s run x.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 9)
  local listing = ls(dir .. "/out/reports")
  lu.assertNotStrContains(listing, "./today\n")
  lu.assertStrMatches(listing, "%.\n%./today%.evalua%-tmp%-%d+%-1\n%./today%.evalua%-tmp%-%d+%-1/report%.md\n")
  lu.assertEquals(run(dir, "v1 out/reports/today").status, 0)
  lu.assertEquals(ls(dir .. "/out/reports"), ".\n./today\n./today/r.csv\n./today/r.json\n./today/r.md\n./today/r.txt\n")
end

function TestWrite:test_reports_move_into_a_new_or_existing_folder_and_nothing_else_remains()
  h.write(dir .. "/t.lua", [[
local ev = require "evalua"
local res = ev.evaluate(ev.dataset.from_rows({ { qid = "q1", s = 0.5 } }, "mem"),
                        { metrics = { { name = "s", fn = function(r) return r.s end } } })
print(table.concat(ev.report.write(res, { dir = "out/new/", formats = { "md", "json" } }), " "))
print(table.concat(ev.report.write(res, { dir = "out", name = "r", formats = { "csv" } }), " "))
print(table.concat(ev.report.write(res, { dir = "out/new", name = "r", formats = { "csv" } }), " "))]])
  h.write(dir .. "/out/keep.txt", "mine")
  local r = h.run(("cd %s && %s run --sandbox --out out t.lua"):format(dir, h.bin))
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "out/new/report.md out/new/report.json\nout/r.csv\nout/new/r.csv\n")
  lu.assertEquals(ls(dir .. "/out"), ".\n./keep.txt\n./new\n./new/r.csv\n./new/report.json\n./new/report.md\n./r.csv\n")
end

-- Under --sandbox with the report folder the --out itself, the staging
-- folder is inside it (nothing beside is writable) and the files move; a
-- killed move is finished by the next write there.
function TestWrite:test_sandboxed_into_its_out_folder_a_killed_move_is_finished_next_time()
  local function sandboxed(args) return ("--sandbox --out out s.lua %s"):format(args) end
  lu.assertEquals(h.run(("cd %s && %s run %s"):format(dir, h.bin, sandboxed("v1 out"))).status, 0)
  kill_at_with(dir, dir .. "/out/pause.fifo", "report-moving", "run " .. sandboxed("v2 out"))
  lu.assertEquals(versions(dir), "v2 v1 v1 v1")
  lu.assertStrMatches(ls(dir), ".*%./out/%.evalua%-pub%-%d+%-%d+\n.*")
  local r = h.run(("cd %s && %s run %s"):format(dir, h.bin, sandboxed("v3 out other")))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(versions(dir), "v2 v2 v2 v2")
  lu.assertFalse(staging_left(dir))
end

-- Runs fn(disk) with a 1280 kB tmpfs mounted at dir/disk (root only, as in
-- CI; skipped elsewhere), unmounted whatever fn raises.
local function on_small_disk(fn)
  local uid = io.popen("id -u"):read("l")
  lu.skipIf(uid ~= "0", "needs root to mount a small tmpfs (CI runs as root)")
  local disk = dir .. "/disk"
  h.sh("mkdir -p " .. disk)
  local ok = h.sh(("mount -t tmpfs -o size=1280k tmpfs %s 2>/dev/null"):format(disk))
  lu.skipIf(not ok, "cannot mount a tmpfs here (no CAP_SYS_ADMIN in this container)")
  local fine, err = pcall(fn, disk)
  h.sh("umount " .. disk)
  if not fine then error(err, 0) end
end

-- On a small tmpfs (root only, as in CI): a killed write's staging folder
-- fills the disk; the next write removes it before it needs the room.
function TestWrite:test_a_full_disk_of_stale_staging_is_cleaned_before_the_next_write()
  -- "vN\n" x 100,000: 300 kB in the .txt file; the live report and a stale
  -- staging folder take 600 kB, a write of 900 kB fits only without the stale one
  local lines = 100000
  local a, free, r, listing
  on_small_disk(function(disk)
    a = run(dir, ("v1 disk/out r %d"):format(lines))
    kill_at(dir, "report-staged", ("v2 disk/out r %d"):format(lines))
    free = tonumber(io.popen("df -k --output=avail " .. disk .. " | tail -1"):read("l"))
    r = run(dir, ("v3 disk/out r %d"):format(lines * 3)) -- needs 900 kB: only there once the stale one is gone
    listing = ls(disk)
  end)
  lu.assertEquals(a.status, 0, a.stderr)
  lu.assertTrue(free < 900, ("%d kB free before the write"):format(free))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(listing, ".\n./out\n./out/r.csv\n./out/r.json\n./out/r.md\n./out/r.txt\n")
end

-- A history append killed while writing a run's item file of the older
-- format (after the store committed the run) leaves no temporary file: the
-- data goes into an unnamed file (O_TMPFILE) until it is whole.
function TestWrite:test_a_kill_during_an_atomic_write_leaves_no_temporary_file()
  h.write(dir .. "/a.lua", [[
local ev = require "evalua"
local res = ev.evaluate(ev.dataset.from_rows({ { qid = "q1", s = 0.5 } }, "mem"),
                        { metrics = { { name = "s", fn = function(r) return r.s end } } })
ev.history.open("h", { jsonl = true }):append(res, { git_commit = false })]])
  kill_at_with(dir, dir .. "/pause.fifo", "atomic-written", "run a.lua")
  lu.assertEquals(ls(dir .. "/h"), ".\n./history.db\n./history.db-shm\n./history.db-wal\n./runs\n")
end

-- A write the disk has no room for is an error naming the file as the user
-- knows it, with no traceback (exit status 3), and the old reports stay.
function TestWrite:test_a_full_disk_is_an_error_naming_the_file_and_keeps_the_old_reports()
  local a, r, listing, old
  on_small_disk(function(disk)
    a = run(dir, "v1 disk/out r 100000")     -- 300 kB of .txt
    r = run(dir, "v2 disk/out r 400000")     -- 1.2 MB of .txt: no room beside the old one
    listing, old = ls(disk), h.read(disk .. "/out/r.md")
  end)
  lu.assertEquals(a.status, 0, a.stderr)
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, "evalua: cannot write disk/out/r.txt: No space left on device; "
    .. "the reports in disk/out are as they were\n")
  lu.assertEquals(listing, ".\n./out\n./out/r.csv\n./out/r.json\n./out/r.md\n./out/r.txt\n")
  lu.assertStrContains(old, "v1")
end

os.exit(lu.LuaUnit.run(), true)
