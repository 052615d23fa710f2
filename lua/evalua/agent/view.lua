-- The trajectory view (docs/agents.md): for each conversation of the
-- results, each step (the message, its tool calls with their arguments,
-- the tool's answer) and where it left the reference: calls the expected
-- calls do not hold, calls whose arguments differ from the expected call's,
-- expected calls never made, failed calls (tool_errors). A fragment of the
-- HTML report (ev.agent.view.attach(res)) or a page of its own
-- (ev.agent.view.write(res, path)); self-contained, no script.
local data = require "evalua.agent.data"
local tool_correctness = require "evalua.agent.tool_correctness"
local json = require "evalua.judge.json"
local options = require "evalua.core.options"
local sys = require "evalua._sys"

local M = {}

local function esc(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                                         ["'"] = "&#39;" }))
end

local function clip(s, n)
  if #s <= n then return s end
  local cut = n
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xC0 == 0x80 do cut = cut - 1 end
  return s:sub(1, cut) .. "…"
end

local function args_text(a)
  if a == nil then return "" end
  if next(a) == nil then return "{}" end
  return json.encode(a)
end

M.CSS = [[
.traj details{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:0 10px}.traj summary{cursor:pointer;padding:6px 0}
.traj table{border-collapse:collapse;width:100%}.traj td,.traj th{border:1px solid #e4e4e4;padding:3px 6px;vertical-align:top;text-align:left}
.traj td.msg{white-space:pre-wrap;word-break:break-word;max-width:640px}.traj code{white-space:pre-wrap;word-break:break-all}
.traj .left{background:#fde2e1}.traj .part{background:#fff4d6}.traj .ok{color:#2a7}.traj .mark{font-size:12px;color:#8a1c1c}
.traj .small{font-size:12px;color:#555}.traj .off{color:#888}
#traj-left:checked~div.conv:not(.left){display:none}
]]

-- Where the calls left the expected ones: marks[position] = text, and the
-- expected calls no call met.
local function compare(calls, expected)
  if not expected then return {}, {} end
  local o = tool_correctness.options { evaluation_params = { "input_parameters" } }
  local r = tool_correctness.compute(calls, expected, o)
  local marks, met = {}, {}
  -- the pairing by name alone, then each pair's arguments
  local by_name = tool_correctness.compute(calls, expected, tool_correctness.options {})
  for _, m in ipairs(by_name.matches or {}) do
    local e, c = expected[m[1]], calls[m[2]]
    met[m[1]] = true
    local share = c.arguments and tool_correctness.share(e.arguments, c.arguments) or 0
    if share < 1 then marks[c.position] = { cls = "part", text = "arguments differ from the expected " .. args_text(e.arguments) } end
    marks[c.position] = marks[c.position] or { cls = "ok", text = "as expected" }
  end
  for _, c in ipairs(calls) do
    marks[c.position] = marks[c.position] or { cls = "left", text = "not an expected call" }
  end
  local missing = {}
  for i, e in ipairs(expected) do
    if not met[i] then missing[#missing + 1] = e end
  end
  return marks, missing, r.score
end
M.compare = compare -- also marks the steps of evalua view's trajectory (lua/evalua/view/trajectory.lua)

local function step_rows(p, marks, errors)
  local out, names = {}, {}
  local at = {}
  for _, c in ipairs(p.messages.calls) do at[c.message] = at[c.message] or {}; table.insert(at[c.message], c) end
  for m, msg in ipairs(p.messages.messages) do
    local text = data.text(msg.content)
    if msg.role == "assistant" and at[m] then
      if text:find("%S") then out[#out + 1] = ("<tr><td>%d</td><td>assistant</td><td class=msg>%s</td><td></td></tr>"):format(m, esc(text)) end
      for _, c in ipairs(at[m]) do
        names[c.id or ""] = c.name
        local mark = marks[c.position]
        local err = c.id and errors[c.id]
        local args = c.arguments and args_text(c.arguments) or (tostring(c.raw) .. " (not JSON)")
        out[#out + 1] = ('<tr class="%s"><td>%d</td><td>call</td><td class=msg><b>%s</b> <code>%s</code></td><td class=mark>%s%s</td></tr>')
          :format(err and "left" or mark and mark.cls or "", m, esc(c.name), esc(args), mark and esc(mark.text) or "",
            err and (" · failed: " .. esc(err)) or "")
      end
    elseif msg.role == "tool" then
      out[#out + 1] = ('<tr><td>%d</td><td>tool <span class=small>%s</span></td><td class=msg>%s</td><td></td></tr>')
        :format(m, esc(names[msg.tool_call_id] or msg.tool_call_id or ""), esc(clip(text, 600)))
    else
      out[#out + 1] = ('<tr><td>%d</td><td>%s</td><td class="msg%s">%s</td><td></td></tr>')
        :format(m, esc(msg.role), msg.role == "system" and " off" or "", esc(clip(text, 1200)))
    end
  end
  return table.concat(out)
end

local function scores_line(res, i)
  local parts = {}
  for j, m in ipairs(res.metrics) do
    local s = res.scores:get(i, j)
    parts[#parts + 1] = ("%s %s"):format(esc(m.name), s and ("%.3f"):format(s) or "–")
  end
  return table.concat(parts, " · ")
end

local function conversation(res, i)
  local row = res.dataset.rows[i]
  local p = data.row(row)
  if not (p and p.messages) then return nil end
  local marks, missing, score = compare(p.messages.calls, p.expected)
  local left = #missing > 0 or row.tool_errors ~= nil
  for _, m in pairs(marks) do left = left or m.cls ~= "ok" end
  local system = res.systems[res.sys_codes:get(i)]
  local head = ("<b>%s</b> · %s%s · %d messages%s%s"):format(esc(res:id(i) or i), esc(system),
    row.scenario and (" · " .. esc(row.scenario)) or "", #p.messages.messages,
    row.stop_reason and (" · stopped: " .. esc(row.stop_reason)) or "",
    left and ' · <span class=mark>left the reference</span>' or (p.expected and " · <span class=ok>as expected</span>" or ""))
  local out = { ('<div class="conv%s"><details><summary>%s</summary>'):format(left and " left" or "", head),
                ("<div class=small>%s</div>"):format(scores_line(res, i)) }
  if row.output_error then out[#out + 1] = ("<p class=mark>no output: %s</p>"):format(esc(row.output_error)) end
  out[#out + 1] = "<table><tr><th>#</th><th>step</th><th>message, or call and arguments</th><th>against the reference</th></tr>"
  out[#out + 1] = step_rows(p, marks, p.errors)
  out[#out + 1] = "</table>"
  if #missing > 0 then
    local list = {}
    for k, e in ipairs(missing) do list[k] = ("<b>%s</b> <code>%s</code>"):format(esc(e.name), esc(args_text(e.arguments))) end
    out[#out + 1] = "<p class=mark>expected, never called: " .. table.concat(list, "; ") .. "</p>"
  end
  if score then out[#out + 1] = ("<p class=small>expected calls met, arguments counted: %.3f</p>"):format(score) end
  out[#out + 1] = "</details></div>"
  return table.concat(out), left
end

local KNOWN = options.set { "limit" }

-- fragment(res [, {limit = 500}]) -> the view's HTML (a <section>).
function M.fragment(res, opts)
  opts = opts or {}
  options.check(opts, KNOWN, "ev.agent.view", 3)
  local limit = opts.limit or 500
  local parts, shown, left = {}, 0, 0
  for i = 1, res.n do
    if shown >= limit then break end
    local html, l = conversation(res, i)
    if html then
      parts[#parts + 1] = html
      shown, left = shown + 1, left + (l and 1 or 0)
    end
  end
  local more = 0
  for i = shown + 1, res.n do if res.dataset.rows[i].messages ~= nil then more = more + 1 end end
  return table.concat {
    '<section class="traj"><h2>Trajectories</h2><style>', M.CSS, "</style>",
    ("<p>%d conversations%s; %d left the reference (a call not expected, other arguments, an expected call never made, "
      .. "or a failed call). Red: left; yellow: the right tool with other arguments.</p>"):format(shown,
      more > 0 and (", %d more not shown (limit %d)"):format(more, limit) or "", left),
    '<input type="checkbox" id="traj-left"><label for="traj-left"> only those that left the reference</label>',
    table.concat(parts), "</section>" }
end

-- attach(res [, opts]): the view becomes a section of the HTML report.
function M.attach(res, opts)
  local html = M.fragment(res, opts)
  return res:attach("trajectories", { html = function() return html end }, "ev.agent.view")
end

-- write(res, path [, opts]) -> path: the view as a page of its own.
function M.write(res, path, opts)
  local page = table.concat { '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
    "<title>Trajectories</title></head><body>", M.fragment(res, opts), "</body></html>\n" }
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then sys.mkdir(dir) end
  local ok, err = sys.write_atomic(path, page)
  if not ok then error("ev.agent.view: cannot write " .. tostring(err), 2) end
  return path
end

return M
