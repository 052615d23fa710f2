-- The history's store: one SQLite database per history folder,
-- DIR/history.db (schema in docs/history.md#the-store-historydb). Runs,
-- their per-item scores with reasons and details, their aggregates with
-- intervals, and human labels. Every write is one transaction: a run is
-- in the store whole or not at all, whatever kills the process or fills
-- the disk; two writers wait for each other (WAL, busy timeout).
local json = require "evalua.core.json"
local sqlite = require "evalua._sqlite"
local sys = require "evalua._sys"

local M = {}
M.VERSION = 1 -- PRAGMA user_version of the schema this code reads and writes

local SCHEMA = [[
CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE runs(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL UNIQUE,
  time TEXT NOT NULL,
  label TEXT, notes TEXT, git_commit TEXT, evalua TEXT, report TEXT,
  data_path TEXT, data_hash TEXT, data_rows INTEGER,
  judge_model TEXT,
  metric_definitions TEXT,
  gates TEXT,
  accounting TEXT,
  items TEXT NOT NULL CHECK (items IN ('store', 'jsonl')),
  record TEXT NOT NULL);
CREATE INDEX runs_label ON runs(label);
CREATE TABLE items(
  run INTEGER NOT NULL REFERENCES runs(seq) ON DELETE CASCADE,
  system TEXT NOT NULL, item NOT NULL, slices TEXT,
  PRIMARY KEY (run, system, item)) WITHOUT ROWID;
CREATE TABLE scores(
  run INTEGER NOT NULL, system TEXT NOT NULL, item NOT NULL, metric TEXT NOT NULL,
  value REAL, reason TEXT, detail TEXT,
  PRIMARY KEY (run, system, item, metric),
  FOREIGN KEY (run, system, item) REFERENCES items ON DELETE CASCADE) WITHOUT ROWID;
CREATE INDEX scores_item ON scores(item, metric);
CREATE INDEX scores_metric ON scores(metric, system, run);
CREATE TABLE aggregates(
  run INTEGER NOT NULL REFERENCES runs(seq) ON DELETE CASCADE,
  system TEXT NOT NULL, dim TEXT NOT NULL, value TEXT NOT NULL, metric TEXT NOT NULL,
  mean REAL, lo REAL, hi REAL, n INTEGER,
  PRIMARY KEY (run, system, dim, value, metric)) WITHOUT ROWID;
CREATE TABLE labels(
  id INTEGER PRIMARY KEY,
  item NOT NULL, system TEXT, metric TEXT NOT NULL,
  value INTEGER NOT NULL, scale TEXT NOT NULL,
  rater TEXT NOT NULL, time TEXT NOT NULL, note TEXT, run TEXT);
CREATE INDEX labels_metric ON labels(metric, item);
CREATE UNIQUE INDEX labels_once ON labels(item, ifnull(system, ''), metric, rater, time);
]]

-- A transaction that takes the write lock at once (BEGIN IMMEDIATE), so
-- two writers queue on the busy timeout instead of one failing midway.
-- fn's error rolls back and goes on.
function M.transaction(db, fn, ...)
  db:exec("BEGIN IMMEDIATE")
  local ok, a, b = pcall(fn, ...)
  if not ok then
    pcall(db.exec, db, "ROLLBACK") -- SQLite may have rolled back already (a full disk)
    error(a, 0)
  end
  db:exec("COMMIT")
  return a, b
end

-- open(path) -> db, the store at path, created with the schema when new.
-- A store of a newer schema is refused rather than misread.
function M.open(path)
  local db = sqlite.open(path)
  local version = db:rows("PRAGMA user_version")[1].user_version
  if version == 0 then
    M.transaction(db, function()
      if db:rows("PRAGMA user_version")[1].user_version ~= 0 then return end -- made meanwhile
      db:exec(SCHEMA)
      db:exec("PRAGMA user_version = " .. M.VERSION)
    end)
    version = M.VERSION
  end
  if version ~= M.VERSION then
    db:close()
    sys.input_error(("%s: schema version %d, this evalua reads version %d (a newer evalua made it?)")
      :format(path, version, M.VERSION))
  end
  return db
end

function M.meta(db, key)
  local r = db:rows("SELECT value FROM meta WHERE key = ?", key)[1]
  return r and r.value
end

function M.set_meta(db, key, value)
  db:run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    key, value)
end

local function encoded(v)
  if v == nil then return nil end
  local ok, text = pcall(json.encode, v)
  return ok and text or nil
end

