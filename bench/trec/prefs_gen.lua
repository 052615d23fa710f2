-- Generates one small random case for the relevance formats of -R (prefs,
-- qrels_prefs, qrels_jg) and a run, for bench/trec/prefs_compare.sh:
-- a few queries (ids sharing prefixes, so byte order matters), documents
-- judged by one to three judgment groups at levels below 0 to 4, scores
-- from a handful of values (so with ties), some judged documents not
-- retrieved, some retrieved not judged. Preferences of a group come from one hidden level per document,
-- so they are consistent; with WILD = 1 every subgroup draws its own levels
-- instead, which can contradict (an error for both programs).
-- usage: evalua run bench/trec/prefs_gen.lua DIR SEED [WILD]
--   -> DIR/prefs DIR/qrels_prefs DIR/qrels_jg DIR/run (every judged query)
--      DIR/run_part (some judged queries missing, for -c) DIR/zscores
local dir, seed, wild = arg[1], tonumber(arg[2] or 1), arg[3] == "1"
assert(dir, "usage: evalua run bench/trec/prefs_gen.lua DIR SEED [WILD]")
math.randomseed(seed)
local R = math.random

local function pick(t) return t[R(#t)] end

-- a random subset of list (each kept with probability p), at least one
local function subset(list, p)
  local out = {}
  for _, x in ipairs(list) do if R() < p then out[#out + 1] = x end end
  if #out == 0 then out[1] = pick(list) end
  return out
end

local function shuffle(t)
  for i = #t, 2, -1 do local j = R(i); t[i], t[j] = t[j], t[i] end
  return t
end

local qids = shuffle({ "q1", "q10", "q2", "q1a", "Q3", "q20", "q100" })
local nq = R(1, 5)
local queries = {}
for i = 1, nq do
  local docs = {}
  for d = 1, R(2, 14) do docs[d] = pick({ "D", "d", "D0", "doc" }) .. R(1, 30) end
  local seen, uniq = {}, {}
  for _, d in ipairs(docs) do if not seen[d] then seen[d] = true; uniq[#uniq + 1] = d end end
  queries[i] = { qid = qids[i], docs = uniq }
end

local out = {}
local function file(name) out[name] = out[name] or {}; return out[name] end
local function line(name, ...) local t = file(name); t[#t + 1] = table.concat({ ... }, pick({ " ", "\t", "  " })) end

local LEVELS = { 0, 0, 1, 2, 3, 0.5, 4, -1, -2 }
-- wild cases alternate between levels with 0 (documents judged both 0 and
-- above 0) and without (preferences in a cycle)
local WILD = seed % 2 == 0 and LEVELS or { 1, 2, 3 }

-- A group of one subgroup whose lowest level is below 0 and has fewer
-- lines than there are relevant ones: trec_eval's recount for Rnonrel
-- would read past them (into memory it does not own), so such a group gets
-- more documents at its lowest level.
local function pad(lines)
  local low, rel, n = math.huge, 0, 0
  for _, l in ipairs(lines) do low = math.min(low, l.level); rel = rel + (l.level > 0 and 1 or 0) end
  for _, l in ipairs(lines) do n = n + (l.level == low and 1 or 0) end
  for k = n + 1, low < 0 and rel or 0 do lines[#lines + 1] = { sub = lines[1].sub, doc = "pad" .. k, level = low } end
end

-- lines { sub =, doc =, level = } of one group, padded when it has one subgroup
local function group(name, qid, g, lines, nsub)
  if nsub == 1 then pad(lines) end
  for _, l in ipairs(lines) do
    if name == "prefs" then line(name, qid, g, l.sub, l.doc, tostring(l.level))
    else line(name, qid, g, l.doc, tostring(l.level)) end
  end
end

for _, q in ipairs(queries) do
  -- prefs: groups of subgroups
  for g = 1, R(1, 3) do
    local hidden, lines = {}, {}
    for _, d in ipairs(q.docs) do hidden[d] = pick(LEVELS) end
    local members = subset(q.docs, 0.7)
    local nsub = R(1, 3)
    for s = 1, nsub do
      local scale = pick({ 1, 2, 10 })
      for _, d in ipairs(subset(members, 0.6)) do
        local level = (wild and pick(WILD) or hidden[d]) * scale
        lines[#lines + 1] = { sub = "s" .. s, doc = d, level = level }
        -- a line given twice (counted twice in a group of one subgroup); wild: at another level
        if R() < 0.08 then lines[#lines + 1] = { sub = "s" .. s, doc = d, level = wild and pick(WILD) or level } end
      end
    end
    group("prefs", q.qid, "u" .. g, lines, nsub)
  end
  -- qrels_prefs and qrels_jg: one judgment per document and group
  for g = 1, R(1, 3) do
    local lines = {}
    for _, d in ipairs(subset(q.docs, 0.7)) do
      local level = pick({ 0, 0, 1, 1, 2, 3, -1 })
      lines[#lines + 1] = { doc = d, level = level }
      if R() < 0.05 then lines[#lines + 1] = { doc = d, level = level } end
    end
    group("qrels_prefs", q.qid, "g" .. g, lines, 1)
    for _, d in ipairs(subset(q.docs, 0.7)) do
      line("qrels_jg", q.qid, "g" .. g, d, tostring(pick({ -1, 0, 0, 1, 1, 2, 3 })))
    end
  end
end

-- the run: judged and unjudged documents, scores with ties; extra queries
local SCORES = { "1", "2", "2", "3.5", "3.5", "7", "0.25", "-1" }
local function run_query(name, qid, docs)
  local ret = subset(docs, 0.75)
  for k = 1, R(0, 4) do ret[#ret + 1] = "x" .. k end
  for i, d in ipairs(shuffle(ret)) do line(name, qid, "Q0", d, tostring(i), pick(SCORES), "run" .. seed % 3) end
end
for _, q in ipairs(queries) do
  run_query("run", q.qid, q.docs)
  if R() < 0.6 then run_query("run_part", q.qid, q.docs) end
end
run_query("run", "zz_unjudged", { "D1", "D2" })
run_query("run_part", "zz_unjudged", { "D1", "D2" })

-- z-scores for every query and preference measure (trec_eval needs them all)
local PREFS = { "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
  "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
  "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp" }
for _, q in ipairs(queries) do
  for _, m in ipairs(PREFS) do line("zscores", q.qid, m, ("%.3f"):format(R()), pick({ "0.5", "2", "0.125" })) end
end

os.execute("mkdir -p '" .. dir .. "'")
for _, name in ipairs({ "prefs", "qrels_prefs", "qrels_jg", "run", "run_part", "zscores" }) do
  local f = assert(io.open(dir .. "/" .. name, "w"))
  local lines = shuffle(out[name] or {})
  -- a comment, never last: trec_eval reads past the end of a file ending with one
  if name == "prefs" and #lines > 0 and R() < 0.3 then table.insert(lines, R(#lines), "# a comment line") end
  f:write(table.concat(lines, "\n"), #lines > 0 and "\n" or "")
  f:close()
end
