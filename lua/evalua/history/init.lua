-- Run history: a folder with history.jsonl (one record per run) and
-- runs/<run_id>.jsonl (that run's per-item scores).
--
--   local hist = ev.history.open("out/history")
--   local prev = hist:latest()                 -- or hist:find("v1.3") by label or run id
--   local rec  = hist:append(res, { label = "v1.4", notes = "new embedder" })
--
-- Appends are crash- and race-safe: the item file is written atomically
-- first, then the record goes into history.jsonl in one write(2) under an
-- exclusive lock, so two runs finishing at once never interleave and a
-- record never points at a missing item file.
local json = require "evalua.core.json"
local shard = require "evalua.scale.shard"
local sys = require "evalua._sys"
local options = require "evalua.core.options"
local shape = require "evalua.core.shape"

local M = {}
local History = {}
local DASHBOARD_OPTIONS = options.set { "title" }
local DASHBOARD_RUNS = 60 -- the runs the trend dashboard draws: the newest
History.__index = History

function M.open(dir)
  if type(dir) ~= "string" then error("history.open: expected a folder path", 2) end
  assert(sys.mkdir(dir .. "/runs"))
  return setmetatable({ dir = dir, file = dir .. "/history.jsonl" }, History)
end

local function warn(self, fmt, ...)
  if self.warned then return end
  self.warned = true
  io.stderr:write("evalua: warning: ", fmt:format(...), "\n")
end

-- A record's run_id names its item file (runs/<run_id>.jsonl): a name of
-- letters, digits, '.', '_' and '-' that starts with a letter or digit, so
-- a tampered record cannot point outside the folder ("../x").
local function run_id_shape(v)
  if type(v) ~= "string" or #v > 128 or not v:find("^[%w][%w._-]*$") then
    return "a run id (letters, digits, '.', '_', '-'; no '/' or '..')"
  end
end

local AGGREGATE = shape.object { mean = "number?", lo = "number?", hi = "number?" } -- what the readers read
local RECORD = shape.object {
  run_id = run_id_shape, time = "string", label = "string|number?", notes = "string|number?", git_commit = "string?",
  evalua = "string?", report = "string?",
  dataset = shape.optional(shape.object { path = "string?", hash = "string?", rows = "integer?" }),
  judge = shape.optional(shape.object { model = "string?", system_fingerprints = "table?" }),
  systems = shape.list("string"), metrics = shape.list("string"),
  metric_definitions = shape.optional(shape.map("string")),
  gates = shape.optional(shape.list(shape.object {
    system = "string?", metric = "string", dim = "string?", value = "string?", threshold = "number?",
    status = "string?", higher_is_better = "boolean?" })),
  aggregates = shape.map(shape.map(shape.map(shape.map(AGGREGATE)))),
}
local ITEM = shape.object { id = function(v)
  if type(v) ~= "string" and math.type(v) ~= "integer" then return "an id (a string or an integer)" end
end, system = "string", scores = shape.map("number"), slices = shape.optional(shape.map("string")) }

-- The newlines in text (string.find with plain = true runs at memchr's
-- speed; a pattern would look at every byte in Lua's matcher).
local function newlines(text)
  local n, at = 0, text:find("\n", 1, true)
  while at do
    n = n + 1
    at = text:find("\n", at + 1, true)
  end
  return n
end

-- The number of the line that starts at byte offset pos (counted only when
-- a message needs it).
local function line_number(path, pos)
  local f = io.open(path, "rb")
  if not f then return "?" end
  local n, left = 1, pos
  while left > 0 do
    local block = f:read(math.min(left, 1 << 16))
    if not block then break end
    left = left - #block
    n = n + newlines(block)
  end
  f:close()
  return n
end

-- A label or note given as a number is text: 5, not 5.0, and found by "5".
local function text_of(v)
  if type(v) ~= "number" then return v end
  return tostring(math.tointeger(v) or v)
end

-- The record on a line, checked: a line that is not a record is an error
-- naming the file, line and field; the history is evidence, not a cache.
local function decode_record(self, line, pos)
  local rec, err = json.decode(line)
  if type(rec) ~= "table" then err = "invalid history record: " .. tostring(err)
  else err = shape.check(RECORD, rec) end
  if err then sys.input_error(("%s:%s: %s"):format(self.file, line_number(self.file, pos), err)) end
  if rec.dataset and rec.dataset.rows then rec.dataset.rows = math.tointeger(rec.dataset.rows) end -- a count: 180, not 180.0
  rec.label, rec.notes = text_of(rec.label), text_of(rec.notes)
  return rec
end

local BLOCK = 1 << 16

-- Iterates over the history file's lines from the last to the first,
-- reading blocks from the end: the newest records cost what they weigh,
-- not what the whole history weighs. Each step gives a line and the offset
-- where it starts. A last line without its newline is a record whose
-- append was cut off (sys.append never leaves one, but a power loss can):
-- it is skipped with a warning.
local function lines_backwards(self)
  local f = io.open(self.file, "rb")
  if not f then return function() return nil end end
  assert(sys.flock(f, "sh")) -- an append in progress is seen whole or not at all
  local pos = assert(f:seek("end"))
  local lines, i, carry, tail = {}, 0, {}, true -- carry: pieces of a line whose start is not read yet, last first
  local function joined(head)
    local parts = { head }
    for k = #carry, 1, -1 do parts[#parts + 1] = carry[k] end
    carry = {}
    return table.concat(parts)
  end
  local function torn(line, at)
    if #line > 0 then
      warn(self, "%s:%d: ignoring a torn final record (%d bytes without a newline; the next append removes it)",
        self.file, line_number(self.file, at), #line)
    end
  end
  local function read_block()
    local k = math.min(BLOCK, pos)
    pos = pos - k
    f:seek("set", pos)
    local block = f:read(k)
    lines, i = {}, 0
    local ends, e = {}, block:find("\n", 1, true)
    while e do
      ends[#ends + 1] = e
      e = block:find("\n", e + 1, true)
    end
    if #ends == 0 then
      carry[#carry + 1] = block
      return
    end
    local last = joined(block:sub(ends[#ends] + 1))
    if tail then tail = false; torn(last, pos + ends[#ends])
    else lines[1] = { last, pos + ends[#ends] } end
    for j = #ends, 2, -1 do lines[#lines + 1] = { block:sub(ends[j - 1] + 1, ends[j] - 1), pos + ends[j - 1] } end
    carry[1] = block:sub(1, ends[1] - 1)
  end
  local function step()
    while i >= #lines do
      if pos == 0 then
        if #carry == 0 then return nil end
        local first = joined("")
        if tail then return torn(first, 0) end
        return first, 0
      end
      read_block()
    end
    i = i + 1
    return lines[i][1], lines[i][2]
  end
  return step, nil, nil, f -- the loop closes f, also when it breaks
end

-- The newest records, newest first: up to n of them, or until stop(rec)
-- is true (that record included).
local function newest(self, n, stop)
  local out = {}
  for line, pos in lines_backwards(self) do
    if #out >= n then break end
    if line:find("%S") then
      out[#out + 1] = decode_record(self, line, pos)
      if stop and stop(out[#out]) then break end
    end
  end
  return out
end

-- records() -> every record, oldest first: one pass over the file.
function History:records()
  local f = io.open(self.file, "rb")
  if not f then return {} end
  assert(sys.flock(f, "sh"))
  local text = f:read("a")
  f:close()
  local out, pos = {}, 1
  local e = text:find("\n", 1, true)
  while e do
    local line = text:sub(pos, e - 1)
    if line:find("%S") then out[#out + 1] = decode_record(self, line, pos - 1) end
    pos = e + 1
    e = text:find("\n", pos, true)
  end
  if pos <= #text then
    warn(self, "%s:%d: ignoring a torn final record (%d bytes without a newline; the next append removes it)",
      self.file, line_number(self.file, pos - 1), #text - pos + 1)
  end
  return out
end

-- latest() -> the newest record, or nil; reads only that record.
function History:latest()
  return newest(self, 1)[1]
end

-- find(label_or_run_id) -> the newest record with that label or run id
function History:find(key)
  local found = newest(self, math.huge, function(rec) return rec.run_id == key or rec.label == key end)
  local rec = found[#found]
  return rec and (rec.run_id == key or rec.label == key) and rec or nil
end

-- Per-item scores of a record: { [system] = { [id] = { scores = {...}, slices = {...} } } }
function History:items(rec)
  local bad = shape.check(RECORD.fields.run_id, rec.run_id, "run_id")
  if bad then sys.input_error(("%s: %s"):format(self.file, bad)) end
  local path = self.dir .. "/runs/" .. rec.run_id .. ".jsonl"
  local f = io.open(path, "rb")
  if not f then
    io.stderr:write(("evalua: warning: %s: missing: run %s has no per-item scores to pair with\n"):format(path, rec.run_id))
    return {}
  end
  local out, n = {}, 0
  for l in f:lines() do
    n = n + 1
    local it, err = json.decode(l)
    if type(it) ~= "table" then err = "invalid item line: " .. tostring(err) else err = shape.check(ITEM, it) end
    if err then
      f:close()
      sys.input_error(("%s:%d: %s"):format(path, n, err))
    end
    out[it.system] = out[it.system] or {}
    out[it.system][it.id] = it
  end
  f:close()
  return out
end

-- The newest max records, oldest first, and with count the number of all
-- records (the lines are counted, not decoded).
local function tail_records(self, max, count)
  local recs = newest(self, max)
  local n = #recs
  if count and n == max then
    n = 0
    local f = io.open(self.file, "rb")
    for block in function() return f:read(BLOCK) end do n = n + newlines(block) end
    f:close()
  end
  local out = {}
  for k = #recs, 1, -1 do out[#out + 1] = recs[k] end
  return out, n
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
  local recs, total = tail_records(self, DASHBOARD_RUNS, true)
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
    gates = gate_lines(res),
    report = opts.report and relative(self_dir, opts.report) or nil,
    aggregates = res.aggregates,
  }
end

-- append(res [, {label=, notes=, report=, dashboard=}]) -> the record written.
-- report: the path of this run's HTML report, linked from the dashboard;
-- dashboard = false leaves index.html as it is.
local APPEND_OPTIONS = options.set { "label", "notes", "git_commit", "report", "dashboard" }
local COUNTED = { replaced = true } -- json.encode returns the invalid UTF-8 sequences it replaced

function History:append(res, opts)
  opts = opts or {}
  options.check(opts, APPEND_OPTIONS, "history:append", 2)
  if shard.skip(res) then return nil end
  local rec = record_of(res, opts, self.dir)
  local lines, replaced, n = {}, 0, 0
  for i, it in ipairs(res.items) do
    lines[i], n = json.encode({ id = it.id, system = it.system, scores = it.scores, slices = it.slices }, COUNTED)
    replaced = replaced + n
  end
  local items = self.dir .. "/runs/" .. rec.run_id .. ".jsonl"
  assert(sys.write_atomic(items, table.concat(lines, "\n") .. "\n"))
  json.say_replaced(items, replaced)
  local line
  line, replaced = json.encode(rec, COUNTED)
  local ok, dropped = sys.append(self.file, line .. "\n")
  if not ok then error(dropped, 2) end
  json.say_replaced(self.file, replaced)
  if dropped > 0 then
    io.stderr:write(("evalua: warning: %s: removed a torn final record of %d bytes before appending\n")
      :format(self.file, dropped))
  end
  if opts.dashboard ~= false then self:dashboard() end
  return rec
end

return M
