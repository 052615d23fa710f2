-- Run history: a folder with history.db, the SQLite store of every run,
-- its per-item scores and aggregates, and human labels
-- (evalua.history.store; schema in docs/history.md).
--
--   local hist = ev.history.open("out/history")   -- {jsonl = true}: also write history.jsonl (the default
--                                                  -- when the folder has one)
--   local prev = hist:latest()                     -- or hist:find("v1.3") by label or run id
--   local rec  = hist:append(res, { label = "v1.4", notes = "new embedder" })
--   hist:item_scores("q7"), hist:flips("recall@5"), hist:first_below("recall@5")
--
-- A folder of the older format (history.jsonl and runs/<run_id>.jsonl) is
-- imported on first use: its records at once, a run's item file when that
-- run's items are first read. Records later appended to history.jsonl (by
-- an older evalua, by hand) are imported when it is next read.
local json = require "evalua.core.json"
local sys = require "evalua._sys"
local options = require "evalua.core.options"
local shape = require "evalua.core.shape"
local store = require "evalua.history.store"
local jsonl = require "evalua.history.jsonl"
local record = require "evalua.history.record"
local labels = require "evalua.history.labels"
local RECORD, ITEM, text_of, decode_record = record.RECORD, record.ITEM, record.text_of, record.decode

local M = {}
local History = {}
local OPEN_OPTIONS = options.set { "jsonl" }
local DASHBOARD_OPTIONS = options.set { "title" }
local DASHBOARD_RUNS = 60 -- the runs the trend dashboard draws: the newest
local COUNTED = { replaced = true } -- json.encode returns the invalid UTF-8 sequences it replaced
History.__index = History
-- Each history's connection, out of the script's reach: the table a script
-- holds has no handle on which to run SQL of its own (under --sandbox too).
local CONN = setmetatable({}, { __mode = "k" })

local function warn(self, fmt, ...)
  if self.warned then return end
  self.warned = true
  io.stderr:write("evalua: warning: ", fmt:format(...), "\n")
end

-- open(dir [, {jsonl = bool}]) -> the history of folder dir, created when
-- missing. jsonl: every append also writes the older format; by default
-- it does when the folder has a history.jsonl already (one kept in git
-- goes on being kept), and false stops it.
function M.open(dir, opts)
  if type(dir) ~= "string" then error("history.open: expected a folder path", 2) end
  opts = opts or {}
  options.check(opts, OPEN_OPTIONS, "history.open", 2)
  if opts.jsonl ~= nil and type(opts.jsonl) ~= "boolean" then error("history.open: jsonl must be a boolean", 2) end
  assert(sys.mkdir(dir))
  local jsonl_file = dir .. "/history.jsonl"
  local write_jsonl = opts.jsonl
  if write_jsonl == nil then write_jsonl = sys.stat(jsonl_file) ~= nil end
  local self = setmetatable({ dir = dir, file = dir .. "/history.db", jsonl_file = jsonl_file,
                              write_jsonl = write_jsonl }, History)
  CONN[self] = store.open(self.file)
  return self
end

-- close() ends the connection now (else the collector does).
function History:close()
  CONN[self]:close()
end

-- Imports the records of history.jsonl that the store lacks, when the
-- file changed since the last import (its size is kept in the store):
-- on first use, and after an older evalua or a hand appended to it.
function History:sync()
  local st = sys.stat(self.jsonl_file)
  local size = st and st.size or 0
  if size == (store.meta(CONN[self], "jsonl_size") or 0) then return end
  local recs, read = jsonl.records(self.jsonl_file, decode_record, function(...) warn(self, ...) end)
  local replaced = store.transaction(CONN[self], function()
    local have, n = {}, 0
    for _, r in ipairs(CONN[self]:rows("SELECT run_id FROM runs")) do have[r.run_id] = true end
    for _, rec in ipairs(recs) do
      if not have[rec.run_id] then
        have[rec.run_id] = true
        local text, k = json.encode(rec, COUNTED)
        n = n + k
        store.insert_run(CONN[self], json.decode(text), text, "jsonl")
      end
    end
    store.set_meta(CONN[self], "jsonl_size", read)
    return n
  end)
  json.say_replaced(self.file, replaced) -- text an older evalua or a hand wrote
end

local function rows_to_records(self, rows)
  local out = {}
  for i, r in ipairs(rows) do out[i] = decode_record(r.record, ("%s: run %s"):format(self.file, r.run_id)) end
  return out
end

-- records() -> every record, oldest first.
function History:records()
  self:sync()
  return rows_to_records(self, CONN[self]:rows("SELECT run_id, record FROM runs ORDER BY seq"))
