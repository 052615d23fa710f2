-- "What changed", the first chart of the HTML report: a forest plot of
-- the paired deltas with their intervals, one line per system and metric
-- (this run against the baseline run, ev.compare; each system against the
-- baseline system, ev.compare.systems). With neither, each metric's mean
-- with its interval, so the top of the page still shows where the run
-- stands. Drawn as inline SVG, never folded.
local C = require "evalua.report.common"
local results = require "evalua.eval.results"

local M = {}

local esc = C.html_escape

-- Rows drawn: the first SYSTEMS systems of each comparison; the tables below hold every one.
local SYSTEMS = 12

local function fmt(x) return ("%.2f"):format(x) end

-- The systems charted, as a set, and whether some were left out.
local function charted(res)
  local set = {}
  for i = 1, math.min(#res.systems, SYSTEMS) do set[res.systems[i]] = true end
  return set, #res.systems > SYSTEMS
end

-- A comparison row's point, interval and verdict; the point is the mean
-- paired difference (the interval's centre), the row's delta when every
-- item was paired.
local function delta_row(label, r, better, worse)
  local ci = r.ci
  local point = ci and ci.delta or r.delta
  local lo, hi = ci and ci.lo, ci and ci.hi
  if ci and ci.method == "constant" then lo, hi = point, point end
  return { label = label, point = point, lo = lo, hi = hi, n = r.n,
           class = worse and "worse" or better and "better" or nil,
           note = not ci and ("no interval: %d paired item%s"):format(r.n or 0, r.n == 1 and "" or "s") or nil }
end

-- groups(res) -> {{title=, kind="delta"|"mean", rows={label, point, lo, hi, n, class, note}}, ...},
-- note: what the plot stands for, from res.comparison (whole-run rows),
-- res.system_comparison, or, with neither, the means of the whole run.
function M.groups(res)
  local shown, cut = charted(res)
  local groups = {}
  local cmp = res.comparison
  if cmp then
    local g = { kind = "delta", rows = {},
                title = ("This run minus %s (%s)"):format(cmp.baseline.label or cmp.baseline.run_id or "the baseline",
                                                         cmp.baseline.time or "?") }
    for _, r in ipairs(cmp.rows) do
      if r.dim == "all" and shown[r.system] and r.delta then
        g.rows[#g.rows + 1] = delta_row(("%s · %s"):format(r.system, r.metric), r, r.significant and not r.regression,
                                        r.regression)
      end
    end
    if #g.rows > 0 then groups[#groups + 1] = g end
  end
  local sc = res.system_comparison
  if sc and #sc.rows > 0 then
    local g = { kind = "delta", rows = {}, title = ("Each system minus %s"):format(sc.baseline) }
    for _, r in ipairs(sc.rows) do
      if shown[r.system] and r.delta then
        g.rows[#g.rows + 1] = delta_row(("%s · %s"):format(r.system, r.metric), r, r.better, r.worse)
      end
    end
    if #g.rows > 0 then groups[#groups + 1] = g end
  end
  local note
  if #groups == 0 then
    note = "Nothing to compare with: no baseline run and no second system. Each metric's mean over the whole run, "
      .. "with its interval."
    local g = { kind = "mean", title = "Means of this run", rows = {} }
    for _, system in ipairs(res.systems) do
      if shown[system] then
        for _, m in ipairs(res.metrics) do
          local a = res:agg(system, m.name)
          if a and a.mean then
            local label = #res.systems > 1 and ("%s · %s"):format(system, m.name) or m.name
            g.rows[#g.rows + 1] = { label = label, point = a.mean, lo = a.lo, hi = a.hi, n = a.measured,
                                    note = not a.lo and "no interval" or nil }
          end
        end
      end
    end
    groups[1] = g
  end
  if cut then
    note = (note and note .. " " or "") .. ("The chart shows the first %d of %d systems; the tables show all.")
      :format(SYSTEMS, #res.systems)
  end
  return groups, note
end

-- The x range of a group: deltas about 0, means from 0 to at least 1.
local function range(g)
  local lo, hi = 0, g.kind == "mean" and 1 or 0
  for _, r in ipairs(g.rows) do
    for _, v in ipairs { r.point, r.lo or r.point, r.hi or r.point } do
      if v < lo then lo = v end
      if v > hi then hi = v end
    end
  end
  if g.kind == "delta" then
    local m = math.max(-lo, hi, 0.01)
    lo, hi = -m, m
  end
  return lo, hi
end

-- One group as an SVG: a label column, the axis with its zero line, per row
-- a whisker from lo to hi and a dot at the point. Each row's <g> carries
-- its numbers (data-point, data-lo, data-hi) as the tables print them in
-- full, so what is drawn can be checked against the JSON report.
local function svg(g)
  local lo, hi = range(g)
  local left, plot, right, rowh, top = 300, 560, 150, 22, 24
  local w, h = left + plot + right, top + #g.rows * rowh + 30
  local function x(v) return left + (v - lo) / (hi - lo) * plot end
  local out = { ('<svg class="chart forest" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s</title>')
    :format(w, h, w, h, esc(g.title)) }
  for i = 0, 4 do
    local v = lo + (hi - lo) * i / 4
    out[#out + 1] = ('<line class="grid" x1="%s" x2="%s" y1="%d" y2="%d"/><text class="tick mid" x="%s" y="%d">%s</text>')
      :format(fmt(x(v)), fmt(x(v)), top - 6, h - 24, fmt(x(v)), h - 10, C.num(v, 2))
  end
  if lo <= 0 and hi >= 0 then
    out[#out + 1] = ('<line class="zero" x1="%s" x2="%s" y1="%d" y2="%d"/>'):format(fmt(x(0)), fmt(x(0)), top - 6, h - 24)
  end
  for i, r in ipairs(g.rows) do
    local y = top + (i - 1) * rowh + rowh / 2
    local attrs = ('data-point="%.17g"'):format(r.point)
    if r.lo then attrs = attrs .. (' data-lo="%.17g" data-hi="%.17g"'):format(r.lo, r.hi) end
    out[#out + 1] = ('<g class="row%s" %s><text class="label" x="%d" y="%s" text-anchor="end">%s</text>')
      :format(r.class and " " .. r.class or "", attrs, left - 8, fmt(y + 4), esc(C.clip(r.label, 44)))
    if r.lo then
      out[#out + 1] = ('<path class="whisker ci" d="M%s %sH%sM%s %sV%sM%s %sV%s"/>'):format(
        fmt(x(r.lo)), fmt(y), fmt(x(r.hi)), fmt(x(r.lo)), fmt(y - 4), fmt(y + 4), fmt(x(r.hi)), fmt(y - 4), fmt(y + 4))
    end
    local text = C.num(r.point) .. (r.lo and (" [%s, %s]"):format(C.num(r.lo), C.num(r.hi)) or " (" .. r.note .. ")")
    out[#out + 1] = ('<circle class="point" cx="%s" cy="%s" r="4"><title>%s: %s, n = %d</title></circle>')
      :format(fmt(x(r.point)), fmt(y), esc(r.label), esc(text), r.n or 0)
    out[#out + 1] = ('<text class="tick start" x="%d" y="%s">%s</text></g>'):format(left + plot + 8, fmt(y + 4), esc(text))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out)
end

-- What the intervals are: of paired differences (results.paired_note), or of means.
local function interval_note(res, kind)
  if kind == "mean" then return results.ci_note(res) end
  local rows = {}
  for _, r in ipairs(res.comparison and res.comparison.rows or {}) do rows[#rows + 1] = r end
  for _, r in ipairs(res.system_comparison and res.system_comparison.rows or {}) do rows[#rows + 1] = r end
  return results.paired_note(rows)
end

-- html(res) -> the "What changed" section.
function M.html(res)
  local groups, note = M.groups(res)
  local why = interval_note(res, groups[1].kind)
  local out = { '<section id="what-changed"><h2>What changed</h2>' }
  if note then out[#out + 1] = "<p>" .. esc(note) .. "</p>" end
  for _, g in ipairs(groups) do
    out[#out + 1] = ("<h3>%s</h3>"):format(esc(g.title)) .. '<div class="wide">' .. svg(g) .. "</div>"
  end
  if groups[1].kind == "delta" then
    out[#out + 1] = "<p>Dots: the mean paired difference over the items matched by id; lines: its interval"
      .. (why and " (" .. esc(why) .. ")" or "")
      .. ". Green: significantly better, red: significantly worse. The tables below give p-values and every slice.</p>"
  else
    out[#out + 1] = "<p>Dots: the mean; lines: its interval" .. (why and " (" .. esc(why) .. ")" or "") .. ".</p>"
  end
  out[#out + 1] = "</section>"
  return table.concat(out)
end

return M
