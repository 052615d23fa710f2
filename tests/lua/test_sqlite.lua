-- evalua._sqlite (host/bindings/l_sqlite.c) and the store's schema rules:
-- values round-trip with their types, errors name the database file,
-- statements take exactly their parameters, SQL cannot reach another file,
-- and under --sandbox a database opens only where a file could.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local sqlite = require "evalua._sqlite"

local dir
TestSqlite = {}
function TestSqlite:setUp() dir = h.tmpdir() end
function TestSqlite:tearDown() h.sh("rm -rf " .. dir) end

function TestSqlite:test_values_round_trip_with_their_types()
  local db = sqlite.open(dir .. "/t.db")
  db:exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v)")
  local st = db:prepare("INSERT INTO t(v) VALUES (?)")
  for _, v in ipairs { 7, 0.5, "text", true, math.maxinteger } do st:run(v) end
  lu.assertEquals({ st:run(nil) }, { 1, 6 }) -- changes, last rowid
  st:close()
  local rows = db:rows("SELECT v, typeof(v) AS t FROM t ORDER BY k")
  lu.assertEquals(#rows, 6)
  lu.assertEquals(math.type(rows[1].v), "integer")
  lu.assertEquals(rows[1].v, 7)
  lu.assertEquals(rows[2].v, 0.5)
  lu.assertEquals(rows[3].v, "text")
  lu.assertEquals(rows[4].v, 1)
  lu.assertEquals(rows[5].v, math.maxinteger)
  lu.assertNil(rows[6].v)
  lu.assertEquals(rows[6].t, "null")
  lu.assertEquals(db:rows("PRAGMA journal_mode")[1].journal_mode, "wal")
  db:close()
end

function TestSqlite:test_errors_name_the_database()
  local path = dir .. "/t.db"
  local db = sqlite.open(path)
  db:exec("CREATE TABLE t(a, b)")
  local ok, err = pcall(db.rows, db, "SELECT * FROM missing")
  lu.assertFalse(ok)
  lu.assertEquals(err, path .. ": no such table: missing")
  ok, err = pcall(db.run, db, "INSERT INTO t VALUES (?, ?)", 1)
  lu.assertEquals(err, "sqlite: 1 value given for a statement of 2 parameters")
  ok, err = pcall(db.run, db, "INSERT INTO t VALUES (?, ?)", 0 / 0, 1)
  lu.assertStrContains(err, "NaN cannot be stored (it would read back as NULL)")
  ok, err = pcall(db.run, db, "INSERT INTO t VALUES (1, 2); DROP TABLE t")
  lu.assertStrContains(err, "more than one statement (use exec)")
  ok, err = pcall(db.run, db, "INSERT INTO t VALUES (?, ?)", {}, 1)
  lu.assertStrContains(err, "nil, boolean, number or string expected, got table")
  lu.assertEquals(db:rows("SELECT count(*) AS n FROM t")[1].n, 0)
  ok, err = pcall(sqlite.open, dir .. "/no/such/folder/x.db")
  lu.assertFalse(ok)
  lu.assertStrContains(err, dir .. "/no/such/folder/x.db: unable to open database file")
  db:close()
end

-- ATTACH and VACUUM INTO would open or write any file: refused.
function TestSqlite:test_sql_reaches_no_other_file()
  local db = sqlite.open(dir .. "/t.db")
  for _, case in ipairs { { "ATTACH '" .. dir .. "/other.db' AS o", "not authorized" },
                          { "VACUUM INTO '" .. dir .. "/copy.db'", "authorization denied" } } do
    local ok, err = pcall(db.exec, db, case[1])
    lu.assertFalse(ok)
    lu.assertEquals(err, dir .. "/t.db: " .. case[2])
  end
  local ok, err = pcall(db.exec, db, "PRAGMA temp_store_directory = '" .. dir .. "'")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "not authorized")
  lu.assertNil(h.read(dir .. "/other.db"))
  lu.assertNil(h.read(dir .. "/copy.db"))
  -- a file: name is a path (here into a folder "file:" that is not
  -- there), never a URI whose options would make a database in memory
  local ok, err = pcall(sqlite.open, "file:" .. dir .. "/u.db?mode=memory")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "unable to open database file")
  db:close()
end

function TestSqlite:test_a_statement_of_a_closed_database_is_closed()
  local db = sqlite.open(dir .. "/t.db")
  local st = db:prepare("SELECT 1 AS one")
  lu.assertEquals(st:rows()[1].one, 1)
  db:close()
  local ok, err = pcall(st.rows, st)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "closed object")
  st:close()
  st:close()
end

-- A store of a later schema is refused, not misread; a record damaged in
-- the store is named by the store and run.
function TestSqlite:test_store_schema_version_and_damaged_records()
  local ev = require "evalua"
  local hist = ev.history.open(dir .. "/h")
  local res = ev.evaluate({ { qid = "q1", s = 1 } }, { metrics = { { name = "s", fn = function(r) return r.s end } } })
  local rec = hist:append(res, { dashboard = false, git_commit = false })
  hist:close()
  local db = sqlite.open(dir .. "/h/history.db")
  db:run("UPDATE runs SET record = json_set(record, '$.systems', 'x')")
  db:close()
  h.write(dir .. "/latest.lua", 'print(require("evalua").history.open("h"):latest())')
  local r = h.run(("cd %s && %s run latest.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, ("h/history.db: run %s: field 'systems': expected a list, got a string\n"):format(rec.run_id))
  db = sqlite.open(dir .. "/h/history.db")
  db:exec("PRAGMA user_version = 2")
  db:close()
  r = h.run(("cd %s && %s run latest.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, "h/history.db: schema version 2, this evalua reads version 1 (a newer evalua made it?)\n")
end

-- Under --sandbox the store opens only under --out, through no symbolic
-- link: not a link named history.db, nor one beside it (-wal), nor a
-- linked folder.
function TestSqlite:test_the_sandbox_confines_the_store()
  h.sh(("mkdir -p %s/out/a %s/out/b %s/outside && ln -s ../../outside/x.db %s/out/a/history.db"
    .. " && ln -s ../../outside/x.db-wal %s/out/b/history.db-wal && ln -s ../outside %s/out/c"):format(
    dir, dir, dir, dir, dir, dir))
  h.write(dir .. "/s.lua", [[
local ev = require "evalua"
for _, d in ipairs { "out/a", "out/b", "out/c", "elsewhere" } do print(pcall(ev.history.open, d)) end
local ok = ev.history.open("out/ok")
for k, v in pairs(ok) do assert(type(v) ~= "userdata", k) end -- no connection to run SQL on
print(#ok:records())]])
  local r = h.run(("cd %s && %s run --sandbox --out out s.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals((r.stdout:gsub("lua/evalua/history/init%.lua:%d+: ", "")),
    "false\tsandbox: write access to 'out/a/history.db' is not allowed (no symbolic links under --sandbox)\n"
    .. "false\tsandbox: write access to 'out/b/history.db-wal' is not allowed (no symbolic links under --sandbox)\n"
    .. "false\tsandbox: write access to 'out/c' is not allowed (no symbolic links under --sandbox)\n"
    .. "false\tsandbox: write access to 'elsewhere' is not allowed (writable only under --out)\n"
    .. "0\n")
  lu.assertNil(h.read(dir .. "/outside/x.db"))
end

os.exit(lu.LuaUnit.run(), true)
