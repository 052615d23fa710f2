-- The label queue: the items of a run where a person's label is worth the
-- most for calibrating the judge on a metric. Each item gets a priority:
--   uncertainty  1 - 2|score - 0.5| (a score near the middle of 0..1),
--   + 1 when the judge's own votes split (detail.votes with two values),
--   + 1 when another system of the run falls on the other side of 0.5;
-- items already labelled on the metric are left out; the rest are taken
-- round-robin over the values of the run's first slice dimension
-- (stratified), highest priority first within each.
local json = require "evalua.core.json"

local M = {}
M.RULE_LABELS = 50 -- the calibration rule: Spearman >= 0.7 on at least 50 labels
M.RULE_RHO = 0.7

local function votes_split(detail)
  local v = type(detail) == "table" and detail.votes
  if type(v) ~= "table" or #v < 2 then return false end
  for i = 2, #v do if v[i] ~= v[1] then return true end end
  return false
end

function M.build(src, r, metric, n)
  local db = src.db
  local rows = db:rows([[SELECT s.system, s.item, s.value, s.detail, i.slices,
      (SELECT count(*) FROM scores o WHERE o.run = s.run AND o.item = s.item AND o.metric = s.metric
        AND o.system <> s.system AND o.value IS NOT NULL AND (o.value >= 0.5) <> (s.value >= 0.5)) AS others
      FROM scores s JOIN items i ON i.run = s.run AND i.system = s.system AND i.item = s.item
      WHERE s.run = ? AND s.metric = ? AND s.value IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.item = s.item AND l.metric = s.metric
        AND (l.system IS NULL OR l.system = s.system))]], r.seq, metric)
  local labelled = db:rows("SELECT count(DISTINCT item || '\31' || ifnull(system, '')) AS n FROM labels WHERE metric = ?",
    metric)[1].n
  local dims = {}
  for _, by_dim in pairs(r.record.aggregates or {}) do
    for d in pairs(by_dim) do if d ~= "all" then dims[d] = true end end
  end
  local dim
  for d in pairs(dims) do if not dim or d < dim then dim = d end end -- the first by name: the same on every call
  local groups, order = {}, {}
  for _, row in ipairs(rows) do
    local detail = row.detail and json.decode(row.detail)
    local why = {}
    local p = 1 - 2 * math.abs(row.value - 0.5)
    why[1] = ("score %.3g"):format(row.value)
    if votes_split(detail) then p = p + 1; why[#why + 1] = "the judge's votes split" end
    if row.others > 0 then p = p + 1; why[#why + 1] = "another system is on the other side of 0.5" end
    local slices = row.slices and json.decode(row.slices) or {}
    local g = dim and tostring(slices[dim]) or "all"
    if not groups[g] then groups[g] = {}; order[#order + 1] = g end
    local t = groups[g]
    t[#t + 1] = { system = row.system, item = row.item, value = row.value, priority = p, why = table.concat(why, "; "),
                  stratum = g }
  end
  table.sort(order)
  for _, g in ipairs(order) do
    table.sort(groups[g], function(a, b)
      if a.priority ~= b.priority then return a.priority > b.priority end
      return tostring(a.item) < tostring(b.item)
    end)
  end
  local out, round = {}, 1
  while #out < n do
    local took = false
    for _, g in ipairs(order) do
      local e = groups[g][round]
      if e and #out < n then out[#out + 1], took = e, true end
    end
    if not took then break end
    round = round + 1
  end
  return { metric = metric, run_id = r.run_id, dim = dim, items = setmetatable(out, json.array), unlabelled = #rows, labelled = labelled,
           needed = math.max(0, M.RULE_LABELS - labelled), rule = { labels = M.RULE_LABELS, spearman = M.RULE_RHO } }
end

return M
