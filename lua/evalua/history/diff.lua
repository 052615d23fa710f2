-- evalua diff A.json B.json: two saved JSON reports (ev.report.write's
-- "json" format), or with --history DIR two runs of a history's store,
-- compared as a nightly comparison compares a run with its
-- baseline: per system, metric and slice both means and the delta, a paired
-- permutation test on the items both reports measured (matched by system
-- and id), the items that flipped between pass and fail, and a warning
-- first when the runs are unlike (judge, data set, metric definitions).
-- A is the baseline, B the newer run.
--
-- Exit status: 0, 1 when a change is a significant regression, 2 usage,
-- 3 a file that is not a JSON report.
local json = require "evalua.core.json"
local cli = require "evalua.core.cli"
local sys = require "evalua._sys"
local compare = require "evalua.eval.compare"
local results_mod = require "evalua.eval.results"
local C = require "evalua.report.common"
local shape = require "evalua.core.shape"

local M = {}

local SPEC = {
  usage = "evalua diff [options] A.json B.json\n       evalua diff --history DIR [options] [A [B]]",
  description = "Compares two saved JSON reports, or two runs of a history (labels or run ids; default the "
    .. "newest two, or A and the newest): A is the baseline, B the newer run.",
  positional = true,
  { "alpha", 0.05, "significance level of the paired permutation test" },
  { "pass", 0.5, "a score at or above this passes (for the items that flipped)" },
  { "slices", false, "a line per slice too, not only per system and metric" },
  { "format", "text", "what to print", choices = { "text", "json" } },
  { "resamples", 10000, "permutation test resamples (above 20 non-zero differences)", integer = true, min = 1,
    max = require("evalua.eval.stats").max_resamples },
  { "seed", 1, "permutation test seed", integer = true },
  { "history", "", "a history folder (ev.history): A and B are labels or run ids of its runs" },
}

local AGGREGATE = shape.object { mean = "number?", n = "integer?", measured = "integer?" }
local REPORT = shape.object {
  systems = shape.list("string"), dims = shape.list("string"),
  metrics = shape.list(shape.object { name = "string", definition = "string?", higher_is_better = "boolean?" }),
  slice_values = shape.map(shape.list("string")),
  aggregates = shape.map(shape.map(shape.map(shape.map(AGGREGATE)))),
  items = shape.list(shape.object {
    id = function(v) if type(v) ~= "string" and math.type(v) ~= "integer" then return "an id (a string or an integer)" end end,
    system = "string", scores = shape.optional(shape.map("number")), slices = shape.optional(shape.map("string")) }),
  meta = shape.optional(shape.object {
    label = "string?", time = "string?",
    judge = shape.optional(shape.object { model = "string?", system_fingerprints = "table?" }),
    dataset = shape.optional(shape.object { hash = "string?", rows = "integer?", path = "string?" }) }),
}

-- A JSON report, checked for what the comparison reads: a file that is not
-- one, or a field of the wrong type, is "FILE: field ...", exit status 3.
local function load(path)
  local f, err = io.open(path, "rb")
  if not f then sys.input_error(("%s: cannot read (%s)"):format(path, tostring(err):match(": ([^:]*)$") or err)) end
  local text = f:read("a")
  f:close()
  local doc, derr = json.decode(text)
  if type(doc) ~= "table" then sys.input_error(("%s: not JSON: %s"):format(path, tostring(derr))) end
  for _, key in ipairs { "systems", "metrics", "dims", "slice_values", "aggregates", "items" } do
    if type(doc[key]) ~= "table" then
      sys.input_error(("%s: field '%s': missing; expected an evalua JSON report (ev.report.write, format json)")
        :format(path, key))
    end
  end
  local wrong = shape.check(REPORT, doc)
  if wrong then sys.input_error(("%s: %s"):format(path, wrong)) end
  if doc.meta and doc.meta.dataset and doc.meta.dataset.rows then -- a count: 180, not 180.0
    doc.meta.dataset.rows = math.tointeger(doc.meta.dataset.rows)
  end
  doc.path = path
  return doc
end

local function listed(list) return #list > 0 and table.concat(list, ", ") or "none" end

