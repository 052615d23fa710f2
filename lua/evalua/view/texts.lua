-- The texts of a run's items (each row as JSON), as the viewer's cache
-- points at them: by byte offset and length into the run's JSON report,
-- which holds them already (copying 200 MB of rows into the cache took 3 s
-- of a first opening), or, for a report of another layout, the row itself
-- (its `row` column). The cache's <table>_text(k, off, len, row) says which.
-- A report that changed since its table was built is never read at the old
-- offsets: evalua.view.index rebuilds the table first (its key).
local M = {}

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then error(("%s: the run's report is gone (the texts are read from it)"):format(path), 0) end
  local s = f:read("a")
  f:close()
  return s
end

-- read(idx, ks) -> {[k] = row} for the keys ks (a page's rows).
function M.read(idx, ks)
  local out, f = {}, nil
  local st = idx.db:prepare(("SELECT off, len, row FROM %s WHERE k = ?"):format(idx.text))
  for _, k in ipairs(ks) do
    local x = st:rows(k)[1]
    if x and x.row then out[k] = x.row
    elseif x then
      f = f or io.open(idx.report, "rb") or error(("%s: the run's report is gone (the texts are read from it)")
        :format(idx.report), 0)
      f:seek("set", x.off - 1)
      out[k] = f:read(x.len)
    end
  end
  st:close()
  if f then f:close() end
  return out
end

-- each(idx, fn): fn(k, row) for every item that has a row, in key order; the report is read once.
function M.each(idx, fn)
  local all = idx.db:rows(("SELECT k, off, len, row FROM %s ORDER BY k"):format(idx.text))
  local text = nil
  for _, x in ipairs(all) do
    if not x.row and not text then text = slurp(idx.report) end
    fn(x.k, x.row or text:sub(x.off, x.off + x.len - 1))
  end
end

return M
