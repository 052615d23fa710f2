-- A run's items as one wide table for the items page: built when the run
-- is first opened, as a TEMP table of the viewer's own connection to the
-- store (in memory: PRAGMA temp_store = MEMORY; history.db is not
-- written). One row per (system, item): its slices, for each metric its
-- score (v<i>, NULL when unmeasured or absent) and whether it was
-- unmeasured (u<i>); beside it, by the same key k, the row as JSON (row),
-- which the search reads with LIKE (ASCII letters fold, others match as
-- they are).
-- A filter is then one scan of one table (docs/view.md#speed).
local source = require "evalua.view.source"

local M = {}

-- build(src, r) -> {table = "temp.view_run_<seq>", text = its texts' table, metrics = {name = i}, list = {names}, why = nil or
-- why the run has no texts}
function M.build(src, r)
  src.indexes = src.indexes or {}
  local hit = src.indexes[r.seq]
  if hit then return hit end
  local db = src.db
  db:exec("PRAGMA temp_store = MEMORY")
  local metrics, list = {}, {}
  for i, m in ipairs(db:rows("SELECT DISTINCT metric FROM scores WHERE run = ? ORDER BY metric", r.seq)) do
    metrics[m.metric], list[i] = i, m.metric
  end
  local name = "view_run_" .. math.tointeger(r.seq)
  local cols, sel = { "k INTEGER PRIMARY KEY", "system TEXT", "item", "slices TEXT" }, {}
  local args = {}
  for i, m in ipairs(list) do
    cols[#cols + 1] = ("v%d REAL, u%d INTEGER"):format(i, i)
    sel[#sel + 1] = ("max(CASE WHEN s.metric = ?%d THEN s.value END), max(s.metric = ?%d AND s.value IS NULL)")
      :format(i + 1, i + 1)
    args[#args + 1] = m
  end
  local text_table = name .. "_text"
  db:exec(("DROP TABLE IF EXISTS temp.%s; DROP TABLE IF EXISTS temp.%s"):format(name, text_table))
  -- The numbers: one row per item, its scores pivoted into columns. items
  -- and scores share the key prefix (run, system, item), so the join and
  -- the grouping stream in key order without a sort.
  db:exec(("CREATE TEMP TABLE %s(%s)"):format(name, table.concat(cols, ", ")))
  local fill = {}
  for i = 1, #list do fill[#fill + 1] = ("v%d, u%d"):format(i, i) end
  db:run(("INSERT INTO temp.%s(system, item, slices%s) SELECT i.system, i.item, i.slices%s FROM items i "
    .. "LEFT JOIN scores s ON s.run = i.run AND s.system = i.system AND s.item = i.item WHERE i.run = ?1 "
    .. "GROUP BY i.system, i.item ORDER BY i.system, i.item")
    :format(name, #fill > 0 and ", " .. table.concat(fill, ", ") or "", #sel > 0 and ", " .. table.concat(sel, ", ") or ""),
    r.seq, table.unpack(args))
  db:exec(("CREATE UNIQUE INDEX temp.%s_key ON %s(system, item)"):format(name, name))
  -- The texts in a table of their own, so that a filter on the numbers
  -- scans a few MB rather than every row's text.
  db:exec(("CREATE TEMP TABLE %s(k INTEGER PRIMARY KEY, row TEXT)"):format(text_table))
  local texts, why = source.raw_texts(src, r.record)
  if texts then
    local st = db:prepare(("INSERT OR IGNORE INTO temp.%s(k, row) SELECT k, ?3 FROM temp.%s "
      .. "WHERE system = ?1 AND item = ?2"):format(text_table, name))
    db:exec("BEGIN") -- a deferred transaction: it writes TEMP only, so it takes no lock on history.db
    local ok, err = pcall(function()
      for _, t in ipairs(texts) do if t.text then st:run(t.system, t.id, t.text) end end
    end)
    st:close()
    db:exec(ok and "COMMIT" or "ROLLBACK")
    if not ok then error(err, 0) end
  end
  texts = nil
  collectgarbage() -- the report's text and its rows: a run's worth of memory, given back now
  db:exec(("CREATE INDEX temp.%s_item ON %s(item)"):format(name, name))
  -- What the filters ask most, computed once: per metric an index (sorts and "below x" read it in order)
  -- and whether another system of the run falls on the other side of 0.5 on the same item (d<i>).
  for i = 1, #list do
    db:exec(("CREATE INDEX temp.%s_v%d ON %s(v%d)"):format(name, i, name, i))
    db:exec(("ALTER TABLE temp.%s ADD COLUMN d%d INTEGER"):format(name, i))
    db:exec(("UPDATE temp.%s AS t SET d%d = 1 FROM (SELECT DISTINCT a.k FROM temp.%s a JOIN temp.%s b ON b.item = a.item "
      .. "AND b.system <> a.system WHERE (a.v%d >= 0.5) <> (b.v%d >= 0.5)) AS x WHERE x.k = t.k")
      :format(name, i, name, name, i, i))
  end
  local idx = { table = "temp." .. name, text = "temp." .. text_table, metrics = metrics, list = list, why = why }
  src.indexes[r.seq] = idx
  return idx
end

return M
