-- The straightforward implementation the benchmark compares against: plain
-- Lua tables, line-by-line reading, table.sort. Prints what
-- `evalua trec -q -m map -m ndcg_cut.10 -m P.10 -m recall.100 -m recip_rank`
-- prints (trec_eval's format), so the outputs can be compared too.
-- usage: evalua run bench/trec/reference.lua QRELS RUN
local grades, runs = {}, {}
for line in io.lines(arg[1]) do
  local qid, doc, rel = line:match("^(%S+)%s+%S+%s+(%S+)%s+(%S+)")
  if qid then
    grades[qid] = grades[qid] or {}
    grades[qid][doc] = tonumber(rel)
  end
end
for line in io.lines(arg[2]) do
  local qid, doc, score = line:match("^(%S+)%s+%S+%s+(%S+)%s+%S+%s+(%S+)")
  if qid then
    runs[qid] = runs[qid] or {}
    table.insert(runs[qid], { doc = doc, score = tonumber(score) })
  end
end
local qids = {}
for qid in pairs(grades) do if runs[qid] then qids[#qids + 1] = qid end end
table.sort(qids)
local out, sums = {}, { 0, 0, 0, 0, 0 }
local names = { "map", "recip_rank", "P_10", "recall_100", "ndcg_cut_10" }
for _, qid in ipairs(qids) do
  local g, docs = grades[qid], runs[qid]
  table.sort(docs, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.doc > b.doc
  end)
  local R, ideal = 0, {}
  for _, v in pairs(g) do
    if v >= 1 then R = R + 1 end
    if v > 0 then ideal[#ideal + 1] = v end
  end
  table.sort(ideal, function(a, b) return a > b end)
  local hits, ap, rr, p10, r100, dcg, idcg = 0, 0, 0, 0, 0, 0, 0
  for i, d in ipairs(docs) do
    local v = g[d.doc]
    if v and v >= 1 then
      hits = hits + 1
      ap = ap + hits / i
      if rr == 0 then rr = 1 / i end
    end
    if i <= 10 and v and v > 0 then dcg = dcg + v / math.log(i + 1, 2) end
    if i == 10 then p10 = hits end
    if i == 100 then r100 = hits end
  end
  if #docs < 10 then p10 = hits end
  if #docs < 100 then r100 = hits end
  for i = 1, math.min(10, #ideal) do idcg = idcg + ideal[i] / math.log(i + 1, 2) end
  local v = { R > 0 and ap / R or 0, rr, p10 / 10, R > 0 and r100 / R or 0, idcg > 0 and dcg / idcg or 0 }
  for i, name in ipairs(names) do
    out[#out + 1] = ("%-22s\t%s\t%6.4f\n"):format(name, qid, v[i])
    sums[i] = sums[i] + v[i]
  end
end
for i, name in ipairs(names) do out[#out + 1] = ("%-22s\tall\t%6.4f\n"):format(name, sums[i] / #qids) end
io.write(table.concat(out))
