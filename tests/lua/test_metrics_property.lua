-- Property test: random qrels and runs (ties, negative scores, grades 0..4,
-- shuffled lines, comments, queries missing on either side) evaluated by
-- `evalua trec` and by ev.metrics.evaluate, against the plain Lua
-- implementation below, written from the definitions in docs/retrieval.md
-- (one obvious loop per measure, nothing shared with the C code).
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

-- ---- the reference ---------------------------------------------------------

local function log2(x) return math.log(x, 2) end

local function lround(x) return x >= 0 and math.floor(x + 0.5) or -math.floor(-x + 0.5) end

-- ranking: list of docnos in rank order; grades: docno -> grade (judged)
local function reference(ranking, grades, level)
  local R, N, judged = 0, 0, {}
  for _, g in pairs(grades) do
    if g >= 0 then
      judged[#judged + 1] = g
      if g >= level then R = R + 1 else N = N + 1 end
    end
  end
  table.sort(judged, function(a, b) return a > b end)
  local function rel(i) local g = grades[ranking[i]]; return g ~= nil and g >= level end
  local function gain(i) local g = grades[ranking[i]]; return (g ~= nil and g > 0) and g or 0 end
  local function hits(k)
    local c = 0
    for i = 1, math.min(k, #ranking) do if rel(i) then c = c + 1 end end
    return c
  end
  local v = { num_ret = #ranking, num_rel = R, num_rel_ret = hits(#ranking) }
  local function ap(k)
    if R == 0 then return 0 end
    local s = 0
    for i = 1, math.min(k, #ranking) do if rel(i) then s = s + hits(i) / i end end
    return s / R
  end
  v.map = ap(#ranking)
  v.gm_map = v.map
  v.Rprec = R > 0 and hits(R) / R or 0
  v.recip_rank = 0
  for i = 1, #ranking do if rel(i) then v.recip_rank = 1 / i; break end end
  local b = 0
  for i = 1, #ranking do
    if rel(i) then
      local above = 0
      for j = 1, i - 1 do
        local g = grades[ranking[j]]
        if g ~= nil and g >= 0 and g < level then above = above + 1 end
      end
      b = b + (above == 0 and 1 or 1 - math.min(above, R) / math.min(N, R))
    end
  end
  v.bpref = R > 0 and b / R or 0
  local function ndcg(k)
    local dcg, idcg = 0, 0
    for i = 1, math.min(k, #ranking) do dcg = dcg + gain(i) / log2(i + 1) end
    for i = 1, math.min(k, #judged) do
      if judged[i] > 0 then idcg = idcg + judged[i] / log2(i + 1) end
    end
    return idcg > 0 and dcg / idcg or 0
  end
  v.ndcg = ndcg(math.huge)
  for _, k in ipairs({ 1, 3, 5, 10 }) do
    v["P_" .. k] = hits(k) / k
    v["recall_" .. k] = R > 0 and hits(k) / R or 0
    v["ndcg_cut_" .. k] = ndcg(k)
    v["map_cut_" .. k] = ap(k)
    v["success_" .. k] = hits(k) > 0 and 1 or 0
  end
  local function iprec(x)
    local need, best = lround(x * R), 0
    if #ranking > 0 and need <= v.num_rel_ret then
      for i = 1, #ranking do
        if hits(i) >= need then best = math.max(best, hits(i) / i) end
      end
    end
    return best
  end
  for _, x in ipairs({ 0, 0.2, 0.5, 1 }) do v[("iprec_at_recall_%3.2f"):format(x)] = iprec(x) end
  -- the set measures and their kin
  local n, rr = #ranking, v.num_rel_ret
  v.set_P = n > 0 and rr / n or 0
  v.set_recall = R > 0 and rr / R or 0
  v.set_map = (n > 0 and R > 0) and rr * rr / (n * R) or 0
  v.set_relative_P = (n > 0 and R > 0) and rr / math.min(n, R) or 0
  v.set_F = rr > 0 and 2 * v.set_P * v.set_recall / (v.set_P + v.set_recall) or 0
  v.num_nonrel_judged_ret = 0
  for i = 1, n do
    local g = grades[ranking[i]]
    if g ~= nil and g >= 0 and g < level then v.num_nonrel_judged_ret = v.num_nonrel_judged_ret + 1 end
  end
  for _, k in ipairs({ 1, 3, 5, 10 }) do v["relative_P_" .. k] = R > 0 and hits(k) / math.min(k, R) or 0 end
  for _, x in ipairs({ 0.2, 1, 1.5 }) do
    local c = math.floor(x * R + 0.9)
    v[("Rprec_mult_%3.2f"):format(x)] = c > 0 and hits(c) / c or 0
  end
  v.utility = n > 0 and rr - (n - rr) or 0 -- 1 per relevant, -1 per other document retrieved
  local sum = 0
  for l = 0, 10 do sum = sum + iprec(l / 10) end
  v["11pt_avg"] = sum / 11
  -- binG: 1 / log2(2 + documents not relevant above) per relevant retrieved, over R
  local bin, above = 0, 0
  for i = 1, n do
    if rel(i) then bin = bin + 1 / log2(2 + above) else above = above + 1 end
  end
  v.binG = R > 0 and bin / R or 0
  v.gm_bpref = v.bpref
  -- infAP: judged documents only (no grade is negative here)
  local inf, r_above, nr_above = 0, 0, 0
  for i = 1, n do
    local g = grades[ranking[i]]
    if g ~= nil and g >= level then
      if i == 1 then inf = inf + 1
      else
        local j, e = i - 1, 0.00001
        inf = inf + 1 / i + (j / i) * ((r_above + nr_above) / j) * ((r_above + e) / (r_above + nr_above + 2 * e))
      end
      r_above = r_above + 1
    elseif g ~= nil then
      nr_above = nr_above + 1
    end
  end
  v.infAP = R > 0 and inf / R or inf
  return v
end

local MEASURES = { "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
  "iprec_at_recall.0,.2,.5,1", "P.1,3,5,10", "recall.1,3,5,10", "ndcg", "ndcg_cut.1,3,5,10",
  "map_cut.1,3,5,10", "success.1,3,5,10", "set_P", "set_recall", "set_map", "set_F", "set_relative_P",
  "relative_P.1,3,5,10", "num_nonrel_judged_ret", "Rprec_mult.0.2,1,1.5", "utility", "11pt_avg", "binG",
  "gm_bpref", "infAP" }

-- ---- random files ------------------------------------------------------------

local function shuffle(t)
  for i = #t, 2, -1 do
    local j = math.random(i)
    t[i], t[j] = t[j], t[i]
  end
  return t
end

local function random_case()
  local qrels, run, qlines, rlines = {}, {}, {}, {}
  for q = 1, math.random(1, 9) do
    local qid = "q" .. q
    if math.random() < 0.85 then -- judged
      qrels[qid] = {}
      for d = 1, 30 do
        if math.random() < 0.3 then
          local g = math.random(0, 4)
          qrels[qid]["d" .. d] = g
          qlines[#qlines + 1] = ("%s 0 d%d %d"):format(qid, d, g)
        end
      end
      if not next(qrels[qid]) then -- a query in the qrels has at least one line
        qrels[qid].d1 = 0
        qlines[#qlines + 1] = qid .. " 0 d1 0"
      end
    end
    if math.random() < 0.85 then -- retrieved
      run[qid] = {}
      for d = 1, 30 do
        if math.random() < 0.5 then
          local score = math.random(-4, 4) / 2 -- few values: many ties
          run[qid][#run[qid] + 1] = { doc = "d" .. d, score = score }
          rlines[#rlines + 1] = ("%s\tQ0\td%d\t%d\t%s\tRUN"):format(qid, d, math.random(1000), score)
        end
      end
    end
  end
  shuffle(qlines)
  shuffle(rlines)
  table.insert(qlines, math.random(#qlines + 1), "# a comment")
  table.insert(rlines, math.random(#rlines + 1), "")
  return qrels, run, table.concat(qlines, "\n") .. "\n", table.concat(rlines, "\n") .. "\n"
end

-- The queries trec_eval evaluates, each with its ranking in trec_eval's order.
local function expected(qrels, run, opts)
  local qids, out = {}, {}
  for qid in pairs(qrels) do
    if run[qid] or opts.complete then qids[#qids + 1] = qid end
  end
  table.sort(qids)
  for _, qid in ipairs(qids) do
    local docs = {}
    for _, r in ipairs(run[qid] or {}) do docs[#docs + 1] = r end
    table.sort(docs, function(a, b)
      if a.score ~= b.score then return a.score > b.score end
      return a.doc > b.doc
    end)
    local ranking = {}
    for i = 1, math.min(#docs, opts.depth or #docs) do ranking[i] = docs[i].doc end
    out[#out + 1] = { qid = qid, v = reference(ranking, qrels[qid], opts.level or 1) }
  end
  return out
end

local function write(path, s)
  local f = assert(io.open(path, "w"))
  f:write(s)
  f:close()
end

local function close(a, b, tol, what)
  if math.abs(a - b) > tol then lu.fail(("%s: got %.10g, want %.10g"):format(what, a, b)) end
end

local OPTION_SETS = {
  {}, { level = 2 }, { complete = true }, { depth = 5 }, { level = 3, complete = true, depth = 8 },
}

function test_random_cases_agree_with_the_reference()
  math.randomseed(20240521)
  local dir = h.tmpdir()
  local checked = 0
  for case = 1, 40 do
    local qrels, run, qtext, rtext = random_case()
    write(dir .. "/qrels", qtext)
    write(dir .. "/run", rtext)
    local opts = OPTION_SETS[case % #OPTION_SETS + 1]
    local want = expected(qrels, run, opts)
    local data = assert(ev.metrics.load_trec(dir .. "/qrels", dir .. "/run"))
    local ok, got = pcall(ev.metrics.evaluate, data, MEASURES, opts)
    if #want == 0 then goto continue end
    lu.assertTrue(ok, got)
    lu.assertEquals(#got.per_query, #want, "case " .. case)
    for i, w in ipairs(want) do
      local g = got.per_query[i]
      lu.assertEquals(g.qid, w.qid)
      for name, value in pairs(w.v) do
        close(g[name], value, 1e-9, ("case %d %s %s"):format(case, w.qid, name))
        checked = checked + 1
      end
    end
    -- summaries: means, sums for counts, the geometric mean for gm_map
    for name in pairs(want[1].v) do
      local sum = 0
      for _, w in ipairs(want) do
        sum = sum + (name:match("^gm_") and math.log(math.max(w.v[name], 1e-5)) or w.v[name])
      end
      local all = name:match("^num_") and sum or name:match("^gm_") and math.exp(sum / #want) or sum / #want
      close(got.summary[name], all, 1e-9, ("case %d summary %s"):format(case, name))
    end
    -- the command line prints the same per-query values at 4 decimals
    do
      local args = ("-q%s -l %d%s"):format(opts.complete and " -c" or "", opts.level or 1,
        opts.depth and (" -M " .. opts.depth) or "")
      for _, m in ipairs(MEASURES) do args = args .. " -m " .. m end
      local r = h.run(("%s trec %s %s/qrels %s/run"):format(h.bin, args, dir, dir))
      lu.assertEquals(r.status, 0, r.stderr)
      local byq = {}
      for _, w in ipairs(want) do byq[w.qid] = w.v end
      local lines = 0
      for name, qid, value in r.stdout:gmatch("(%S+)%s*\t(%S+)\t(%S+)\n") do
        if qid ~= "all" then
          lu.assertNotNil(byq[qid], "unexpected query " .. qid)
          close(tonumber(value), byq[qid][name], 0.00005 + 1e-12, ("case %d cli %s %s"):format(case, qid, name))
          lines = lines + 1
        end
      end
      lu.assertEquals(lines, #want * 49, "case " .. case) -- 49 per-query columns (not gm_map, gm_bpref)
    end
    ::continue::
  end
  h.sh("rm -rf " .. dir)
  lu.assertTrue(checked > 2000, "checked " .. checked)
end

os.exit(lu.LuaUnit.run(), true)
