-- Data sets: JSONL and CSV rows checked against a schema, a corpus to fill
-- contexts from, content hashes, and deterministic stratified samples.
--
--   local ds = ev.dataset.load("scripts/data/rag_eval.jsonl", { mode = "lenient" })
--   ds.rows, ds.hash, ds.skipped   -- rows, sha256 of the bytes, {line=, error=} per skipped row
local cjson = require "cjson.safe"
local sys = require "evalua._sys"
local schema_mod = require "evalua.core.schema"
local json = require "evalua.core.json"
local T = require "evalua._table"
local options = require "evalua.core.options"

local M = {}

local Dataset = {}
-- ds[i] is row i's view (ds.rows[i]), #ds the number of rows.
Dataset.__index = function(ds, k)
  if math.type(k) == "integer" then return ds.rows[k] end
  return Dataset[k]
end
Dataset.__len = function(ds) return ds.n end

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

local strip_nulls = require("evalua.core.tables").strip_nulls

-- ---- rows as views over the C columns -------------------------------------
-- A view is a plain Lua table that fetches a field from C the first time it
-- is read and keeps it; pairs() fetches them all. row:table() is a copy
-- with no metatable. User code may set fields on a view; they stay in Lua.

local function view_class(tbl)
  local index_of = setmetatable({}, { __mode = "k" })
  local mt = {}
  local function fetch(v, k)
    local i = index_of[v]
    if k == "_line" then return tbl:line(i) end
    local val, kind = tbl:get(i, k)
    if kind == "json" then val = strip_nulls(cjson.decode(val)) end
    return val
  end
  local function fill(v)
    for _, k in ipairs(tbl:keys(index_of[v])) do
      if rawget(v, k) == nil then rawset(v, k, fetch(v, k)) end
    end
  end
  local function copy(v)
    fill(v)
    local out = {}
    for k, x in next, v do out[k] = x end
    return out
  end
  mt.__index = function(v, k)
    if k == "table" then return copy end
    if type(k) ~= "string" then return nil end
    local val = fetch(v, k)
    if val ~= nil then rawset(v, k, val) end
    return val
  end
  mt.__pairs = function(v)
    fill(v)
    return next, v, nil
  end
  return function(i)
    local v = setmetatable({}, mt)
    index_of[v] = i
    return v
  end
end

-- ds.rows: row i is built on first use and kept, so a field set on it stays.
-- It is also callable: for i, row in ds:rows() do ... end.
local function row_list(tbl)
  local make = view_class(tbl)
  local n = #tbl
  return setmetatable({}, {
    __index = function(rows, i)
      if math.type(i) ~= "integer" or i < 1 or i > n then return nil end
      local v = make(i)
      rawset(rows, i, v)
      return v
    end,
    __len = function() return n end,
    __call = function(rows)
      local i = 0
      return function()
        i = i + 1
        if i <= n then return i, rows[i] end
      end
    end,
  })
end

local function new_dataset(fields)
  fields.rows = row_list(fields.table)
  fields.n = #fields.table
  return setmetatable(fields, Dataset)
end

-- Lists the C reader knows by their items: a CSV cell of such a field is
-- split as a list (docs/data.md); the items are checked in Lua.
local C_LISTS = { ["id[]"] = true, ["string[]"] = true }

