-- The best pairing of two lists: which expected call goes with which call
-- made, when every item may be used once. max(w, n, m) takes weights
-- w(i, j) >= 0 for i in 1..n, j in 1..m and returns the pairs {i, j} of
-- positive weight of an assignment whose total weight is the largest
-- possible, and that total. The Hungarian method with potentials,
-- O(n^2 m): tool-call lists are short, and unlike a greedy pass the result
-- does not depend on the order of either list.
local M = {}

-- Minimum-cost assignment of every row of cost (n x m, n <= m) to its own
-- column; returns col_of[i].
local function hungarian(cost, n, m)
  local INF = math.huge
  local u, v, p, way = {}, {}, {}, {}
  for j = 0, m do v[j], p[j], way[j] = 0, 0, 0 end
  for i = 0, n do u[i] = 0 end
  for i = 1, n do
    p[0] = i
    local j0, minv, used = 0, {}, {}
    for j = 0, m do minv[j], used[j] = INF, false end
    repeat
      used[j0] = true
      local i0, delta, j1 = p[j0], INF, nil
      for j = 1, m do
        if not used[j] then
          local cur = cost[i0][j] - u[i0] - v[j]
          if cur < minv[j] then minv[j], way[j] = cur, j0 end
          if minv[j] < delta then delta, j1 = minv[j], j end
        end
      end
      for j = 0, m do
        if used[j] then u[p[j]], v[j] = u[p[j]] + delta, v[j] - delta else minv[j] = minv[j] - delta end
      end
      j0 = j1
    until p[j0] == 0
    repeat
      local j1 = way[j0]
      p[j0] = p[j1]
      j0 = j1
    until j0 == 0
  end
  local col_of = {}
  for j = 1, m do
    if p[j] ~= 0 then col_of[p[j]] = j end
  end
  return col_of
end

M.min_cost = hungarian

function M.max(w, n, m)
  if n == 0 or m == 0 then return {}, 0 end
  local flip = n > m -- the method needs no more rows than columns
  local rows, cols = n, m
  if flip then rows, cols = m, n end
  local cost, weight = {}, {}
  for i = 1, rows do
    cost[i], weight[i] = {}, {}
    for j = 1, cols do
      local x = flip and w(j, i) or w(i, j)
      weight[i][j] = x
      cost[i][j] = -x
    end
  end
  local col_of = hungarian(cost, rows, cols)
  local pairs_, total = {}, 0
  for i = 1, rows do
    local j = col_of[i]
    local x = weight[i][j]
    if x > 0 then
      total = total + x
      pairs_[#pairs_ + 1] = flip and { j, i, x } or { i, j, x }
    end
  end
  table.sort(pairs_, function(a, b) return a[1] < b[1] end)
  return pairs_, total
end

-- The size of a largest matching where ok(i, j) says whether i may pair with j.
function M.matching(ok, n, m)
  local pairs_, total = M.max(function(i, j) return ok(i, j) and 1 or 0 end, n, m)
  return math.tointeger(total) or total, pairs_
end

return M