-- A run of a history's store, shaped as a JSON report for the comparison:
-- its record's aggregates, metrics and meta, and its items from the store.
-- Metrics recorded before their direction was kept count as higher is better.
local function from_history(hist, key)
  local rec = hist:find(key)
  if not rec then
    local known = {}
    for _, r in ipairs(hist:records()) do known[#known + 1] = r.label or r.run_id end
    cli.usage_error("diff: %s has no run %s (runs: %s)", hist.file, key, listed(known))
  end
  local dims, values = rec.dims, rec.slice_values
  if not (dims and values) then -- a record of an earlier evalua: the slices its aggregates hold, sorted
    local seen
    dims, seen, values = { "all" }, { all = true }, { all = { "all" } }
    for _, per in pairs(rec.aggregates) do
      for d, vals in pairs(per) do
        if not seen[d] then seen[d], dims[#dims + 1], values[d] = true, d, {} end
        for v in pairs(vals) do
          local known = false
          for _, x in ipairs(values[d]) do known = known or x == v end
          if not known then values[d][#values[d] + 1] = v end
        end
      end
    end
    table.sort(dims, function(x, y) return x == "all" or (y ~= "all" and x < y) end)
    for _, list in pairs(values) do table.sort(list) end
  end
  local metrics, dirs, defs = {}, rec.higher_is_better or {}, rec.metric_definitions or {}
  for i, name in ipairs(rec.metrics) do
    metrics[i] = { name = name, definition = defs[name], higher_is_better = dirs[name] ~= false }
  end
  local items = {}
  for _, per in pairs(hist:items(rec)) do
    for _, it in pairs(per) do items[#items + 1] = it end
  end
  table.sort(items, function(x, y)
    if x.system ~= y.system then return x.system < y.system end
    return tostring(x.id) < tostring(y.id)
  end)
  return { systems = rec.systems, dims = dims, metrics = metrics, slice_values = values, aggregates = rec.aggregates,
           items = items, path = ("%s run %s"):format(hist.file, rec.run_id),
           meta = { label = rec.label, time = rec.time, judge = rec.judge, dataset = rec.dataset } }
end

-- The two runs of --history: A and B as given, A and the newest, or the
-- newest two.
local function history_pair(dir, keys)
  if #keys > 2 then cli.usage_error("diff --history takes at most two runs, A and B, got %d", #keys) end
  local hist = require("evalua.history").open(dir)
  local recs = hist:records()
  local a, b = keys[1], keys[2]
  if not b then
    if #recs < (a and 1 or 2) then
      cli.usage_error("diff: %s has %d run%s: nothing to compare", hist.file, #recs, #recs == 1 and "" or "s")
    end
    b = recs[#recs].run_id
    a = a or recs[#recs - 1].run_id
  end
  return from_history(hist, a), from_history(hist, b)
end

-- items[system][id] = item, for the baseline's lookups.
local function index_items(doc)
  local out = {}
  for _, it in ipairs(doc.items) do
    out[it.system] = out[it.system] or {}
    out[it.system][it.id] = it
  end
  return out
end

local function mean_of(doc, system, metric, dim, value)
  local a = doc.aggregates[system]
  a = a and a[dim] and a[dim][value] and a[dim][value][metric]
  return a and type(a.mean) == "number" and a.mean or nil
end

local function side(doc)
  local names, defs = {}, {}
  for i, m in ipairs(doc.metrics) do names[i], defs[m.name] = m.name, m.definition end
  local meta = doc.meta or {}
  return { judge = meta.judge, dataset = meta.dataset, definitions = next(defs) and defs or nil, metrics = names }
end

local function push(pair, x, y)
  local n = #pair[1] + 1
  pair[1][n], pair[2][n] = x, y
end

-- Which system of A each system of B is compared with: the same name; or,
-- when each report has one system and the names differ, those two. The
-- note says what is compared when the systems differ; nil when they agree.
local function pair_systems(a, b)
  local in_a, in_b, map, only_a, only_b = {}, {}, {}, {}, {}
  for _, s in ipairs(a.systems) do in_a[s] = true end
  for _, s in ipairs(b.systems) do in_b[s] = true end
  for _, s in ipairs(b.systems) do
    if in_a[s] then map[s] = s else only_b[#only_b + 1] = s end
  end
  for _, s in ipairs(a.systems) do
    if not in_b[s] then only_a[#only_a + 1] = s end
  end
  if #only_a + #only_b == 0 then return map, nil end
  if #a.systems == 1 and #b.systems == 1 then
    map[b.systems[1]] = a.systems[1]
    return map, ("systems differ: A has %s, B has %s; compared: the one system of each, %s (A) with %s (B)")
      :format(a.systems[1], b.systems[1], a.systems[1], b.systems[1])
  end
  local both = {}
  for _, s in ipairs(b.systems) do
    if map[s] then both[#both + 1] = s end
  end
  if #both == 0 then
    sys.input_error(("%s and %s have no system in common (A: %s; B: %s): nothing to compare")
      :format(a.path, b.path, listed(a.systems), listed(b.systems)))
  end
  return map, ("systems differ: only in A: %s; only in B: %s; compared: %s (in both)")
    :format(listed(only_a), listed(only_b), listed(both))
end

local function measured_of(doc, system, metric, dim, value)
  local a = doc.aggregates[system]
  a = a and a[dim] and a[dim][value] and a[dim][value][metric]
  return a and math.tointeger(a.measured)
end

-- The comparison of B with A: { rows, flips, warnings, systems } shaped as
-- ev.compare's. before and after are each report's own mean (what its
-- tables show); the pairs (items both measured) give p and the paired
-- means, which differ from before and after where an item is measured in
-- one report only.
function M.compare(a, b, opt)
  local before = index_items(a)
  local map, note = pair_systems(a, b)
  local out = { baseline = { path = a.path, label = a.meta and a.meta.label, time = a.meta and a.meta.time },
                run = { path = b.path, label = b.meta and b.meta.label, time = b.meta and b.meta.time },
                alpha = opt.alpha, rows = setmetatable({}, json.array), flips = {}, systems = note,
                warnings = setmetatable(compare.unlike(side(b), side(a)), json.array) }
  local by_system = {}
  for _, it in ipairs(b.items) do
    by_system[it.system] = by_system[it.system] or {}
    table.insert(by_system[it.system], it)
  end
  for _, system in ipairs(b.systems) do
    local asys = map[system]
    if asys then
      local items, old = by_system[system] or {}, before[asys] or {}
      out.flips[system] = {}
      for _, m in ipairs(b.metrics) do
        local name, pairs_of, to_fail, to_pass = m.name, { all = { all = { {}, {} } } }, {}, {}
        for _, it in ipairs(items) do
          local x = old[it.id] and old[it.id].scores and old[it.id].scores[name]
          local y = it.scores and it.scores[name]
          if type(x) == "number" and type(y) == "number" then
            push(pairs_of.all.all, x, y)
            for d, v in pairs(it.slices or {}) do
              pairs_of[d] = pairs_of[d] or {}
              pairs_of[d][v] = pairs_of[d][v] or { {}, {} }
              push(pairs_of[d][v], x, y)
            end
            if x >= opt.pass and y < opt.pass then to_fail[#to_fail + 1] = it.id end
            if x < opt.pass and y >= opt.pass then to_pass[#to_pass + 1] = it.id end
          end
        end
        out.flips[system][name] = { to_fail = setmetatable(to_fail, json.array),
                                    to_pass = setmetatable(to_pass, json.array), threshold = opt.pass }
        for _, d in ipairs(b.dims) do
          if d == "all" or opt.slices then
            for _, v in ipairs(b.slice_values[d] or {}) do
              local after = mean_of(b, system, name, d, v)
              if after then
                local row = { system = system, baseline_system = asys ~= system and asys or nil, dim = d, value = v,
                              metric = name, after = after, before = mean_of(a, asys, name, d, v) }
                if row.before then row.delta = row.after - row.before end
                row.arrow = compare.arrow(row.delta)
                local pair = pairs_of[d] and pairs_of[d][v] or { {}, {} }
                local t = results_mod.paired(pair[1], pair[2], { resamples = opt.resamples, seed = opt.seed })
                row.n, row.p = t.n, t.p
                row.paired_before, row.paired_after = t.mean_a, t.mean_b
                -- fewer pairs than items a report measured: the paired means are not before and after
                local ma, mb = measured_of(a, asys, name, d, v), measured_of(b, system, name, d, v)
                row.unpaired = t.n < (ma or t.n) or t.n < (mb or t.n) or nil
                row.significant = t.p ~= nil and t.p < opt.alpha
                row.regression = row.significant and compare.worse(m, row.delta) or false
                out.rows[#out.rows + 1] = row
              end
            end
          end
        end
      end
    end
  end
  return out
end

local function name_of(s)
  return s.label and ("%s (%s, %s)"):format(s.label, s.path, tostring(s.time)) or ("%s (%s)"):format(s.path, tostring(s.time))
end

function M.text(cmp, systems, metrics)
  local out = { ("%s -> %s"):format(name_of(cmp.baseline), name_of(cmp.run)) }
  if cmp.systems then out[#out + 1] = cmp.systems end
  for _, w in ipairs(cmp.warnings) do out[#out + 1] = "warning: " .. w end
  out[#out + 1] = ""
  out[#out + 1] = ("%-14s %-22s %-18s %7s    %7s  %-9s %5s  %s"):format("system", "slice", "metric", "before", "after",
    "delta", "pairs", "p")
  local unpaired = false
  for _, r in ipairs(cmp.rows) do
    unpaired = unpaired or r.unpaired
    out[#out + 1] = ("%-14s %-22s %-18s %7s -> %7s  %s %-7s %5d%s %s%s%s"):format(r.system, C.slice_label(r.dim, r.value),
      r.metric, C.num(r.before), C.num(r.after), r.arrow == "" and " " or r.arrow,
      r.delta and ("%+.3f"):format(r.delta) or "-", r.n, r.unpaired and "*" or " ", r.p and ("%.4f"):format(r.p) or "-",
      r.regression and " REGRESSION" or (r.significant and " significant" or ""),
      r.unpaired and r.paired_before and ("  (paired: %s -> %s)"):format(C.num(r.paired_before), C.num(r.paired_after)) or "")
  end
  out[#out + 1] = ""
  out[#out + 1] = "before, after: each report's mean over the items it measured, as its own tables show."
  out[#out + 1] = ("pairs: the items both reports measured (matched by system and id); p: paired permutation test on "
    .. "them; significant when p < %s."):format(cmp.alpha)
  if unpaired then
    out[#out + 1] = "*: some items are measured in one report only; the paired means, over the pairs alone, follow the row."
  end
  for _, system in ipairs(systems) do
    for _, m in ipairs(metrics) do
      local f = cmp.flips[system] and cmp.flips[system][m.name]
      if f and #f.to_fail + #f.to_pass > 0 then
        out[#out + 1] = ("%s %s (pass at %s): pass to fail: %s; fail to pass: %s"):format(system, m.name,
          C.num(f.threshold, 2), #f.to_fail > 0 and table.concat(f.to_fail, ", ") or "none",
          #f.to_pass > 0 and table.concat(f.to_pass, ", ") or "none")
      end
    end
  end
  return table.concat(out, "\n") .. "\n"
end

-- main(argv) -> exit status
function M.main(argv)
  local opt = cli.parse(argv, SPEC)
  if opt.history == "" and #opt._ ~= 2 then
    cli.usage_error("diff needs two JSON reports, A (the baseline) and B, got %d", #opt._)
  end
  if not (opt.alpha > 0 and opt.alpha < 1) then
    cli.usage_error("--alpha must be a significance level between 0 and 1 (such as 0.05), got '%s'", opt.alpha)
  end
  opt.resamples, opt.seed = math.tointeger(opt.resamples) or 10000, math.tointeger(opt.seed) or 1
  local a, b
  if opt.history ~= "" then a, b = history_pair(opt.history, opt._)
  else a, b = load(opt._[1]), load(opt._[2]) end
  local cmp = M.compare(a, b, opt)
  if opt.format == "json" then
    io.stdout:write(json.encode(cmp), "\n")
  else
    io.stdout:write(M.text(cmp, b.systems, b.metrics))
  end
  for _, r in ipairs(cmp.rows) do
    if r.regression then return 1 end
  end
  return 0
end

return M
