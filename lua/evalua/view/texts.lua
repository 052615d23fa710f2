-- The texts of a run's items (each row as JSON), as the viewer's cache
-- points at them: by byte offset and length into the run's JSON report,
-- which holds them already (copying 200 MB of rows into the cache took 3 s
-- of a first opening), or, for a report of another layout, the row itself
-- (its `row` column). The cache's <table>_text(k, off, len, row) says which.
-- A report that changed since its table was built is never read at the old
-- offsets: evalua.view.index rebuilds the table first (its key).
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

-- each(idx, fn): fn(k, row) for every item that has a row, in key order, one row read at a time (the
-- report whole, read at once, with its rows cut from it, took the index's building to 900 MB).
function M.each(idx, fn)
  local row, close = reader(idx)
  for _, x in ipairs(idx.db:rows(("SELECT k, off, len, row FROM %s ORDER BY k"):format(idx.text))) do fn(x.k, row(x)) end
  close()
end

return M
