-- What the C writers of the JSON and CSV reports (evalua._report) read: the
-- results' columns, names and codes, and, as JSON text made here before the
-- report begins, the values only Lua holds (judge details; rows given as Lua
-- tables, for the full JSON form), so that the writers read no Lua per item
-- and write every report on two threads.
local json = require "evalua.core.json"

-- get(i) for rows 1..n as JSON text (false where nil) encoded at depth,
-- indented as the writer places it; and the invalid UTF-8 sequences that
-- their encoding replaced.
local function texts(n, get, depth, indent)
  local out, replaced, opts = {}, 0, { depth = depth, indent = indent, replaced = true }
  for i = 1, n do
    local v = get(i)
    if v == nil then
      out[i] = false
    else
      local text, k = json.encode(v, opts)
      out[i], replaced = text, replaced + k
    end
  end
  return out, replaced
end

-- The ids (and the CSV report's query and answer) of rows given as Lua
-- tables are written from the columns, into which ev.dataset.from_rows
-- copied their text with each invalid UTF-8 sequence replaced: those are
-- counted here, for the report's warning.
local function replaced_in_columns(res, form)
  local ds, n = res.dataset, 0
  if not ds.lua_rows then return 0 end
  local keys = form and { res.id_field } or { res.id_field, "query", "answer" }
  for i = 1, res.n do
    local row = ds.rows[i]
    for _, k in ipairs(keys) do
      if type(row[k]) == "string" then n = n + select(2, json.utf8(row[k])) end
    end
  end
  return n
end

-- form: "full" or "compact" for the JSON report (nil for the CSV report,
-- which needs neither): an item's details sit at depth 4 (document >
-- items > item > details), indented in the full form; its row at depth 3,
-- on one line.
local function lua_texts(res, form)
  if not form then return nil, nil, 0 end
  local details, replaced, indent = {}, 0, form == "full" and "  " or nil
  for _, m in ipairs(res.metrics) do
    local d = res.details[m.name]
    if type(d) == "table" and next(d) ~= nil then
      local k
      details[m.name], k = texts(res.n, function(i) return d[i] end, 4, indent)
      replaced = replaced + k
    end
  end
  local ds, rows = res.dataset, nil
  if ds.lua_rows and form == "full" then
    local k
    rows, k = texts(res.n, function(i) return ds.rows[i] end, 3)
    replaced = replaced + k
  end
  return details, rows, replaced
end

return function(res, form)
  local names, dims, codes, values = {}, {}, {}, {}
  for j, m in ipairs(res.metrics) do names[j] = m.name end
  for _, d in ipairs(res.dims) do
    if d ~= "all" then
      dims[#dims + 1], codes[#codes + 1], values[#values + 1] = d, res.dim_codes[d], res.slice_values[d]
    end
  end
  local details, rows, replaced = lua_texts(res, form)
  replaced = replaced + replaced_in_columns(res, form)
  return {
    table = res.dataset.table, scores = res.scores, sys_codes = res.sys_codes, systems = res.systems,
    metrics = names, dims = dims, dim_codes = codes, dim_values = values, details = details, rows = rows,
    replaced = replaced, id_field = res.id_field,
    baseline = res.comparison and res.comparison.baseline_scores or nil,
  }
end