-- The user's schema as C field types; complex types (lists, alternatives)
-- are checked in Lua over the loaded rows.
local function c_schema(schema, rag)
  local fields, complex = {}, {}
  local names = {}
  for name in pairs(schema or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local t = schema[name]
    local required = t:sub(-1) == "!"
    local base = required and t:sub(1, -2) or t
    local scalar = base:find("^%a+$") and base ~= "ranking" and base ~= "grades"
    if scalar or C_LISTS[base] then fields[#fields + 1] = { name = name, type = base, required = required } end
    if not scalar then complex[name] = t end
  end
  return { rag = rag, fields = fields }, complex
end

local function check_complex(ds, complex, path)
  if next(complex) == nil then return end
  for i = 1, ds.n do
    local row = ds.rows[i]
    local err = schema_mod.check(complex, row)
    if err then input_error(path, row._line, err) end
  end
end

local formats = require "evalua.data.formats"

-- The names of opts.format: evalua's own (jsonl, csv, or evalua for
-- either by the extension), the peers' (docs/data.md) and auto.
M.formats = { "evalua", "jsonl", "csv", "ragas", "deepeval", "promptfoo", "beir", "msmarco", "auto" }
local FORMAT = options.set(M.formats)

local function detect_format(path, opts)
  local f = opts.format
  if f == "auto" then
    local name, why = formats.detect(path)
    if not name then sys.input_error(why) end
    f = name
  end
  if f == nil or f == "evalua" then return path:match("%.[cC][sS][vV]$") and "csv" or "jsonl" end
  return f
end

-- A missing qid in a file that is a peer's says which format it is.
local function with_hint(path, msg)
  local st = sys.stat(path)
  if msg:find("field 'qid': missing", 1, true) or path:lower():find("%.json$") or (st and st.dir) then
    return msg .. formats.hint(path)
  end
  return msg
end

-- A mapped row as JSON for the C reader: one encoding of its values (a call
-- per value cost 5 us each, half the load), then the nested values the peer
-- wrote, kept as their own text (raw).
local function mapped_json(r)
  local plain, extra = {}, {}
  for k, v in pairs(r.row) do
    local raw = r.raw[k]
    if raw then extra[#extra + 1] = json.encode(k) .. ":" .. raw else plain[k] = v end
  end
  local ok, text = pcall(json.encode, plain)
  if not ok then -- name the value that cannot be JSON (a Python literal's 1e400)
    for k, v in pairs(plain) do
      local fine, why = pcall(json.encode, v)
      if not fine then return nil, ("field '%s': %s"):format(k, why) end
    end
    return nil, text
  end
  if #extra == 0 then return text end
  table.sort(extra)
  return (text == "{}" and "{" or text:sub(1, -2) .. ",") .. table.concat(extra, ",") .. "}"
end

-- "field 'contexts': ..." of a row mapped from the peer's 'retrieved_contexts'
-- names both.
local function peer_field(msg, from)
  local key, sub, rest = msg:match("^field '([^'%[%.]+)([^']*)'(.*)$")
  if key and from[key] and from[key] ~= key then
    return ("field '%s%s' (read from '%s')%s"):format(key, sub, from[key], rest)
  end
  return msg
end

-- A peer's file or folder, mapped to rows (formats/) and appended to a C
-- table as if read from JSON lines, each row keeping the peer's line.
local function load_peer(path, format, spec, mode)
  local res = formats.rows(path, format, { split = spec.split, corpus = spec.corpus, run = spec.run,
    ignore_identical_ids = spec.ignore_identical_ids, lenient = mode == "lenient" })
  local tbl = T.new(spec)
  local skipped = res.skipped or {}
  for _, r in ipairs(res.rows) do
    local text, err = mapped_json(r)
    local ok = text and tbl:append(text, r.line)
    if not ok then
      if text then _, err = tbl:append(text, r.line) end
      err = peer_field(err, r.from)
      if mode == "lenient" then skipped[#skipped + 1] = { line = r.line, error = err }
      else input_error(res.where, r.line, err) end
    end
  end
  return tbl, res.hash, skipped, res.corpus
end

local LOAD_KNOWN = options.set { "schema", "mode", "format", "split", "corpus", "run", "ignore_identical_ids" }
local FOLDER_ONLY = { "split", "corpus", "run", "ignore_identical_ids" }

-- load(path [, opts]) -> Dataset
-- opts.schema  extra/overriding field types (see evalua.core.schema); false for none
-- opts.mode    "strict" (default: the first bad row stops with file:line: field ...)
--              or "lenient" (bad rows are skipped and listed in ds.skipped)
-- opts.format  "evalua" (the default: "csv" or "jsonl" by the extension), "ragas",
--              "deepeval", "promptfoo", "beir", "msmarco" or "auto" (docs/data.md)
-- opts.split   beir: the qrels file (qrels/SPLIT.tsv, default "test");
--              msmarco: queries.SPLIT.tsv and qrels.SPLIT.tsv (default "dev.small")
-- opts.corpus  beir, msmarco: false leaves the corpus unread (ds.corpus nil)
-- opts.run     beir, msmarco: a run file (TREC's six columns, or MS MARCO's
--              QID DOCNO RANK) whose rankings become the rows' retrieved
-- opts.ignore_identical_ids  with run: BEIR's rule, a document whose id is
--              its query's is dropped from the ranking
function M.load(path, opts)
  opts = opts or {}
  options.check(opts, LOAD_KNOWN, "ev.dataset.load", 2)
  local mode = opts.mode or "strict"
  if mode ~= "strict" and mode ~= "lenient" then
    error(("dataset.load: mode must be \"strict\" or \"lenient\", got %s"):format(tostring(mode)), 2)
  end
  if opts.format ~= nil and not FORMAT[opts.format] then
    error(("dataset.load: format must be one of %s, got %s"):format(table.concat(M.formats, ", "),
      tostring(opts.format)), 2)
  end
  local format = detect_format(path, opts)
  local folder = format == "beir" or format == "msmarco"
  for _, k in ipairs(FOLDER_ONLY) do
    if opts[k] ~= nil and not folder then
      error(("dataset.load: %s applies to format \"beir\" and \"msmarco\", not \"%s\""):format(k, format), 2)
    end
  end
  if opts.ignore_identical_ids ~= nil and opts.run == nil then
    error("dataset.load: ignore_identical_ids applies to the rankings of a run: give run = FILE", 2)
  end
  local spec, complex = c_schema(opts.schema ~= false and opts.schema or nil, opts.schema ~= false)
  spec.lenient = mode == "lenient"
  local tbl, hash, skipped, corpus
  if format == "csv" or format == "jsonl" then
    tbl, hash, skipped = (format == "csv" and T.load_csv or T.load)(path, spec)
    if not tbl then sys.input_error(with_hint(path, hash)) end
    if #tbl == 0 and skipped[1] and skipped[1].error:find("field 'qid': missing", 1, true) then
      local hint = formats.hint(path)
      if hint ~= "" then input_error(path, skipped[1].line, skipped[1].error .. hint) end
    end
  else
    spec.split, spec.corpus, spec.run, spec.ignore_identical_ids = opts.split, opts.corpus, opts.run, opts.ignore_identical_ids
    tbl, hash, skipped, corpus = load_peer(path, format, spec, mode)
    spec.split, spec.corpus, spec.run, spec.ignore_identical_ids = nil, nil, nil, nil
  end
  local ds = new_dataset { path = path, table = tbl, skipped = skipped, hash = hash, format = format, mode = mode,
                           corpus = corpus, from_file = true }
  check_complex(ds, complex, path)
  return ds
end

-- Rows as JSON for the C reader: the keys it types and scalar values, keys
-- sorted so that the same rows always give the same text (and hash).
local function row_json(row, where)
  local keys = {}
  for k, v in pairs(row) do
    local t = type(v)
    if type(k) == "string" and k ~= "_line" and (t == "string" or t == "number" or t == "boolean"
        or (t == "table" and schema_mod.rag[k])) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do
    local v = row[k]
    if type(v) == "table" and next(v) == nil and k ~= "graded_relevance" then v = setmetatable({}, json.array) end
    local ok, enc = pcall(json.encode, v)
    if not ok then error(("%s: field '%s': %s"):format(where, k, enc), 0) end
    parts[i] = json.encode(k) .. ":" .. enc
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- A data set from rows already in memory: the rows themselves are its views
-- (every value stays as given); the typed keys are checked and copied into
-- columns. The hash is over the rows' JSON form with sorted keys.
function M.from_rows(rows, name)
  name = name or "(rows)"
  local tbl = T.new { rag = true, fields = { { name = "qid", type = "any" } } }
  local parts = {}
  for i, r in ipairs(rows) do
    if type(r) ~= "table" then error(("%s: row %d is a %s, not a table"):format(name, i, type(r)), 2) end
    parts[i] = row_json(r, name .. ":" .. i)
    local ok, err = tbl:append(parts[i], i)
    if not ok then error(("%s: row %d: %s"):format(name, i, err), 2) end
  end
  local ds = new_dataset { path = name, table = tbl, skipped = {}, format = "rows",
                           hash = sys.sha256(table.concat(parts, "\n")), lua_rows = true }
  for i, r in ipairs(rows) do rawset(ds.rows, i, r) end
  return ds
end

-- A data set over a C table filled elsewhere (ev.generate appends its
-- outputs as JSON rows); fields as load gives them (path, hash, skipped ...).
function M.from_table(tbl, fields)
  fields.table = tbl
  return new_dataset(fields)
end

-- trec(qrels_path, run_path [, {complete = true}]) -> Dataset: TREC files as
-- rows ({qid, retrieved = {{id=, score=}...}, gold_doc_ids, graded_relevance}),
-- read by the C reader of ev.metrics. complete = true keeps queries that are
-- in the qrels but not in the run (with an empty ranking), as trec_eval -c.
function M.trec(qrels, run, opts)
  local data, err = require("evalua.eval.metrics").load_trec(qrels, run)
  if not data then sys.input_error(err) end
  local rows = data:rows { complete = opts and opts.complete or false }
  local ds = M.from_rows(rows, qrels .. " + " .. run)
  ds.hash = sys.sha256(sys.sha256(read_file(qrels)) .. sys.sha256(read_file(run)))
  ds.format = "trec"
  return ds
end

-- corpus(path) -> { [id] = {id=, title=, text=} }, checked like any data set.
function M.corpus(path)
  local ds = M.load(path, { schema = false })
  local docs = {}
  for i = 1, ds.n do
    local d = ds.rows[i]:table()
    if type(d.id) ~= "string" or type(d.text) ~= "string" then
      input_error(path, ds.table:line(i), "field 'id' and 'text' must be strings in a corpus")
    end
    if docs[d.id] then input_error(path, ds.table:line(i), ("document '%s' appears twice"):format(d.id)) end
    docs[d.id] = d
  end
  return docs, ds.hash
end

-- Fills contexts (where a row has none) with the texts of its first k
-- retrieved ids, in the columns.
function Dataset:attach_contexts(docs, k)
  local texts = {}
  for id, d in pairs(docs) do texts[id] = d.text end
  self.table:attach_contexts(texts, k)
  for i = 1, self.n do
    local v = rawget(self.rows, i)
    if v and not self.lua_rows then rawset(v, "contexts", nil) end
  end
  if self.lua_rows then
    for i = 1, self.n do
      local row = self.rows[i]
      if row.contexts == nil then row.contexts = self.table:get(i, "contexts") end
    end
  end
  return self
end

-- A data set of the rows fn keeps (fn sees each row's view).
function Dataset:filter(fn)
  local keep = {}
  for i = 1, self.n do
    if fn(self.rows[i]) then keep[#keep + 1] = i end
  end
  return self:subset(keep)
end

-- A data set of rows idx (positions in this one), sharing nothing.
function Dataset:subset(idx)
  local copy = {}
  for k, v in pairs(self) do copy[k] = v end
  copy.table = self.table:subset(idx)
  local out = new_dataset(copy)
  if self.lua_rows then
    for i, r in ipairs(idx) do rawset(out.rows, i, self.rows[r]) end
  end
  return out
end

-- Distinct values of a field, in order of first appearance.
function Dataset:values(field)
  local seen, out = {}, {}
  for i = 1, self.n do
    local v = self.rows[i][field]
    if v ~= nil and not seen[v] then seen[v], out[#out + 1] = true, v end
  end
  return out
end

-- One row per user turn of each conversation (`messages`): see ev.agent.turns.
function Dataset:turns()
  local out = M.from_rows(require("evalua.agent.data").turn_rows(self), self.path)
  out.conversations = self
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
local SAMPLE_KNOWN = options.set { "n", "tier", "by", "seed", "id" }

function Dataset:sample(opts)
  options.check(opts, SAMPLE_KNOWN, "ds:sample", 2)
  local n = opts.n or M.tiers[opts.tier or ""]
  if not n then error("sample: give n or a tier (smoke, regression, deep)", 2) end
  local idf, by, seed = opts.id or "qid", opts.by, tostring(opts.seed or 1)
  local strata, order, seen = {}, {}, {}
  for i = 1, self.n do
    local r = self.rows[i]
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

M.Dataset = Dataset
M.strip_nulls = strip_nulls
return M
