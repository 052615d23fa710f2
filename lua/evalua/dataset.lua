-- Data sets: JSONL and CSV rows checked against a schema, a corpus to fill
-- contexts from, content hashes, and deterministic stratified samples.
--
--   local ds = ev.dataset.load("scripts/data/rag_eval.jsonl", { mode = "lenient" })
--   ds.rows, ds.hash, ds.skipped   -- rows, sha256 of the bytes, {line=, error=} per skipped row
local cjson = require "cjson.safe"
local sys = require "evalua._sys"
local schema_mod = require "evalua.schema"

local M = {}

local Dataset = {}
Dataset.__index = Dataset

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then sys.input_error(("cannot read data set: %s"):format(err)) end
  local s = f:read("a")
  f:close()
  return s
end

local function input_error(path, line, msg)
  sys.input_error(("%s:%d: %s"):format(path, line, msg))
end

-- A null object member becomes an absent key, so "missing" has one meaning;
-- a null inside a list stays and fails the schema as "null".
local function strip_nulls(v)
  if type(v) ~= "table" then return v end
  for k, x in pairs(v) do
    if x == cjson.null then
      if type(k) == "string" then v[k] = nil end
    else
      strip_nulls(x)
    end
  end
  return v
end

local function each_jsonl(text, path, fn)
  local line = 0
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line + 1
    l = l:gsub("\r$", "")
    if l:find("%S") then
      local row, err = cjson.decode(l)
      if row == nil then fn(line, nil, "invalid JSON: " .. tostring(err))
      elseif type(row) ~= "table" or row[1] ~= nil then fn(line, nil, "expected a JSON object")
      else fn(line, strip_nulls(row)) end
    end
  end
end

