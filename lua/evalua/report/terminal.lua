-- Terminal report: aligned tables, a line per system and slice, a column
-- per metric. Colour (opts.color) only marks the worst slice of each metric
-- in red; without colour the worst slice carries a "!" instead.
-- opts.width fits the output to that many columns: metric columns that do
-- not fit move to another table (system, slice and n repeated in each) and
-- long lines of text wrap at spaces. Without it nothing is cut (a file).
local C = require "evalua.report.common"
local sys = require "evalua._sys"

local RED, RESET = "\27[31m", "\27[0m"

local M = {}

-- Display width: East Asian wide characters take two columns.
local function width(s)
  local w = 0
  for _, cp in utf8.codes(s) do
    local wide = (cp >= 0x1100 and cp <= 0x115F) or (cp >= 0x2E80 and cp <= 0xA4CF)
      or (cp >= 0xAC00 and cp <= 0xD7A3) or (cp >= 0xF900 and cp <= 0xFAFF)
      or (cp >= 0xFE30 and cp <= 0xFE4F) or (cp >= 0xFF00 and cp <= 0xFF60)
      or (cp >= 0xFFE0 and cp <= 0xFFE6) or (cp >= 0x20000 and cp <= 0x3FFFD)
    w = w + (wide and 2 or 1)
  end
  return w
end

local function pad(s, n, right)
  local fill = (" "):rep(math.max(0, n - width(s)))
  return right and (fill .. s) or (s .. fill)
end

-- Whether stdout may carry colour: a terminal, TERM not dumb, NO_COLOR unset.
function M.color_ok()
  return sys.terminal("stdout").color
end

-- The width print fits to: $COLUMNS, else the terminal's; nil for a file.
function M.columns()
  return sys.terminal("stdout").columns
end

