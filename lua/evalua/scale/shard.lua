-- Sharding: one run split over N processes (a Slurm job array, a Kubernetes
-- Indexed Job, CI nodes), each evaluating the rows whose id hashes to it,
-- and the merge that gives the one-process run back (docs/scale.md).
--
--   --shard i/N | auto        every bundled script (ev.cli.parse adds it),
--   EVALUA_SHARD=i/N          or ev.evaluate(ds, {shard = "i/N"})
--   --parts DIR               where a shard writes its part (default: parts)
--
-- Under a shard, ev.evaluate evaluates its rows, writes them to the part
-- file and returns results marked res.shard; reports, gates and history
-- leave such partial results to `evalua merge`, which reruns the script
-- with every ev.evaluate answered from the parts.
local json = require "evalua.core.json"
local sys = require "evalua._sys"

local M = {}

M.FORMAT, M.VERSION = "evalua-part", 1

-- The run's shard state (evalua.core.run): { shard = {index=, count=},
-- parts = dir } while it is a shard, { merge = {...} } while evalua merge
-- replays a script.
local runs = require "evalua.core.run"
local function state() return runs.current().shard end

local function int_env(name)
  local v = sys.shard_env(name)
  if v == nil or v == "" then return nil end
  local n = math.tointeger(tonumber(v))
  if not n then error(("--shard auto: $%s is '%s', not an integer"):format(name, v), 0) end
  return n
end

-- Shard from the job engine's environment: Slurm arrays, Kubernetes Indexed
-- Jobs (with EVALUA_SHARDS, as the index comes without a count), Buildkite
-- parallel jobs, GitLab parallel jobs.
function M.auto()
  local id = int_env("SLURM_ARRAY_TASK_ID")
  if id then
    local lo, hi = int_env("SLURM_ARRAY_TASK_MIN"), int_env("SLURM_ARRAY_TASK_MAX")
    local step = int_env("SLURM_ARRAY_TASK_STEP") or 1
    if not lo or not hi then error("--shard auto: SLURM_ARRAY_TASK_MIN/MAX are not set", 0) end
    return { index = (id - lo) // step + 1, count = (hi - lo) // step + 1, engine = "slurm" }
  end
  local k = int_env("JOB_COMPLETION_INDEX")
  if k then
    local n = int_env("EVALUA_SHARDS")
    if not n then error("--shard auto: JOB_COMPLETION_INDEX is set but EVALUA_SHARDS (the job's completions) is not", 0) end
    return { index = k + 1, count = n, engine = "kubernetes" }
  end
  k = int_env("BUILDKITE_PARALLEL_JOB")
  if k then return { index = k + 1, count = int_env("BUILDKITE_PARALLEL_JOB_COUNT"), engine = "buildkite" } end
  k = int_env("CI_NODE_INDEX")
  if k then return { index = k, count = int_env("CI_NODE_TOTAL"), engine = "gitlab" } end
  error("--shard auto: no shard in the environment (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX with " ..
        "EVALUA_SHARDS, BUILDKITE_PARALLEL_JOB or CI_NODE_INDEX)", 0)
end

-- parse("2/4" | "auto" | {index=, count=}) -> {index=, count=}; raises a
-- message naming what was wrong.
function M.parse(v)
  local s
  if type(v) == "table" then s = { index = v.index, count = v.count }
  elseif v == "auto" then s = M.auto()
  else
    local i, n = tostring(v):match("^%s*(%d+)%s*/%s*(%d+)%s*$")
    s = { index = math.tointeger(tonumber(i)), count = math.tointeger(tonumber(n)) }
  end
  local i, n = s.index, s.count
  if math.type(i) ~= "integer" or math.type(n) ~= "integer" or n < 1 or i < 1 or i > n then
    error(("shard: expected i/N with 1 <= i <= N, got '%s'"):format(
      type(v) == "table" and ("%s/%s"):format(v.index, v.count) or tostring(v)), 0)
  end
  return s
end

-- Called by ev.cli.parse with the script's --shard and --parts (or the
-- environment's EVALUA_SHARD / EVALUA_PARTS) and its arguments (arg[0] the
-- script), which the part records for the merge.
function M.configure(shard, parts, argv)
  if argv then state().argv = argv end
  if state().merge then return end
  shard = shard ~= "" and shard or sys.shard_env("EVALUA_SHARD")
  if shard and shard ~= "" then state().shard = M.parse(shard) end
  state().parts = parts ~= "" and parts or sys.shard_env("EVALUA_PARTS") or "parts"
