-- Retrieval benchmarks as their folders hold them: BEIR (corpus.jsonl
-- {_id, title, text}, queries.jsonl {_id, text}, qrels/SPLIT.tsv with a
-- header and the columns query-id, corpus-id, score) and MS MARCO
-- (collection.tsv "pid<TAB>passage", or the document collection's "docid
-- url title body"; queries.SPLIT.tsv "qid<TAB>text"; qrels.SPLIT.tsv in
-- TREC's four columns). Both load as one row per judged query, as BEIR's
-- GenericDataLoader keeps them: qid, query, graded_relevance (every
-- judgement), gold_doc_ids (the documents graded 1 or more), and the
-- corpus as ds.corpus {[id] = {id =, title =, text =}}.
local records = require "evalua.data.formats.records"
local c = require "evalua.data.formats.common"
local json = require "evalua.core.json"
local sys = require "evalua._sys"

local M = {}

local function exists(path) return sys.stat(path) ~= nil end

local function lines(path)
  local s = records.read_file(path)
  local out, n = {}, 0
  for line in (s:sub(-1) == "\n" and s or s .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    out[n] = line:gsub("\r$", "")
  end
  return out, sys.sha256(s)
end

local function fields(line, max)
  local f = {}
  for x in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = x end
  if max and #f > max then -- the last field keeps its tabs (a passage may hold one)
    local head = {}
    for i = 1, max - 1 do head[i] = f[i] end
    head[max] = table.concat(f, "\t", max)
    return head
  end
  return f
end

local function grade_of(s)
  local g = s:match("^%s*(-?%d+)%s*$") or s:match("^%s*(-?%d+)%.0*%s*$")
  return g and math.tointeger(tonumber(g))
end

-- qrels: BEIR's TSV (a header line, then QID DOC SCORE) or TREC's four
-- columns (QID ITER DOC REL, whitespace-separated). Judgements in file
-- order; a document judged twice for one query is an error naming both lines.
local function read_qrels(path)
  local ls, hash = lines(path)
  local order, by, seen = {}, {}, {}
  local width
  for no, line in ipairs(ls) do
    if line:find("%S") and not line:find("^#") then
      local f = {}
      for x in line:gmatch("[^ \t]+") do f[#f + 1] = x end
      if not width and #f == 3 and not grade_of(f[3]) then
        width = 3 -- BEIR's header: query-id corpus-id score
      else
        width = width or #f
        if #f ~= width or (width ~= 3 and width ~= 4) then
          c.input_error(("%s:%d: expected %s fields (QID DOC SCORE, or TREC's QID ITER DOC REL), found %d"):format(
            path, no, width == 4 and "4" or "3", #f))
        end
        local qid, doc, g = f[1], f[width == 3 and 2 or 3], grade_of(f[width])
        if not g then c.input_error(("%s:%d: relevance is not an integer: '%s'"):format(path, no, f[width])) end
        if not by[qid] then by[qid] = { grades = {}, docs = {}, line = no }; order[#order + 1] = qid end
        local key = qid .. "\0" .. doc
        if seen[key] then
          c.input_error(("%s:%d: document '%s' is judged twice for query '%s' (first on line %d)"):format(path, no, doc, qid, seen[key]))
        end
        seen[key] = no
        local q = by[qid]
        q.grades[doc] = g
        q.docs[#q.docs + 1] = doc
      end
    end
  end
  return order, by, hash
end

local function beir_jsonl(path, what)
  local recs, hash = records.jsonl(path)
  local out = {}
  for _, r in ipairs(recs) do
    local v = r.value
    local ok, err = pcall(function()
      local id = c.id(v._id, "_id")
      if type(v.text) ~= "string" then c.bad("text", "expected a string, got %s", c.typename(v.text)) end
      if out[id] then c.bad("_id", "'%s' appears twice (first on line %d)", id, out[id].line) end
      local d = { id = id, text = v.text, line = r.line }
      for k, x in pairs(v) do
        if k ~= "_id" and k ~= "text" then d[k] = x end
      end
      out[id] = d
    end)
    if not ok then
      if c.is_bad(err) then c.input_error(("%s:%d: field '%s': %s (a %s line is {\"_id\": ..., \"text\": ...})"):format(
        path, r.line, err.field, err.msg, what)) end
      error(err, 0)
    end
  end
  return out, hash
end

local function doc_of(d)
  local out = {}
  for k, v in pairs(d) do if k ~= "line" then out[k] = v end end
  return out
end

-- The rows of the judged queries, in the order the qrels first name them.
local function rows_of(order, by, queries, qrels_path)
  local out = {}
  for i, qid in ipairs(order) do
    local q = by[qid]
    local text = queries[qid]
    if not text then
      c.input_error(("%s:%d: query '%s' is judged but not in the queries file"):format(qrels_path, q.line, qid))
    end
    local rec = c.new_row(q.line)
    local gold = {}
    for _, d in ipairs(q.docs) do if q.grades[d] >= 1 then gold[#gold + 1] = d end end
    rec.row.qid = qid
    rec.row.query = text.text
    rec.row.graded_relevance = q.grades
    rec.row.gold_doc_ids = setmetatable(gold, json.array)
    for k, v in pairs(text) do
      if k ~= "id" and k ~= "text" and k ~= "line" then rec.row[k] = v end
    end
    out[i] = rec
  end
  return out
end

-- A run's rankings: a TREC run (QID Q0 DOCNO RANK SCORE RUNID, as BEIR's
-- util.save_runfile writes it), read by evalua trec's reader and ordered
-- as trec_eval orders it, or MS MARCO's QID<TAB>DOCNO<TAB>RANK; qid ->
-- retrieved list ({id =, score =} or ids in rank order) for the judged
-- queries the run has.
local function read_run(qrels, path)
  local f = io.open(path, "rb")
  if not f then c.input_error(("cannot read the run: %s"):format(path)) end
  local first
  repeat first = f:read("l") until first == nil or (first:find("%S") and not first:find("^#"))
  f:close()
  local out = {}
  local n = 0
  for _ in (first or ""):gmatch("%S+") do n = n + 1 end
  if n == 3 then -- MS MARCO's run
    local ls = lines(path)
    local by = {}
    for no, line in ipairs(ls) do
      if line:find("%S") then
        local q, d, r = line:match("^(%S+)%s+(%S+)%s+(%S+)%s*$")
        local rank = r and math.tointeger(tonumber(r))
        if not rank or rank < 1 then
          c.input_error(("%s:%d: expected QID DOCNO RANK (MS MARCO's run), RANK a whole number >= 1"):format(path, no))
        end
        by[q] = by[q] or {}
        local seen = by[q]
        if seen[d] then c.input_error(("%s:%d: document '%s' is ranked twice for query '%s' (first on line %d)"):format(path, no, d, q, seen[d].line)) end
        seen[d] = { rank = rank, line = no }
        seen[#seen + 1] = d
      end
    end
    for q, seen in pairs(by) do
      table.sort(seen, function(a, b)
        if seen[a].rank ~= seen[b].rank then return seen[a].rank < seen[b].rank end
        return a > b
      end)
      local ids = {}
      for i, d in ipairs(seen) do ids[i] = d end
      out[q] = ids
    end
    return out, sys.sha256(records.read_file(path))
  end
  local data, err = require("evalua.eval.metrics").load_trec(qrels, path)
  if not data then c.input_error(err) end
  for _, r in ipairs(data:rows { complete = false }) do out[r.qid] = r.retrieved end
  return out, sys.sha256(records.read_file(path))
end

-- The rows' rankings from a run; with drop, BEIR's ignore_identical_ids: a
-- document whose id is the query's is dropped, and a ranking left empty
-- stays (retrieving nothing, which counts as BEIR counts it).
local function attach_run(rows, qrels, path, drop)
  local runs, hash = read_run(qrels, path)
  for _, rec in ipairs(rows) do
    local ranking = runs[rec.row.qid]
    if ranking then
      local kept = {}
      for _, e in ipairs(ranking) do
        local id = type(e) == "table" and e.id or e
        if not (drop and id == rec.row.qid) then kept[#kept + 1] = e end
      end
      rec.row.retrieved = setmetatable(kept, json.array)
    end
  end
  return hash
end

local function with_run(rows, hash, qrels, opts)
  if opts.run then return sys.sha256(hash .. attach_run(rows, qrels, opts.run, opts.ignore_identical_ids)) end
  return hash
end

-- beir(folder, {split =, corpus =, run =, ignore_identical_ids =}) -> rows, hash, corpus, files
function M.beir(dir, opts)
  local split = opts.split or "test"
  local qrels = ("%s/qrels/%s.tsv"):format(dir, split)
  if not exists(qrels) then
    local have = {}
    for _, name in ipairs(sys.listdir(dir .. "/qrels") or {}) do
      if name:find("%.tsv$") then have[#have + 1] = name:sub(1, -5) end
    end
    table.sort(have)
    c.input_error(("%s: no qrels/%s.tsv (split '%s'; this folder has %s)"):format(dir, split, split,
      #have > 0 and table.concat(have, ", ") or "no qrels/*.tsv"))
  end
  for _, f in ipairs { "queries.jsonl", "corpus.jsonl" } do
    if not exists(dir .. "/" .. f) then c.input_error(("%s: no %s: a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/SPLIT.tsv"):format(dir, f)) end
  end
  local order, by, qhash = read_qrels(qrels)
  local queries, hq = beir_jsonl(dir .. "/queries.jsonl", "queries.jsonl")
  local rows = rows_of(order, by, queries, qrels)
  local corpus, hc = nil, ""
  if opts.corpus ~= false then
    local docs
    docs, hc = beir_jsonl(dir .. "/corpus.jsonl", "corpus.jsonl")
    corpus = {}
    for id, d in pairs(docs) do corpus[id] = doc_of(d) end
  end
  return rows, with_run(rows, sys.sha256(qhash .. hq .. hc .. split), qrels, opts), corpus, qrels
end

-- MS MARCO's TSV of id<TAB>text (queries, passages) or id url title body (documents).
local function tsv_texts(path, what)
  local ls, hash = lines(path)
  local out = {}
  for no, line in ipairs(ls) do
    if line ~= "" then
      local f = fields(line, 4)
      local d
      if #f == 2 then d = { id = f[1], text = f[2] }
      elseif #f == 4 and what == "collection" then d = { id = f[1], url = f[2], title = f[3], text = f[4] }
      else
        c.input_error(("%s:%d: expected %s, found %d fields"):format(path, no,
          what == "collection" and "2 tab-separated fields (pid, passage) or 4 (docid, url, title, body)"
          or "2 tab-separated fields (qid, text)", #f))
      end
      if d.id == "" then c.input_error(("%s:%d: an empty id"):format(path, no)) end
      if out[d.id] then c.input_error(("%s:%d: id '%s' appears twice (first on line %d)"):format(path, no, d.id, out[d.id].line)) end
      d.line = no
      out[d.id] = d
    end
  end
  return out, hash
end

local function find(dir, names)
  for _, n in ipairs(names) do
    if exists(dir .. "/" .. n) then return dir .. "/" .. n end
  end
end

-- msmarco(folder, {split =, corpus =, run =, ignore_identical_ids =}) -> rows, hash, corpus, files
function M.msmarco(dir, opts)
  local split = opts.split or "dev.small"
  local qpath = find(dir, { ("queries.%s.tsv"):format(split), ("msmarco-doc%s-queries.tsv"):format(split) })
  local rpath = find(dir, { ("qrels.%s.tsv"):format(split), ("msmarco-doc%s-qrels.tsv"):format(split) })
  if not qpath or not rpath then
    local have = {}
    for _, name in ipairs(sys.listdir(dir) or {}) do
      local s = name:match("^queries%.(.+)%.tsv$")
      if s then have[#have + 1] = s end
    end
    table.sort(have)
    c.input_error(("%s: no %s (split '%s'; this folder has queries for %s)"):format(dir,
      not qpath and ("queries.%s.tsv"):format(split) or ("qrels.%s.tsv"):format(split), split,
      #have > 0 and table.concat(have, ", ") or "no split"))
  end
  local order, by, rhash = read_qrels(rpath)
  local queries, hq = tsv_texts(qpath, "queries")
  local rows = rows_of(order, by, queries, rpath)
  local corpus, hc = nil, ""
  local cpath = find(dir, { "collection.tsv", "msmarco-docs.tsv" })
  if opts.corpus ~= false and cpath then
    local docs
    docs, hc = tsv_texts(cpath, "collection")
    corpus = {}
    for id, d in pairs(docs) do corpus[id] = doc_of(d) end
  end
  return rows, with_run(rows, sys.sha256(rhash .. hq .. hc .. split), rpath, opts), corpus, rpath
end

function M.is_beir(dir) return exists(dir .. "/queries.jsonl") and exists(dir .. "/corpus.jsonl") end

function M.is_msmarco(dir)
  if exists(dir .. "/collection.tsv") or exists(dir .. "/msmarco-docs.tsv") then return true end
  for _, name in ipairs(sys.listdir(dir) or {}) do
    if name:find("^queries%..+%.tsv$") then return true end
  end
  return false
end

return M
