-- A single self-contained HTML file: inline CSS and SVG, no script, no
-- network access when opened. At the top, unfolded, "what changed" (the
-- paired deltas as a forest plot, report/forest.lua); the results table with each mean's interval;
-- then per metric a folded section (open in print): bars per slice and
-- system with confidence-interval whiskers, a histogram per system and the
-- lowest items with the judge's reasons. Every piece of data is escaped.
local C = require "evalua.report.common"
local results = require "evalua.eval.results"
local forest = require "evalua.report.forest"

local PALETTE = { "#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5" }

local esc = C.html_escape

local function fmt(x) return ("%.1f"):format(x) end

-- The y range of a metric over every aggregate: [0, 1] for the usual scores.
-- The chart scale of a metric: 1, or the highest interval end; kept per
-- results and metric, as every chart asks for it.
local scales = setmetatable({}, { __mode = "k" })

local function y_max(res, metric)
  local memo = scales[res] or {}
  scales[res] = memo
  if memo[metric] then return memo[metric] end
  local top = 1
  for _, system in ipairs(res.systems) do
    for _, d in ipairs(res.dims) do
      for _, v in ipairs(res:values_of(system, d)) do
        local a = res:agg(system, metric, d, v)
        if a and a.hi and a.hi > top then top = a.hi end
      end
    end
  end
  memo[metric] = top
  return top
end

-- Charts draw the first CHART_SYSTEMS systems and CHART_VALUES values of
-- each slice dimension, and say so; the tables hold every one.
local CHART_SYSTEMS, CHART_VALUES = 12, 40