-- RFC 4180 CSV: quoted fields may hold commas, doubled quotes and newlines.
-- Calls fn(line, fields) with the line the record starts on.
local function each_csv_record(text, path, fn)
  local pos, line, len = 1, 1, #text
  if text:sub(1, 3) == "\239\187\191" then pos = 4 end -- UTF-8 BOM
  while pos <= len do
    local fields, start_line = {}, line
    while true do
      local c = text:sub(pos, pos)
      local value
      if c == '"' then
        local buf, p = {}, pos + 1
        while true do
          local q = text:find('"', p, true)
          if not q then input_error(path, start_line, "unterminated quoted field") end
          buf[#buf + 1] = text:sub(p, q - 1)
          if text:sub(q + 1, q + 1) == '"' then
            buf[#buf + 1] = '"'
            p = q + 2
          else
            p = q + 1
            break
          end
        end
        value = table.concat(buf)
        local _, nl = value:gsub("\n", "")
        line = line + nl
        pos = p
      else
        local e = text:find("[,\r\n]", pos) or len + 1
        value = text:sub(pos, e - 1)
        pos = e
      end
      fields[#fields + 1] = value
      local sep = text:sub(pos, pos)
      if sep == "," then
        pos = pos + 1
      else
        if sep == "\r" then pos = pos + 1 end
        if text:sub(pos, pos) == "\n" then pos = pos + 1 end
        line = line + 1
        break
      end
    end
    if not (#fields == 1 and fields[1] == "") then fn(start_line, fields) end
  end
end

local function each_csv(text, path, fn, schema)
  local header
  each_csv_record(text, path, function(line, fields)
    if not header then
      header = fields
      return
    end
    if #fields ~= #header then
      return fn(line, nil, ("expected %d fields as in the header, got %d"):format(#header, #fields))
    end
    local row, errmsg = {}, nil
    for i, name in ipairs(header) do
      local v, err = schema_mod.from_text(schema, name, fields[i])
      if err then errmsg = errmsg or ("field '%s': %s"):format(name, err) end
      row[name] = v
    end
    fn(line, row, errmsg)
  end)
end

local function detect_format(path, opts)
  if opts.format then return opts.format end
  if path:match("%.csv$") then return "csv" end
  return "jsonl"
end

-- load(path [, opts]) -> Dataset
-- opts.schema  extra/overriding field types (see evalua.schema); false for none
-- opts.mode    "strict" (default: the first bad row stops with file:line: field ...)
--              or "lenient" (bad rows are skipped and listed in ds.skipped)
-- opts.format  "jsonl" | "csv" (default: from the extension)
function M.load(path, opts)
  opts = opts or {}
  local schema = opts.schema == false and {} or schema_mod.merge(schema_mod.rag, opts.schema)
  local text = read_file(path)
  local ds = setmetatable({ path = path, rows = {}, skipped = {}, hash = sys.sha256(text),
                            format = detect_format(path, opts), mode = opts.mode or "strict" }, Dataset)
  local function take(line, row, err)
    err = err or (row and schema_mod.check(schema, row))
    if err then
      if ds.mode ~= "lenient" then input_error(path, line, err) end
      ds.skipped[#ds.skipped + 1] = { line = line, error = err }
      return
    end
    row._line = line
    ds.rows[#ds.rows + 1] = row
  end
  if ds.format == "csv" then each_csv(text, path, take, schema)
  else each_jsonl(text, path, take) end
  return ds
end

-- A data set from rows already in memory (hash over their JSON form, with
-- sorted keys so the same rows always give the same hash).
function M.from_rows(rows, name)
  local json = require "evalua.json"
  local parts = {}
  for i, r in ipairs(rows) do parts[i] = json.encode(r) end
  return setmetatable({ path = name or "(rows)", rows = rows, skipped = {}, format = "rows",
                        hash = sys.sha256(table.concat(parts, "\n")) }, Dataset)
end

-- trec(qrels_path, run_path [, {complete = true}]) -> Dataset: TREC files as
-- rows ({qid, retrieved = {{id=, score=}...}, gold_doc_ids, graded_relevance}),
-- read by the C reader of ev.metrics. complete = true keeps queries that are
-- in the qrels but not in the run (with an empty ranking), as trec_eval -c.
function M.trec(qrels, run, opts)
  local data, err = require("evalua.metrics").load_trec(qrels, run)
  if not data then sys.input_error(err) end
  local rows = data:rows { complete = opts and opts.complete or false }
  local hash = sys.sha256(sys.sha256(read_file(qrels)) .. sys.sha256(read_file(run)))
  return setmetatable({ path = qrels .. " + " .. run, rows = rows, skipped = {}, hash = hash,
                        format = "trec" }, Dataset)
end

-- corpus(path) -> { [id] = {id=, title=, text=} }, checked like any data set.
function M.corpus(path)
  local ds = M.load(path, { schema = false })
  local docs = {}
  for _, d in ipairs(ds.rows) do
    if type(d.id) ~= "string" or type(d.text) ~= "string" then
      input_error(path, d._line, "field 'id' and 'text' must be strings in a corpus")
    end
    if docs[d.id] then input_error(path, d._line, ("document '%s' appears twice"):format(d.id)) end
    docs[d.id] = d
  end
  return docs, ds.hash
end

local function ranked_id(entry)
  if type(entry) == "table" then return entry.id end
  return entry
end

-- Fills row.contexts (when absent) with the texts of the first k retrieved ids.
function Dataset:attach_contexts(docs, k)
  for _, row in ipairs(self.rows) do
    if row.contexts == nil and row.retrieved then
      local ctx = {}
      for i = 1, math.min(k or #row.retrieved, #row.retrieved) do
        local d = docs[ranked_id(row.retrieved[i])]
        if d then ctx[#ctx + 1] = d.text end
      end
      row.contexts = ctx
    end
  end
  return self
end

function Dataset:filter(fn)
  local rows = {}
  for _, r in ipairs(self.rows) do
    if fn(r) then rows[#rows + 1] = r end
  end
  local copy = setmetatable({}, Dataset)
  for k, v in pairs(self) do copy[k] = v end
  copy.rows = rows
  return copy
end

-- Distinct values of a field, in order of first appearance.
function Dataset:values(field)
  local seen, out = {}, {}
  for _, r in ipairs(self.rows) do
    local v = r[field]
    if v ~= nil and not seen[v] then seen[v], out[#out + 1] = true, v end
  end
  return out
end

M.tiers = { smoke = 20, regression = 200, deep = 2000 }

-- Largest-remainder shares of n over strata, at least one each when n allows.
local function proportional(order, strata, n, total)
  local quota, rest, given = {}, {}, 0
  for _, k in ipairs(order) do
    local exact = n * #strata[k] / total
    quota[k] = math.floor(exact)
    if quota[k] == 0 and n >= #order then quota[k] = 1 end
    given = given + quota[k]
    rest[#rest + 1] = { k = k, r = exact - math.floor(exact) }
  end
  table.sort(rest, function(a, b) if a.r ~= b.r then return a.r > b.r end return a.k < b.k end)
  local i = 1
  while given < n do
    local k = rest[(i - 1) % #rest + 1].k
    if quota[k] < #strata[k] then quota[k], given = quota[k] + 1, given + 1 end
    i = i + 1
  end
  while given > n do -- the minimum of one each can overshoot: trim the largest
    local big = order[1]
    for _, k in ipairs(order) do if quota[k] > quota[big] then big = k end end
    quota[big], given = quota[big] - 1, given - 1
  end
  return quota
end

-- sample{n = 20 | tier = "smoke", by = "query_class", seed = 1, id = "qid"}:
-- a deterministic stratified sample of distinct ids (every row of a chosen id
-- is kept, so all variants of a query stay together). Each stratum gets a
-- share proportional to its size (largest remainder), at least one when n
-- allows; within a stratum, ids are ordered by sha256(seed .. id).
function Dataset:sample(opts)
  local n = opts.n or M.tiers[opts.tier or ""]
  if not n then error("sample: give n or a tier (smoke, regression, deep)", 2) end
  local idf, by, seed = opts.id or "qid", opts.by, tostring(opts.seed or 1)
  local strata, order, seen = {}, {}, {}
  for _, r in ipairs(self.rows) do
    local id = r[idf]
    if id ~= nil and not seen[id] then
      seen[id] = true
      local key = by and tostring(r[by]) or "all"
      if not strata[key] then strata[key], order[#order + 1] = {}, key end
      local s = strata[key]
      s[#s + 1] = { id = id, h = sys.sha256(seed .. "\0" .. tostring(id)) }
    end
  end
  local total = 0
  for _, k in ipairs(order) do total = total + #strata[k] end
  local chosen = {}
  if n >= total then
    chosen = seen
  else
    local quota = proportional(order, strata, n, total)
    for _, k in ipairs(order) do
      local s = strata[k]
      table.sort(s, function(a, b) return a.h < b.h end)
      for i = 1, quota[k] do chosen[s[i].id] = true end
    end
  end
  local out = self:filter(function(r) return chosen[r[idf]] end)
  out.hash = sys.sha256(self.hash .. "|sample|" .. n .. "|" .. (by or "") .. "|" .. seed)
  out.sampling = { n = n, by = by, seed = seed, tier = opts.tier }
  return out
end

return M
