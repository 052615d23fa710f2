-- The plain-Lua reference of bench/dataplane: what a user would write with
-- cjson and loops. Reads the rows, computes recall@5, MRR, nDCG@10
-- (trec_eval's definitions: relevant means grade >= 1, gain = grade, ideal
-- from all judged grades), strict exact match and SQuAD token F1 (CJK
-- characters as tokens of their own, as evalua counts them), and the mean
-- of each per query class and per variant. With a CSV report of evalua,
-- compares every row's scores with it.
-- usage: evalua run bench/dataplane/reference.lua ROWS.jsonl [evalua.csv]
local cjson = require "cjson"
local path, csv = arg[1], arg[2]
local NAMES = { "recall@5", "mrr", "ndcg@10", "exact_match", "token_f1" }

local function ranking(row)
  local r = {}
  for i, e in ipairs(row.retrieved) do r[i] = e end
  table.sort(r, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.id > b.id
  end)
  return r
end

local function retrieval(row)
  local grades = row.graded_relevance
  local nrel, ideal = 0, {}
  for _, g in pairs(grades) do
    if g >= 1 then nrel = nrel + 1 end
    if g > 0 then ideal[#ideal + 1] = g end
  end
  table.sort(ideal, function(a, b) return a > b end)
  local r = ranking(row)
  local hits5, rr, dcg, idcg = 0, 0, 0, 0
  for i, e in ipairs(r) do
    local g = grades[e.id] or 0
    if i <= 5 and g >= 1 then hits5 = hits5 + 1 end
    if rr == 0 and g >= 1 then rr = 1 / i end
    if i <= 10 and g > 0 then dcg = dcg + g / (math.log(i + 1) / math.log(2)) end
  end
  for i = 1, math.min(10, #ideal) do idcg = idcg + ideal[i] / (math.log(i + 1) / math.log(2)) end
  return hits5 / nrel, rr, idcg > 0 and dcg / idcg or 0
end

local function tokens(s)
  s = s:lower():gsub("[%p]", ""):gsub("([\228-\233][\128-\191][\128-\191])", " %1 ")
  local out = {}
  for w in s:gmatch("%S+") do
    if w ~= "a" and w ~= "an" and w ~= "the" then out[#out + 1] = w end
  end
  return out
end

local function f1(pred, gold)
  local p, g = tokens(pred), tokens(gold)
  local count, same = {}, 0
  for _, w in ipairs(g) do count[w] = (count[w] or 0) + 1 end
  for _, w in ipairs(p) do
    if (count[w] or 0) > 0 then same, count[w] = same + 1, count[w] - 1 end
  end
  if same == 0 then return 0 end
  local pr, rc = same / #p, same / #g
  return 2 * pr * rc / (pr + rc)
end

local function answers(row)
  local em, best = 0, 0
  for _, g in ipairs(row.gold_answers) do
    if row.answer == g then em = 1 end
    local s = f1(row.answer, g)
    if s > best then best = s end
  end
  return em, best
end

local scores, sums = {}, {}
local function add(key, vals)
  local s = sums[key] or { n = 0, 0, 0, 0, 0, 0 }
  sums[key] = s
  s.n = s.n + 1
  for k = 1, 5 do s[k] = s[k] + vals[k] end
end
local n = 0
for line in io.lines(path) do
  local row = cjson.decode(line)
  local rec, rr, ndcg = retrieval(row)
  local em, f = answers(row)
  local vals = { rec, rr, ndcg, em, f }
  n = n + 1
  scores[n] = vals
  add("all", vals)
  add("query_class=" .. row.query_class, vals)
  add("variant=" .. row.variant, vals)
end
local keys = {}
for k in pairs(sums) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do
  local s = sums[k]
  io.write(("%-28s n=%-8d"):format(k, s.n))
  for i = 1, 5 do io.write(("  %s %.6f"):format(NAMES[i], s[i] / s.n)) end
  io.write("\n")
end

if csv then -- every row's scores against evalua's CSV report (columns 5..9)
  local i, bad = 0, 0
  for line in io.lines(csv) do
    if i > 0 then
      local cells = {}
      for c in (line:gsub("\r$", "") .. ","):gmatch("([^,]*),") do cells[#cells + 1] = c end
      for k = 1, 5 do
        local v = tonumber(cells[4 + k])
        if not v or math.abs(v - scores[i][k]) > 1e-12 then
          bad = bad + 1
          if bad <= 5 then print(("row %d %s: evalua %s, plain Lua %.17g"):format(i, NAMES[k], cells[4 + k], scores[i][k])) end
        end
      end
    end
    i = i + 1
  end
  print(("scores of %d rows x 5 metrics: %d differ from evalua's"):format(i - 1, bad))
end
