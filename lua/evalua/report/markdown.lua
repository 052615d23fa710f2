-- Markdown report, for pull requests and wikis: summary with confidence
-- intervals, a table per slice dimension, worst slices, the lowest items with
-- the judge's reasons, unmeasured counts and skipped input rows.
local C = require "evalua.report.common"
local results = require "evalua.eval.results"

-- Table cells: one line, pipes escaped, and no raw HTML from the data.
local function esc(s)
  s = tostring(s or "")
  if not s:find("[\r\n|<>&\\`*_%[%]]") then return s end
  s = s:gsub("[\r\n]+", " ")
  return (s:gsub("[|<>&\\`*_%[%]]", function(c)
    if c == "<" then return "&lt;" elseif c == ">" then return "&gt;" elseif c == "&" then return "&amp;" end
    return "\\" .. c
  end))
end

local function mean_ci(a)
  if not a or not a.mean then return "-" end
  local s = C.num(a.mean)
  local ci = results.interval_text(a, C.num)
  if ci then s = s .. " " .. ci end
  local cov = C.coverage(a)
  if cov then s = s .. " (" .. cov .. ")" end
  return s
end

-- align: one letter per column, "l" or "r" (default: two left, then right).
local function table_rows(out, header, rows, align)
  out[#out + 1] = "| " .. table.concat(header, " | ") .. " |"
  local rule = {}
  for i = 1, #header do
    local a = align and align:sub(i, i) or (i <= 2 and "l" or "r")
    rule[i] = a == "r" and "---:" or "---"
  end
  out[#out + 1] = "| " .. table.concat(rule, " | ") .. " |"
  for _, r in ipairs(rows) do out[#out + 1] = "| " .. table.concat(r, " | ") .. " |" end
  out[#out + 1] = ""
end

local function metric_header(res, first)
  local h = first
  for _, m in ipairs(res.metrics) do h[#h + 1] = esc(m.name) end
  return h
end

local function summary(res, out)
  out[#out + 1] = "## Summary"
  out[#out + 1] = ""
  local rows = {}
  for _, system in ipairs(res.systems) do
    local r = { esc(system), tostring(res:agg(system, res.metrics[1].name).n) }
    for _, m in ipairs(res.metrics) do r[#r + 1] = mean_ci(res:agg(system, m.name)) end
    rows[#rows + 1] = r
  end
  table_rows(out, metric_header(res, { "system", "n" }), rows)
  local note = results.ci_note(res)
  if note then
    out[#out + 1] = ("Means with %s; (m/n) means only m of n items could be measured."):format(esc(note))
    out[#out + 1] = ""
  end
end

local function by_dimension(res, out)
  for _, d in ipairs(res.dims) do
    if d ~= "all" then
      out[#out + 1] = "## By " .. esc(d)
      out[#out + 1] = ""
      local rows = {}
      for _, system in ipairs(res.systems) do
        for _, v in ipairs(res:values_of(system, d)) do
          local r = { esc(system), esc(v) .. " (" .. res:agg(system, res.metrics[1].name, d, v).n .. ")" }
          for _, m in ipairs(res.metrics) do
            local s = mean_ci(res:agg(system, m.name, d, v))
            if C.is_worst(res, system, m.name, d, v) then s = "**" .. s .. "** ▼" end
            r[#r + 1] = s
          end
          rows[#rows + 1] = r
        end
      end
      table_rows(out, metric_header(res, { "system", esc(d) }), rows)
    end
  end
  out[#out + 1] = "▼ marks the worst slice of each metric for each system."
  out[#out + 1] = ""
end

local function bottom(res, out)
  out[#out + 1] = "## Lowest items"
  out[#out + 1] = ""
  out[#out + 1] = "Items under the metric's threshold (or, without one, under the system's mean), and unmeasured ones."
  out[#out + 1] = ""
  for _, system in ipairs(res.systems) do
    for _, m in ipairs(res.metrics) do
      local list = C.lowest(res, system, m)
      if #list > 0 then
        out[#out + 1] = ("### %s: %s"):format(esc(system), esc(m.name))
        out[#out + 1] = ""
        local rows = {}
        for _, b in ipairs(list) do
          rows[#rows + 1] = { esc(b.id), C.num(b.score), esc(C.clip(b.query, 60)), esc(C.clip(b.answer, 80)),
                              esc(C.clip(b.reason, 100)) }
        end
        table_rows(out, { "id", "score", "query", "answer", "reason" }, rows, "lrlll")
      end
    end
  end
end

local function gates(res, out)
  if not res.gates or #res.gates == 0 then return end
  out[#out + 1] = "## Gates"
  out[#out + 1] = ""
  local rows = {}
  for _, g in ipairs(res.gates) do
    local mark = g.status == "pass" and "pass" or g.status == "fail" and "**FAIL**" or "**undecided**"
    rows[#rows + 1] = { esc(g.system or ""), esc(g.name), mark, esc(g.message) }
  end
  table_rows(out, { "system", "gate", "status", "detail" }, rows, "llll")
end

local function comparison(res, out)
  local cmp = res.comparison
  if not cmp then return end
  out[#out + 1] = ("## Compared with %s (%s)"):format(esc(cmp.baseline.label or cmp.baseline.run_id), esc(cmp.baseline.time))
  out[#out + 1] = ""
  local rows = {}
  for _, r in ipairs(cmp.rows) do
    if r.delta then
      rows[#rows + 1] = { esc(r.system), esc(C.slice_label(r.dim, r.value)), esc(r.metric), C.num(r.before),
        C.num(r.after), r.arrow .. " " .. C.num(r.delta), results.paired_text(r, C.num), r.p and C.num(r.p, 4) or "-",
        r.regression and "**regression**" or (r.significant and "significant" or "") }
    end
  end
  table_rows(out, { "system", "slice", "metric", "before", "after", "delta", "interval", "p", "" }, rows, "lllrrrrrl")
  local note = results.paired_note(cmp.rows)
  out[#out + 1] = ("%sp: paired permutation test on items matched by id; significant when p < %s.")
    :format(note and esc(note) .. "; " or "", cmp.alpha)
  out[#out + 1] = ""
  for _, system in ipairs(res.systems) do
    for _, m in ipairs(res.metrics) do
      local f = cmp.flips[system] and cmp.flips[system][m.name]
      if f and (#f.to_fail > 0 or #f.to_pass > 0) then
        out[#out + 1] = ("- %s %s (pass at %s): pass to fail: %s; fail to pass: %s"):format(esc(system),
          esc(m.name), f.threshold, #f.to_fail > 0 and esc(table.concat(f.to_fail, ", ")) or "none",
          #f.to_pass > 0 and esc(table.concat(f.to_pass, ", ")) or "none")
      end
    end
  end
  out[#out + 1] = ""
end

local function systems(res, out)
  local sc = res.system_comparison
  if not sc or #sc.rows == 0 then return end
  out[#out + 1] = "## Systems against " .. esc(sc.baseline)
  out[#out + 1] = ""
  local rows = {}
  for _, r in ipairs(sc.rows) do
    rows[#rows + 1] = { esc(r.system), esc(r.metric), tostring(r.n), C.num(r.base), C.num(r.mean),
      r.arrow .. " " .. C.num(r.delta), results.paired_text(r, C.num), r.p and C.num(r.p, 4) or "-",
      r.worse and "**worse**" or (r.better and "better" or "") }
  end
  table_rows(out, { "system", "metric", "paired", esc(sc.baseline), "system", "delta", "interval", "p", "" }, rows,
             "llrrrrrrl")
  local note = results.paired_note(sc.rows)
  out[#out + 1] = ("Means over the items both systems measured (matched by id); %sp: paired permutation test, "
    .. "significant when p < %s."):format(note and esc(note) .. "; " or "", sc.alpha)
  out[#out + 1] = ""
end

local function problems(res, out)
  local u = C.unmeasured(res)
  if #u > 0 then
    out[#out + 1] = "## Unmeasured"
    out[#out + 1] = ""
    local rows = {}
    for _, x in ipairs(u) do rows[#rows + 1] = { esc(x.metric), ("%d of %d"):format(x.count, x.total), esc(x.reason) } end
    table_rows(out, { "metric", "items", "most common reason" }, rows, "lrl")
  end
  if #res.skipped > 0 then
    out[#out + 1] = "## Skipped input rows"
    out[#out + 1] = ""
    local rows = {}
    for _, s in ipairs(res.skipped) do rows[#rows + 1] = { tostring(s.line), esc(s.error) } end
    table_rows(out, { "line", "problem" }, rows, "rl")
  end
end

return function(res, opts)
  local out = { "# " .. esc(opts.title or "Evaluation report"), "" }
  for _, l in ipairs(C.meta_lines(res)) do out[#out + 1] = "- " .. esc(l) end
  out[#out + 1] = ""
  for _, w in ipairs(C.warnings(res)) do
    out[#out + 1] = "> **Warning:** " .. esc(w)
    out[#out + 1] = ""
  end
  for _, n in ipairs(C.notices(res)) do
    out[#out + 1] = ("> **%s.**"):format(esc(n.title))
    out[#out + 1] = ">"
    for _, l in ipairs(n.lines) do out[#out + 1] = "> - " .. esc(l) end
    out[#out + 1] = ""
  end
  gates(res, out)
  comparison(res, out)
  systems(res, out)
  summary(res, out)
  by_dimension(res, out)
  bottom(res, out)
  problems(res, out)
  return table.concat(out, "\n")
end
