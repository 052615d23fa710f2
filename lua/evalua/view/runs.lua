-- The runs of a store: the list with gates and whole-run means, one run's
-- summary (slices with intervals, paired deltas against a baseline run,
-- score distributions), one item, two runs compared, the calibration.
local json = require "evalua.core.json"
local stats = require "evalua.eval.stats"
local caught = require "evalua.core.caught"
local store = require "evalua.history.store"

local M = {}

-- A list, written [] when empty (JSON arrays the app iterates).
local function A(t) return setmetatable(t or {}, json.array) end
M.A = A

-- A JSON column of the store (written by evalua): one that does not decode
-- is a damaged store, said as such, not an empty field.
local function decode(text, what)
  if not text then return nil end
  local ok, v, err = pcall(json.decode, text)
  if not ok or (v == nil and err) then
    error(("the store's %s is not JSON (%s): the store is damaged"):format(what, ok and err or caught.pass_on(v)), 0)
  end
  return v
end

-- find(src, key) -> {seq, run_id, label, record} of the newest run with that
-- run id or label (nil key: the newest run), or nil.
function M.find(src, key)
  local p = src.pending -- a report's run not in the store yet (evalua.view.source): the newest
  if p and (key == nil or key == "" or key == p.record.run_id or key == p.record.label) then
    return { run_id = p.record.run_id, label = p.record.label, record = p.record, pending = p }
  end
  local rows
  if key == nil or key == "" then
    rows = src.db:rows("SELECT seq, run_id, label, items, record FROM runs ORDER BY seq DESC LIMIT 1")
  else
    rows = src.db:rows("SELECT seq, run_id, label, items, record FROM runs WHERE run_id = ?1 OR label = ?1 "
      .. "ORDER BY seq DESC LIMIT 1", key)
  end
  local r = rows[1]
  if not r then return nil end
  r.record = json.decode(r.record)
  if r.items == "jsonl" and src.hist then src.hist:items(r.record) end -- an older run: its item file, imported
  return r
end

local function gate_counts(gates)
  local passed, failed = 0, 0
  for _, g in ipairs(gates or {}) do
    if g.status == "pass" or g.status == "passed" or g.status == true then passed = passed + 1
    elseif g.status ~= nil then failed = failed + 1 end
  end
  return passed, failed
end

