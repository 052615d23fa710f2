-- evalua diff A.json B.json: two saved JSON reports (ev.report.write's
-- "json" format) compared as a nightly comparison compares a run with its
-- baseline: per system, metric and slice both means and the delta, a paired
-- permutation test on the items both reports measured (matched by system
-- and id), the items that flipped between pass and fail, and a warning
-- first when the runs are unlike (judge, data set, metric definitions).
-- A is the baseline, B the newer run.
--
-- Exit status: 0, 1 when a change is a significant regression, 2 usage,
-- 3 a file that is not a JSON report.
local json = require "evalua.json"
local cli = require "evalua.cli"
local sys = require "evalua._sys"
local compare = require "evalua.compare"
local results_mod = require "evalua.results"
local C = require "evalua.report.common"

local M = {}

local SPEC = {
  usage = "evalua diff [options] A.json B.json",
  description = "Compares two saved JSON reports: A is the baseline, B the newer run.",
  positional = true,
  { "alpha", 0.05, "significance level of the paired permutation test" },
  { "pass", 0.5, "a score at or above this passes (for the items that flipped)" },
  { "slices", false, "a line per slice too, not only per system and metric" },
  { "format", "text", "what to print", choices = { "text", "json" } },
  { "resamples", 10000, "permutation test resamples (above 20 non-zero differences)" },
  { "seed", 1, "permutation test seed" },
}

-- A JSON report, checked for what the comparison reads.
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
  doc.path = path
  return doc
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

-- The comparison of B with A: { rows, flips, warnings } shaped as ev.compare's.
function M.compare(a, b, opt)
  local before = index_items(a)
  local out = { baseline = { path = a.path, label = a.meta and a.meta.label, time = a.meta and a.meta.time },
                run = { path = b.path, label = b.meta and b.meta.label, time = b.meta and b.meta.time },
                alpha = opt.alpha, rows = setmetatable({}, json.array), flips = {},
                warnings = setmetatable(compare.unlike(side(b), side(a)), json.array) }
  local by_system = {}
  for _, it in ipairs(b.items) do
    by_system[it.system] = by_system[it.system] or {}
    table.insert(by_system[it.system], it)
  end
  for _, system in ipairs(b.systems) do
    local items, old = by_system[system] or {}, before[system] or {}
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
              local row = { system = system, dim = d, value = v, metric = name, after = after,
                            before = mean_of(a, system, name, d, v) }
              if row.before then row.delta = row.after - row.before end
              row.arrow = compare.arrow(row.delta)
              local pair = pairs_of[d] and pairs_of[d][v] or { {}, {} }
              local t = results_mod.paired(pair[1], pair[2], { resamples = opt.resamples, seed = opt.seed })
              row.n, row.p = t.n, t.p
              row.significant = t.p ~= nil and t.p < opt.alpha
              row.regression = row.significant and compare.worse(m, row.delta) or false
              out.rows[#out.rows + 1] = row
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
  for _, w in ipairs(cmp.warnings) do out[#out + 1] = "warning: " .. w end
  out[#out + 1] = ""
  out[#out + 1] = ("%-14s %-22s %-18s %7s    %7s  %-9s %5s  %s"):format("system", "slice", "metric", "before", "after",
    "delta", "pairs", "p")
  for _, r in ipairs(cmp.rows) do
    out[#out + 1] = ("%-14s %-22s %-18s %7s -> %7s  %s %-7s %5d  %s%s"):format(r.system, C.slice_label(r.dim, r.value),
      r.metric, C.num(r.before), C.num(r.after), r.arrow == "" and " " or r.arrow,
      r.delta and ("%+.3f"):format(r.delta) or "-", r.n, r.p and ("%.4f"):format(r.p) or "-",
      r.regression and " REGRESSION" or (r.significant and " significant" or ""))
  end
  out[#out + 1] = ""
  out[#out + 1] = ("p: paired permutation test on the items both reports measured (matched by system and id); "
    .. "significant when p < %s."):format(cmp.alpha)
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
  if #opt._ ~= 2 then cli.usage_error("diff needs two JSON reports, A (the baseline) and B, got %d", #opt._) end
  opt.resamples, opt.seed = math.tointeger(opt.resamples) or 10000, math.tointeger(opt.seed) or 1
  local a, b = load(opt._[1]), load(opt._[2])
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
