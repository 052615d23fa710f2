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
local json = require "evalua.core.json"
local shape = require "evalua.core.shape"
local shard = require "evalua.scale.shard"
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

local SECTION = shape.object {
  data = shape.object { hash = "string", rows = "integer", path = "string?" },
  part = shape.object { rows = "integer", hash = "string" },
  rows = shape.list("integer"),
  metrics = shape.list("string"),
  scores = shape.map(shape.list("number|null")),
  reasons = shape.map(shape.map("string")),
  details = shape.map("table"),
  judge = "table|null?",
}
local PART = shape.object {
  format = "string", version = "integer",
  shard = shape.object { index = "integer", count = "integer" },
  sandboxed = "boolean?",
  script = shape.object { path = "string|null", args = shape.list("string") },
  evaluations = shape.list(SECTION),
}
local MAX_COUNT = 2^53 -- shard counts are exact integers; nothing is looped over them

local function bad(path, field, fmt, ...)
  fail("%s: field '%s': " .. fmt, path, field, ...)
end

-- Positions within the part ("1".."n"), as reasons and details are keyed.
local function check_positions(path, field, map, n)
  for key in pairs(map) do
    local pos = math.tointeger(tonumber(key))
    if not pos or pos < 1 or pos > n or tostring(pos) ~= key then
      bad(path, field .. "." .. tostring(key), "not a position in the part's %d rows", n)
    end
  end
end