-- aggregate_rows(aggregates) -> a record's aggregates as the store's rows,
-- one per system, slice and metric, in the store's order.
function M.aggregate_rows(aggregates)
  local out = {}
  for system, dims in pairs(aggregates or {}) do
    for dim, values in pairs(dims) do
      for value, metrics in pairs(values) do
        for metric, a in pairs(metrics) do
          out[#out + 1] = { system = system, dim = dim, value = tostring(value), metric = metric, mean = a.mean,
                            lo = a.lo, hi = a.hi, n = math.tointeger(a.n) }
        end
      end
    end
  end
  table.sort(out, function(x, y)
    for _, k in ipairs { "system", "dim", "value", "metric" } do
      if x[k] ~= y[k] then return x[k] < y[k] end
    end
    return false
  end)
  return out
end

local function insert_aggregates(db, seq, aggregates)
  local st = db:prepare("INSERT INTO aggregates VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
  for _, a in ipairs(M.aggregate_rows(aggregates)) do
    st:run(seq, a.system, a.dim, a.value, a.metric, a.mean, a.lo, a.hi, a.n)
  end
  st:close()
end

-- insert_run(db, rec, text, items_state [, accounting]) -> seq: the run's
-- row and its aggregates (inside the caller's transaction). text is rec as
-- JSON; accounting the judge's, as JSON.
function M.insert_run(db, rec, text, items_state, accounting)
  local ds, judge = rec.dataset or {}, rec.judge or {}
  local _, seq = db:run([[INSERT INTO runs(run_id, time, label, notes, git_commit, evalua, report, data_path,
      data_hash, data_rows, judge_model, metric_definitions, gates, accounting, items, record)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)]],
    rec.run_id, rec.time, rec.label, rec.notes, rec.git_commit, rec.evalua, rec.report, ds.path, ds.hash,
    math.tointeger(ds.rows), judge.model, encoded(rec.metric_definitions), encoded(rec.gates),
    accounting, items_state, text)
  insert_aggregates(db, seq, rec.aggregates)
  return seq
end

-- insert_items(db, seq, items) -> the invalid UTF-8 sequences replaced
-- (U+FFFD, as in every JSON evalua writes). items as res.items or an item
-- file holds them ({id, system, scores, reasons?, unmeasured?, details?, slices?}).
function M.insert_items(db, seq, items)
  local it_st = db:prepare("INSERT INTO items VALUES (?, ?, ?, ?)")
  local sc_st = db:prepare("INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?)")
  local replaced = 0
  local function text(s)
    if type(s) ~= "string" then return s end
    local clean, n = json.utf8(s)
    replaced = replaced + n
    return clean
  end
  for _, it in ipairs(items) do
    local slices, n
    if it.slices and next(it.slices) then slices, n = json.encode(it.slices, { replaced = true }) end
    replaced = replaced + (n or 0)
    local id, system = text(it.id), text(it.system)
    it_st:run(seq, system, id, slices)
    local reasons, details = it.reasons or {}, it.details or {}
    for metric, v in pairs(it.scores) do
      sc_st:run(seq, system, id, text(metric), v, text(reasons[metric]), encoded(details[metric]))
    end
    for metric, why in pairs(it.unmeasured or {}) do
      sc_st:run(seq, system, id, text(metric), nil, text(tostring(why)), encoded(details[metric]))
    end
  end
  it_st:close()
  sc_st:close()
  return replaced
end

-- items_of(db, seq) -> { [system] = { [id] = {id, system, scores, slices} } }
function M.items_of(db, seq)
  local out = {}
  for _, r in ipairs(db:rows("SELECT system, item, slices FROM items WHERE run = ?", seq)) do
    out[r.system] = out[r.system] or {}
    out[r.system][r.item] = { id = r.item, system = r.system, scores = {},
                              slices = r.slices and json.decode(r.slices) or {} }
  end
  for _, r in ipairs(db:rows("SELECT system, item, metric, value FROM scores WHERE run = ? AND value IS NOT NULL",
                             seq)) do
    local it = out[r.system] and out[r.system][r.item]
    if it then it.scores[r.metric] = r.value end
  end
  return out
end

-- insert_label(db, l) -> true when inserted, false when the same label
-- (item, system, metric, rater and time) is there already.
function M.insert_label(db, l)
  local changes = db:run([[INSERT OR IGNORE INTO labels(item, system, metric, value, scale, rater, time, note, run)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)]], l.item, l.system, l.metric, l.value, l.scale, l.rater, l.time, l.note, l.run)
  return changes > 0
end

return M
