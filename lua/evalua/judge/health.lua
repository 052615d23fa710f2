-- Whether the judge answered. Per system and metric, the items left
-- unmeasured because the judge gave no usable answer (a row's result marked
-- judge_failed: an HTTP or connection failure after the retries, an answer
-- still invalid after the repair request, a refusal, an exhausted budget),
-- and the items the offline judge could not estimate (marked offline).
-- A metric is undecided in a system when the share of its items the judge
-- failed exceeds `max` (ev.gate.max_judge_failures): ev.gate.check adds an
-- undecided gate, reports show a banner, ev.evaluate says it on stderr.
-- Counted from the results' details, which shards and merges keep.
local M = {}

local memo = setmetatable({}, { __mode = "k" })

local function count(res, j, m, out)
  local d = res.details and res.details[m.name]
  if not d then return end
  local per, off = {}, nil
  for i, x in pairs(d) do
    if type(x) == "table" and (x.judge_failed or x.offline) and res.scores:get(i, j) == nil then
      local why = tostring(x.reason or x.error or "unmeasured")
      local c
      if x.judge_failed then
        local s = res.systems[res.sys_codes:get(i)]
        c = per[s] or { n = 0 }
        per[s] = c
      else
        off = off or { n = 0 }
        c = off
      end
      c.n = c.n + 1
      if not c.row or i < c.row then c.row, c.reason = i, why end -- the first row's reason
    end
  end
  for _, s in ipairs(res.systems) do
    local c = per[s]
    if c then
      local n = res:agg(s, m.name).n
      out.failed[#out.failed + 1] = { system = s, metric = m.name, failed = c.n, n = n, share = c.n / n,
                                      reason = c.reason }
    end
  end
  if off then out.offline[#out.offline + 1] = { metric = m.name, n = off.n, of = res.n, reason = off.reason } end
end

-- of(res) -> {failed = {{system=, metric=, failed=, n=, share=, reason=}...},
--             offline = {{metric=, n=, of=, reason=}...}}, in report order.
function M.of(res)
  if memo[res] then return memo[res] end
  local out = { failed = {}, offline = {} }
  for j, m in ipairs(res.metrics) do count(res, j, m, out) end
  memo[res] = out
  return out
end

-- The (system, metric) pairs whose share of judge failures exceeds max.
function M.undecided(res, max)
  local out = {}
  for _, f in ipairs(M.of(res).failed) do
    if f.share > max then out[#out + 1] = f end
  end
  return out
end

-- Entries {metric=, failed=, n=, reason=} (undecided pairs, or judge gates)
-- summed over systems, per metric in first-seen order.
function M.group(list)
  local out, at = {}, {}
  for _, f in ipairs(list) do
    local e = at[f.metric]
    if not e then
      e = { metric = f.metric, failed = 0, n = 0, reason = f.reason }
      at[f.metric], out[#out + 1] = e, e
    end
    e.failed, e.n = e.failed + f.failed, e.n + f.n
  end
  return out
end

-- The undecided metrics summed over systems.
function M.by_metric(res, max) return M.group(M.undecided(res, max)) end

-- One line for stderr when some metric is undecided, else nil.
function M.line(res, max)
  local list = M.by_metric(res, max)
  if #list == 0 then return nil end
  local parts = {}
  for _, e in ipairs(list) do parts[#parts + 1] = ("%s %d/%d"):format(e.metric, e.failed, e.n) end
  return ("evalua: THE JUDGE FAILED: items unmeasured for want of a usable judge answer: %s (first: %s); "
    .. "these results are undecided (more than %g%% failed)"):format(table.concat(parts, ", "), list[1].reason,
    max * 100)
end

-- Whether the run's judged scores come from the offline judge.
function M.offline(res)
  local j = res.meta and res.meta.judge
  if not j or (j.kind ~= "offline" and j.model ~= "offline") then return false end
  for _, m in ipairs(res.metrics) do
    if m.judged then return true end
  end
  return false
end

return M
