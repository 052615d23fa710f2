-- evalua merge [RUN-OPTIONS --] PART... [--out DIR] [--allow-missing]
--
-- RUN-OPTIONS are evalua run's (--sandbox, --read, --out, limits): parts of
-- a --sandbox run are merged under --sandbox too.
-- Puts a sharded run back together: checks that the parts come from one
-- run (same script and arguments, data, metrics, judge; each shard once),
-- then reruns the parts' script, in which every ev.evaluate takes its score
-- columns from the parts instead of computing them. Aggregates, intervals,
-- gates, history and reports are then made by the same code, from the same
-- columns, as in the one-process run.
local json = require "evalua.json"
local shard = require "evalua.shard"
local sys = require "evalua._sys"

local M = {}

local USAGE = "usage: evalua merge [RUN-OPTIONS --] PART... [--out DIR] [--allow-missing]\n"

local function usage(fmt, ...)
  io.stderr:write("evalua merge: ", fmt:format(...), "\n", USAGE)
  sys.exit(2)
end

local function fail(fmt, ...)
  sys.input_error("evalua merge: " .. fmt:format(...))
end

local function parse_args(argv)
  local opt = { parts = {} }
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--help" or a == "-h" then
      io.stdout:write(USAGE, "\nReruns the parts' script with every evaluation taken from the parts;\n",
                      "--out replaces the script's --out, --allow-missing merges without the\n",
                      "shards that have no part (their rows are unmeasured).\n")
      sys.exit(0)
    elseif a == "--out" then
      i = i + 1
      opt.out = argv[i] or usage("--out needs a folder")
    elseif a:match("^%-%-out=") then opt.out = a:sub(7)
    elseif a == "--allow-missing" then opt.allow_missing = true
    elseif a:sub(1, 1) == "-" then usage("unknown option %s", a)
    else opt.parts[#opt.parts + 1] = a end
    i = i + 1
  end
  if #opt.parts == 0 then usage("no PART given") end
  return opt
end

local function read_part(path)
  local f, err = io.open(path, "rb")
  if not f then fail("cannot read %s", tostring(err)) end
  local text = f:read("a")
  f:close()
  local p, derr = json.decode(text)
  if type(p) ~= "table" or p.format ~= shard.FORMAT then
    fail("%s: not an evalua part file%s", path, derr and (" (" .. derr .. ")") or "")
  end
  if p.version ~= shard.VERSION then
    fail("%s: part format version %s; this evalua reads version %d", path, tostring(p.version), shard.VERSION)
  end
  p.file = path
  for _, sec in ipairs(p.evaluations or {}) do -- cjson reads every number as a float
    for k, row in ipairs(sec.rows) do sec.rows[k] = math.tointeger(row) end
  end
  return p
end

local function same(a, b) return json.encode(a) == json.encode(b) end

-- What every part of one run shares; the first difference is named.
local function check_alike(first, p)
  local function differ(what, a, b)
    fail("%s and %s differ in %s (%s against %s)", first.file, p.file, what, a, b)
  end
  if p.shard.count ~= first.shard.count then differ("shard count", first.shard.count, p.shard.count) end
  if p.script.path ~= first.script.path then differ("script", first.script.path, p.script.path) end
  if not same(p.script.args, first.script.args) then
    differ("script arguments", table.concat(first.script.args, " "), table.concat(p.script.args, " "))
  end
  if #p.evaluations ~= #first.evaluations then differ("evaluations", #first.evaluations, #p.evaluations) end
  if p.sandboxed ~= first.sandboxed then differ("--sandbox", tostring(first.sandboxed), tostring(p.sandboxed)) end
  for k, sec in ipairs(p.evaluations) do
    local ref = first.evaluations[k]
    if sec.data.hash ~= ref.data.hash then differ("data (sha256)", ref.data.hash, sec.data.hash) end
    if not same(sec.metrics, ref.metrics) then
      differ("metrics", table.concat(ref.metrics, ","), table.concat(sec.metrics, ","))
    end
    local ja, jb = type(ref.judge) == "table" and ref.judge.model, type(sec.judge) == "table" and sec.judge.model
    if ja ~= jb then differ("judge model", tostring(ja), tostring(jb)) end
    if shard._rows_hash(sec.rows) ~= sec.part.hash then fail("%s: its rows do not match their hash: damaged", p.file) end
  end
end

-- Parts by shard index; duplicate and missing shards are named.
local function index_parts(parts, allow_missing)
  local by, n = {}, parts[1].shard.count
  for _, p in ipairs(parts) do
    local i = p.shard.index
    if by[i] then fail("shard %d/%d is given twice: %s and %s", i, n, by[i].file, p.file) end
    by[i] = p
  end
  local missing = {}
  for i = 1, n do
    if not by[i] then missing[#missing + 1] = ("%d/%d"):format(i, n) end
  end
  if #missing > 0 and not allow_missing then
    fail("no part for shard%s %s (--allow-missing merges without them)", #missing > 1 and "s" or "",
         table.concat(missing, ", "))
  end
  return by, missing
end

function M.main(...)
  local opt = parse_args({ ... })
  local parts = {}
  for k, path in ipairs(opt.parts) do parts[k] = read_part(path) end
  for k = 2, #parts do check_alike(parts[1], parts[k]) end
  local by, missing = index_parts(parts, opt.allow_missing)
  if #missing > 0 then
    io.stderr:write(("evalua merge: without shard%s %s: their rows are unmeasured\n")
      :format(#missing > 1 and "s" or "", table.concat(missing, ", ")))
  end
  local run = shard._run
  run.merge = { by = by, count = parts[1].shard.count, missing = missing, out = opt.out, calls = 0,
                evaluations = #parts[1].evaluations }
  local script = parts[1].script
  if script.path == json.null then fail("%s: the part names no script", parts[1].file) end
  if parts[1].sandboxed and not sys.sandboxed() then
    fail("%s comes from a --sandbox run: merge it under --sandbox too " ..
         "(evalua merge --sandbox --read DIR --out DIR -- PART...)", parts[1].file)
  end
  -- the script's globals (under --sandbox not this file's)
  load("return _ENV")().arg = { [0] = script.path, table.unpack(script.args) }
  local chunk, err = loadfile(script.path, "t")
  if not chunk then fail("cannot load the parts' script: %s", err) end
  local code = chunk(table.unpack(script.args))
  if run.merge.calls < run.merge.evaluations then
    fail("the script evaluated %d times; its parts hold %d evaluations", run.merge.calls, run.merge.evaluations)
  end
  return code
end

-- Judge accounting of the parts, added up: counts sum, peaks take the
-- largest, names are the first part's (check_alike compared the models).
local PEAKS = { peak_in_flight = true, concurrency_window = true }

local function add_stats(total, s)
  for k, v in pairs(s) do
    local t = total[k]
    if type(v) == "number" and PEAKS[k] then total[k] = math.max(t or v, v)
    elseif type(v) == "number" then total[k] = (t or 0) + v
    elseif type(v) == "boolean" then total[k] = t or v
    elseif type(v) == "table" then total[k] = add_stats(t or {}, v)
    elseif t == nil then total[k] = v end
  end
  return total
end

-- evaluation(ds, metrics, scores) fills the score columns of the next
-- ev.evaluate call from the parts; returns details, judge accounting and
-- the merge's coverage.
function M.evaluation(ds, metrics, scores)
  local m = shard._run.merge
  m.calls = m.calls + 1
  local k = m.calls
  if k > m.evaluations then
    fail("the script evaluates more often than its parts recorded (%d)", m.evaluations)
  end
  local details, stats, covered = {}, nil, 0
  for i = 1, m.count do
    local p = m.by[i]
    if p then
      local sec = p.evaluations[k]
      if sec.data.hash ~= ds.hash then
        fail("evaluation %d: the script's data (sha256 %s) is not the parts' (%s)", k, tostring(ds.hash), sec.data.hash)
      end
      for j, metric in ipairs(metrics) do
        if sec.metrics[j] ~= metric.name then
          fail("evaluation %d: the script's metric %d is %s, the parts' is %s", k, j, metric.name, tostring(sec.metrics[j]))
        end
        local col, why = sec.scores[metric.name], sec.reasons[metric.name]
        for pos, row in ipairs(sec.rows) do
          local v = col[pos]
          scores:set(row, j, v ~= json.null and v or nil, why[tostring(pos)])
        end
        local d = sec.details[metric.name]
        if d then
          local into = details[metric.name] or {}
          details[metric.name] = into
          for pos, detail in pairs(d) do into[sec.rows[tonumber(pos)]] = shard._untag(detail) end
        end
      end
      covered = covered + #sec.rows
      if type(sec.judge) == "table" then stats = add_stats(stats or {}, sec.judge) end
    end
  end
  if #m.missing > 0 then
    local reason = "its shard's part is missing (" .. table.concat(m.missing, ", ") .. ")"
    local seen = {}
    for i = 1, m.count do
      if m.by[i] then for _, row in ipairs(m.by[i].evaluations[k].rows) do seen[row] = true end end
    end
    for row = 1, ds.n do
      if not seen[row] then for j = 1, #metrics do scores:set(row, j, nil, reason) end end
    end
  end
  return details, stats, { shards = m.count, missing = m.missing, rows = covered }
end

-- The --out a merge puts in place of the script's.
function M.out_override()
  local m = shard._run.merge
  return m and m.out
end

return M