-- Appends line to out, broken at spaces into lines of at most w columns
-- (a word longer than w stays whole); continuation lines are indented two
-- more than the line itself.
local function wrap(out, line, w)
  if not w or width(line) <= w then out[#out + 1] = line; return end
  local lead = line:match("^ *")
  local cur, fresh = lead, true -- fresh: cur holds only its indentation
  for word in line:gmatch("%S+") do
    if not fresh and width(cur) + 1 + width(word) > w then
      out[#out + 1] = cur
      cur, fresh = lead .. "  ", true
    end
    cur, fresh = cur .. (fresh and "" or " ") .. word, false
  end
  out[#out + 1] = cur
end

local function cell(res, line, metric)
  local a = res:agg(line.system, metric.name, line.dim, line.value)
  local text = C.num(a and a.mean)
  local cov = C.coverage(a)
  if cov then text = text .. " (" .. cov .. ")" end
  local worst = C.is_worst(res, line.system, metric.name, line.dim, line.value)
  return text, worst
end

-- The table's cells: header, rows (texts) and flags (worst slice), columns
-- 1-3 the keys (system, slice, n), then one per metric.
local function cells(res, opts)
  local header = { "system", "slice", "n" }
  for _, m in ipairs(res.metrics) do header[#header + 1] = m.name end
  local rows, flags = {}, {}
  for _, line in ipairs(C.lines(res)) do
    local first = res:agg(line.system, res.metrics[1].name, line.dim, line.value)
    local r, f = { line.system, line.label, tostring(first and first.n or 0) }, {}
    for _, m in ipairs(res.metrics) do
      local text, worst = cell(res, line, m)
      if worst and not opts.color then text = text .. "!" end
      r[#r + 1], f[#r + 1] = text, worst
    end
    rows[#rows + 1], flags[#rows + 1] = r, f
  end
  local widths = {}
  for i, h in ipairs(header) do
    widths[i] = width(h)
    for _, r in ipairs(rows) do widths[i] = math.max(widths[i], width(r[i])) end
  end
  return header, rows, flags, widths
end

-- The metric columns in groups that fit w beside the keys (each group at
-- least one column); one group of all when w is nil.
local function groups(widths, w)
  local keys = widths[1] + widths[2] + widths[3] + 4
  local out, cur, used = {}, {}, keys
  for i = 4, #widths do
    if w and #cur > 0 and used + 2 + widths[i] > w then out[#out + 1], cur, used = cur, {}, keys end
    cur[#cur + 1], used = i, used + 2 + widths[i]
  end
  if #cur > 0 then out[#out + 1] = cur end
  return out
end

local function table_lines(out, header, rows, flags, widths, cols, opts)
  local function emit(r, f, is_header)
    local parts = {}
    for _, i in ipairs(cols) do
      local s = pad(r[i], widths[i], i >= 3)
      if f and f[i] and opts.color then s = RED .. s .. RESET end
      parts[#parts + 1] = s
    end
    out[#out + 1] = (table.concat(parts, "  "):gsub("%s+$", ""))
    if is_header then
      local rule = {}
      for k, i in ipairs(cols) do rule[k] = ("-"):rep(widths[i]) end
      out[#out + 1] = table.concat(rule, "  ")
    end
  end
  emit(header, nil, true)
  local last
  for i, r in ipairs(rows) do
    if last and r[1] ~= last then out[#out + 1] = "" end
    last = r[1]
    emit(r, flags[i])
  end
end

local function comparison_lines(res, add)
  local cmp = res.comparison
  add("")
  add(("compared with %s:"):format(cmp.baseline.label or cmp.baseline.run_id))
  for _, r in ipairs(cmp.rows) do
    if r.dim == "all" and r.delta then
      add(("  %-14s %-18s %s -> %s  %s %+.3f%s"):format(r.system, r.metric, C.num(r.before),
        C.num(r.after), r.arrow, r.delta, r.p and ("  p=%.4f%s"):format(r.p, r.regression and " REGRESSION" or "") or ""))
    end
  end
  for _, system in ipairs(res.systems) do
    for _, m in ipairs(res.metrics) do
      local f = cmp.flips[system] and cmp.flips[system][m.name]
      if f and #f.to_fail + #f.to_pass > 0 then
        local which = #f.to_fail > 0 and (" (" .. C.clip(table.concat(f.to_fail, ", "), 60) .. ")") or ""
        add(("  %s %s: %d went from pass to fail%s, %d from fail to pass"):format(system, m.name,
          #f.to_fail, which, #f.to_pass))
      end
    end
  end
end

local function systems_lines(sc, add)
  add("")
  -- the means are the pairs', which can differ from the table's means over all measured items
  add(("systems against %s (paired by id, permutation test, alpha %s; means over the n items both measured):")
    :format(sc.baseline, sc.alpha))
  local ws, wm = 0, 0
  for _, r in ipairs(sc.rows) do ws, wm = math.max(ws, width(r.system)), math.max(wm, width(r.metric)) end
  for _, r in ipairs(sc.rows) do
    add(("  %s  %s  %s -> %s  %s %s  n=%d%s%s"):format(pad(r.system, ws), pad(r.metric, wm), C.num(r.base),
      C.num(r.mean), r.arrow, r.delta and ("%+.3f"):format(r.delta) or "-", r.n, r.p and ("  p=%.4f"):format(r.p) or "",
      r.better and "  better" or r.worse and "  WORSE" or ""))
  end
end

function M.render(res, opts)
  local w = math.tointeger(opts.width)
  if opts.width ~= nil and not (w and w > 0) then
    error("terminal report: width must be a positive whole number of columns", 2)
  end
  local out = {}
  local function add(line) wrap(out, line, w) end
  for _, l in ipairs(C.meta_lines(res)) do add(l) end
  for _, warn in ipairs(C.warnings(res)) do add("warning: " .. warn) end
  for _, n in ipairs(C.notices(res)) do
    local head = n.kind == "judge_failed" and ("*** " .. n.title:upper() .. " ***") or (n.title .. ":")
    out[#out + 1] = opts.color and n.kind == "judge_failed" and (RED .. head .. RESET) or head
    for _, l in ipairs(n.lines) do add("  " .. l) end
  end
  local header, rows, flags, widths = cells(res, opts)
  for _, metrics in ipairs(groups(widths, w)) do
    out[#out + 1] = ""
    table_lines(out, header, rows, flags, widths, table.move(metrics, 1, #metrics, 4, { 1, 2, 3 }), opts)
  end
  out[#out + 1] = ""
  add(opts.color and "worst slice of each metric in red" or "! marks the worst slice of each metric")
  for _, u in ipairs(C.unmeasured(res)) do
    add(("%s: %d of %d items unmeasured (%s)"):format(u.metric, u.count, u.total, C.why_unmeasured(u)))
  end
  if res.comparison then comparison_lines(res, add) end
  local sc = res.system_comparison
  if sc and #sc.rows > 0 then systems_lines(sc, add) end
  for _, g in ipairs(res.gates or {}) do
    add(("gate %-9s %s: %s"):format(g.status, g.name, g.message))
  end
  if #res.skipped > 0 then
    add(("%d input rows skipped (lenient mode); see the Markdown or JSON report"):format(#res.skipped))
  end
  return table.concat(out, "\n") .. "\n"
end

return M
