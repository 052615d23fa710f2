-- The texts of a run's items (each row as JSON), as the viewer's cache
-- points at them: by byte offset and length into the run's JSON report,
-- which holds them already (copying 200 MB of rows into the cache took 3 s
-- of a first opening), or, for a report of another layout, the row itself
-- (its `row` column). The cache's <table>_text(k, off, len, row) says which.
-- A report that changed since its table was built is never read at the old
-- offsets: evalua.view.index rebuilds the table first (its key).
local sys = require "evalua._sys"

local M = {}

-- A reader of rows: row(x) -> the text of a row {off, len, row} of the table; close().
local function reader(idx)
  local f
  return function(x)
    if x.row then return x.row end
    f = f or io.open(idx.report, "rb") or error(("%s: the run's report is gone (the texts are read from it)")
      :format(idx.report), 0)
    f:seek("set", x.off - 1)
    return f:read(x.len)
  end, function() if f then f:close() end end
end

-- read(idx, ks) -> {[k] = row} for the keys ks (a page's rows).
function M.read(idx, ks)
  local out, row, close = {}, reader(idx)
  local st = idx.db:prepare(("SELECT off, len, row FROM %s WHERE k = ?"):format(idx.text))
  for _, k in ipairs(ks) do
    local x = st:rows(k)[1]
    if x then out[k] = row(x) end
  end
  st:close()
  close()
  return out
end

-- scan(idx) -> the run's texts for the search's scan (evalua._textscan: each row's id, query, answer and
-- contexts folded, each distinct text once, in one buffer of C memory), seconds spent building it (0: in
-- memory already, or read from its file), whether it holds every row of the run's table. Built in the
-- viewer's idle work (api.idle) or by a search that needs it first (0.8-1.0 s on bench/view's 100,000 rows),
-- and kept in a file beside the cache, under the
-- table's key, which a later start reads (a damaged or stale file is built again).
function M.scan(idx)
  if idx.scan then return idx.scan, 0, idx.scan_whole end
  local t0 = sys.monotonic()
  local ts = require "evalua._textscan"
  local db = (idx.db:rows("PRAGMA database_list")[1] or {}).file
  local file = db and db ~= "" and ("%s.%s.scan"):format(db, idx.table) or nil
  local scan, spent = file and ts.load(file, idx.key), 0
  if not scan then
    local rows = idx.db:rows(("SELECT x.k, x.off, x.len, x.row, CAST(t.item AS TEXT) AS id FROM %s x JOIN %s t "
      .. "ON t.k = x.k ORDER BY x.k"):format(idx.text, idx.table))
    scan = ts.new()
    local ok, err = pcall(scan.add_rows, scan, idx.report, rows)
    if not ok then
      scan:close()
      error(err, 0)
    end
    local saved, why = file and scan:save(file, idx.key)
    if file and not saved then
      io.stderr:write(("evalua view: warning: the scan's texts are not kept (%s): the next start reads the rows "
        .. "again\n"):format(why))
    end
    spent = sys.monotonic() - t0
  end
  idx.scan = scan
  local rows = scan:counts()
  idx.scan_whole = rows == idx.db:rows(("SELECT count(*) AS n FROM %s"):format(idx.table))[1].n
  return scan, spent, idx.scan_whole
end

-- each(idx, fn): fn(k, row) for every item that has a row, in key order, one row read at a time (the
-- report whole, read at once, with its rows cut from it, took the index's building to 900 MB).
function M.each(idx, fn)
  local row, close = reader(idx)
  for _, x in ipairs(idx.db:rows(("SELECT k, off, len, row FROM %s ORDER BY k"):format(idx.text))) do fn(x.k, row(x)) end
  close()
end

return M
