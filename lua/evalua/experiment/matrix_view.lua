-- ev.matrix_view: the side-by-side HTML view of a prompt matrix. One row per
-- test case, one column per cell (prompt x provider): the output, each
-- assertion's pass/fail and reason, the scores, latency and cost. Words an
-- output has that the first cell's output lacks are marked; two filters
-- (cases with a failing cell, cases whose cells disagree) are checkboxes
-- and CSS, so the page is self-contained and runs no script at all. Above
-- the columns, each cell's prompt: its name and template text, folded
-- when long, with the words the first cell's template lacks marked too.
-- The table takes the window's whole width.
--
--   local out = ev.generate(ds, {...})
--   local res = ev.evaluate(out, { metrics = {...}, system = "system" })
--   ev.matrix_view.write(res, "out/matrix.html", { title = "...", assertions = "assertions" })
local options = require "evalua.core.options"
local sys = require "evalua._sys"

local M = {}

local function esc(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                                         ["'"] = "&#39;" }))
end

local CSS = [[
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.4em;vertical-align:top;text-align:left}
table.matrix{width:100%}table.matrix td.cell{min-width:16em;overflow-wrap:anywhere}
td.case{min-width:12em;width:14em;background:#fafafa;overflow-wrap:break-word}
th.prompt{font-weight:normal;background:#f4f6fa}th.prompt pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0 0;
font:12px/1.35 ui-monospace,monospace}th.prompt summary{cursor:pointer;color:#444}
td.pass{border-top:4px solid #2a7}td.fail{border-top:4px solid #c33}td.open{border-top:4px solid #aaa}
.answer{white-space:pre-wrap}mark{background:#fe8}.error{color:#c33}
ul.asserts{list-style:none;padding:0;margin:.4em 0}li.pass::before{content:"\2713  ";color:#2a7}
li.fail::before{content:"\2717  ";color:#c33}li.open::before{content:"?  ";color:#888}
.small{color:#666;font-size:12px}label{margin-right:1.5em}
#only-failing:checked~table.matrix tr.case:not(.failing){display:none}
#only-disagree:checked~table.matrix tr.case:not(.disagree){display:none}
]]

local function field(ds, k, key)
  local v, kind = ds.table:get(k, key)
  if kind == "json" then return ds.rows[k][key] end
  return v
end

local function word_set(s)
  local set = {}
  for w in (s or ""):gmatch("%S+") do set[w] = true end
  return set
end

-- The answer with the words the reference lacks marked.
local function marked(answer, ref)
  if not ref then return esc(answer) end
  return (answer:gsub("%S+", function(w)
    if ref[w] then return esc(w) end
    return "<mark>" .. esc(w) .. "</mark>"
  end))
end

local function verdict_class(score) return score == nil and "open" or score >= 1 and "pass" or "fail" end

local function assertion_list(detail)
  local list = type(detail) == "table" and detail.assertions
  if type(list) ~= "table" or #list == 0 then return "" end
  local out = { '<ul class="asserts">' }
  for _, a in ipairs(list) do
    local cls = a.pass == true and "pass" or a.pass == false and "fail" or "open"
    out[#out + 1] = ('<li class="%s">%s: %s</li>'):format(cls, esc(a.name), esc(a.reason))
  end
  out[#out + 1] = "</ul>"
  return table.concat(out)
end

local function scores_line(res, k, skip)
  local parts = {}
  for j, m in ipairs(res.metrics) do
    if j ~= skip then
      local s = res.scores:get(k, j)
      parts[#parts + 1] = ("%s %s"):format(esc(m.name), s and ("%.3f"):format(s) or "–")
    end
  end
  return table.concat(parts, " · ")
end

-- "320 ms · $0.00012", or for an answer from the cache "cached, 320 ms ·
-- $0.00012 when asked": the figures are those of when it was asked.
local function cost_line(ds, k)
  local lat, cost, cached = field(ds, k, "latency_ms"), field(ds, k, "cost"), field(ds, k, "cached") == true
  local parts = {}
  if type(lat) == "number" then parts[#parts + 1] = ("%.0f ms"):format(lat)
  elseif cached then parts[#parts + 1] = "latency not recorded" end -- cached by an older version
  if type(cost) == "number" then parts[#parts + 1] = ("$%.5f"):format(cost) end
  if not cached then return table.concat(parts, " · ") end
  return "cached, " .. table.concat(parts, " · ") .. " when asked"
end

local function metric_index(res, name)
  for j, m in ipairs(res.metrics) do
    if m.name == name then return j end
  end
  return nil
end

-- Where each cell's output of each case is: at[system][line] = row, where
-- line is the input row's line (one per test case); cases in first-seen order.
local function layout(ds, cells)
  local at, cases, seen = {}, {}, {}
  for _, cell in ipairs(cells) do at[cell.system] = {} end
  for k = 1, ds.n do
    local per, line = at[field(ds, k, "system")], ds.table:line(k)
    if per then
      if not seen[line] then seen[line], cases[#cases + 1] = true, { line = line, k = k } end
      per[line] = k
    end
  end
  return at, cases
end

-- One test case: its cells' outputs side by side.
local function case_row(res, case, at, cells, aj)
  local ds, tds = res.dataset, {}
  local ref, verdicts, failing = nil, {}, false
  for c = 1, #cells do
    local k = at[cells[c].system][case.line]
    if not k then
      tds[c] = '<td class="cell open"><div class="error">not in these results</div></td>'
      goto next
    end
    local answer, err = field(ds, k, "answer"), field(ds, k, "output_error")
    local score = aj and res.scores:get(k, aj)
    local cls = verdict_class(score)
    verdicts[cls] = true
    failing = failing or cls == "fail"
    local body = err and ('<div class="error">no output: %s</div>'):format(esc(err))
      or ('<div class="answer">%s</div>'):format(marked(answer or "", ref))
    if c == 1 then ref = word_set(answer) end
    local detail = aj and res.details[res.metrics[aj].name]
    tds[c] = ('<td class="cell %s">%s%s<div class="small">%s</div><div class="small">%s</div></td>')
      :format(cls, body, assertion_list(detail and detail[k]), scores_line(res, k, aj), cost_line(ds, k))
    ::next::
  end
  local classes = "case" .. (failing and " failing" or "") .. ((verdicts.pass and verdicts.fail) and " disagree" or "")
  local id, query = field(ds, case.k, res.id_field or "qid"), field(ds, case.k, "query")
  return ('<tr class="%s"><td class="case"><b>%s</b><div>%s</div></td>%s</tr>')
    :format(classes, esc(id or ("line " .. case.line)), esc(query or ""), table.concat(tds))
end

local function summary(res, cells, aj)
  local out = { "<table><tr><th>cell</th><th>cases</th>" }
  for _, m in ipairs(res.metrics) do out[#out + 1] = "<th>" .. esc(m.name) .. "</th>" end
  out[#out + 1] = "</tr>"
  for _, cell in ipairs(cells) do
    out[#out + 1] = ("<tr><td>%s</td><td>%d</td>"):format(esc(cell.system), res:agg(cell.system, res.metrics[1].name).n)
    for _, m in ipairs(res.metrics) do
      local a = res:agg(cell.system, m.name)
      out[#out + 1] = ("<td>%s%s</td>"):format(a.mean and ("%.3f"):format(a.mean) or "–",
        a.measured < a.n and (" (%d/%d)"):format(a.measured, a.n) or "")
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</table>"
  if aj then out[#out + 1] = "<p>" .. esc(res.metrics[aj].name) .. ": the share of cases passing every assertion.</p>" end
  return table.concat(out)
end

-- A template longer than this is folded under its first line.
local FOLD_LINES, FOLD_CHARS = 12, 1000

local function prompt_text(text, ref)
  local body = marked(text, ref)
  local lines = select(2, text:gsub("\n", "")) + 1
  if lines <= FOLD_LINES and #text <= FOLD_CHARS then return "<pre>" .. body .. "</pre>" end
  return ("<details><summary>%s … (%d lines)</summary><pre>%s</pre></details>")
    :format(esc(text:match("^[^\n]*"):sub(1, 80)), lines, body)
end

-- The header row of prompts: each column's prompt name and template text.
local function prompt_row(cells)
  if not cells[1] or type(cells[1].template) ~= "string" then return "" end -- an older ev.generate's cells
  local out, ref = { '<tr class="prompts"><th class="prompt">prompt</th>' }, nil
  for _, cell in ipairs(cells) do
    out[#out + 1] = ('<th class="prompt"><b>%s</b>%s</th>'):format(esc(cell.prompt), prompt_text(cell.template, ref))
    ref = ref or word_set(cell.template)
  end
  out[#out + 1] = "</tr>"
  return table.concat(out)
end

-- The case column, then the cells sharing the rest of the width evenly
-- (each at least 16em: past the window's width, the page scrolls).
local function columns(n)
  local out = { '<colgroup><col>' }
  for _ = 1, n do out[#out + 1] = ('<col style="width:%.3f%%">'):format(100 / n) end
  out[#out + 1] = "</colgroup>"
  return table.concat(out)
end

local KNOWN = options.set { "title", "assertions" }

-- html(res [, opts]) -> the page; res must come from ev.evaluate over the
-- output of ev.generate with system = "system".
function M.html(res, opts)
  opts = opts or {}
  options.check(opts, KNOWN, "ev.matrix_view", 3)
  local cells = res.dataset and res.dataset.cells
  if type(cells) ~= "table" then
    error("ev.matrix_view: the results are not of an ev.generate output (no cells)", 3)
  end
  local at, cases = layout(res.dataset, cells)
  local aj = metric_index(res, opts.assertions or "assertions")
  local title = opts.title or "Prompt matrix"
  local out = { "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
    "<title>" .. esc(title) .. "</title><style>" .. CSS .. "</style></head><body>",
    "<h1>" .. esc(title) .. "</h1>",
    ("<p>%d cases x %d cells. Marked words: not in the first cell's output (or prompt).</p>"):format(#cases, #cells),
    summary(res, cells, aj),
    '<input type="checkbox" id="only-failing"><label for="only-failing">only cases with a failing cell</label>',
    '<input type="checkbox" id="only-disagree"><label for="only-disagree">only cases whose cells disagree</label>',
    '<table class="matrix">', columns(#cells), '<thead><tr><th>case</th>' }
  for _, cell in ipairs(cells) do out[#out + 1] = "<th>" .. esc(cell.system) .. "</th>" end
  out[#out + 1] = "</tr>" .. prompt_row(cells) .. "</thead><tbody>"
  for _, case in ipairs(cases) do out[#out + 1] = case_row(res, case, at, cells, aj) end
  out[#out + 1] = "</tbody></table></body></html>\n"
  return table.concat(out)
end

-- write(res, path [, opts]) -> path, written atomically.
function M.write(res, path, opts)
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then sys.mkdir(dir) end
  local ok, err = sys.write_atomic(path, M.html(res, opts))
  if not ok then error("ev.matrix_view: cannot write " .. tostring(err), 2) end
  return path
end

return M