-- list(src, {label=, commit=, judge=}) -> runs oldest first, each with its
-- gates and its whole-run aggregates {system, metric, mean, lo, hi, n}.
function M.list(src, f)
  local sql, args = { "SELECT seq, run_id, time, label, git_commit, judge_model, gates FROM runs WHERE 1" }, {}
  if f.label and f.label ~= "" then sql[#sql + 1], args[#args + 1] = "AND label LIKE ?", "%" .. f.label .. "%" end
  if f.commit and f.commit ~= "" then sql[#sql + 1], args[#args + 1] = "AND git_commit LIKE ?", f.commit .. "%" end
  if f.judge and f.judge ~= "" then sql[#sql + 1], args[#args + 1] = "AND judge_model = ?", f.judge end
  sql[#sql + 1] = "ORDER BY seq"
  local out, by_seq = {}, {}
  for i, r in ipairs(src.db:rows(table.concat(sql, " "), table.unpack(args))) do
    r.gates = A(decode(r.gates, "runs.gates"))
    r.gates_passed, r.gates_failed = gate_counts(r.gates)
    r.aggregates = A()
    out[i], by_seq[r.seq] = r, r
  end
  for _, a in ipairs(src.db:rows("SELECT run, system, metric, mean, lo, hi, n FROM aggregates "
      .. "WHERE dim = 'all' AND value = 'all' ORDER BY run, system, metric")) do
    local r = by_seq[a.run]
    if r then r.aggregates[#r.aggregates + 1] = a end
  end
  local judges = {}
  for _, j in ipairs(src.db:rows("SELECT DISTINCT judge_model AS j FROM runs WHERE judge_model IS NOT NULL")) do
    judges[#judges + 1] = j.j
  end
  local p = src.pending -- a report's run not in the store yet: the newest, from its record
  if p then
    local rec = p.record
    local r = { run_id = rec.run_id, time = rec.time, label = rec.label, git_commit = rec.git_commit,
                judge_model = (rec.judge or {}).model, gates = A(rec.gates), aggregates = A(), importing = true }
    r.gates_passed, r.gates_failed = gate_counts(rec.gates)
    for _, a in ipairs(store.aggregate_rows(rec.aggregates)) do
      if a.dim == "all" and a.value == "all" then r.aggregates[#r.aggregates + 1] = a end
    end
    local keep = (not f.label or f.label == "" or tostring(r.label):lower():find(f.label:lower(), 1, true))
      and (not f.commit or f.commit == "" or tostring(r.git_commit):sub(1, #f.commit) == f.commit)
      and (not f.judge or f.judge == "" or r.judge_model == f.judge)
    if keep then out[#out + 1] = r end
    if r.judge_model and not src.db:rows("SELECT 1 FROM runs WHERE judge_model = ?", r.judge_model)[1] then
      judges[#judges + 1] = r.judge_model
    end
  end
  return { runs = A(out), judges = A(judges) }
end

-- The mean paired difference b - a of every system and metric over the
-- items both runs measured, with the 95% interval ev.compare reports
-- (ev.stats.paired_ci: MOVER for scores in [0, 1], docs/stats.md, whose
-- coverage bench/stats/coverage.lua measures); no interval under 2 pairs.
-- An interval from the differences alone said [0, 0] whenever no item
-- changed and covered 14% at 3 items of 0/1 scores.
local function paired_all(db, a, b)
  local out, cur = {}, nil
  local function close()
    if not cur then return end
    local d = { system = cur.system, metric = cur.metric, n = #cur.xs }
    if d.n > 0 then d.delta = stats.mean(cur.ys) - stats.mean(cur.xs) end
    if d.n >= 2 then
      local ci = stats.paired_ci(cur.xs, cur.ys)
      d.lo, d.hi, d.method = ci.lo, ci.hi, ci.method
    end
    out[#out + 1] = d
  end
  for _, g in ipairs(db:rows([[SELECT y.system, y.metric, x.value AS a, y.value AS b FROM scores y LEFT JOIN scores x
      ON x.run = ?1 AND x.system = y.system AND x.item = y.item AND x.metric = y.metric AND x.value IS NOT NULL
      WHERE y.run = ?2 AND y.value IS NOT NULL ORDER BY y.system, y.metric]], a, b)) do
    if not cur or cur.system ~= g.system or cur.metric ~= g.metric then
      close()
      cur = { system = g.system, metric = g.metric, xs = {}, ys = {} }
    end
    if g.a ~= nil then cur.xs[#cur.xs + 1], cur.ys[#cur.ys + 1] = g.a, g.b end
  end
  close()
  return out
end

-- summary(src, r, baseline) -> the run's record fields, slices table,
-- deltas against the baseline run (default: the run before it), histograms.

function M.summary(src, r, baseline_key)
  if r.pending and ((baseline_key and baseline_key ~= "") or src.db:rows("SELECT 1 FROM runs LIMIT 1")[1]) then
    require("evalua.view.source").finish(src) -- the deltas against a baseline are queried over the store
    r = M.find(src, r.run_id)
  end
  local db, rec = src.db, r.record
  local aggs = r.pending and store.aggregate_rows(rec.aggregates) or db:rows("SELECT system, dim, value, metric, mean, lo, hi, n "
    .. "FROM aggregates WHERE run = ? ORDER BY system, dim, value, metric", r.seq)
  local base
  if r.pending then base = nil -- no run before it: the store is empty
  elseif baseline_key and baseline_key ~= "" then base = M.find(src, baseline_key)
  else
    local prev = db:rows("SELECT run_id FROM runs WHERE seq < ? ORDER BY seq DESC LIMIT 1", r.seq)[1]
    base = prev and M.find(src, prev.run_id)
  end
  local deltas = base and paired_all(db, base.seq, r.seq) or {}
  -- Distributions, counts and unmeasured causes: computed with the run's table, kept in the cache.
  local index = require "evalua.view.index"
  local idx = index.first(src, r)
  local state, secs = index.search_state(idx)
  local building = state == "building" and secs or nil -- seconds the background build has run
  local hist, unmeasured, counts = idx.summary.histograms, idx.summary.unmeasured, idx.summary.counts
  return { run_id = r.run_id, label = r.label, time = rec.time, git_commit = rec.git_commit, judge = rec.judge,
           dataset = rec.dataset, systems = A(rec.systems), metrics = A(rec.metrics), gates = A(rec.gates),
           aggregates = A(aggs), baseline = base and { run_id = base.run_id, label = base.label } or nil,
           deltas = A(deltas), histograms = A(hist), unmeasured = A(unmeasured), counts = A(counts),
           built = idx.built, search_index = idx.fts_ready or false, importing = r.pending and true or nil,
           search_building = building }
end

-- The scores of an item of r as the store gives them, {metric, value, reason, detail} by metric: from the
-- store, or from the decoded item of a run not in the store yet (r.pending, found by the run's table).
local function item_scores(src, r, system, id)
  if not r.pending then
    local scores = src.db:rows("SELECT metric, value, reason, detail FROM scores WHERE run = ? AND system = ? "
      .. "AND item = ? ORDER BY metric", r.seq, system, id)
    for _, s in ipairs(scores) do s.detail = decode(s.detail, "scores.detail") end
    return scores
  end
  local it = require("evalua.view.index").item_of(r, system, id) or {}
  local out, reasons, details, clean = {}, it.reasons or {}, it.details or {}, require("evalua.view.source").clean
  for m, v in pairs(it.scores or {}) do
    out[#out + 1] = { metric = clean(m), value = v, reason = clean(reasons[m]), detail = details[m] }
  end
  for m, why in pairs(it.unmeasured or {}) do
    out[#out + 1] = { metric = clean(m), reason = clean(tostring(why)), detail = details[m] }
  end
  table.sort(out, function(x, y) return x.metric < y.metric end)
  return out
end

-- item(src, r, system, id) -> the row's texts, every score with its reason
-- and detail, the judge's prompts and answers behind them (view/judge_calls.lua),
-- the item's scores across runs and its labels. A run not in the store yet answers from its decoded
-- report and the run's table, the store's earlier runs and labels, as the store would after its import.
function M.item(src, r, system, id)
  local db = src.db
  local idx = require("evalua.view.index").build(src, r)
  -- The same item in the run's systems (the cells of a prompt matrix): side by side on the page.
  local others = idx.db:rows(("SELECT k, system, slices FROM %s WHERE item = ? ORDER BY k"):format(idx.table), id)
  local it
  for _, o in ipairs(others) do
    if not it and (system == "" or system == nil or o.system == system) then it = o end
  end
  if not it then error({ status = 404, message = ("no item %s in run %s"):format(json.encode(id), r.run_id) }, 0) end
  local scores = item_scores(src, r, it.system, id)
  local ks = {}
  for i, o in ipairs(others) do ks[i] = o.k end
  local raws, row = require("evalua.view.texts").read(idx, ks), nil
  for _, o in ipairs(others) do
    o.row = raws[o.k] and decode(raws[o.k], "row of item " .. tostring(id))
    if o.system == it.system then row = o.row end
    o.k, o.slices = nil, nil
    o.scores = A(item_scores(src, r, o.system, id))
  end
  local across = db:rows([[SELECT r.run_id, r.label, r.time, s.metric, s.value, s.reason FROM scores s
      JOIN runs r ON r.seq = s.run WHERE s.item = ? AND s.system = ? ORDER BY r.seq, s.metric]], id, it.system)
  if r.pending then -- the newest run: after the store's
    for _, s in ipairs(scores) do
      across[#across + 1] = { run_id = r.run_id, label = r.label, time = r.record.time, metric = s.metric,
                              value = s.value, reason = s.reason }
    end
  end
  local labs = db:rows([[SELECT metric, value, scale, rater, time, note FROM labels WHERE item = ?
      AND (system IS NULL OR system = ?) ORDER BY time, id]], id, it.system)
  -- The judge's prompts and raw answers, from its cache: its folder is in the run's accounts (a
  -- report's record holds them whole).
  local acc = not r.pending and db:rows("SELECT accounting FROM runs WHERE seq = ?", r.seq)[1]
  local judge = require("evalua.view.judge_calls").of(scores, acc and decode(acc.accounting, "runs.accounting") or r.record.judge)
  return { run_id = r.run_id, system = it.system, item = id, slices = decode(it.slices, "items.slices") or {}, scores = A(scores),
           row = row, texts_missing = not row and (idx.why or "the report has no row for this item") or nil,
           across = A(across), labels = A(labs), trajectory = require("evalua.view.trajectory").of(row),
           others = A(others), judge = judge }
end

-- compare(src, a, b, pass) -> per system and metric the paired delta, and
-- the items whose verdict (score >= pass) flipped from a to b.
function M.compare(src, a, b, pass)
  local db = src.db
  local deltas = paired_all(db, a.seq, b.seq)
  local flips = db:rows([[SELECT x.system, x.item, x.metric, x.value AS before, y.value AS after FROM scores x
      JOIN scores y ON y.item = x.item AND y.system = x.system AND y.metric = x.metric
      WHERE x.run = ? AND y.run = ? AND x.value IS NOT NULL AND y.value IS NOT NULL
      AND (x.value >= ?3) <> (y.value >= ?3) ORDER BY x.metric, x.system, x.item LIMIT 1000]], a.seq, b.seq, pass)
  local slices = db:rows([[SELECT x.system, x.dim, x.value, x.metric, x.mean AS before, y.mean AS after
      FROM aggregates x JOIN aggregates y ON y.system = x.system AND y.dim = x.dim AND y.value = x.value
      AND y.metric = x.metric WHERE x.run = ? AND y.run = ? ORDER BY x.dim, x.value, x.metric, x.system]], a.seq, b.seq)
  return { a = { run_id = a.run_id, label = a.label }, b = { run_id = b.run_id, label = b.label }, pass = pass,
           deltas = A(deltas), flips = A(flips), slices = A(slices) }
end

-- The scale the store's labels of metric use already (one per criterion).
function M.scale_of(src, metric)
  local r = src.db:rows("SELECT scale FROM labels WHERE metric = ? ORDER BY id LIMIT 1", metric)[1]
  return r and r.scale
end

-- calibration(src, metric, run) -> what scripts/calibrate.lua prints from
-- the store's labels: the script itself is run (the same binary), so the
-- page shows its numbers, not a second implementation of them.
function M.calibration(src, metric, run)
  if src.kind == "export" then return { text = src.calibration and src.calibration[metric] or "" } end
  local out = os.tmpname() -- calibrate keeps what it prints in --out/calibrate.txt: a folder of its own, removed after
  os.remove(out)
  local cmd = { src.exe, "run", src.calibrate, "--history", src.dir, "--metric", metric, "--field", metric, "--out", out,
                "--quiet" }
  if run and run ~= "" then cmd[#cmd + 1], cmd[#cmd + 2] = "--run", run end
  for i, a in ipairs(cmd) do cmd[i] = "'" .. tostring(a):gsub("'", "'\\''") .. "'" end
  local p = io.popen(table.concat(cmd, " ") .. " 2>&1")
  local text = p:read("a")
  local ok, _, code = p:close()
  os.remove(out .. "/calibrate.txt")
  os.remove(out)
  table.remove(cmd, #cmd) -- the command shown: without the temporary folder
  table.remove(cmd, #cmd)
  table.remove(cmd, #cmd)
  return { text = text, status = ok and 0 or code, command = table.concat(cmd, " ") }
end

return M
