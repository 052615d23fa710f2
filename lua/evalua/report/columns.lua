-- What the C writers of the JSON and CSV reports (evalua._report) read: the
-- results' columns, names and codes, the values that only Lua holds (judge
-- details, rows given as Lua tables).

return function(res)
  local names, dims, codes, values = {}, {}, {}, {}
  for j, m in ipairs(res.metrics) do names[j] = m.name end
  for _, d in ipairs(res.dims) do
    if d ~= "all" then
      dims[#dims + 1], codes[#codes + 1], values[#values + 1] = d, res.dim_codes[d], res.slice_values[d]
    end
  end
  local ds = res.dataset
  return {
    table = ds.table, scores = res.scores, sys_codes = res.sys_codes, systems = res.systems,
    metrics = names, dims = dims, dim_codes = codes, dim_values = values, details = res.details,
    id_field = res.id_field, lua_rows = ds.lua_rows and ds.rows or nil,
    baseline = res.comparison and res.comparison.baseline_scores or nil,
  }
end
