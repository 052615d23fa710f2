-- What `evalua view` shows: a history folder's store, or a JSON report
-- imported into a store of its own (so that labels made on it are kept and
-- calibrate --history reads them). Also the texts of a run's items (query,
-- answer, contexts, gold), read from the run's JSON report: the store keeps
-- scores, reasons and slices, not the rows.
local json = require "evalua.core.json"
local sys = require "evalua._sys"
local store = require "evalua.history.store"

local M = {}

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function decode_report(path, text)
  local ok, rep = pcall(json.decode, text)
  if not ok or type(rep) ~= "table" or type(rep.items) ~= "table" then
    sys.input_error(("%s: not a JSON report of evalua (expected an object with 'items')"):format(path))
  end
  return rep
end

-- A history folder: its store, after importing an older history.jsonl
-- (ev.history does that on open).
function M.history(dir)
  if not sys.stat(dir .. "/history.db") and not sys.stat(dir .. "/history.jsonl") then
    sys.input_error(("%s: no history here (no history.db or history.jsonl)"):format(dir))
  end
  local hist = require("evalua.history").open(dir)
  hist:records() -- imports history.jsonl records the store lacks
  hist:close()
  return { dir = dir, file = dir .. "/history.db", db = store.open(dir .. "/history.db"), kind = "history" }
end

-- The record of a report, as ev.history would have written it.
local function record_of(path, rep, run_id)
  local meta = rep.meta or {}
  local metrics = {}
  for i, m in ipairs(rep.metrics or {}) do metrics[i] = type(m) == "table" and m.name or m end
  return { run_id = run_id, time = meta.time or os.date("!%Y-%m-%dT%H:%M:%SZ"), label = meta.label or path,
           systems = rep.systems or {}, metrics = metrics, aggregates = rep.aggregates or {},
           gates = rep.gates, report = path, dataset = meta.dataset, judge = meta.judge }
end

-- A JSON report: imported once (by its content's hash) into the store of
-- folder dir (created), as one run whose report is the file itself.
function M.report(path, dir)
  local text = read_file(path) or sys.input_error(("%s: cannot read the report"):format(path))
  local rep = decode_report(path, text)
  assert(sys.mkdir(dir))
  local db = store.open(dir .. "/history.db")
  local run_id = "report-" .. sys.sha256(text):sub(1, 16)
  if not db:rows("SELECT 1 FROM runs WHERE run_id = ?", run_id)[1] then
    local rec = record_of(path, rep, run_id)
    store.transaction(db, function()
      local seq = store.insert_run(db, rec, json.encode(rec), "store")
      store.insert_items(db, seq, rep.items)
    end)
  end
  return { dir = dir, file = dir .. "/history.db", db = db, kind = "report", report = path, run_id = run_id }
end

-- The JSON report of a record: the report itself, or the .json beside the
-- HTML report a nightly run recorded (relative to the history folder).
local function report_path(src, rec)
  local r = rec.report
  if type(r) ~= "string" then return nil end
  if not r:find("^/") and src.kind == "history" then r = src.dir .. "/" .. r end
  return (r:gsub("%.html$", ".json"))
end

-- texts(src, rec) -> { [system] = { [id] = row } } and nil, or {} and why
-- there are none. Cached per run.
function M.texts(src, rec)
  src.texts = src.texts or {}
  local hit = src.texts[rec.run_id]
  if hit then return hit[1], hit[2] end
  local out, why = {}, nil
  local path = report_path(src, rec)
  local text = path and read_file(path)
  if not path then why = "the run recorded no report"
  elseif not text then why = path .. ": missing (the texts are read from the run's JSON report)"
  else
    for _, it in ipairs(decode_report(path, text).items) do
      if it.system and it.id ~= nil then
        out[it.system] = out[it.system] or {}
        out[it.system][it.id] = it.row or {}
      end
    end
  end
  src.texts[rec.run_id] = { out, why }
  return out, why
end

return M
