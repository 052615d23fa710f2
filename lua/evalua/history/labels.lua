-- Human labels in the history's store: an item's value for a metric or
-- criterion on a declared scale, by a named rater, at a time, with a note.
-- Checked before they are stored; exported to and imported from JSONL so
-- that teams can label elsewhere (docs/history.md#labels).
local json = require "evalua.core.json"
local sys = require "evalua._sys"
local store = require "evalua.history.store"

local M = {}

-- A scale as declared: "LO..HI" (integers, LO < HI, e.g. "1..5") or
-- "pass/fail" (pass is 1, fail 0). -> {lo=, hi=, pass_fail=} or nil, why.
function M.scale(text)
  if text == "pass/fail" then return { lo = 0, hi = 1, pass_fail = true } end
  local lo, hi = tostring(text):match("^(%-?%d+)%.%.(%-?%d+)$")
  lo, hi = math.tointeger(tonumber(lo)), math.tointeger(tonumber(hi))
  if not lo or not hi or lo >= hi or hi - lo > 1000 then
    return nil, "a scale: \"LO..HI\" (integers, LO < HI, at most 1000 apart, e.g. \"1..5\") or \"pass/fail\""
  end
  return { lo = lo, hi = hi }
end

local function utc_now()
  return os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(sys.now()))
end

local FIELDS = { item = true, system = true, metric = true, value = true, scale = true, rater = true, time = true,
                 note = true, run = true }

-- check(l) -> the label as stored, or nil and "field 'x': why". value may
-- be "pass"/"fail" on a pass/fail scale.
function M.check(l)
  if type(l) ~= "table" then return nil, "expected a label (an object)" end
  for k in pairs(l) do
    if not FIELDS[k] then return nil, ("field '%s': unknown (a label has item, system, metric, value, scale, "
      .. "rater, time, note, run)"):format(tostring(k)) end
  end
  if math.type(l.item) == "float" then l.item = math.tointeger(l.item) or l.item end
  if type(l.item) ~= "string" and math.type(l.item) ~= "integer" then
    return nil, "field 'item': expected an item id (a string or an integer)"
  end
  for _, k in ipairs { "metric", "rater" } do
    if type(l[k]) ~= "string" or l[k] == "" then return nil, ("field '%s': expected a non-empty string"):format(k) end
  end
  for _, k in ipairs { "system", "note", "run", "time" } do
    if l[k] ~= nil and type(l[k]) ~= "string" then return nil, ("field '%s': expected a string"):format(k) end
  end
  if type(l.scale) ~= "string" then return nil, "field 'scale': expected a string (\"1..5\", \"pass/fail\")" end
  local sc, why = M.scale(l.scale)
  if not sc then return nil, "field 'scale': expected " .. why end
  local v = l.value
  if sc.pass_fail and (v == "pass" or v == "fail") then v = v == "pass" and 1 or 0 end
  if type(v) ~= "number" or math.tointeger(v) == nil or v < sc.lo or v > sc.hi then
    return nil, ("field 'value': expected an integer on the scale %s%s, got %s"):format(l.scale,
      sc.pass_fail and " (1 or \"pass\", 0 or \"fail\")" or "", type(v) == "string" and ("%q"):format(v) or tostring(math.type(v) and math.tointeger(v) or v))
  end
  if l.time ~= nil and not l.time:find("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d") then
    return nil, "field 'time': expected an ISO 8601 UTC time (2026-12-02T07:00:00Z)"
  end
  return { item = l.item, system = l.system, metric = l.metric, value = math.tointeger(v), scale = l.scale,
           rater = l.rater, time = l.time or utc_now(), note = l.note, run = l.run }
end

-- add(db, l, where) -> the label stored (raises "where: field ..." on a bad one).
function M.add(db, l, where)
  local clean, why = M.check(l)
  if not clean then error(("%s: %s"):format(where, why), 3) end
  store.transaction(db, store.insert_label, db, clean)
  return clean
end

local LIST_OPTIONS = { metric = true, rater = true, system = true }

-- list(db [, {metric=, rater=, system=}]) -> labels, oldest first (by time, then as stored).
function M.list(db, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not LIST_OPTIONS[k] then error(("history:labels: unknown option '%s'"):format(tostring(k)), 3) end
  end
  return db:rows([[SELECT item, system, metric, value, scale, rater, time, note, run FROM labels
      WHERE (?1 IS NULL OR metric = ?1) AND (?2 IS NULL OR rater = ?2) AND (?3 IS NULL OR system = ?3)
      ORDER BY time, id]], opts.metric, opts.rater, opts.system)
end

-- export(db, path [, opts]) -> the number written: one label per line, JSON,
-- the file replaced atomically.
function M.export(db, path, opts)
  local lines = {}
  for i, l in ipairs(M.list(db, opts)) do lines[i] = json.encode(l) end
  assert(sys.write_atomic(path, #lines > 0 and table.concat(lines, "\n") .. "\n" or ""))
  return #lines
end

-- import(db, path) -> added, already there. Every line is checked first
-- ("path:line: field ..."); then all are stored in one transaction, the
-- labels the store holds already (same item, system, metric, rater, time)
-- left as they are, so importing a file twice adds nothing.
function M.import(db, path)
  local f, err = io.open(path, "rb")
  if not f then sys.input_error(("%s: cannot read (%s)"):format(path, tostring(err))) end
  local labels, n = {}, 0
  for line in f:lines() do
    n = n + 1
    if line:find("%S") then
      local l, jerr = json.decode(line)
      if type(l) ~= "table" then
        f:close()
        sys.input_error(("%s:%d: not a JSON object: %s"):format(path, n, tostring(jerr or "a " .. type(l))))
      end
      local clean, why = M.check(l)
      if not clean then
        f:close()
        sys.input_error(("%s:%d: %s"):format(path, n, why))
      end
      labels[#labels + 1] = clean
    end
  end
  f:close()
  local added = store.transaction(db, function()
    local k = 0
    for _, l in ipairs(labels) do
      if store.insert_label(db, l) then k = k + 1 end
    end
    return k
  end)
  return added, #labels - added
end

-- The label of each item for a metric: per (item, system) the newest label
-- of each rater, and of those the lower median (an integer on the scale).
-- -> { {item=, system=, value=, raters=, rated_by=, scale=} }, the scales
-- seen; rated_by lists the raters' names in order.
function M.per_item(db, metric, rater)
  local newest, order = {}, {}
  for _, l in ipairs(M.list(db, { metric = metric, rater = rater })) do
    local key = tostring(l.item) .. "\0" .. tostring(l.system or "")
    if not newest[key] then
      newest[key] = { item = l.item, system = l.system, by = {}, scale = l.scale }
      order[#order + 1] = key
    end
    newest[key].by[l.rater] = l -- later labels replace earlier ones of the same rater
  end
  local out, scales = {}, {}
  for _, key in ipairs(order) do
    local e, values, names = newest[key], {}, {}
    for name, l in pairs(e.by) do
      values[#values + 1] = l.value
      names[#names + 1] = tostring(name)
      scales[l.scale] = true
    end
    table.sort(values)
    table.sort(names)
    out[#out + 1] = { item = e.item, system = e.system, value = values[(#values + 1) // 2], raters = #names,
                      rated_by = names, scale = e.scale }
  end
  return out, scales
end

return M