end

function M.current() return state().shard end
function M.merging() return state().merge end

-- The shard a call of ev.evaluate runs as: its own spec.shard, else the process's.
function M.of_spec(spec)
  if spec.shard ~= nil and spec.shard ~= false then return M.parse(spec.shard) end
  if spec.shard == false then return nil end
  if not state().shard then M.configure("", "") end
  return state().shard
end

-- Rows of shard s of the data set, by the stable hash of their id.
function M.rows(ds, id_field, s)
  return ds.table:shard_rows(id_field, s.index, s.count)
end

-- skip(res): res:is_part() (evalua.eval.results), for scripts that call it.
function M.skip(res) return res:is_part() end

---------------------------------------------------------------------------
-- Writing a part

-- json.array-marked empty tables must come back as [] after the round trip;
-- cjson decodes both [] and {} to an empty table, so they are tagged.
local EMPTY_ARRAY = "$evalua_empty_array"

local function tag_arrays(v)
  if type(v) ~= "table" then return v end
  if next(v) == nil and getmetatable(v) == json.array then return { [EMPTY_ARRAY] = true } end
  local out = {}
  for k, x in pairs(v) do out[k] = tag_arrays(x) end
  return setmetatable(out, getmetatable(v) == json.array and json.array or nil)
end

local function untag_arrays(v)
  if type(v) ~= "table" then return v end
  if v[EMPTY_ARRAY] == true and next(v, next(v)) == nil then return setmetatable({}, json.array) end
  for k, x in pairs(v) do v[k] = untag_arrays(x) end
  return v
end

local function rows_hash(rows)
  return sys.sha256(table.concat(rows, ","))
end

-- The section of one ev.evaluate call: its rows (positions in the whole data
-- set) and their score columns, reasons and details.
local function section(full, rows, part_res, judge)
  local sec = {
    data = { hash = full.hash, rows = full.n, path = full.path },
    part = { rows = #rows, hash = rows_hash(rows) },
    rows = setmetatable(rows, json.array),
    metrics = setmetatable({}, json.array), scores = {}, reasons = {}, details = {},
    judge = judge and judge.stats and judge:stats() or json.null,
  }
  for j, m in ipairs(part_res.metrics) do
    sec.metrics[j] = m.name
    local col, why = setmetatable({}, json.array), {}
    for pos = 1, #rows do
      local score, reason = part_res.scores:get(pos, j)
      col[pos] = score == nil and json.null or score
      if reason then why[tostring(pos)] = reason end
    end
    sec.scores[m.name], sec.reasons[m.name] = col, why
    local d = part_res.details[m.name]
    if d then
      local out = {}
      for pos, detail in pairs(d) do out[tostring(pos)] = tag_arrays(detail) end
      sec.details[m.name] = out
    end
  end
  return sec
end

local function argv() return state().argv or rawget(_G, "arg") end

local function script_name()
  local path = argv() and argv()[0] or "evaluate"
  return (path:match("([^/]+)$") or path):gsub("%.lua$", "")
end

-- The script's arguments without the shard's own options.
local function script_args()
  local out, i, arg = setmetatable({}, json.array), 1, argv()
  while arg and arg[i] ~= nil do
    local a = arg[i]
    if a == "--shard" or a == "--parts" then i = i + 1
    elseif not (a:match("^%-%-shard=") or a:match("^%-%-parts=")) then out[#out + 1] = a end
    i = i + 1
  end
  return out
end

-- record(full_ds, rows, part_res, judge, s) writes (again) the process's part
-- file with one more section, and returns its path.
function M.record(full, rows, part_res, judge, s)
  state().part = state().part or {
    format = M.FORMAT, version = M.VERSION, shard = { index = s.index, count = s.count },
    sandboxed = sys.sandboxed(),
    script = { path = argv() and argv()[0] or json.null, args = script_args() },
    evaluations = setmetatable({}, json.array),
  }
  local p = state().part
  if p.shard.index ~= s.index or p.shard.count ~= s.count then
    error("shard: every ev.evaluate of one process must run as the same shard", 0)
  end
  p.evaluations[#p.evaluations + 1] = section(full, rows, part_res, judge)
  local dir = state().parts or "parts"
  assert(sys.mkdir(dir))
  local path = ("%s/%s.part-%d-of-%d.json"):format(dir, script_name(), s.index, s.count)
  assert(sys.write_atomic(path, json.encode(p) .. "\n"))
  return path
end

M._untag = untag_arrays
M._rows_hash = rows_hash
M.state = state
return M