end

-- latest() -> the newest record, or nil.
function History:latest()
  self:sync()
  return rows_to_records(self, CONN[self]:rows("SELECT run_id, record FROM runs ORDER BY seq DESC LIMIT 1"))[1]
end

-- find(label_or_run_id) -> the newest record with that label or run id
function History:find(key)
  self:sync()
  key = text_of(key)
  if type(key) ~= "string" then return nil end
  return rows_to_records(self, CONN[self]:rows(
    "SELECT run_id, record FROM runs WHERE run_id = ?1 OR label = ?1 ORDER BY seq DESC LIMIT 1", key))[1]
end

-- The store's row of a run, with its items imported from its item file
-- when they are still there (a run imported from history.jsonl). nil when
-- the store has no such run.
local function run_row(self, run_id)
  local r = CONN[self]:rows("SELECT seq, items FROM runs WHERE run_id = ?", run_id)[1]
  if not r or r.items == "store" then return r end
  local path = self.dir .. "/runs/" .. run_id .. ".jsonl"
  local items = jsonl.items(path, function(it, where)
    local err = shape.check(ITEM, it)
    if err then sys.input_error(("%s: %s"):format(where, err)) end
    if math.type(it.id) == "float" then it.id = math.tointeger(it.id) end
  end)
  if not items then
    io.stderr:write(("evalua: warning: %s: missing: run %s has no per-item scores to pair with\n"):format(path, run_id))
    return r
  end
  store.transaction(CONN[self], function()
    local now = CONN[self]:rows("SELECT items FROM runs WHERE seq = ?", r.seq)[1]
    if now.items == "store" then return end -- another process imported them meanwhile
    store.insert_items(CONN[self], r.seq, items)
    CONN[self]:run("UPDATE runs SET items = 'store' WHERE seq = ?", r.seq)
  end)
  r.items = "store"
  return r
end

-- Per-item scores of a record: { [system] = { [id] = { scores = {...}, slices = {...} } } }
function History:items(rec)
  local bad = shape.check(RECORD.fields.run_id, rec.run_id, "run_id")
  if bad then sys.input_error(("%s: %s"):format(self.file, bad)) end
  self:sync()
  local r = run_row(self, rec.run_id)
  if not r then
    io.stderr:write(("evalua: warning: %s: no run %s: no per-item scores to pair with\n"):format(self.file, rec.run_id))
    return {}
  end
  if r.items ~= "store" then return {} end
  return store.items_of(CONN[self], r.seq)
end

-- The newest max records, oldest first, and the number of all records.
local function tail_records(self, max)
  self:sync()
  local recs = rows_to_records(self, CONN[self]:rows(
    "SELECT run_id, record FROM (SELECT seq, run_id, record FROM runs ORDER BY seq DESC LIMIT ?) ORDER BY seq", max))
  return recs, CONN[self]:rows("SELECT count(*) AS n FROM runs")[1].n
end

