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
local json = require "evalua.json"
local shard = require "evalua.shard"
local sys = require "evalua._sys"
local options = require "evalua.options"

local M = {}
local History = {}
local DASHBOARD_OPTIONS = options.set { "title" }
History.__index = History

function M.open(dir)
  if type(dir) ~= "string" then error("history.open: expected a folder path", 2) end
  assert(sys.mkdir(dir .. "/runs"))
  return setmetatable({ dir = dir, file = dir .. "/history.jsonl" }, History)
end

local function read_lines(path)
  local f = io.open(path, "rb")
  if not f then return {} end
  local lines = {}
  for l in f:lines() do lines[#lines + 1] = l end
  f:close()
  return lines
end

local function warn(self, fmt, ...)
  if self.warned then return end
  self.warned = true
  io.stderr:write("evalua: warning: ", fmt:format(...), "\n")
end

-- The lines of the history file; a last line without its newline is a
-- record whose append was cut off (sys.append never leaves one, but a
-- power loss can): it is ignored with a warning.
local function history_lines(self)
  local f = io.open(self.file, "rb")
  if not f then return {} end
  local text = f:read("a")
  f:close()
  local lines = {}
  for l in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  local tail = text:match("[^\n]+$")
  if tail then
    warn(self, "%s:%d: ignoring a torn final record (%d bytes without a newline; the next append removes it)",
      self.file, #lines + 1, #tail)
  end
  return lines
end

-- records() -> every record, oldest first. A line that is not JSON is an
-- error naming the file and line: the history is evidence, not a cache.
function History:records()
  local out = {}
  for i, l in ipairs(history_lines(self)) do
    if l:find("%S") then
      local rec, err = json.decode(l)
      if type(rec) ~= "table" then sys.input_error(("%s:%d: invalid history record: %s"):format(self.file, i, tostring(err))) end
      out[#out + 1] = rec
    end
  end
  return out
end

function History:latest()
  local all = self:records()
  return all[#all]
end

-- find(label_or_run_id) -> the newest record with that label or run id
function History:find(key)
  local all = self:records()
  for i = #all, 1, -1 do
    if all[i].run_id == key or all[i].label == key then return all[i] end
  end
  return nil
end

-- Per-item scores of a record: { [system] = { [id] = { scores = {...}, slices = {...} } } }
function History:items(rec)
  local path = self.dir .. "/runs/" .. rec.run_id .. ".jsonl"
  local out = {}
  for i, l in ipairs(read_lines(path)) do
    local it = json.decode(l)
    if type(it) ~= "table" then sys.input_error(("%s:%d: invalid item line"):format(path, i)) end
    out[it.system] = out[it.system] or {}
    out[it.system][it.id] = it
  end
  return out
end

-- trend(res, n) -> { runs = { {label=, time=, values = {[system] = {[metric] = mean}}} } }
-- over the last n - 1 records and the current run; also stored as res.trend
-- (the HTML report draws it).
function History:trend(res, n)
  local all, runs = self:records(), {}
  for i = math.max(1, #all - (n or 10) + 2), #all do
    local rec, values = all[i], {}
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
  local html = require("evalua.report.dashboard")(self:records(), { title = opts.title or ("Trend: " .. self.dir) })
  local path = self.dir .. "/index.html"
  assert(sys.write_atomic(path, html))
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
    run_id = run_id(res), time = res.meta.time, label = opts.label, notes = opts.notes,
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

function History:append(res, opts)
  opts = opts or {}
  options.check(opts, APPEND_OPTIONS, "history:append", 2)
  if shard.skip(res) then return nil end
  local rec = record_of(res, opts, self.dir)
  local lines = {}
  for i, it in ipairs(res.items) do
    lines[i] = json.encode { id = it.id, system = it.system, scores = it.scores, slices = it.slices }
  end
  assert(sys.write_atomic(self.dir .. "/runs/" .. rec.run_id .. ".jsonl", table.concat(lines, "\n") .. "\n"))
  local ok, dropped = sys.append(self.file, json.encode(rec) .. "\n")
  if not ok then error(dropped, 2) end
  if dropped > 0 then
    io.stderr:write(("evalua: warning: %s: removed a torn final record of %d bytes before appending\n")
      :format(self.file, dropped))
  end
  if opts.dashboard ~= false then self:dashboard() end
  return rec
end

return M
