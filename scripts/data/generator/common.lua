-- Helpers shared by the data generator's modules.
local M = {}

M.VARIANTS = { "baseline", "hybrid", "hybrid_rerank" }
M.CLASSES = { "factoid", "comparison", "how-to" }

function M.fail(fmt, ...)
  error(string.format(fmt, ...), 0)
end

-- Keys in sorted order: pairs() order differs between runs, and the output
-- must not.
function M.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

function M.set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

-- Standard normal draw from the seeded generator (Box-Muller).
function M.gaussian()
  local u1, u2 = 1 - math.random(), math.random()
  return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
end

function M.pick(list)
  return list[math.random(#list)]
end

-- In-place Fisher-Yates shuffle with the seeded generator.
function M.shuffle(list)
  for i = #list, 2, -1 do
    local j = math.random(i)
    list[i], list[j] = list[j], list[i]
  end
  return list
end

return M
