-- Votes over the answers of n samples of one judge operation: a judge that
-- checks itself. Each operation names how its answers combine:
--   "majority"  a verdict (0/1, YES/NO, A/B/tie): the most common value; a
--               tie goes to the lowest number, or to the earliest sample's
--               string
--   "mean"      a score: the mean, with the sample standard deviation
--   "verdicts"  a list of {verdict=} or {grade=} entries, one per statement:
--               a majority per statement, a tie to the lower value
--   "concat"    lists (generated questions): all of them
--   "outputs"   a table of named outputs: per key, numbers by mean, other
--               values by majority
local V = {}

local function mean_sd(xs)
  local m = 0
  for _, x in ipairs(xs) do m = m + x / #xs end
  if #xs < 2 then return m, 0 end
  local ss = 0
  for _, x in ipairs(xs) do ss = ss + (x - m) ^ 2 end
  return m, math.sqrt(ss / (#xs - 1))
end
V.mean_sd = mean_sd

-- The most common value; agreement = its share of the votes.
function V.majority(values)
  local count, order = {}, {}
  for _, v in ipairs(values) do
    if count[v] == nil then order[#order + 1] = v end
    count[v] = (count[v] or 0) + 1
  end
  local best = order[1]
  for _, v in ipairs(order) do
    local better = count[v] > count[best]
      or count[v] == count[best] and type(v) == "number" and type(best) == "number" and v < best
    if better then best = v end
  end
  return best, count[best] / #values
end

local function verdict_lists(lists)
  local n = #lists[1]
  for _, l in ipairs(lists) do
    if #l ~= n then return nil, "the samples listed different statements" end
  end
  local out, agree = {}, 0
  for i = 1, n do
    local key = lists[1][i].grade ~= nil and "grade" or "verdict"
    local votes = {}
    for s, l in ipairs(lists) do votes[s] = l[i][key] end
    local entry = {}
    for k, v in pairs(lists[1][i]) do entry[k] = v end
    local share
    entry[key], share = V.majority(votes)
    entry.votes = votes
    out[i], agree = entry, agree + share / n
  end
  return out, nil, agree
end

local function outputs(tables)
  local out = {}
  for k, v in pairs(tables[1]) do
    local vals = {}
    for s, t in ipairs(tables) do vals[s] = t[k] end
    if type(v) == "number" then out[k] = (mean_sd(vals)) else out[k] = (V.majority(vals)) end
  end
  return out
end

-- combine(kind, values) -> value, details {spread=, agreement=} | nil, why
function V.combine(kind, values)
  if kind == "mean" then
    local m, sd = mean_sd(values)
    return m, { spread = sd }
  elseif kind == "majority" then
    local v, share = V.majority(values)
    return v, { agreement = share }
  elseif kind == "verdicts" then
    local v, why, agree = verdict_lists(values)
    if not v then return nil, why end
    return v, { agreement = agree }
  elseif kind == "concat" then
    local all = {}
    for _, l in ipairs(values) do table.move(l, 1, #l, #all + 1, all) end
    return all, {}
  elseif kind == "outputs" then
    return outputs(values), {}
  end
  error("vote: unknown kind '" .. tostring(kind) .. "'", 2)
end

return V
