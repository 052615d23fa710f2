-- What `evalua view` shows: a history folder's store, or a JSON report
-- imported into a store of its own (so that labels made on it are kept and
-- calibrate --history reads them). Also the texts of a run's items (query,
-- answer, contexts, gold), read from the run's JSON report: the store keeps
-- scores, reasons and slices, not the rows.
local json = require "evalua.core.json"
local caught = require "evalua.core.caught"
local sys = require "evalua._sys"
local store = require "evalua.history.store"

local M = {}

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- What to do with shards' parts: the viewer opens what their merge writes.
M.PARTS_HINT = "a shard's part: merge the parts first (evalua merge PART... --out DIR, docs/scale.md), then view "
  .. "the JSON report or the history that run writes"

-- view_c() -> evalua._view, the viewer's C side, which `evalua view` preloads; nil in any other process.
function M.view_c()
  local ok, view = pcall(require, "evalua._view")
  if ok then return view end
  caught.pass_on(view) -- "module not found" outside evalua view; an exit request, a limit or no memory raised
  return nil
end

local function decode_report(path, text)
  local rep = json.decode(text) -- cjson.safe: nil for text that is not JSON; no memory raises
  if type(rep) == "table" and rep.format == require("evalua.scale.shard").FORMAT then
    sys.input_error(("%s: %s"):format(path, M.PARTS_HINT))
  end
  if type(rep) ~= "table" or type(rep.items) ~= "table" then
    sys.input_error(("%s: not a JSON report of evalua (expected an object with 'items')"):format(path))
  end
  return rep
end

-- A history folder: its store, after importing an older history.jsonl
-- (ev.history does that on open).
function M.history(dir)
  if not sys.stat(dir .. "/history.db") and not sys.stat(dir .. "/history.jsonl") then
    sys.input_error(("%s: no history here (no history.db or history.jsonl)"):format(dir))
  end
  local hist = require("evalua.history").open(dir)
  hist:records() -- imports history.jsonl records the store lacks
  hist:close()
  return { dir = dir, file = dir .. "/history.db", db = store.open(dir .. "/history.db"), kind = "history" }
end

