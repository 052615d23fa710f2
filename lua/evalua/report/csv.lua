-- CSV report: one line per item (id, system, slices, a column per metric,
-- with a comparison the baseline's score per metric, then the reasons of
-- metrics that give one, the query and the answer).
-- An unmeasured score is an empty cell, never 0.
local json = require "evalua.json"

local function field(v)
  if v == nil then return "" end
  local s = type(v) == "number" and json.number(v) or tostring(v)
  if s:find('[,"\r\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

local function with_reasons(res)
  local out = {}
  for _, m in ipairs(res.metrics) do
    for _, it in ipairs(res.items) do
      if it.reasons[m.name] or it.unmeasured[m.name] then
        out[#out + 1] = m.name
        break
      end
    end
  end
  return out
end

return function(res)
  local reasons = with_reasons(res)
  local header = { "id", "system" }
  for _, d in ipairs(res.dims) do
    if d ~= "all" then header[#header + 1] = d end
  end
  for _, m in ipairs(res.metrics) do header[#header + 1] = m.name end
  local before = res.comparison and res.comparison.before
  if before then
    for _, m in ipairs(res.metrics) do header[#header + 1] = m.name .. ".baseline" end
  end
  for _, name in ipairs(reasons) do header[#header + 1] = name .. ".reason" end
  header[#header + 1] = "query"
  header[#header + 1] = "answer"
  local lines = {}
  local function emit(cells, n)
    local out = {}
    for i = 1, n do out[i] = field(cells[i]) end
    lines[#lines + 1] = table.concat(out, ",")
  end
  emit(header, #header)
  for _, it in ipairs(res.items) do
    local cells, n = { it.id, it.system }, 2
    local function add(v) n = n + 1; cells[n] = v end
    for _, d in ipairs(res.dims) do
      if d ~= "all" then add(it.slices[d]) end
    end
    for _, m in ipairs(res.metrics) do add(it.scores[m.name]) end
    if before then
      local b = before[it.system] and before[it.system][it.id]
      for _, m in ipairs(res.metrics) do add(b and b.scores and b.scores[m.name]) end
    end
    for _, name in ipairs(reasons) do add(it.reasons[name] or it.unmeasured[name]) end
    add(it.row.query)
    add(it.row.answer)
    emit(cells, n)
  end
  return table.concat(lines, "\r\n") .. "\r\n"
end
