-- A run's items as one wide table for the items page, kept in the viewer's
-- cache (a SQLite file of its own, never history.db): one row per (system,
-- item) with its slices and, for each metric, its score (v<i>, NULL when
-- unmeasured or absent), whether it was unmeasured (u<i>) and whether
-- another system of the run falls on the other side of 0.5 (d<i>); beside
-- it, by the same key k, the row as JSON, which the search reads with
-- LIKE (ASCII letters fold case, others match as they are). A filter is
-- then one scan of a few MB of numbers (docs/view.md#speed).
--
-- Built the first time a run is opened (the pivot of its scores and the
-- texts of its JSON report) and kept for the next start: the cache is
-- ${XDG_CACHE_HOME:-~/.cache}/evalua/view/<hash of the store's path>.db,
-- or memory when that cannot be written. A table is rebuilt when its run's
-- report changed (size, time) or this code's VERSION did.
local json = require "evalua.core.json"
local sqlite = require "evalua._sqlite"
local sys = require "evalua._sys"
local source = require "evalua.view.source"

local M = {}
M.VERSION = 1

local function cache_db(src)
  if src.cache then return src.cache end
  local base = os.getenv("XDG_CACHE_HOME")
  if not base or base == "" then base = (os.getenv("HOME") or "") .. "/.cache" end
  local dir = base .. "/evalua/view"
  local real = require("evalua._view").realpath(src.file) or src.file
  local path = ("%s/%s.db"):format(dir, sys.sha256(real):sub(1, 16))
  local ok, db = pcall(function()
    assert(sys.mkdir(dir))
    return sqlite.open(path)
  end)
  if not ok then
    io.stderr:write(("evalua view: warning: no cache in %s (%s): every start rebuilds each run's table\n")
      :format(dir, tostring(db)))
    db, path = sqlite.open(":memory:"), ":memory:"
  end
  db:exec("CREATE TABLE IF NOT EXISTS built(run_id TEXT PRIMARY KEY, key TEXT NOT NULL, metrics TEXT NOT NULL, why TEXT)")
  src.cache, src.cache_path = db, path
  return db
end

-- The key a run's table was built for: this code, the run, its report file.
local function key_of(src, r)
  local path = source.report_path(src, r.record)
  local st = path and sys.stat(path)
  return ("%d|%s|%s|%s|%s"):format(M.VERSION, r.run_id, tostring(path), st and st.size or "-", st and st.mtime or "-")
end

local function transaction(db, fn)
  db:exec("BEGIN IMMEDIATE")
  local ok, err = pcall(fn)
  db:exec(ok and "COMMIT" or "ROLLBACK")
  if not ok then error(err, 0) end
end

-- The scores of the run pivoted into columns, from the store: items and
-- scores share the key prefix (run, system, item), so the join and the
-- grouping stream in key order without a sort.
local function pivot(src, r, list)
  local sel, args = {}, {}
  for i, m in ipairs(list) do
    sel[i] = ("max(CASE WHEN s.metric = ?%d THEN s.value END) AS v%d, max(s.metric = ?%d AND s.value IS NULL) AS u%d")
      :format(i + 1, i, i + 1, i)
    args[i] = m
  end
  return src.db:rows(("SELECT i.system, i.item, i.slices%s FROM items i LEFT JOIN scores s ON s.run = i.run "
    .. "AND s.system = i.system AND s.item = i.item WHERE i.run = ?1 GROUP BY i.system, i.item ORDER BY i.system, i.item")
    :format(#sel > 0 and ", " .. table.concat(sel, ", ") or ""), r.seq, table.unpack(args))
end

local function fill(src, C, r, name, list)
  local cols, marks = { "k INTEGER PRIMARY KEY", "system TEXT", "item", "slices TEXT" }, { "?", "?", "?" }
  for i = 1, #list do
    cols[#cols + 1] = ("v%d REAL, u%d INTEGER, d%d INTEGER"):format(i, i, i)
    marks[#marks + 1] = "?, ?"
  end
  C:exec(("DROP TABLE IF EXISTS %s; DROP TABLE IF EXISTS %s_text"):format(name, name))
  C:exec(("CREATE TABLE %s(%s)"):format(name, table.concat(cols, ", ")))
  local vu = {}
  for i = 1, #list do vu[#vu + 1] = ("v%d, u%d"):format(i, i) end
  local st = C:prepare(("INSERT INTO %s(system, item, slices%s) VALUES (%s)")
    :format(name, #vu > 0 and ", " .. table.concat(vu, ", ") or "", table.concat(marks, ", ")))
  local row = {}
  for _, p in ipairs(pivot(src, r, list)) do
    row[1], row[2], row[3] = p.system, p.item, p.slices
    for i = 1, #list do row[2 + 2 * i], row[3 + 2 * i] = p["v" .. i], p["u" .. i] end
    st:run(table.unpack(row, 1, 3 + 2 * #list))
  end
  st:close()
  C:exec(("CREATE UNIQUE INDEX %s_key ON %s(system, item); CREATE INDEX %s_item ON %s(item)")
    :format(name, name, name, name))
  -- The texts in a table of their own, so that a filter on the numbers scans a few MB, not every row's text.
  C:exec(("CREATE TABLE %s_text(k INTEGER PRIMARY KEY, row TEXT)"):format(name))
  local texts, why = source.raw_texts(src, r.record)
  if texts then
    local ins = C:prepare(("INSERT OR IGNORE INTO %s_text(k, row) SELECT k, ?3 FROM %s WHERE system = ?1 AND item = ?2")
      :format(name, name))
    for _, t in ipairs(texts) do if t.text then ins:run(t.system, t.id, t.text) end end
    ins:close()
  end
  for i = 1, #list do
    C:exec(("CREATE INDEX %s_v%d ON %s(v%d)"):format(name, i, name, i))
    C:exec(("UPDATE %s AS t SET d%d = 1 FROM (SELECT DISTINCT a.k FROM %s a JOIN %s b ON b.item = a.item "
      .. "AND b.system <> a.system WHERE (a.v%d >= 0.5) <> (b.v%d >= 0.5)) AS x WHERE x.k = t.k")
      :format(name, i, name, name, i, i))
  end
  return why
end

-- build(src, r) -> {db = the cache's connection, table = name, text = its texts' table, metrics = {name = i},
-- list = {names}, why = nil or why the run has no texts, built = seconds spent building (0: from the cache)}
function M.build(src, r)
  src.indexes = src.indexes or {}
  local hit = src.indexes[r.seq]
  if hit then return hit end
  local C = cache_db(src)
  local name = "run_" .. math.tointeger(r.seq)
  local key = key_of(src, r)
  local done = C:rows("SELECT key, metrics, why FROM built WHERE run_id = ?", r.run_id)[1]
  local list, why, spent = nil, nil, 0
  if done and done.key == key then
    list, why = json.decode(done.metrics), done.why
  else
    local t0 = sys.monotonic()
    list = {}
    for i, m in ipairs(src.db:rows("SELECT DISTINCT metric FROM scores WHERE run = ? ORDER BY metric", r.seq)) do
      list[i] = m.metric
    end
    transaction(C, function()
      why = fill(src, C, r, name, list)
      C:run("INSERT OR REPLACE INTO built VALUES (?, ?, ?, ?)", r.run_id, key,
        json.encode(setmetatable(list, json.array)), why)
    end)
    collectgarbage() -- the report's text and its rows: a run's worth of memory, given back now
    spent = sys.monotonic() - t0
  end
  local metrics = {}
  for i, m in ipairs(list) do metrics[m] = i end
  local idx = { db = C, table = name, text = name .. "_text", metrics = metrics, list = list, why = why, built = spent }
  src.indexes[r.seq] = idx
  return idx
end

return M