-- The report's text without its items' rows (the store keeps no row): the
-- "row" line of each item, as evalua writes them (scan_rows, below), cut
-- out, so that decoding reads the scores alone (0.5 s in place of 3.9 s on
-- bench/view's 244 MB report). In its place the item gets the row's place
-- in the report (M.AT: {offset from 1, length} in bytes), so that a page's
-- texts are read from the report without a scan. Another layout decodes whole.
M.AT = "\0at"
local function decode_scores(path, text)
  local find, sub, fmt = string.find, string.sub, string.format
  local ROW = '\n      "row": '
  local out, n, pos = {}, 0, 1
  while true do
    local a = find(text, ROW, pos, true)
    local e = a and find(text, "\n", a + 1, true)
    if not e then break end
    local off, comma = a + #ROW, sub(text, e - 1, e - 1) == ","
    out[n + 1] = sub(text, pos, a - 1)
    out[n + 2] = fmt('\n      "\\u0000at": [%d, %d]%s', off, e - off - (comma and 1 or 0), comma and "," or "")
    n = n + 2
    pos = e
  end
  if n == 0 then return decode_report(path, text) end
  n = n + 1
  out[n] = sub(text, pos)
  local ok, rep = pcall(json.decode, table.concat(out))
  if not ok then caught.pass_on(rep) end -- any other failure: decoded whole below, which says why
  if ok and type(rep) == "table" and type(rep.items) == "table" then return rep end
  return decode_report(path, text)
end

-- The record of a report, as ev.history would have written it.
local function record_of(path, rep, run_id)
  local meta = rep.meta or {}
  local metrics = {}
  for i, m in ipairs(rep.metrics or {}) do metrics[i] = type(m) == "table" and m.name or m end
  return { run_id = run_id, time = meta.time or os.date("!%Y-%m-%dT%H:%M:%SZ"), label = meta.label or path,
           systems = rep.systems or {}, metrics = metrics, aggregates = rep.aggregates or {},
           gates = rep.gates, report = path, dataset = meta.dataset, judge = meta.judge }
end

-- A JSON report: imported once (by its content's hash) into the store of
-- folder dir (created), as one run whose report is the file itself. A run
-- the store lacks is imported after the first page is served (M.finish:
-- the server's first idle second, or a request that needs the store), so
-- until then src.pending holds the decoded report and its record.
function M.report(path, dir)
  local st = sys.stat(path)
  local view = M.view_c() -- read and hashed at once
  local text, sha
  if view then text, sha = view.read_report(path)
  else
    text = read_file(path)
    sha = text and sys.sha256(text) or "no such file"
  end
  if not text then sys.input_error(("%s: cannot read the report (%s)"):format(path, sha)) end
  -- No store yet: the report decoded first, so that a part or another JSON is refused before a folder is made.
  local rep = not sys.stat(dir .. "/history.db") and decode_scores(path, text) or nil
  assert(sys.mkdir(dir))
  local db = store.open(dir .. "/history.db")
  local run_id = "report-" .. sha:sub(1, 16)
  local src = { dir = dir, file = dir .. "/history.db", db = db, kind = "report", report = path, run_id = run_id }
  if not db:rows("SELECT 1 FROM runs WHERE run_id = ?", run_id)[1] then
    rep = rep or decode_scores(path, text) -- its items know their rows' places: the text is not kept
    src.pending = { items = rep.items, record = record_of(path, rep, run_id), items_form = rep.items_form,
                    path = path, stat = st }
  else -- the text, for the first table built (raw_texts) rather than read twice; index.build lets it go
    src.read = { path = path, text = text, stat = st }
  end
  return src
end

-- import_step(src) -> true while the pending report's run has more to go into the store. Its items go in
-- chunks, each a call (the server answers the requests that came meanwhile between them: the whole
-- import kept them waiting ~3 s on 100,000 items), on a connection of its own, in one transaction that
-- commits with the last chunk: the server's connection (WAL) sees none of it until then, and a process
-- killed meanwhile leaves the run out (the next start imports it again).
local IMPORT_CHUNK = 10000

local function import_start(src, p)
  local db = store.open(src.file)
  local ok, seq = pcall(function()
    db:exec("BEGIN IMMEDIATE")
    if db:rows("SELECT 1 FROM runs WHERE run_id = ?", p.record.run_id)[1] then return nil end -- another viewer did
    return store.insert_run(db, p.record, json.encode(p.record), "store")
  end)
  if ok and seq then return { db = db, seq = seq, next = 1 } end
  pcall(db.exec, db, "ROLLBACK")
  db:close()
  if not ok then error(seq, 0) end
  return nil
end

function M.import_step(src)
  local p = src.pending
  if not p then return false end
  local imp = p.import
  if imp then
    local last = math.min(#p.items, imp.next + IMPORT_CHUNK - 1)
    local ok, err = pcall(function()
      store.insert_items(imp.db, imp.seq, table.move(p.items, imp.next, last, 1, {}))
      if last == #p.items then imp.db:exec("COMMIT") end
    end)
    if not ok then
      pcall(imp.db.exec, imp.db, "ROLLBACK") -- SQLite may have rolled back already (a full disk)
      imp.db:close()
      p.import = nil
      error(err, 0)
    end
    imp.next = last + 1
    if last < #p.items then return true end
    imp.db:close()
  else
    p.import = import_start(src, p)
    if p.import then return true end
  end
  src.pending = nil
  collectgarbage() -- the decoded report: as large as the run
  return false
end

-- importing(src) -> whether a pending run's import holds the store's write lock (a write on the server's
-- connection would wait for it: finish it first).
function M.importing(src)
  return src.pending ~= nil and src.pending.import ~= nil
end

-- finish(src): the pending report's run into the store, whole (import_step to the end). -> seconds it
-- took, or nil: none pending.
function M.finish(src)
  if not src.pending then return nil end
  local t0 = sys.monotonic()
  while M.import_step(src) do end
  return sys.monotonic() - t0
end

-- A text as the store keeps it (invalid UTF-8 replaced), so that the cache's rows built before the
-- import name the items as the store will.
function M.clean(s)
  if type(s) ~= "string" then return s end
  return (json.utf8(s))
end

-- metrics(src, r) -> the metrics of r, a run in the store, that have scores or unmeasured causes, sorted.
function M.metrics(src, r)
  local list = {}
  for i, m in ipairs(src.db:rows("SELECT DISTINCT metric FROM scores WHERE run = ? ORDER BY metric", r.seq)) do
    list[i] = m.metric
  end
  return list
end

-- reasons(src, r, metric) -> reason(system, item): the metric's reason of an item of r, a run in the
-- store (why it is unmeasured).
function M.reasons(src, r, metric)
  local st = src.db:prepare("SELECT reason FROM scores WHERE run = ? AND system = ? AND item = ? AND metric = ?")
  return function(system, item) return (st:rows(r.seq, system, item, metric)[1] or {}).reason end
end

-- The JSON report of a record: the report itself, or the .json beside the
-- HTML report a nightly run recorded (relative to the history folder).
function M.report_path(src, rec)
  local r = rec.report
  if type(r) ~= "string" then return nil end
  if not r:find("^/") and src.kind == "history" then r = src.dir .. "/" .. r end
  return (r:gsub("%.html$", ".json"))
end

-- The rows of a JSON report as evalua writes it (l_report.c): each item
-- an object at six spaces of indentation whose keys come sorted, so its
-- "id", "row" (the input row, on one line) and "system" lines are found by
-- plain search without decoding the rest (details, reasons), which on
-- 100,000 items took cjson 3 s. -> list of {id, system, off, len}: where
-- the row's JSON is in the report (from 1, in bytes), or nil.
local function scan_rows(text)
  local find, sub = string.find, string.sub
  local function decode(s) -- a plain string without escapes as is (most ids and systems), else cjson
    if find(s, '^"[^"\\]*"$') then return sub(s, 2, -2) end
    return json.decode(s)
  end
  local pos = find(text, '\n  "items": [\n', 1, true)
  if not pos then return nil end
  local ID, ROW, SYS = '\n      "id": ', '\n      "row": ', '\n      "system": '
  local out, n = {}, 0
  while true do
    local _, b = find(text, ID, pos, true)
    if not b then break end
    local e = find(text, "\n", b + 1, true)
    local next_id = find(text, ID, e, true) or #text
    local _, d = find(text, ROW, e, true)
    local _, h = find(text, SYS, e, true)
    if not h or h > next_id then return nil end -- not the layout this reads: decode the whole report
    local id = decode(sub(text, b + 1, e - 2))
    local off, len
    if d and d < next_id then
      local e2 = find(text, "\n", d + 1, true)
      off, len = d + 1, e2 - d - (sub(text, e2 - 1, e2 - 1) == "," and 2 or 1)
    end
    local e3 = find(text, "\n", h + 1, true)
    local system = decode(sub(text, h + 1, e3 - (sub(text, e3 - 1, e3 - 1) == "," and 2 or 1)))
    n = n + 1
    out[n] = { id = id, system = system, off = off, len = len }
    pos = e3
  end
  return out
end

-- Whether two sys.stat()s are of the same file's same content (size, time to the nanosecond).
local function same_stat(a, b)
  return a and b and a.size == b.size and a.mtime == b.mtime and a.mtime_ns == b.mtime_ns
end

-- unchanged(src, r) -> whether the report of r, a run not in the store yet, is as it was decoded (its
-- items' places, source.AT, hold).
function M.unchanged(src, r)
  local p = r.pending
  return same_stat(p.stat, sys.stat(p.path)) or false
end

local function compact_why(path)
  return path .. ": its items are in the compact form, without their rows (write the JSON report with "
    .. "items = \"full\" for the viewer to show the texts: docs/evaluate.md)"
end

-- texts_why(src, r) -> why r, a run not in the store yet, has no texts, or nil.
function M.texts_why(src, r)
  if r.pending.items_form == "compact" then return compact_why(r.pending.path) end
end

-- raw_texts(src, rec) -> list of {id, system, off, len} (the row's place in
-- the report: evalua.view.texts reads it there) or, for a report of another
-- layout, {id, system, text = the row as JSON}; or nil and why there are none.
function M.raw_texts(src, rec)
  local path = M.report_path(src, rec)
  if not path then return nil, "the run recorded no report" end
  local was = src.read
  local text = was and was.path == path and same_stat(was.stat, sys.stat(path)) and was.text or read_file(path)
  if not text then return nil, path .. ": missing (the texts are read from the run's JSON report)" end
  if text:find('\n  "items_form": "compact"', 1, true) then
    return nil, compact_why(path)
  end
  local rows = scan_rows(text)
  if rows then return rows end
  rows = {}
  for i, it in ipairs(decode_report(path, text).items) do
    rows[i] = { id = it.id, system = it.system, text = it.row and json.encode(it.row) or nil }
  end
  return rows
end

return M
