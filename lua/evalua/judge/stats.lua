-- The judges' accounts: per judge and summed over the run.
local run = require "evalua.core.run"
local cache = require "evalua.client.cache"

local S = {}

local COUNTS = { "requests", "attempts", "cache_hits", "failures", "refused", "budget_refused", "invalid",
                 "asks", "prompt_tokens", "completion_tokens", "cache_errors", "estimated_requests" }

function S.new(model)
  local s = { requested_model = model, fingerprints = {}, seen = {},
              dry = { requests = 0, prompt_tokens = 0, completion_tokens = 0 } }
  for _, k in ipairs(COUNTS) do s[k] = 0 end
  return s
end

-- Files s with the current run's accounts (evalua.core.run).
function S.register(_, s)
  local judges = run.current().judges
  judges[#judges + 1] = s
end

-- Notes the model and system_fingerprint a server reported.
function S.saw(s, model, fingerprint)
  if model then s.model = model end
  if fingerprint then
    s.system_fingerprint = fingerprint
    if not s.seen[fingerprint] then
      s.seen[fingerprint] = true
      s.fingerprints[#s.fingerprints + 1] = fingerprint
    end
  end
end

-- Notes a warning about the run; true when it is new.
function S.warn(s, msg)
  s.warnings = s.warnings or {}
  for _, w in ipairs(s.warnings) do
    if w == msg then return false end
  end
  s.warnings[#s.warnings + 1] = msg
  return true
end

function S.dry(s, prompt, completion, cost)
  local d = s.dry
  d.requests = d.requests + 1
  d.prompt_tokens = d.prompt_tokens + prompt
  d.completion_tokens = d.completion_tokens + completion
  if cost then d.cost = (d.cost or 0) + cost end
end

-- A plain copy a script may keep, print or put in a report.
-- Cache writes still queued are waited for, so cache_errors is whole.
function S.snapshot(s)
  cache.collect(true)
  local out = { model = s.model or s.requested_model, requested_model = s.requested_model,
                system_fingerprint = s.system_fingerprint, cost = s.cost, cache_error = s.cache_error }
  for _, k in ipairs(COUNTS) do out[k] = s[k] end
  out.retries = s.attempts - s.requests
  out.total_tokens = s.prompt_tokens + s.completion_tokens
  -- tokens of answers without server usage are estimates (docs/judge.md)
  out.tokens_estimated = s.estimated_requests > 0
  out.system_fingerprints = table.move(s.fingerprints, 1, #s.fingerprints, 1, {})
  out.warnings = s.warnings and table.move(s.warnings, 1, #s.warnings, 1, {}) or nil
  return out
end

-- What dry runs counted (since `before`, a previous estimate, when given).
function S.estimate(s, before)
  local d = s.dry
  local e = { requests = d.requests, prompt_tokens = d.prompt_tokens,
              completion_tokens = d.completion_tokens, cost = d.cost }
  if before then
    for _, k in ipairs { "requests", "prompt_tokens", "completion_tokens" } do e[k] = e[k] - before[k] end
    if e.cost then e.cost = e.cost - (before.cost or 0) end
  end
  e.total_tokens = e.prompt_tokens + e.completion_tokens
  return e
end

-- Totals over every judge of the run, with judges = {snapshot...}.
function S.run_totals()
  local t = { judges = {}, retries = 0, total_tokens = 0 }
  for _, k in ipairs(COUNTS) do t[k] = 0 end
  for i, s in ipairs(run.current().judges) do
    local snap = S.snapshot(s)
    t.judges[i] = snap
    for _, k in ipairs(COUNTS) do t[k] = t[k] + snap[k] end
    t.retries = t.retries + snap.retries
    t.total_tokens = t.total_tokens + snap.total_tokens
    if snap.cost then t.cost = (t.cost or 0) + snap.cost end
    t.tokens_estimated = t.tokens_estimated or snap.tokens_estimated
    t.cache_error = t.cache_error or snap.cache_error
  end
  return t
end

return S