-- One section: its rows rising within the data set, their hash (damage),
-- a score per row for every metric.
local function check_section(path, k, sec)
  local at = ("evaluations[%d]"):format(k)
  local n, rows = sec.data.rows, sec.rows
  if n < 0 then bad(path, at .. ".data.rows", "%d rows", n) end
  if #rows ~= sec.part.rows then bad(path, at .. ".part.rows", "%d, but the part lists %d rows", sec.part.rows, #rows) end
  for i, row in ipairs(rows) do
    rows[i] = math.tointeger(row) -- cjson reads every number as a float
    if row < 1 or row > n then bad(path, ("%s.rows[%d]"):format(at, i), "row %d is outside the data set's 1..%d", row, n) end
    if i > 1 and row <= rows[i - 1] then
      bad(path, ("%s.rows[%d]"):format(at, i), "row %d does not follow row %d (rows are listed once, rising)", row, rows[i - 1])
    end
  end
  if shard._rows_hash(rows) ~= sec.part.hash then fail("%s: its rows do not match their hash: damaged", path) end
  for _, m in ipairs(sec.metrics) do
    local col = sec.scores[m]
    if not col then bad(path, at .. ".scores." .. m, "missing (a column per metric)") end
    if #col ~= #rows then bad(path, at .. ".scores." .. m, "%d scores for %d rows", #col, #rows) end
    check_positions(path, at .. ".reasons." .. m, sec.reasons[m] or {}, #rows)
    check_positions(path, at .. ".details." .. m, sec.details[m] or {}, #rows)
  end
end

-- A part file, checked alone: its shape, its shard and every section.
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
  local wrong = shape.check(PART, p)
  if wrong then fail("%s: %s", path, wrong) end
  local i, n = math.tointeger(p.shard.index), math.tointeger(p.shard.count)
  if not n or n < 1 or n > MAX_COUNT then
    bad(path, "shard.count", "%s is not a number of shards (1 or more)", json.number(p.shard.count))
  end
  if not i or i < 1 or i > n then bad(path, "shard.index", "%s is outside 1..%d", json.number(p.shard.index), n) end
  p.shard.index, p.shard.count = i, n
  for k, sec in ipairs(p.evaluations) do check_section(path, k, sec) end
  p.file = path
  return p
end

local function same(a, b) return json.encode(a) == json.encode(b) end

-- What every part of one run shares; the first difference is named.
local function check_alike(first, p)
  local function differ(what, a, b)
    fail("%s and %s differ in %s (%s against %s)", first.file, p.file, what, a, b)
  end
  if p.shard.count ~= first.shard.count then differ("shard count", first.shard.count, p.shard.count) end
  if p.script.path ~= first.script.path then differ("script", tostring(first.script.path), tostring(p.script.path)) end
  if not same(p.script.args, first.script.args) then
    differ("script arguments", table.concat(first.script.args, " "), table.concat(p.script.args, " "))
  end
  if #p.evaluations ~= #first.evaluations then differ("evaluations", #first.evaluations, #p.evaluations) end
  if p.sandboxed ~= first.sandboxed then differ("--sandbox", tostring(first.sandboxed), tostring(p.sandboxed)) end
  for k, sec in ipairs(p.evaluations) do
    local ref = first.evaluations[k]
    if sec.data.hash ~= ref.data.hash then differ("data (sha256)", ref.data.hash, sec.data.hash) end
    if sec.data.rows ~= ref.data.rows then differ("data rows", ref.data.rows, sec.data.rows) end
    if not same(sec.metrics, ref.metrics) then
      differ("metrics", table.concat(ref.metrics, ","), table.concat(sec.metrics, ","))
    end
    local ja, jb = type(ref.judge) == "table" and ref.judge.model, type(sec.judge) == "table" and sec.judge.model
    if ja ~= jb then differ("judge model", tostring(ja), tostring(jb)) end
  end
end

-- A row in two parts would be merged twice (the last one winning): refused.
-- Without missing shards the parts must cover every row.
local function check_rows(parts, complete)
  for k, ref in ipairs(parts[1].evaluations) do
    local owner, covered = {}, 0
    for _, p in ipairs(parts) do
      for _, row in ipairs(p.evaluations[k].rows) do
        if owner[row] then
          fail("%s and %s overlap: both hold row %d of evaluation %d", owner[row].file, p.file, row, k)
        end
        owner[row] = p
      end
      covered = covered + #p.evaluations[k].rows
    end
    if complete and covered ~= ref.data.rows then
      fail("the parts hold %d of the %d rows of evaluation %d; every shard is there, so some part lost rows (%s ...)",
        covered, ref.data.rows, k, parts[1].file)
    end
  end
end

-- "2/4, 3/4" for a few shards, "2/100000000, 3/100000000 ... (99999998 in all)" for many.
local function shard_list(missing, total, n)
  local out = {}
  for i, idx in ipairs(missing) do out[i] = ("%d/%d"):format(idx, n) end
  local text = table.concat(out, ", ")
  if total > #missing then text = ("%s ... (%d in all)"):format(text, total) end
  return text
end

local SHOWN = 10 -- missing shards named in a message

-- Parts by shard index; duplicate and missing shards are named. Looks at
-- the parts given, never loops over the shard count.
local function index_parts(parts, allow_missing)
  local by, n = {}, parts[1].shard.count
  for _, p in ipairs(parts) do
    local i = p.shard.index
    if by[i] then fail("shard %d/%d is given twice: %s and %s", i, n, by[i].file, p.file) end
    by[i] = p
  end
  local total, missing, i = n - #parts, {}, 1
  while #missing < math.min(total, SHOWN) do
    if not by[i] then missing[#missing + 1] = i end
    i = i + 1
  end
  if total > 0 and not allow_missing then
    fail("no part for shard%s %s (--allow-missing merges without them)", total > 1 and "s" or "",
         shard_list(missing, total, n))
  end
  return by, { names = shard_list(missing, total, n), count = total, list = missing }
end

function M.main(...)
  local opt = parse_args({ ... })
  local parts = {}
  for k, path in ipairs(opt.parts) do parts[k] = read_part(path) end
  for k = 2, #parts do check_alike(parts[1], parts[k]) end
  local by, missing = index_parts(parts, opt.allow_missing)
  check_rows(parts, missing.count == 0)
  if missing.count > 0 then
    io.stderr:write(("evalua merge: without shard%s %s: their rows are unmeasured\n")
      :format(missing.count > 1 and "s" or "", missing.names))
  end
  local run = shard.state()
  run.merge = { parts = parts, count = parts[1].shard.count, missing = missing, out = opt.out, calls = 0,
                evaluations = #parts[1].evaluations }
  local script = parts[1].script
  if script.path == nil or script.path == json.null then fail("%s: the part names no script", parts[1].file) end
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

-- evaluation(ds, metrics, scores, id_field) fills the score columns of the
-- next ev.evaluate call from the parts; returns details, judge accounting
-- and the merge's coverage.
function M.evaluation(ds, metrics, scores, id_field)
  local m = shard.state().merge
  m.calls = m.calls + 1
  local k = m.calls
  if k > m.evaluations then
    fail("the script evaluates more often than its parts recorded (%d)", m.evaluations)
  end
  local details, stats, covered = {}, nil, 0
  for _, p in ipairs(m.parts) do
    local sec = p.evaluations[k]
    if sec.data.hash ~= ds.hash or sec.data.rows ~= ds.n then
      fail("evaluation %d: the script's data (sha256 %s, %d rows) is not the parts' (%s, %d rows)", k,
        tostring(ds.hash), ds.n, sec.data.hash, sec.data.rows)
    end
    if #m.missing.list > 0 then -- the rows left over are the missing shards': the parts must hold their own
      local own = shard.rows(ds, id_field or "qid", p.shard)
      if shard._rows_hash(own) ~= sec.part.hash then
        fail("%s: field 'evaluations[%d].rows': not the rows of shard %d/%d", p.file, k, p.shard.index, p.shard.count)
      end
    end
    for j, metric in ipairs(metrics) do
      if sec.metrics[j] ~= metric.name then
        fail("evaluation %d: the script's metric %d is %s, the parts' is %s", k, j, metric.name, tostring(sec.metrics[j]))
      end
      local col, why = sec.scores[metric.name], sec.reasons[metric.name] or {}
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
  local names = {}
  if m.missing.count > 0 then
    local reason = "its shard's part is missing (" .. m.missing.names .. ")"
    local seen = {}
    for _, p in ipairs(m.parts) do
      for _, row in ipairs(p.evaluations[k].rows) do seen[row] = true end
    end
    for row = 1, ds.n do
      if not seen[row] then for j = 1, #metrics do scores:set(row, j, nil, reason) end end
    end
    for i, idx in ipairs(m.missing.list) do names[i] = ("%d/%d"):format(idx, m.count) end
  end
  return details, stats, { shards = m.count, missing = setmetatable(names, json.array), rows = covered }
end

return M
