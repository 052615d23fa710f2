-- A run's items as one wide table for the items page, kept in the viewer's
-- cache (a SQLite file of its own, never history.db): one row per (system,
-- item) with its slices and, for each metric, its score (v<i>, NULL when
-- unmeasured or absent), whether it was unmeasured (u<i>) and whether
-- another system of the run falls on the other side of 0.5 (d<i>); beside
-- it, by the same key k, where the row's JSON is in the run's report
-- (<table>_text, read by evalua.view.texts) and a full-text index of its
-- id, query, answer and contexts (<table>_fts, FTS5, contentless: it holds
-- the words' positions, not the texts), which the search reads. A filter is
-- then one scan of a few MB of numbers, a search an index lookup
-- (docs/view.md#speed).
--
-- Built the first time a run is opened (the pivot of its scores and the
-- rows' places in its JSON report; the full-text index at the run's first
-- search, search_index below) and kept for the next start: the cache is
-- ${XDG_CACHE_HOME:-~/.cache}/evalua/view/<hash of the store's path>.db,
-- or memory when that cannot be written. A table is rebuilt when its run's
-- report changed (size, time to the nanosecond) or this code's VERSION did.
local caught = require "evalua.core.caught"
local json = require "evalua.core.json"
local sqlite = require "evalua._sqlite"
local sys = require "evalua._sys"
local source = require "evalua.view.source"
local texts = require "evalua.view.texts"

local M = {}
M.VERSION = 7 -- 4: the full-text index; 5: the rows' places in the report, not their texts; 6: named by run id;
-- 7: the full-text index marked built (fts_built), as a background build commits it in chunks

local function cache_db(src)
  if src.cache then return src.cache end
  local base = os.getenv("XDG_CACHE_HOME")
  if not base or base == "" then base = (os.getenv("HOME") or "") .. "/.cache" end
  local dir = base .. "/evalua/view"
  local view = source.view_c()
  local real = view and view.realpath(src.file) or src.file
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
  -- The cache holds nothing that cannot be rebuilt: no fsync (WAL keeps it whole when the process dies).
  db:exec("PRAGMA synchronous = OFF")
  db:exec("CREATE TABLE IF NOT EXISTS built(run_id TEXT PRIMARY KEY, key TEXT NOT NULL, metrics TEXT NOT NULL, why TEXT, "
    .. "summary TEXT)")
  db:exec("CREATE TABLE IF NOT EXISTS fts_built(name TEXT PRIMARY KEY)") -- a run's full-text index, whole
  db:exec("CREATE TABLE IF NOT EXISTS fts_progress(name TEXT PRIMARY KEY, last INTEGER)") -- or how far it got
  src.cache, src.cache_path = db, path
  return db
end

-- The key a run's table was built for: this code, the run, its report file.
local function key_of(src, r)
  local path = source.report_path(src, r.record)
  local st = path and sys.stat(path)
  return ("%d|%s|%s|%s|%s.%s"):format(M.VERSION, r.run_id, tostring(path), st and st.size or "-",
    st and st.mtime or "-", st and st.mtime_ns or "-")
end

local function transaction(db, fn)
  db:exec("BEGIN IMMEDIATE")
  local ok, err = pcall(fn)
  db:exec(ok and "COMMIT" or "ROLLBACK")
  if not ok then error(err, 0) end
end

-- The slice dimensions the run recorded, sorted.
local function dims_of(r)
  local dims, list = {}, {}
  for _, by_dim in pairs(r.record.aggregates or {}) do
    for d in pairs(by_dim) do
      if d ~= "all" and not dims[d] then dims[d], list[#list + 1] = true, d end
    end
  end
  table.sort(list)
  return list
end

-- The run page's summary, counted in one pass over the run's rows (a query per metric took 0.6 s on
-- bench/view's 100,000 rows): score(metric, system, v) for each score, unmeasured(metric, system, reason)
-- for each unmeasured cell, count(system, n); result(list, r) -> {histograms = ten bins over 0..1 per
-- metric and system, unmeasured = causes by count (then metric, system, reason), counts by system, dims}.
-- A run not in the store yet and its table read from the store give the same.
local function summary_counter()
  local bins, causes, counts = {}, {}, {}
  local S = {}
  function S.score(m, system, v)
    if not v or v < 0 or v > 1 then return end
    local by = bins[m] or {}
    bins[m] = by
    local b = by[system] or {}
    by[system] = b
    local bin = math.min(9, math.floor(v * 10))
    b[bin] = (b[bin] or 0) + 1
  end
  function S.unmeasured(m, system, reason)
    local key = m .. "\0" .. system .. "\0" .. reason
    local c = causes[key]
    if not c then
      c = { system = system, reason = reason, metric = m, n = 0 }
      causes[key], causes[#causes + 1] = c, c
    end
    c.n = c.n + 1
  end
  function S.count(system, n) counts[#counts + 1] = { system = system, n = n } end
  function S.result(list, r)
    local A = function(t) return setmetatable(t, json.array) end
    local hist = {}
    for _, m in ipairs(list) do
      local systems = {}
      for system in pairs(bins[m] or {}) do systems[#systems + 1] = system end
      table.sort(systems)
      for _, system in ipairs(systems) do
        for bin = 0, 9 do
          local c = bins[m][system][bin]
          if c then hist[#hist + 1] = { metric = m, system = system, bin = bin, n = c } end
        end
      end
    end
    local un = table.move(causes, 1, #causes, 1, {})
    table.sort(un, function(a, b)
      if a.n ~= b.n then return a.n > b.n end
      if a.metric ~= b.metric then return a.metric < b.metric end
      if a.system ~= b.system then return a.system < b.system end
      return a.reason < b.reason
    end)
    table.sort(counts, function(a, b) return a.system < b.system end)
    return { histograms = A(hist), unmeasured = A(un), counts = A(counts), dims = A(dims_of(r)) }
  end
  return S
end

-- The scores of the run pivoted into columns, from the store: items and
-- scores share the key prefix (run, system, item), so the join and the
-- grouping stream in key order without a sort.
local function pivot_store(src, r, list)
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

-- SQLite's order of item ids: integers before texts.
local function before(a, b)
  if a.system ~= b.system then return a.system < b.system end
  local na, nb = type(a.item) == "number", type(b.item) == "number"
  if na ~= nb then return na end
  return a.item < b.item
end

-- The items of a run not in the store yet (r.pending, evalua.view.source) in the table's order, each
-- {system, item, it = the decoded item}, with the run's summary counted in the same pass (the first page
-- and the run page are served from them before the table is built). evalua writes a report's items by
-- item, then system: grouped by system (in that order) they are sorted already, and only a group that
-- is not is sorted (a sort of all took 0.9 s of 100,000 rows). -> rows, list of metrics, summary.
local function order_report(r)
  local clean, groups, names, metric, list = source.clean, {}, {}, {}, {}
  local function name_of(m) -- metric names as the store keeps them
    local c = metric[m]
    if not c then
      c = clean(m)
      metric[m] = c
      if not list[c] then list[c], list[#list + 1] = true, c end
    end
    return c
  end
  local S = summary_counter()
  for _, it in ipairs(r.pending.items) do
    local p = { system = clean(it.system), item = clean(it.id), it = it }
    local g = groups[p.system]
    if not g then g, names[#names + 1] = {}, p.system; groups[p.system] = g end
    g[#g + 1] = p
    local scores = it.scores or {}
    for m, v in pairs(scores) do S.score(name_of(m), p.system, v) end
    for m, why in pairs(it.unmeasured or {}) do
      local c = name_of(m)
      if scores[m] == nil then S.unmeasured(c, p.system, clean(tostring(why))) end
    end
  end
  table.sort(names)
  local rows = {}
  for _, system in ipairs(names) do
    local g = groups[system]
    for i = 2, #g do
      if before(g[i], g[i - 1]) then
        table.sort(g, before)
        break
      end
    end
    table.move(g, 1, #g, #rows + 1, rows)
    S.count(system, #g)
  end
  for i = #list, 1, -1 do list[list[i]] = nil end
  table.sort(list)
  return rows, list, S.result(list, r)
end

-- The same rows as pivot_store, from order_report's rows of a run not in the store yet: each gets its
-- slices and score columns.
local function pivot_report(rows, list)
  local clean, col = source.clean, {}
  for i, m in ipairs(list) do col[m] = i end
  local vs, us = {}, {}
  for i = 1, #list do vs[i], us[i] = "v" .. i, "u" .. i end
  for _, p in ipairs(rows) do
    local it = p.it
    p.slices = it.slices and next(it.slices) and json.encode(it.slices) or nil
    local scores, un = it.scores or {}, it.unmeasured or {}
    if next(scores) or next(un) then
      for i = 1, #list do p[us[i]] = 0 end
      for m, v in pairs(scores) do p[vs[col[clean(m)]]] = v end
      for m in pairs(un) do if scores[m] == nil then p[us[col[clean(m)]]] = 1 end end
    end
  end
  return rows
end

-- The words of each row's id, query, answer and contexts (a list of texts, or one), by SQLite's own JSON
-- and FTS5 code, as SQL for this connection (index_texts) or a background one (search_start): resume
-- (where a stopped build got to), setup, rows (?1: the last key done, ?2: how many), insert (?1: k, ?2:
-- the row), progress (?1: the last key done), finish. unicode61 folds case
-- and diacritics; a word is letters and digits. The segments FTS5 writes as it goes are merged once at
-- the end rather than as they pile up (6.2 s in place of 10.6 s on bench/view's 100,000 rows); the
-- index counts once finish marks it (fts_built).
local function fts_sql(idx)
  local name, fts = idx.table, idx.fts
  return {
    resume = ("SELECT last FROM fts_progress WHERE name = '%s' AND EXISTS (SELECT 1 FROM sqlite_master "
      .. "WHERE type = 'table' AND name = '%s')"):format(fts, fts),
    setup = ("DELETE FROM fts_built WHERE name = '%s'; DELETE FROM fts_progress WHERE name = '%s'; DROP TABLE IF "
      .. "EXISTS %s; CREATE VIRTUAL TABLE %s USING fts5(item, query, answer, contexts, content = '', tokenize = "
      .. "'unicode61'); INSERT INTO %s(%s, rank) VALUES ('automerge', 0), ('crisismerge', 64)")
      :format(fts, fts, fts, fts, fts, fts),
    rows = ("SELECT k, off, len, row FROM %s WHERE k > ?1 ORDER BY k LIMIT ?2"):format(idx.text),
    insert = ("INSERT INTO %s(rowid, item, query, answer, contexts) SELECT ?1, t.item, ?2 ->> '$.query', "
      .. "?2 ->> '$.answer', (SELECT group_concat(c.value, char(10)) FROM json_each(?2, '$.contexts') c) "
      .. "FROM %s t WHERE t.k = ?1"):format(fts, name),
    progress = ("INSERT OR REPLACE INTO fts_progress VALUES ('%s', ?1)"):format(fts),
    finish = ("INSERT INTO %s(%s) VALUES ('optimize'); INSERT INTO fts_built VALUES ('%s'); DELETE FROM "
      .. "fts_progress WHERE name = '%s'"):format(fts, fts, fts, fts),
  }
end

local function index_texts(idx)
  local C, sql = idx.db, fts_sql(idx)
  C:exec(sql.setup)
  local st = C:prepare(sql.insert)
  texts.each(idx, function(k, row) st:run(k, row) end)
  st:close()
  C:exec(sql.finish)
end

-- search_start(idx): the run's full-text index built on a thread of its own (evalua._view's
-- index_texts, over a second connection to the cache), so that the app is served meanwhile; not for a
-- cache in memory (no second connection sees it) nor outside evalua view. A builder that cannot start
-- leaves the index to the first search (search_index).
function M.search_start(idx)
  idx.fts_tried = true -- once: a build that failed is left to the first search
  if idx.fts_ready or idx.builder or idx.rows or idx.cache_path == ":memory:" then return end
  local view = source.view_c()
  if not view then return end
  local sql = fts_sql(idx)
  sql.db, sql.report = idx.cache_path, idx.report and sys.stat(idx.report) and idx.report or nil
  local ok, builder = pcall(view.index_texts, sql)
  if ok then idx.builder = builder
  else
    io.stderr:write(("evalua view: warning: %s; the run's first search builds it\n"):format(tostring(caught.pass_on(builder))))
  end
end

-- search_state(idx) -> "built", "building" (and the seconds so far) or "none". A background build that
-- failed is said on stderr and left to the first search, which builds it here (and says why if it fails).
function M.search_state(idx)
  if idx.fts_ready then return "built" end
  if not idx.builder then return "none" end
  local state, secs, why = idx.builder:state()
  if state == "building" then return state, secs end
  idx.builder:close()
  idx.builder = nil
  if state == "built" then
    idx.fts_ready, idx.fts_secs = true, secs
    return "built"
  end
  io.stderr:write(("evalua view: warning: the background search index failed (%s); the next search builds it\n"):format(why))
  return "none"
end

-- search_building(idx) -> whether the run's full-text index is being built in the background, after
-- starting that build when none was tried (a run's first search, before the idle work started one).
function M.search_building(idx)
  if M.search_state(idx) == "none" and not idx.fts_tried then M.search_start(idx) end
  return M.search_state(idx) == "building"
end

-- search_index(idx) -> seconds spent building the run's full-text index in this request or, once, in the
-- background build that ended since: 0 when the cache has it. While a background build runs, raises a
-- 503 that says so (`building`: its seconds so far).
-- The first search starts the background build when none was; outside evalua view (or with the cache
-- in memory) it builds the index itself, in the request (5-6 s of a first opening).
function M.search_index(idx)
  local state, secs = M.search_state(idx)
  if state == "built" then -- the background build's seconds, said once (the search after it)
    secs, idx.fts_secs = idx.fts_secs or 0, nil
    return secs
  end
  if state == "none" and not idx.fts_tried then -- the first search, before the idle work started one
    idx.fts_tried = true
    M.search_start(idx)
    state, secs = M.search_state(idx)
  end
  if state == "building" then
    error({ status = 503, building = secs, message = ("the run's search index is being built (%.1f s so far): "
      .. "ask again in a moment"):format(secs) }, 0)
  end
  local t0 = sys.monotonic()
  transaction(idx.db, function() index_texts(idx) end)
  collectgarbage() -- the report's text, read whole to index it
  idx.fts_ready = true
  return sys.monotonic() - t0
end

-- For each row and metric i, d<i> = 1 where another system of the run is on the other side of 0.5 on
-- the same item (else nil): the row passes and another fails, or the reverse. From each item's counts of
-- systems passing and failing (one pass; a self-join per metric took 1.3 s on bench/view's 100,000 rows).
local function disagree(rows, vs)
  local tally = {}
  for _, p in ipairs(rows) do
    local t = tally[p.item] or {}
    tally[p.item] = t
    for i, v in ipairs(vs) do
      local x = p[v]
      if x then
        local j = 2 * i - (x >= 0.5 and 1 or 0) -- 2i - 1: passes, 2i: fails
        t[j] = (t[j] or 0) + 1
      end
    end
  end
  return function(p, i)
    local x = p[vs[i]]
    if x == nil then return nil end
    return (tally[p.item][x >= 0.5 and 2 * i or 2 * i - 1] or 0) > 0 and 1 or nil
  end
end

-- The summary of a run in the store, from pivot_store's rows and the store's reasons.
local function summarise_store(src, r, rows, list)
  local S, n, last = summary_counter(), 0, nil
  for i, m in ipairs(list) do
    local v, u, reason_of = "v" .. i, "u" .. i, source.reasons(src, r, m)
    for _, p in ipairs(rows) do
      S.score(m, p.system, p[v])
      if p[u] == 1 then S.unmeasured(m, p.system, reason_of(p.system, p.item) or "") end
    end
  end
  for _, p in ipairs(rows) do
    if last and p.system ~= last then S.count(last, n); n = 0 end
    last, n = p.system, n + 1
  end
  if last then S.count(last, n) end
  return S.result(list, r)
end

-- The rows' places in the report (<name>_text): for a run not in the store yet, from its decoded items
-- (source.AT, found as the report was decoded), else found in the report (source.raw_texts). -> why
-- the run has no texts, or nil.
local function fill_texts(src, C, r, name, rows)
  C:exec(("CREATE TABLE %s_text(k INTEGER PRIMARY KEY, off INTEGER, len INTEGER, row TEXT)"):format(name))
  if r.pending and source.unchanged(src, r) then
    local ins, AT = C:prepare(("INSERT INTO %s_text(k, off, len, row) VALUES (?, ?, ?, ?)"):format(name)), source.AT
    for k, p in ipairs(rows) do
      local at, row = p.it[AT], p.it.row
      if at then ins:run(k, math.tointeger(at[1]), math.tointeger(at[2]), nil)
      elseif row then ins:run(k, nil, nil, json.encode(row)) end
    end
    ins:close()
    return source.texts_why(src, r)
  end
  local places, why = source.raw_texts(src, r.record)
  if places then
    local ins = C:prepare(("INSERT OR IGNORE INTO %s_text(k, off, len, row) SELECT k, ?3, ?4, ?5 FROM %s "
      .. "WHERE system = ?1 AND item = ?2"):format(name, name))
    for _, t in ipairs(places) do if t.off or t.text then ins:run(t.system, t.id, t.off, t.len, t.text) end end
    ins:close()
  end
  return why
end

local function fill(src, C, r, name, list, rows)
  local cols, marks = { "k INTEGER PRIMARY KEY", "system TEXT", "item", "slices TEXT" }, { "?", "?", "?" }
  local vs, us = {}, {}
  for i = 1, #list do
    cols[#cols + 1] = ("v%d REAL, u%d INTEGER, d%d INTEGER"):format(i, i, i)
    marks[#marks + 1] = "?, ?, ?"
    vs[i], us[i] = "v" .. i, "u" .. i
  end
  C:exec(("DROP TABLE IF EXISTS %s; DROP TABLE IF EXISTS %s_text; DROP TABLE IF EXISTS %s_fts"):format(name, name, name))
  C:run("DELETE FROM fts_built WHERE name = ?1", name .. "_fts")
  C:run("DELETE FROM fts_progress WHERE name = ?1", name .. "_fts")
  C:exec(("CREATE TABLE %s(%s)"):format(name, table.concat(cols, ", ")))
  local vu = {}
  for i = 1, #list do vu[#vu + 1] = ("v%d, u%d, d%d"):format(i, i, i) end
  local st = C:prepare(("INSERT INTO %s(k, system, item, slices%s) VALUES (?, %s)")
    :format(name, #vu > 0 and ", " .. table.concat(vu, ", ") or "", table.concat(marks, ", ")))
  local row, d = {}, disagree(rows, vs)
  for k, p in ipairs(rows) do
    row[1], row[2], row[3], row[4] = k, p.system, p.item, p.slices
    for i = 1, #list do
      row[2 + 3 * i], row[3 + 3 * i], row[4 + 3 * i] = p[vs[i]], p[us[i]], d(p, i)
    end
    st:run(table.unpack(row, 1, 4 + 3 * #list))
  end
  st:close()
  C:exec(("CREATE UNIQUE INDEX %s_key ON %s(system, item); CREATE INDEX %s_item ON %s(item)")
    :format(name, name, name, name))
  -- The texts in a table of their own, so that a filter on the numbers scans a few MB, not every row's text.
  local why = fill_texts(src, C, r, name, rows)
  -- Each slice dimension the run recorded as a column of its own, indexed (a filter on a value reads the index).
  local dim_list = dims_of(r)
  for j, d in ipairs(dim_list) do
    C:exec(("ALTER TABLE %s ADD COLUMN s%d TEXT"):format(name, j))
    C:run(("UPDATE %s SET s%d = json_extract(slices, ?)"):format(name, j), '$."' .. d:gsub('[\\"]', "\\%0") .. '"')
    C:exec(("CREATE INDEX %s_s%d ON %s(s%d)"):format(name, j, name, j))
  end
  for i = 1, #list do C:exec(("CREATE INDEX %s_v%d ON %s(v%d)"):format(name, i, name, i)) end
  return why
end

-- The cache's record of run_id's table when it was built for key, else nil.
local function cached(C, run_id, key)
  local ok, done = pcall(C.rows, C, "SELECT key, metrics, why, summary FROM built WHERE run_id = ?", run_id)
  if not ok and not tostring(caught.pass_on(done)):find("no such column", 1, true) then error(done, 0) end
  if not ok then -- a cache of an earlier version of this code: it holds nothing that cannot be rebuilt
    C:exec("DROP TABLE built")
    C:exec("CREATE TABLE built(run_id TEXT PRIMARY KEY, key TEXT NOT NULL, metrics TEXT NOT NULL, why TEXT, summary TEXT)")
    return nil
  end
  return done[1] and done[1].key == key and done[1] or nil
end

local function handle(src, r, fields)
  fields.metrics, fields.dims = {}, {}
  for i, m in ipairs(fields.list) do fields.metrics[m] = i end
  for j, d in ipairs(fields.summary.dims or {}) do fields.dims[d] = j end
  fields.report = source.report_path(src, r.record)
  return fields
end

-- The rows and the summary of a run not in the store yet, from its decoded report (order_report).
local function first_of(src, r, key)
  local p = r.pending
  if p.first and p.first.key == key then return p.first end
  local t0 = sys.monotonic()
  local rows, list, summary = order_report(r)
  p.first = handle(src, r, { rows = rows, list = list, summary = summary, key = key, why = source.texts_why(src, r),
                             fts_ready = false })
  p.first.built = sys.monotonic() - t0
  return p.first
end

-- first_texts(idx, rows) -> {[i] = the JSON of rows[i]'s row}, rows of a first view (M.first): read at
-- their places in the report (which M.first found unchanged since it was decoded), or encoded from a
-- report decoded whole.
function M.first_texts(idx, rows)
  local out, f, AT = {}, nil, source.AT
  for i, p in ipairs(rows) do
    local at = p.it[AT]
    if at then
      f = f or assert(io.open(idx.report, "rb"))
      f:seek("set", math.tointeger(at[1]) - 1)
      out[i] = f:read(math.tointeger(at[2]))
    elseif p.it.row then out[i] = json.encode(p.it.row) end
  end
  if f then f:close() end
  return out
end

-- item_of(r, system, id) -> the decoded item of r, a run not in the store yet, with that (clean) system
-- and id, or nil. A map of the run's items, made at the first call.
function M.item_of(r, system, id)
  local function key(sys_, item) -- a number id by value (cjson decodes 7 as 7.0; the API gives 7)
    return type(item) == "number" and ("%s\0n%.17g"):format(sys_, item) or ("%s\0s%s"):format(sys_, item)
  end
  local p = r.pending
  if not p.by then
    p.by = {}
    for _, it in ipairs(p.items) do p.by[key(source.clean(it.system), source.clean(it.id))] = it end
  end
  return p.by[key(system, id)]
end

-- first(src, r) -> the run's table as build gives it or, for a run not in the store yet (source.report's
-- pending run) whose table the cache lacks, the same fields without the table: {rows = the pivot's rows in
-- the table's order (each with its decoded item, `it`), summary, list, metrics, dims, why, built}. The
-- first page and the run's summary are served from it (1.4 s less than the table on bench/view's
-- 100,000 rows); any other request calls build, which writes the table from those rows.
function M.first(src, r)
  local hit = src.indexes and src.indexes[r.run_id]
  local key = key_of(src, r)
  if hit and hit.key == key then return hit end
  if not r.pending or not source.unchanged(src, r) or cached(cache_db(src), r.run_id, key) then return M.build(src, r) end
  return first_of(src, r, key)
end

-- build(src, r) -> {db = the cache's connection, table = name, text = its texts' table, metrics = {name = i},
-- list = {names}, why = nil or why the run has no texts, built = seconds spent building (0: from the cache),
-- report = the report the texts are read from}
function M.build(src, r)
  src.indexes = src.indexes or {}
  local key = key_of(src, r)
  local hit = src.indexes[r.run_id]
  if hit and hit.key == key then return hit end -- else the report changed since: its rows moved
  if hit and hit.builder then hit.builder:close() end -- its index is rebuilt with the table
  local C = cache_db(src)
  -- Named by the run's id, which a run has before the store gives it a seq (a report not imported yet).
  local name = "run_" .. sys.sha256(r.run_id):sub(1, 16)
  local done = cached(C, r.run_id, key)
  local list, why, spent, summary = nil, nil, 0, nil
  if done then
    list, why, summary = json.decode(done.metrics), done.why, json.decode(done.summary)
  else
    local t0 = sys.monotonic()
    local first = r.pending and first_of(src, r, key)
    local rows
    if first then list, rows, summary = first.list, pivot_report(first.rows, first.list), first.summary
    else
      list = source.metrics(src, r)
      rows = pivot_store(src, r, list)
      summary = summarise_store(src, r, rows, list)
    end
    transaction(C, function()
      why = fill(src, C, r, name, list, rows)
      C:run("INSERT OR REPLACE INTO built VALUES (?, ?, ?, ?, ?)", r.run_id, key,
        json.encode(setmetatable(list, json.array)), why, json.encode(summary))
    end)
    if r.pending then r.pending.first = nil end
    rows = nil
    collectgarbage() -- the report's text and its rows: a run's worth of memory, given back now
    spent = sys.monotonic() - t0 + (first and first.built or 0)
  end
  src.read = nil -- the report's text source.report read (for raw_texts): given back after the first build
  local idx = handle(src, r, { db = C, table = name, text = name .. "_text", fts = name .. "_fts", list = list, why = why,
                               built = spent, summary = summary, key = key, cache_path = src.cache_path })
  idx.fts_ready = C:rows("SELECT 1 FROM fts_built WHERE name = ?", idx.fts)[1] ~= nil
  src.indexes[r.run_id] = idx
  return idx
end

return M