-- trend(res, n) -> { runs = { {label=, time=, values = {[system] = {[metric] = mean}}} } }
-- over the last n - 1 records and the current run; also stored as res.trend
-- (the HTML report draws it).
function History:trend(res, n)
  local runs = {}
  for _, rec in ipairs((tail_records(self, math.max(0, (n or 10) - 1)))) do
    local values = {}
    for system, dims in pairs(rec.aggregates or {}) do
      values[system] = {}
      for metric, a in pairs(dims.all and dims.all.all or {}) do values[system][metric] = a.mean end
    end
    runs[#runs + 1] = { label = rec.label, time = rec.time, values = values }
  end
  local values = {}
  for _, system in ipairs(res.systems) do
    values[system] = {}
    for _, m in ipairs(res.metrics) do
      local a = res:agg(system, m.name)
      values[system][m.name] = a and a.mean
    end
  end
  runs[#runs + 1] = { label = res.meta.label or "this run", time = res.meta.time, values = values }
  return res:attach("trend", { runs = runs }, "history:trend")
end

-- dashboard([{title=}]) -> the path of index.html, the trend dashboard of
-- every record (evalua.report.dashboard), rewritten atomically.
function History:dashboard(opts)
  opts = opts or {}
  options.check(opts, DASHBOARD_OPTIONS, "history:dashboard", 2)
  local recs, total = tail_records(self, DASHBOARD_RUNS)
  local html, replaced = require("evalua.report.dashboard")(recs, { title = opts.title or ("Trend: " .. self.dir),
                                                                   total = total })
  local path = self.dir .. "/index.html"
  assert(sys.write_atomic(path, html))
  json.say_replaced(path, replaced)
  return path
end

-- The current git commit when run inside a repository (read from .git, so
-- no process is started).
local function git_commit()
  local dir = "."
  for _ = 1, 32 do
    local head = io.open(dir .. "/.git/HEAD", "r")
    if head then
      local h = head:read("l") or ""
      head:close()
      local ref = h:match("^ref: (.+)$")
      if not ref then return h:match("^%x+$") end
      local f = io.open(dir .. "/.git/" .. ref, "r")
      if f then
        local c = f:read("l")
        f:close()
        return c
      end
      local packed = io.open(dir .. "/.git/packed-refs", "r")
      if packed then
        for l in packed:lines() do
          local c, r = l:match("^(%x+) (.+)$")
          if r == ref then packed:close() return c end
        end
        packed:close()
      end
      return nil
    end
    -- under --sandbox the folders above the working one are usually not
    -- readable: then there is no commit to read, not an error
    if not sys.path_allowed(dir .. "/..", "r") or not sys.stat(dir .. "/..") then return nil end
    dir = dir .. "/.."
    if #dir > 200 then return nil end
  end
end

local function run_id(res)
  local t = res.meta.time:gsub("[-:]", "")
  return t .. "-" .. sys.sha256(tostring(sys.now()) .. sys.getpid() .. tostring({})):sub(1, 8)
end

-- Canonical text of plain data: keys sorted; functions, userdata and
-- objects (tables with a metatable: a judge, an embedder) left out, as they
-- have no stable text; nesting cut at a few levels.
local function plain(x)
  local t = type(x)
  return t == "string" or t == "number" or t == "boolean" or (t == "table" and getmetatable(x) == nil)
end

local function canonical(v, depth)
  local t = type(v)
  if t == "string" then return ("%q"):format(v) end
  if t == "number" then return math.type(v) == "integer" and tostring(v) or ("%.17g"):format(v) end
  if t == "boolean" then return tostring(v) end
  if t ~= "table" or depth > 4 then return "" end
  local keys = {}
  for k, x in pairs(v) do
    if plain(x) then keys[#keys + 1] = tostring(k) end
  end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do
    local x = v[k]
    if x == nil then x = v[tonumber(k)] end
    parts[i] = k .. "=" .. canonical(x, depth + 1)
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- definition(metric) -> a short hash of what defines the metric (its
-- description, direction, threshold and options), recorded per run so a
-- comparison can say when a metric changed between runs.
function M.definition(m)
  local text = canonical({ description = m.description, higher_is_better = m.higher_is_better,
                           threshold = m.threshold, judged = m.judged, options = m.options }, 0)
  return sys.sha256(text):sub(1, 16)
end

-- The threshold gates of a run, as the dashboard draws them.
local function gate_lines(res)
  local out = {}
  for _, g in ipairs(res.gates or {}) do
    local m = g.threshold and res:metric(g.metric)
    if m then
      out[#out + 1] = { system = g.system, metric = g.metric, dim = g.dim, value = g.value, threshold = g.threshold,
                        status = g.status, higher_is_better = m.higher_is_better }
    end
  end
  return #out > 0 and out or nil
end

-- The path of target as seen from folder dir, when both are relative or
-- both absolute (else target as given).
local function relative(dir, target)
  if (dir:sub(1, 1) == "/") ~= (target:sub(1, 1) == "/") then return target end
  local a, b = {}, {}
  for part in dir:gmatch("[^/]+") do if part ~= "." then a[#a + 1] = part end end
  for part in target:gmatch("[^/]+") do if part ~= "." then b[#b + 1] = part end end
  local k = 1
  while a[k] and b[k] and a[k] == b[k] do k = k + 1 end
  local out = {}
  for _ = k, #a do out[#out + 1] = ".." end
  for i = k, #b do out[#out + 1] = b[i] end
  return table.concat(out, "/")
end

local function record_of(res, opts, self_dir)
  local judge = res.meta.judge
  return {
    run_id = run_id(res), time = res.meta.time, label = text_of(opts.label), notes = text_of(opts.notes),
    git_commit = opts.git_commit or (opts.git_commit ~= false and git_commit() or nil),
    evalua = res.meta.evalua,
    dataset = res.meta.dataset and { path = res.meta.dataset.path, hash = res.meta.dataset.hash,
                                     rows = res.meta.dataset.rows } or nil,
    judge = judge and { model = judge.model, system_fingerprints = judge.system_fingerprints } or nil,
    systems = res.systems, metrics = (function()
      local names = {}
      for i, m in ipairs(res.metrics) do names[i] = m.name end
      return names
    end)(),
    metric_definitions = (function()
      local defs = {}
      for _, m in ipairs(res.metrics) do defs[m.name] = M.definition(m) end
      return defs
    end)(),
    dims = res.dims, slice_values = res.slice_values, -- the slices in the run's order, for evalua diff --history
    higher_is_better = (function() -- each metric's direction, for evalua diff --history
      local dirs = {}
      for _, m in ipairs(res.metrics) do dirs[m.name] = m.higher_is_better ~= false end
      return dirs
    end)(),
    gates = gate_lines(res),
    report = opts.report and relative(self_dir, opts.report) or nil,
    aggregates = res.aggregates,
  }
end

-- The judge's accounting of the run (requests, tokens, cost, as
-- judge:stats() gives it), kept in the store's runs.accounting.
local function encoded_accounting(res)
  local ok, text = pcall(json.encode, res.meta.judge)
  return ok and res.meta.judge and text or nil
end

-- append(res [, {label=, notes=, report=, dashboard=}]) -> the record written.
-- report: the path of this run's HTML report, linked from the dashboard;
-- dashboard = false leaves index.html as it is. The run goes into the
-- store in one transaction (then, with {jsonl = true}, into the older format).
local APPEND_OPTIONS = options.set { "label", "notes", "git_commit", "report", "dashboard" }

function History:append(res, opts)
  opts = opts or {}
  options.check(opts, APPEND_OPTIONS, "history:append", 2)
  if res:is_part() then return nil end
  self:sync()
  local rec = record_of(res, opts, self.dir)
  local text, replaced = json.encode(rec, COUNTED)
  local clean = json.decode(text) -- the record as it reads back: invalid UTF-8 replaced
  local in_items = store.transaction(CONN[self], function()
    local seq = store.insert_run(CONN[self], clean, text, "store", encoded_accounting(res))
    return store.insert_items(CONN[self], seq, res.items)
  end)
  json.say_replaced(self.file, replaced + in_items)
  if self.write_jsonl then
    local before, after = jsonl.append(self.dir, rec, res.items)
    store.transaction(CONN[self], function()
      if (store.meta(CONN[self], "jsonl_size") or 0) == before then store.set_meta(CONN[self], "jsonl_size", after) end
    end)
  end
  if opts.dashboard ~= false then self:dashboard() end
  return rec
end

-- Runs whose items are still in their item files, imported now (for the
-- queries over items of every run).
local function import_all_items(self)
  self:sync()
  for _, r in ipairs(CONN[self]:rows("SELECT run_id FROM runs WHERE items = 'jsonl' ORDER BY seq")) do
    run_row(self, r.run_id)
  end
end

local ITEM_OPTIONS = options.set { "metric", "system" }

-- item_scores(id [, {metric=, system=}]) -> one item's scores across runs,
-- oldest first: { {run_id=, label=, time=, system=, metric=, value=, reason=} };
-- value is nil where the item was unmeasured (reason says why).
function History:item_scores(id, opts)
  opts = opts or {}
  options.check(opts, ITEM_OPTIONS, "history:item_scores", 2)
  if type(id) ~= "string" and math.type(id) ~= "integer" then error("history:item_scores: expected an item id", 2) end
  import_all_items(self)
  local sql = { [[SELECT r.run_id, r.label, r.time, s.system, s.metric, s.value, s.reason
    FROM scores s JOIN runs r ON r.seq = s.run WHERE s.item = ?]] }
  local args = { id }
  if opts.metric then sql[#sql + 1], args[#args + 1] = "AND s.metric = ?", opts.metric end
  if opts.system then sql[#sql + 1], args[#args + 1] = "AND s.system = ?", opts.system end
  sql[#sql + 1] = "ORDER BY r.seq, s.system, s.metric"
  return CONN[self]:rows(table.concat(sql, " "), table.unpack(args, 1, #args))
end

local FLIP_OPTIONS = options.set { "pass", "system" }

-- flips(metric [, {pass = 0.5, system=}]) -> the items whose verdict
-- changed from one run to the next run that measured them, oldest first:
-- { {id=, system=, run_id=, label=, before=, after=, from=, to = "pass"|"fail"} }
-- where pass means a score at or above pass; from is the earlier run's id.
function History:flips(metric, opts)
  opts = opts or {}
  options.check(opts, FLIP_OPTIONS, "history:flips", 2)
  if type(metric) ~= "string" then error("history:flips: expected a metric name", 2) end
  local pass = opts.pass or 0.5
  if type(pass) ~= "number" or pass ~= pass then error("history:flips: pass must be a number", 2) end
  import_all_items(self)
  local rows = CONN[self]:rows([[
    SELECT item AS id, system, run_id, label, value AS after, before, from_run AS "from" FROM (
      SELECT s.item, s.system, s.run, r.run_id, r.label, s.value,
             lag(s.value) OVER w AS before, lag(r.run_id) OVER w AS from_run
      FROM scores s JOIN runs r ON r.seq = s.run
      WHERE s.metric = ?1 AND s.value IS NOT NULL AND (?2 IS NULL OR s.system = ?2)
      WINDOW w AS (PARTITION BY s.system, s.item ORDER BY s.run))
    WHERE before IS NOT NULL AND (before >= ?3) <> (value >= ?3)
    ORDER BY run, system, item]], metric, opts.system, pass)
  for _, r in ipairs(rows) do r.to = r.after >= pass and "pass" or "fail" end
  return rows
end

local BELOW_OPTIONS = options.set { "system", "threshold", "dim", "value", "higher_is_better", "since" }

-- The gate a run recorded for metric on system and slice dim=value.
local function gate_of(gates, metric, system, dim, value)
  for _, g in ipairs(gates or {}) do
    if g.metric == metric and (g.dim or "all") == dim and (g.value or "all") == value
      and (g.system == nil or g.system == system) and g.threshold then return g end
  end
end

-- first_below(metric [, opts]) -> the oldest run (its record) where the
-- metric's mean missed its gate, and {mean=, threshold=, previous=} (the
-- run before it, which met the gate, or nil when the first run missed).
-- opts: system (default: the newest run's first), dim and value (the
-- slice, default "all"), threshold (default: the gate each run recorded;
-- runs without one are passed over), higher_is_better (default: the
-- gate's, else true; false makes the threshold a maximum), since (a label
-- or run id: search the runs after it). nil when no run missed.
function History:first_below(metric, opts)
  opts = opts or {}
  options.check(opts, BELOW_OPTIONS, "history:first_below", 2)
  if type(metric) ~= "string" then error("history:first_below: expected a metric name", 2) end
  self:sync()
  local system = opts.system
  if not system then
    local newest = self:latest()
    system = newest and newest.systems[1]
    if not system then return nil end
  end
  local dim, value = opts.dim or "all", opts.value or "all"
  local after = 0
  if opts.since then
    local r = CONN[self]:rows("SELECT seq FROM runs WHERE run_id = ?1 OR label = ?1 ORDER BY seq DESC LIMIT 1",
      text_of(opts.since))[1]
    if not r then error(("history:first_below: no run %s in %s"):format(tostring(opts.since), self.file), 2) end
    after = r.seq
  end
  local previous
  for _, r in ipairs(CONN[self]:rows([[SELECT r.seq, r.run_id, r.gates, a.mean FROM runs r
      JOIN aggregates a ON a.run = r.seq AND a.system = ? AND a.dim = ? AND a.value = ? AND a.metric = ?
      WHERE r.seq > ? AND a.mean IS NOT NULL ORDER BY r.seq]], system, dim, value, metric, after)) do
    local g = gate_of(r.gates and json.decode(r.gates), metric, system, dim, value)
    local t = opts.threshold or (g and g.threshold)
    if t then
      local higher = opts.higher_is_better
      if higher == nil then higher = not (g and g.higher_is_better == false) end
      local missed = higher and r.mean < t or (not higher and r.mean > t)
      if missed then
        return self:find(r.run_id), { mean = r.mean, threshold = t, previous = previous and self:find(previous) }
      end
      previous = r.run_id
    end
  end
  return nil
end

-- Human labels (docs/history.md#labels).
-- label{item=, metric=, value=, scale=, rater= [, system=, note=, run=, time=]} -> the label stored
function History:label(l)
  return labels.add(CONN[self], l, "history:label")
end

-- labels([{metric=, rater=, system=}]) -> the labels, oldest first
function History:labels(opts)
  return labels.list(CONN[self], opts)
end

-- item_labels(metric [, {rater=}]) -> one label per item (the lower median
-- of each rater's newest), and the set of scales they use
function History:item_labels(metric, opts)
  if type(metric) ~= "string" then error("history:item_labels: expected a metric name", 2) end
  return labels.per_item(CONN[self], metric, opts and opts.rater)
end

-- export_labels(path [, {metric=, rater=, system=}]) -> the number written (JSONL)
function History:export_labels(path, opts)
  return labels.export(CONN[self], path, opts)
end

-- import_labels(path) -> added, already there
function History:import_labels(path)
  return labels.import(CONN[self], path)
end

return M