local function charted_systems(res)
  local out = {}
  for i = 1, math.min(#res.systems, CHART_SYSTEMS) do out[i] = res.systems[i] end
  return out
end

local function chart_note(res)
  local many = #res.systems > CHART_SYSTEMS
  for _, d in ipairs(res.dims) do many = many or #res.slice_values[d] > CHART_VALUES end
  if not many then return "" end
  return ("<p>Charts show the first %d systems and %d values of each slice dimension; the tables show all %d systems.</p>")
    :format(CHART_SYSTEMS, CHART_VALUES, #res.systems)
end

local function bar_chart(res, metric)
  local groups = {}
  for _, d in ipairs(res.dims) do
    for i, v in ipairs(res.slice_values[d]) do
      if i <= CHART_VALUES then groups[#groups + 1] = { d = d, v = v } end
    end
  end
  local systems = charted_systems(res)
  local ns = #systems
  local bar, gap = 14, 18
  local gw = ns * bar + gap
  local left, top, h = 44, 14, 180
  local w = left + #groups * gw + 90 -- room for the last rotated label
  local ymax = y_max(res, metric)
  local function y(v) return top + h - (v / ymax) * h end
  local out = { ('<svg class="chart bars" role="img" width="%d" height="%d" viewBox="0 0 %d %d">')
    :format(w, top + h + 90, w, top + h + 90),
    ("<title>%s by slice and system</title>"):format(esc(metric)) }
  for i = 0, 4 do
    local v = ymax * i / 4
    out[#out + 1] = ('<line x1="%d" x2="%d" y1="%s" y2="%s" class="grid"/><text x="%d" y="%s" class="tick">%s</text>')
      :format(left, w - 10, fmt(y(v)), fmt(y(v)), left - 4, fmt(y(v) + 4), C.num(v, 2))
  end
  for gi, g in ipairs(groups) do
    local x0 = left + (gi - 1) * gw + gap / 2
    for si, system in ipairs(systems) do
      local a = res:agg(system, metric, g.d, g.v)
      local x = x0 + (si - 1) * bar
      if a and a.mean then
        out[#out + 1] = ('<rect x="%s" y="%s" width="%d" height="%s" fill="%s"><title>%s, %s: %s (%d/%d measured)</title></rect>')
          :format(fmt(x), fmt(y(a.mean)), bar - 2, fmt(h + top - y(a.mean)), PALETTE[(si - 1) % #PALETTE + 1],
                  esc(system), esc(C.slice_label(g.d, g.v)), C.num(a.mean), a.measured, a.n)
        if a.lo and a.hi and a.hi > a.lo then
          local cx = x + (bar - 2) / 2
          out[#out + 1] = ('<path class="whisker" d="M%s %sV%sM%s %sH%sM%s %sH%s"/>'):format(
            fmt(cx), fmt(y(a.lo)), fmt(y(a.hi)), fmt(cx - 3), fmt(y(a.lo)), fmt(cx + 3),
            fmt(cx - 3), fmt(y(a.hi)), fmt(cx + 3))
        end
      end
    end
    out[#out + 1] = ('<text class="label" transform="translate(%s,%d) rotate(35)">%s</text>')
      :format(fmt(x0 + 2), top + h + 12, esc(C.clip(C.slice_label(g.d, g.v), 24)))
  end
  out[#out + 1] = ('<text class="tick mid" transform="translate(10,%d) rotate(-90)">mean %s</text></svg>')
    :format(top + h // 2, esc(C.clip(metric, 24)))
  return table.concat(out)
end

-- Ten bins over [0, max]; one small chart per system. The bins of every
-- system come from one pass over the metric's column.
local bin_memo = setmetatable({}, { __mode = "k" })

local function bins_of(res, metric, system)
  local memo = bin_memo[res] or {}
  bin_memo[res] = memo
  if not memo[metric] then
    for j, m in ipairs(res.metrics) do
      if m.name == metric then memo[metric] = res.scores:histograms(j, res.sys_codes, 10, y_max(res, metric)) end
    end
  end
  for s, name in ipairs(res.systems) do
    if name == system then return memo[metric][s] end
  end
end

-- A histogram with its axes: bin edges under the bars, the item count at
-- the top of the y axis, both axes titled.
local function histogram(res, metric, system, color)
  local ymax, bins = y_max(res, metric), bins_of(res, metric, system)
  local measured = 0
  for _, c in ipairs(bins) do measured = measured + c end
  local peak = math.max(1, table.unpack(bins))
  local left, top, bw, h = 34, 18, 20, 70
  local w = left + #bins * bw + 12
  local base = top + h
  local out = { ('<svg class="chart hist" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s: %s histogram</title>')
    :format(w, base + 34, w, base + 34, esc(system), esc(metric)),
    ('<text x="%d" y="12" class="label">%s (n=%d)</text>'):format(left, esc(C.clip(system, 28)), measured) }
  for i, c in ipairs(bins) do
    local bh = c / peak * h
    out[#out + 1] = ('<rect x="%d" y="%s" width="%d" height="%s" fill="%s"><title>%s to %s: %d</title></rect>')
      :format(left + (i - 1) * bw, fmt(base - bh), bw - 2, fmt(bh), color, C.num((i - 1) / #bins * ymax, 2),
              C.num(i / #bins * ymax, 2), c)
  end
  out[#out + 1] = ('<path class="axis" d="M%d %dV%dH%d"/>'):format(left - 2, top, base, w - 8)
  out[#out + 1] = ('<text x="%d" y="%d" class="tick">%d</text><text x="%d" y="%d" class="tick">0</text>')
    :format(left - 5, top + 8, peak, left - 5, base)
  for i = 0, #bins, 2 do
    out[#out + 1] = ('<text x="%d" y="%d" class="tick mid">%s</text>'):format(left + i * bw - 1, base + 12,
      C.num(i / #bins * ymax, 1))
  end
  out[#out + 1] = ('<text x="%d" y="%d" class="tick mid">%s</text>'):format(left + #bins * bw // 2, base + 27,
    esc(C.clip(metric, 30)))
  out[#out + 1] = ('<text class="tick mid" transform="translate(9,%d) rotate(-90)">items</text></svg>')
    :format(top + h // 2)
  return table.concat(out)
end

local function warnings_html(res)
  local w = C.warnings(res)
  if #w == 0 then return "" end
  local out = { '<div class="warn"><strong>These runs are not alike:</strong><ul>' }
  for _, x in ipairs(w) do out[#out + 1] = "<li>" .. esc(x) .. "</li>" end
  out[#out + 1] = "</ul></div>"
  return table.concat(out)
end

-- The notices (report/common.lua) as banners above everything else: red
-- when the judge failed, amber for the offline heuristic.
local function notices_html(res)
  local out = {}
  for _, n in ipairs(C.notices(res)) do
    out[#out + 1] = ('<div class="banner %s" role="alert"><strong>%s</strong><ul>'):format(
      n.kind == "judge_failed" and "fail" or "offline", esc(n.title))
    for _, l in ipairs(n.lines) do out[#out + 1] = "<li>" .. esc(l) .. "</li>" end
    out[#out + 1] = "</ul></div>"
  end
  return table.concat(out)
end

local function systems_html(res)
  local sc = res.system_comparison
  if not sc or #sc.rows == 0 then return "" end
  local out = { ("<h2>Systems against %s</h2><table><tr><th>system</th><th>metric</th><th>paired</th><th>%s</th>"
    .. "<th>system</th><th>delta</th><th>interval</th><th>p</th></tr>"):format(esc(sc.baseline), esc(sc.baseline)) }
  for _, r in ipairs(sc.rows) do
    out[#out + 1] = ('<tr%s><td>%s</td><td>%s</td><td class=num>%d</td><td class=num>%s</td><td class=num>%s</td><td class=num>%s %s</td><td class=num>%s</td><td class=num>%s</td></tr>')
      :format(r.worse and ' class="fail"' or r.better and ' class="pass"' or "", esc(r.system), esc(r.metric), r.n,
              C.num(r.base), C.num(r.mean), r.arrow, C.num(r.delta), esc(results.paired_text(r, C.num)),
              r.p and C.num(r.p, 4) or "-")
  end
  local note = results.paired_note(sc.rows)
  out[#out + 1] = ("</table><p>Means over the items both systems measured (matched by id); %sp: paired permutation test. "
    .. "Green: significantly better, red: significantly worse (p &lt; %s).</p>"):format(note and esc(note) .. "; " or "", sc.alpha)
  return table.concat(out)
end

local function gates_html(res)
  if not res.gates or #res.gates == 0 then return "" end
  local out = { "<h2>Gates</h2><table><tr><th>system</th><th>gate</th><th>status</th><th>detail</th></tr>" }
  for _, g in ipairs(res.gates) do
    out[#out + 1] = ('<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>')
      :format(esc(g.status), esc(g.system), esc(g.name), esc(g.status), esc(g.message))
  end
  out[#out + 1] = "</table>"
  return table.concat(out)
end

local function comparison_html(res)
  local cmp = res.comparison
  if not cmp then return "" end
  local out = { ("<h2>Compared with %s (%s)</h2><table><tr><th>system</th><th>slice</th><th>metric</th><th>before</th><th>after</th><th>delta</th><th>interval</th><th>p</th></tr>")
    :format(esc(cmp.baseline.label or cmp.baseline.run_id), esc(cmp.baseline.time)) }
  for _, r in ipairs(cmp.rows) do
    if r.delta then
      out[#out + 1] = ('<tr%s><td>%s</td><td>%s</td><td>%s</td><td class=num>%s</td><td class=num>%s</td><td class=num>%s %s</td><td class=num>%s</td><td class=num>%s</td></tr>')
        :format(r.regression and ' class="fail"' or "", esc(r.system), esc(C.slice_label(r.dim, r.value)), esc(r.metric),
                C.num(r.before), C.num(r.after), r.arrow, C.num(r.delta), esc(results.paired_text(r, C.num)),
                r.p and C.num(r.p, 4) or "-")
    end
  end
  local note = results.paired_note(cmp.rows)
  out[#out + 1] = ("</table><p>%sp: paired permutation test on items matched by id; red rows are significant regressions (p &lt; %s).</p>")
    :format(note and esc(note) .. "; " or "", cmp.alpha)
  local flips = {}
  for _, system in ipairs(res.systems) do
    for _, m in ipairs(res.metrics) do
      local f = cmp.flips[system] and cmp.flips[system][m.name]
      if f and (#f.to_fail > 0 or #f.to_pass > 0) then
        flips[#flips + 1] = ("<tr><td>%s</td><td>%s</td><td class=num>%s</td><td>%s</td><td>%s</td></tr>"):format(
          esc(system), esc(m.name), C.num(f.threshold, 2), esc(table.concat(f.to_fail, ", ")),
          esc(table.concat(f.to_pass, ", ")))
      end
    end
  end
  if #flips > 0 then
    out[#out + 1] = "<h3>Items that flipped</h3><table><tr><th>system</th><th>metric</th><th>pass at</th>"
      .. "<th>pass to fail</th><th>fail to pass</th></tr>" .. table.concat(flips) .. "</table>"
  end
  return table.concat(out)
end

-- One line per system over the last runs, per metric.
local function trend_html(res)
  local t = res.trend
  if not t or #t.runs < 2 then return "" end
  local out = { ("<h2>Trend over the last %d runs</h2>"):format(#t.runs) }
  local w, h, left, top = 460, 150, 40, 10
  for _, m in ipairs(res.metrics) do
    local pts, ymax = {}, 1
    for _, run in ipairs(t.runs) do
      for _, system in ipairs(res.systems) do
        local v = run.values[system] and run.values[system][m.name]
        if v and v > ymax then ymax = v end
      end
    end
    local function x(i) return left + (i - 1) * (w - left - 10) / (#t.runs - 1) end
    local function y(v) return top + h - v / ymax * h end
    pts[#pts + 1] = ('<svg class="chart trend" role="img" width="%d" height="%d"><title>%s trend</title>'):format(w, h + 40, esc(m.name))
    pts[#pts + 1] = ('<line x1="%d" x2="%d" y1="%s" y2="%s" class="grid"/><text x="%d" y="%s" class="tick">%s</text>')
      :format(left, w - 10, fmt(y(ymax)), fmt(y(ymax)), left - 4, fmt(y(ymax) + 4), C.num(ymax, 2))
    pts[#pts + 1] = ('<line x1="%d" x2="%d" y1="%s" y2="%s" class="grid"/><text x="%d" y="%s" class="tick">0</text>')
      :format(left, w - 10, fmt(y(0)), fmt(y(0)), left - 4, fmt(y(0) + 4))
    for si, system in ipairs(res.systems) do
      local coords = {}
      for i, run in ipairs(t.runs) do
        local v = run.values[system] and run.values[system][m.name]
        if v then coords[#coords + 1] = fmt(x(i)) .. "," .. fmt(y(v)) end
      end
      pts[#pts + 1] = ('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>')
        :format(PALETTE[(si - 1) % #PALETTE + 1], table.concat(coords, " "))
    end
    for i, run in ipairs(t.runs) do
      pts[#pts + 1] = ('<text class="label" x="%s" y="%d" text-anchor="middle">%s</text>')
        :format(fmt(x(i)), top + h + 16, esc(C.clip(run.label or run.time, 12)))
    end
    pts[#pts + 1] = ('<text class="label" x="%d" y="%d">%s</text></svg>'):format(left, top + h + 34, esc(m.name))
    out[#out + 1] = table.concat(pts)
  end
  return table.concat(out)
end

-- Laid out for screens 1280 to 1920 px wide and for print; the font stack
-- names CJK fonts of each platform before the generic fallback, so Chinese,
-- Japanese and Korean text never shows as boxes where one is installed.
local CSS = [[
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Noto Sans CJK JP","Noto Sans CJK KR","Source Han Sans SC","PingFang SC","Hiragino Sans","Microsoft YaHei","Yu Gothic","Malgun Gothic","WenQuanYi Micro Hei",sans-serif;margin:16px 24px;color:#222;max-width:1880px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top}
th{background:#f4f4f4;overflow-wrap:break-word}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.worst{background:#fde2e1}
table.results{width:100%}.ci{display:block;font-size:11px;color:#666}.cov{display:block;font-size:11px;color:#8a5a00}
.meta{color:#555}.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px}
.warn{border:2px solid #c77700;background:#fff4d6;padding:6px 12px;margin:12px 0}.warn ul{margin:4px 0}
.banner{padding:8px 14px;margin:12px 0;font-size:15px}.banner ul{margin:4px 0}
.banner.fail{border:3px solid #b00020;background:#fde2e1;color:#5c0010}.banner.offline{border:3px solid #c77700;background:#fff4d6}
svg.chart{margin:4px 8px 4px 0}.grid{stroke:#eee}.axis{stroke:#888;fill:none}.tick{font-size:10px;fill:#666;text-anchor:end}.tick.start{text-anchor:start}.tick.mid{text-anchor:middle}.wide{overflow-x:auto}
.label{font-size:11px;fill:#333}.whisker{stroke:#222;stroke-width:1.2;fill:none}
.zero{stroke:#888;stroke-dasharray:3 3}.point{fill:#222}g.worse .point{fill:#b00020}g.worse .whisker{stroke:#b00020}
g.better .point{fill:#2a7a2a}g.better .whisker{stroke:#2a7a2a}.hists{display:flex;flex-wrap:wrap}
tr.fail td{background:#fde2e1}tr.undecided td{background:#fff4d6}tr.pass td{background:#e3f4e1}
td.text{max-width:480px;white-space:pre-wrap;word-break:break-word}
details.metric{border:1px solid #ddd;border-radius:4px;margin:10px 0;padding:0 12px}details.metric>summary{cursor:pointer;padding:8px 0;font-weight:600}
@media print{@page{size:A4 landscape;margin:12mm}body{margin:0;max-width:none;font-size:10pt}.wide{overflow:visible}
details::details-content{content-visibility:visible;display:block}details.metric{border:0;padding:0}
h2,h3,summary{break-after:avoid}tr,svg{break-inside:avoid}}
]]

local function legend(res)
  local out = { '<div class="legend">' }
  for i, s in ipairs(charted_systems(res)) do
    out[#out + 1] = ('<span><i style="background:%s"></i>%s</span>'):format(PALETTE[(i - 1) % #PALETTE + 1], esc(s))
  end
  out[#out + 1] = "</div>"
  return table.concat(out)
end

local function summary_table(res)
  local out = { '<table class="results"><tr><th>system</th><th>slice</th><th>n</th>' }
  -- a long metric name may wrap after an underscore rather than widen its column
  for _, m in ipairs(res.metrics) do out[#out + 1] = "<th>" .. esc(m.name):gsub("_", "_<wbr>") .. "</th>" end
  out[#out + 1] = "</tr>"
  for _, line in ipairs(C.lines(res)) do
    local n = res:agg(line.system, res.metrics[1].name, line.dim, line.value).n
    out[#out + 1] = ("<tr><td>%s</td><td>%s</td><td class=num>%d</td>"):format(esc(line.system), esc(line.label), n)
    for _, m in ipairs(res.metrics) do
      local a = res:agg(line.system, m.name, line.dim, line.value)
      local cls = C.is_worst(res, line.system, m.name, line.dim, line.value) and "num worst" or "num"
      local ci = results.interval_text(a, C.num)
      ci = ci and ('<span class="ci">%s</span>'):format(ci) or ""
      local cov = C.coverage(a) and ('<span class="cov">(' .. C.coverage(a) .. ")</span>") or ""
      out[#out + 1] = ('<td class="%s">%s%s%s</td>'):format(cls, C.num(a.mean), ci, cov)
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</table>"
  return table.concat(out)
end

-- The lowest items of one metric, per system: only those under the
-- threshold or the mean (common.lowest).
local function lowest_html(res, m)
  local out = {}
  for _, system in ipairs(res.systems) do
    local list = C.lowest(res, system, m)
    if #list > 0 then
      out[#out + 1] = ("<h3>Lowest items: %s</h3><table><tr><th>id</th><th>score</th><th>query</th><th>answer</th><th>reason</th></tr>")
        :format(esc(system))
      for _, b in ipairs(list) do
        out[#out + 1] = ('<tr><td>%s</td><td class=num>%s</td><td class=text>%s</td><td class=text>%s</td><td class=text>%s</td></tr>')
          :format(esc(b.id), C.num(b.score), esc(b.query), esc(b.answer), esc(b.reason))
      end
      out[#out + 1] = "</table>"
    end
  end
  if #out == 0 then return "<p>No item is under the threshold or the mean.</p>" end
  return table.concat(out)
end

-- The summary line of a metric's folded section: its mean per system.
local function metric_summary(res, m)
  local parts = {}
  for i, system in ipairs(res.systems) do
    if i > 4 then
      parts[#parts + 1] = ("+%d more"):format(#res.systems - 4)
      break
    end
    parts[#parts + 1] = ("%s %s"):format(esc(system), C.num(res:agg(system, m.name).mean))
  end
  return ("%s <span class=meta>(%s)</span>"):format(esc(m.name), table.concat(parts, ", "))
end

local function problems(res)
  local out = {}
  local u = C.unmeasured(res)
  if #u > 0 then
    out[#out + 1] = "<h2>Unmeasured</h2><table><tr><th>metric</th><th>items</th><th>most common reason</th></tr>"
    for _, x in ipairs(u) do
      out[#out + 1] = ("<tr><td>%s</td><td>%d of %d</td><td>%s</td></tr>"):format(esc(x.metric), x.count, x.total, esc(x.reason))
    end
    out[#out + 1] = "</table>"
  end
  if #res.skipped > 0 then
    out[#out + 1] = "<h2>Skipped input rows</h2><table><tr><th>line</th><th>problem</th></tr>"
    for _, s in ipairs(res.skipped) do
      out[#out + 1] = ("<tr><td>%d</td><td>%s</td></tr>"):format(s.line, esc(s.error))
    end
    out[#out + 1] = "</table>"
  end
  return table.concat(out)
end

-- Sections a module attached with an HTML rendering of their own
-- (res:attach(name, {html = function(res) -> fragment}), e.g. ev.agent's
-- trajectory view), in name order; the module escapes what it shows.
local function attached_html(res)
  local names, out = {}, {}
  for name in pairs(res.sections or {}) do
    local v = res[name]
    if type(v) == "table" and type(v.html) == "function" then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do out[#out + 1] = res[name].html(res) end
  return table.concat(out)
end

return function(res, opts)
  local title = opts.title or "Evaluation report"
  local out = { "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
    "<title>" .. esc(title) .. "</title><style>" .. CSS .. "</style></head><body>",
    "<h1>" .. esc(title) .. "</h1>", '<div class="meta">' }
  for _, l in ipairs(C.meta_lines(res)) do out[#out + 1] = "<div>" .. esc(l) .. "</div>" end
  out[#out + 1] = "</div>"
  out[#out + 1] = notices_html(res)
  out[#out + 1] = warnings_html(res)
  out[#out + 1] = forest.html(res) -- "what changed", unfolded at the top
  out[#out + 1] = gates_html(res)
  out[#out + 1] = comparison_html(res)
  out[#out + 1] = systems_html(res)
  out[#out + 1] = trend_html(res)
  out[#out + 1] = '<h2>Results</h2><div class="wide">' .. summary_table(res) .. "</div>"
  local note = results.ci_note(res)
  out[#out + 1] = ("<p>Cells show the mean%s. (m/n): only m of n items measured. Red: the worst slice of each "
    .. "metric.</p>"):format(note and (" and, under it, its interval; " .. esc(note)) or "")
  out[#out + 1] = "<h2>Metrics</h2><p>Each metric's charts and lowest items are folded below; open one to read it.</p>"
  for _, m in ipairs(res.metrics) do
    out[#out + 1] = ('<details class="metric" id="%s"><summary>%s</summary>'):format(esc("m-" .. m.name), metric_summary(res, m))
    if m.description then out[#out + 1] = "<p>" .. esc(m.description) .. "</p>" end
    out[#out + 1] = chart_note(res) .. legend(res) .. bar_chart(res, m.name) .. '<div class="hists">'
    for i, system in ipairs(charted_systems(res)) do
      out[#out + 1] = histogram(res, m.name, system, PALETTE[(i - 1) % #PALETTE + 1])
    end
    out[#out + 1] = "</div>" .. lowest_html(res, m) .. "</details>"
  end
  local attached = attached_html(res)
  if attached ~= "" then out[#out + 1] = attached end
  out[#out + 1] = problems(res)
  out[#out + 1] = "</body></html>"
  return table.concat(out, "\n") .. "\n"
end
