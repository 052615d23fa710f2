-- What every report format shares: number formatting, the list of
-- (system, slice) lines, coverage text and one-line summaries of metadata.
local health = require "evalua.judge.health"

local M = {}

local ENTITIES = { ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;", ['"'] = "&quot;", ["'"] = "&#39;" }

-- Text for HTML, in an element or an attribute.
function M.html_escape(s)
  s = tostring(s == nil and "" or s)
  if not s:find("[<>&\"']") then return s end
  return (s:gsub("[<>&\"']", ENTITIES))
end

local formats = setmetatable({}, { __index = function(t, d) t[d] = "%." .. d .. "f" return t[d] end })

-- A score or mean with fixed decimals (counts are printed with tostring).
function M.num(x, digits)
  if x == nil then return "-" end
  return formats[digits or 3]:format(x)
end

-- "57/60" when some items of the slice are unmeasured, else nil.
function M.coverage(a)
  if a and a.measured < a.n then return ("%d/%d"):format(a.measured, a.n) end
end

function M.slice_label(dim, value)
  if dim == "all" then return "all" end
  return dim .. "=" .. value
end

-- lines(res) -> { {system=, dim=, value=, label=}, ... } in report order:
-- per system, "all" first, then each dimension's values.
function M.lines(res)
  local out = {}
  for _, system in ipairs(res.systems) do
    for _, d in ipairs(res.dims) do
      for _, v in ipairs(res:values_of(system, d)) do
        out[#out + 1] = { system = system, dim = d, value = v, label = M.slice_label(d, v) }
      end
    end
  end
  return out
end

function M.is_worst(res, system, metric, dim, value)
  local w = res.worst and res.worst[system] and res.worst[system][metric]
  return w ~= nil and w.dim == dim and w.value == value
end

-- One line per metadata fact, for headers.
function M.meta_lines(res)
  local m, out = res.meta or {}, {}
  out[#out + 1] = "evalua " .. tostring(m.evalua) .. ", " .. tostring(m.time)
  if m.label then out[#out + 1] = "label: " .. m.label end
  if m.dataset then
    local d = m.dataset
    out[#out + 1] = ("data: %s (%d rows, sha256 %s%s)"):format(d.path, d.rows, d.hash:sub(1, 12),
      d.skipped > 0 and (", " .. d.skipped .. " skipped") or "")
  end
  local j = m.judge
  if j and j.model == "offline" then
    out[#out + 1] = "judge: offline heuristic (no model, no network)"
    if j.coverage then out[#out + 1] = "offline judge: " .. j.coverage end
  elseif j then
    local fp = j.system_fingerprints and #j.system_fingerprints > 0
      and (" (" .. table.concat(j.system_fingerprints, ", ") .. ")") or ""
    -- a server without usage: the token (and cost) figures are estimates
    out[#out + 1] = ("judge: %s%s; %d requests, %d cached, %d retries, %d failed, %d invalid answers, %d tokens%s%s"):format(
      tostring(j.model), fp, j.requests or 0, j.cache_hits or 0, j.retries or 0, j.failures or 0,
      j.invalid or 0, (j.prompt_tokens or 0) + (j.completion_tokens or 0),
      j.tokens_estimated and " (estimated)" or "", j.cost and j.cost > 0 and (", $" .. M.num(j.cost, 4)) or "")
  end
  if m.notes then out[#out + 1] = "notes: " .. m.notes end
  return out
end

-- The (system, metric) pairs the judge failed on beyond the allowed share:
-- the judge gates of res.gates when gates were checked (their share may be
-- the spec's), else by ev.gate.max_judge_failures.
function M.judge_failures(res)
  if res.gates then
    local out = {}
    for _, g in ipairs(res.gates) do
      if g.kind == "judge" then out[#out + 1] = g end
    end
    return out
  end
  return health.undecided(res, require("evalua.eval.gate").max_judge_failures)
end

-- What a reader must see before any number; every format shows these at
-- its top (terminal and Markdown lines, an HTML banner, JSON `notices`):
--   judge_failed  the judge gave no usable answer for too many items: those
--                 metrics are undecided
--   offline       the judged scores are the offline judge's heuristic
--                 estimates, and what it could not estimate
-- Each is {kind =, title =, lines = {...}}.
function M.notices(res)
  local out = {}
  local failed = health.group(M.judge_failures(res))
  if #failed > 0 then
    local lines = {}
    for _, f in ipairs(failed) do
      lines[#lines + 1] = ("%s: the judge gave no usable answer for %d of %d items (first: %s)"):format(f.metric,
        f.failed, f.n, f.reason)
    end
    out[#out + 1] = { kind = "judge_failed", title = "The judge failed: these results are undecided", lines = lines }
  end
  if health.offline(res) then
    local declined, estimated = {}, {}
    for _, o in ipairs(health.of(res).offline) do declined[o.metric] = o end
    for j, m in ipairs(res.metrics) do
      local o = declined[m.name]
      local scored = false -- a metric whose every item is unmeasured estimated nothing
      for i = 1, res.n do
        if res.scores:get(i, j) ~= nil then scored = true break end
      end
      if m.judged and scored and not (o and o.n == o.of) then estimated[#estimated + 1] = m.name end
    end
    local lines = {}
    if #estimated > 0 then
      lines[1] = ("The scores of %s are heuristic estimates (token overlap and a model-free embedder, "
        .. "docs/judged_metrics.md), not a model's judgement; a model judge: ev.judge.open{model = ...} "
        .. "or --judge openai"):format(table.concat(estimated, ", "))
    end
    for _, o in ipairs(health.of(res).offline) do
      lines[#lines + 1] = ("%s: not estimated for %d of %d items (%s)"):format(o.metric, o.n, o.of, o.reason)
    end
    out[#out + 1] = { kind = "offline", title = "Judged by the offline heuristic, not a model", lines = lines }
  end
  return out
end

-- What makes the compared runs unlike (another judge, data set or metric
-- definition): every format puts these at its top.
function M.warnings(res)
  return res.comparison and res.comparison.warnings or {}
end

-- The system comparison's rows, one line of text each (terminal, JUnit).
function M.system_line(r)
  return ("%s %s: %s -> %s  %s %s  n=%d%s%s"):format(r.system, r.metric, M.num(r.base), M.num(r.mean), r.arrow,
    r.delta and ("%+.3f"):format(r.delta) or "-", r.n, r.p and ("  p=%.4f"):format(r.p) or "",
    r.better and " better" or r.worse and " WORSE" or "")
end

-- The lowest items worth a reader's look: those under the metric's threshold
-- or, without one, under the system's mean (over when lower is better), and
-- the unmeasured; a list of perfect rows would say nothing.
function M.lowest(res, system, m)
  local list = res.bottom[system][m.name]
  local a = res:agg(system, m.name)
  local cut = m.threshold or (a and a.mean)
  if cut == nil then return list end
  local out = {}
  for _, b in ipairs(list) do
    if b.score == nil or (m.higher_is_better and b.score < cut) or (not m.higher_is_better and b.score > cut) then
      out[#out + 1] = b
    end
  end
  return out
end

-- Counts of unmeasured items per metric, with the most common reason, how
-- many items have it and how many reasons there are (counted in C over the
-- score columns).
function M.unmeasured(res)
  local out = {}
  for j, metric in ipairs(res.metrics) do
    local count, top, top_count, kinds = res.scores:unmeasured(j)
    if count > 0 then
      out[#out + 1] = { metric = metric.name, count = count, total = res.n, reason = top or "unmeasured",
                        reason_count = top_count, reasons = kinds }
    end
  end
  return out
end

-- The reason of an unmeasured count as a reader should take it: one reason
-- when all items share it, else the most common with its own count, so a
-- count is never read as all having one cause.
function M.why_unmeasured(u)
  if u.reason_count == u.count then return u.reason end
  local rest = u.reasons - 1
  return ("%d: %s; %d for %d other reason%s"):format(u.reason_count, u.reason, u.count - u.reason_count, rest,
    rest == 1 and "" or "s")
end

-- Shortens text for tables: one line, at most n code points.
function M.clip(s, n)
  if s == nil then return "" end
  n = n or 80
  s = tostring(s)
  if #s <= n and not s:find("[^ %S]") and not s:find("  ", 1, true) then return s end -- short, one line
  s = s:gsub("%s+", " ")
  local len = utf8.len(s)
  if len and len > n then s = s:sub(1, utf8.offset(s, n + 1) - 1) .. "…" end
  return s
end

return M
