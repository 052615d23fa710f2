-- The trend dashboard of a history folder: one self-contained index.html
-- (inline CSS and SVG, no script, no network) with a line chart per metric
-- across the runs, a band for each mean's confidence interval, the gates as
-- dashed lines, a marker where the judge, the data set or the metric's
-- definition changed, per-slice charts folded under each metric, and a table
-- of the runs linking to each run's report.
--
--   local html = require("evalua.report.dashboard")(records, { title = "...", total = n })
--
-- records: the runs to draw, oldest first (history:dashboard gives its
-- newest 60); total: how many the history holds, when more.
local C = require "evalua.report.common"
local json = require "evalua.core.json"
local results = require "evalua.eval.results"

-- Every text is escaped, and invalid UTF-8 (a record written by hand or by
-- an older evalua) becomes U+FFFD, counted once per text for the warning
-- (a run's label is drawn in every chart).
local replaced, counted = 0, {}
local function esc(s)
  local text, n = json.utf8(tostring(s == nil and "" or s))
  if n > 0 and not counted[s] then counted[s], replaced = true, replaced + n end
  return C.html_escape(text)
end
local PALETTE = { "#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5" }
local MAX_SYSTEMS, MAX_VALUES = 8, 40

local function fmt(x) return ("%.1f"):format(x) end

local function cell(rec, system, dim, value, metric)
  local a = rec.aggregates and rec.aggregates[system]
  a = a and a[dim] and a[dim][value]
  return a and a[metric]
end

-- The fingerprints a run saw, in a stable order (they arrive as answers
-- do); kept per record, as every chart asks for them.
local seen_fingerprints = setmetatable({}, { __mode = "k" })
local function fingerprints(rec)
  if seen_fingerprints[rec] then return seen_fingerprints[rec] end
  local copy = {}
  for i, v in ipairs(rec.judge and type(rec.judge.system_fingerprints) == "table" and rec.judge.system_fingerprints or {}) do
    copy[i] = tostring(v)
  end
  table.sort(copy)
  seen_fingerprints[rec] = table.concat(copy, ", ")
  return seen_fingerprints[rec]
end

-- What changed from record a to record b that makes metric's values unlike.
local function changes(a, b, metric)
  local out = {}
  local ja, jb = a.judge or {}, b.judge or {}
  if ja.model ~= jb.model then
    out[#out + 1] = ("judge %s -> %s"):format(tostring(ja.model or "none"), tostring(jb.model or "none"))
  elseif fingerprints(a) ~= fingerprints(b) and fingerprints(a) ~= "" and fingerprints(b) ~= "" then
    out[#out + 1] = ("judge fingerprint %s -> %s"):format(fingerprints(a), fingerprints(b))
  end
  local da, db = a.dataset and a.dataset.hash, b.dataset and b.dataset.hash
  if da and db and da ~= db then out[#out + 1] = ("data %s -> %s"):format(da:sub(1, 12), db:sub(1, 12)) end
  local ma, mb = a.metric_definitions, b.metric_definitions
  if ma and mb and ma[metric] and mb[metric] and ma[metric] ~= mb[metric] then
    out[#out + 1] = "definition of " .. metric
  end
  return out
end

-- The gates of the newest run on this metric and slice, one per threshold.
local function gates_of(rec, metric, dim, value)
  local out, seen = {}, {}
  for _, g in ipairs(rec.gates or {}) do
    if g.metric == metric and g.dim == dim and g.value == value and g.threshold and not seen[g.threshold] then
      seen[g.threshold] = true
      out[#out + 1] = g
    end
  end
  return out
end

local W, H, LEFT, RIGHT, TOP, BOTTOM = 620, 230, 44, 70, 22, 64
local PW, PH = W - LEFT - RIGHT, H - TOP - BOTTOM

-- What every chart of the dashboard shares, made once: the x of each run,
-- its escaped name, the labels under the x axis, and per metric the
-- markers where something changed.
local function axis_of(runs)
  local ax = { x = {}, xs = {}, names = {}, markers = {} }
  for i, rec in ipairs(runs) do
    ax.x[i] = #runs == 1 and LEFT + PW / 2 or LEFT + (i - 1) * PW / (#runs - 1)
    ax.xs[i], ax.names[i] = fmt(ax.x[i]), esc(rec.label or rec.run_id)
  end
  local labels, every = {}, math.max(1, math.ceil(#runs / 20))
  for i, rec in ipairs(runs) do
    if (#runs - i) % every == 0 then
      labels[#labels + 1] = ('<text class="label" transform="translate(%s,%d) rotate(30)">%s</text>')
        :format(ax.xs[i], TOP + PH + 12, esc(C.clip(rec.label or rec.time or rec.run_id, 14)))
    end
  end
  ax.labels = table.concat(labels)
  function ax.changes(metric)
    if ax.markers[metric] then return ax.markers[metric] end
    local out = {}
    for i = 2, #runs do
      local what = changes(runs[i - 1], runs[i], metric)
      if #what > 0 then
        local mx = fmt((ax.x[i - 1] + ax.x[i]) / 2)
        out[#out + 1] = ('<g class="change"><title>changed before %s: %s</title><line x1="%s" x2="%s" y1="%d" y2="%d"/>'
          .. '<text x="%s" y="%d">%s</text></g>'):format(ax.names[i], esc(table.concat(what, "; ")),
            mx, mx, TOP - 6, TOP + PH, mx, TOP - 9, esc(what[1]:match("^%S+")))
      end
    end
    ax.markers[metric] = table.concat(out)
    return ax.markers[metric]
  end
  return ax
end

-- One line chart: runs on x, a line and an interval band per system.
local function chart(runs, ax, systems, metric, dim, value, higher)
  local ymax = 1
  for _, rec in ipairs(runs) do
    for _, s in ipairs(systems) do
      local a = cell(rec, s, dim, value, metric)
      if a and (a.hi or a.mean or 0) > ymax then ymax = a.hi or a.mean end
    end
  end
  local function y(v) return TOP + PH - v / ymax * PH end
  local title = dim == "all" and metric or (metric .. " [" .. C.slice_label(dim, value) .. "]")
  local out = { ('<svg class="chart trend" role="img" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s across runs</title>')
    :format(W, H, W, H, esc(title)) }
  for k = 0, 4 do
    local v = ymax * k / 4
    out[#out + 1] = ('<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s"/><text class="tick" x="%d" y="%s">%s</text>')
      :format(LEFT, LEFT + PW, fmt(y(v)), fmt(y(v)), LEFT - 4, fmt(y(v) + 4), C.num(v, 2))
  end
  out[#out + 1] = ('<text class="tick mid" transform="translate(10,%d) rotate(-90)">mean</text>'):format(TOP + PH // 2)
  out[#out + 1] = ax.changes(metric)
  for _, g in ipairs(gates_of(runs[#runs], metric, dim, value)) do
    if g.threshold <= ymax then
      out[#out + 1] = ('<g class="gate"><line x1="%d" x2="%d" y1="%s" y2="%s"/><text x="%d" y="%s">gate %s %s</text></g>')
        :format(LEFT, LEFT + PW, fmt(y(g.threshold)), fmt(y(g.threshold)), LEFT + PW + 4, fmt(y(g.threshold) + 4),
                higher and "≥" or "≤", C.num(g.threshold, 2))
    end
  end
  local xs, names = ax.xs, ax.names
  for si, s in ipairs(systems) do
    local color, name = PALETTE[(si - 1) % #PALETTE + 1], esc(s)
    local upper, lower, line = {}, {}, {}
    for i, rec in ipairs(runs) do
      local a = cell(rec, s, dim, value, metric)
      if a and a.mean then
        local ym = fmt(y(a.mean))
        line[#line + 1] = xs[i] .. "," .. ym
        local band = a.lo and a.hi
        if band then
          upper[#upper + 1] = xs[i] .. "," .. fmt(y(a.hi))
          lower[#lower + 1] = xs[i] .. "," .. fmt(y(a.lo))
        end
        local ci = results.interval_text(a, C.num)
        out[#out + 1] = ('<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s, %s: %s%s</title></circle>')
          :format(xs[i], ym, color, name, names[i], C.num(a.mean), ci and " " .. ci or "")
      end
    end
    if #upper > 1 then
      local back = {}
      for k = #lower, 1, -1 do back[#back + 1] = lower[k] end
      out[#out + 1] = ('<polygon class="band" fill="%s" points="%s %s"/>')
        :format(color, table.concat(upper, " "), table.concat(back, " "))
    end
    if #line > 1 then
      out[#out + 1] = ('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'):format(color, table.concat(line, " "))
    end
  end
  out[#out + 1] = ax.labels
  out[#out + 1] = "</svg>"
  return table.concat(out)
end

local function legend(systems)
  local out = { '<div class="legend">' }
  for i, s in ipairs(systems) do
    out[#out + 1] = ('<span><i style="background:%s"></i>%s</span>'):format(PALETTE[(i - 1) % #PALETTE + 1], esc(s))
  end
  return table.concat(out) .. "</div>"
end

-- Metrics, systems and slice values of the runs shown, in first-seen order
-- from the newest run back.
local function union(runs, field)
  local out, seen = {}, {}
  for i = #runs, 1, -1 do
    for _, v in ipairs(runs[i][field] or {}) do
      if not seen[v] then seen[v], out[#out + 1] = true, v end
    end
  end
  return out
end

local function slices_of(runs, systems)
  local out, seen = {}, {}
  for i = #runs, 1, -1 do
    for _, s in ipairs(systems) do
      local dims = runs[i].aggregates and runs[i].aggregates[s] or {}
      local names = {}
      for d in pairs(dims) do names[#names + 1] = d end
      table.sort(names)
      for _, d in ipairs(names) do
        if d ~= "all" then
          local values = {}
          for v in pairs(dims[d]) do values[#values + 1] = v end
          table.sort(values)
          for _, v in ipairs(values) do
            local key = d .. "\0" .. v
            if not seen[key] and #out < MAX_VALUES then seen[key], out[#out + 1] = true, { dim = d, value = v } end
          end
        end
      end
    end
  end
  return out
end

-- A report's link: a relative path (from the history folder), or none.
-- Browsers drop leading spaces and control characters from a URL, skip
-- tabs and line breaks inside it and read "\" as "/", so " javascript:x",
-- "java\tscript:x" and "\\host" are refused with any scheme, absolute path
-- or control character; what is left is percent-encoded, so the href is
-- the path and nothing else.
local function href(link)
  if type(link) ~= "string" or link == "" or link:find("[%c\\]") or link:find("^[%s/]") then return nil end
  if link:match("^[^/]*"):find(":") then return nil end -- a scheme
  return (link:gsub("[^%w%-._~/]", function(c) return ("%%%02X"):format(c:byte()) end))
end

local function run_table(runs)
  local out = { "<table><tr><th>time</th><th>label</th><th>run id</th><th>commit</th><th>data</th><th>judge</th><th>report</th></tr>" }
  for i = #runs, 1, -1 do
    local r = runs[i]
    local url = href(r.report)
    local link = url and ('<a href="%s">%s</a>'):format(esc(url), esc(r.report:match("[^/]+/[^/]+$") or r.report)) or ""
    out[#out + 1] = ("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"):format(
      esc(r.time), esc(r.label), esc(r.run_id), esc(r.git_commit and r.git_commit:sub(1, 10)),
      esc(r.dataset and r.dataset.hash and r.dataset.hash:sub(1, 12)), esc(r.judge and r.judge.model), link)
  end
  return table.concat(out) .. "</table>"
end

local CSS = [[
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Noto Sans CJK JP","Noto Sans CJK KR","PingFang SC","Microsoft YaHei",sans-serif;margin:16px 24px;color:#222;max-width:1880px}
h1{font-size:22px}h2{font-size:17px;margin:20px 0 4px}table{border-collapse:collapse;margin:8px 0 16px}
td,th{border:1px solid #ddd;padding:3px 6px}th{background:#f4f4f4}.meta{color:#555}
.charts{display:flex;flex-wrap:wrap;gap:8px}.grid{stroke:#eee}.tick{font-size:10px;fill:#666;text-anchor:end}.tick.mid{text-anchor:middle}
.label{font-size:10px;fill:#333}.band{opacity:.15}.gate line{stroke:#c00;stroke-dasharray:5 3}.gate text{font-size:10px;fill:#c00}
.change line{stroke:#7a4;stroke-dasharray:2 2}.change text{font-size:10px;fill:#5a3;text-anchor:middle}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px}
details{margin:4px 0 12px}summary{cursor:pointer}
.metrics{display:grid;grid-template-columns:repeat(auto-fill,minmax(640px,1fr));gap:0 24px}.metric{min-width:0}
@media print{details::details-content{content-visibility:visible;display:block}svg{break-inside:avoid}}
]]

-- (records, opts) -> html, the number of invalid UTF-8 sequences replaced
return function(records, opts)
  opts = opts or {}
  replaced, counted = 0, {}
  local runs, total = records, math.max(opts.total or 0, #records)
  local title = opts.title or "Trend"
  local out = { "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
    "<title>" .. esc(title) .. "</title><style>" .. CSS .. "</style></head><body><h1>" .. esc(title) .. "</h1>" }
  if #runs == 0 then
    out[#out + 1] = "<p>No runs yet.</p></body></html>"
    return table.concat(out, "\n") .. "\n", replaced
  end
  local systems = union(runs, "systems")
  local shown = {}
  for i = 1, math.min(#systems, MAX_SYSTEMS) do shown[i] = systems[i] end
  out[#out + 1] = ('<p class="meta">%d runs%s, %s to %s. Bands: confidence intervals of the means; dashed red: the '
    .. 'newest run\'s gates; dotted green: the judge, the data set or the metric\'s definition changed (hover for what).%s</p>')
    :format(#runs, total > #runs and (" (the last %d of %d)"):format(#runs, total) or "", esc(runs[1].time),
            esc(runs[#runs].time), #systems > #shown and (" Charts show the first %d of %d systems."):format(#shown, #systems) or "")
  out[#out + 1] = legend(shown)
  local higher = {}
  for _, r in ipairs(runs) do
    for _, g in ipairs(r.gates or {}) do
      if g.metric and g.higher_is_better ~= nil then higher[g.metric] = g.higher_is_better end
    end
  end
  local slices, ax = slices_of(runs, shown), axis_of(runs)
  out[#out + 1] = '<div class="metrics">'
  for _, metric in ipairs(union(runs, "metrics")) do
    local up = higher[metric] ~= false
    out[#out + 1] = ('<section class="metric"><h2 id="%s">%s</h2>'):format(esc("m-" .. metric), esc(metric))
    out[#out + 1] = chart(runs, ax, shown, metric, "all", "all", up)
    if #slices > 0 then
      out[#out + 1] = '<details><summary>by slice</summary><div class="charts">'
      for _, sl in ipairs(slices) do out[#out + 1] = chart(runs, ax, shown, metric, sl.dim, sl.value, up) end
      out[#out + 1] = "</div></details>"
    end
    out[#out + 1] = "</section>"
  end
  out[#out + 1] = "</div><h2>Runs</h2>" .. run_table(runs) .. "</body></html>"
  return table.concat(out, "\n") .. "\n", replaced
end
