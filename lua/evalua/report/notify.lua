-- Notifications: a run's summary posted as JSON to a chat webhook when a
-- gate failed or a regression is significant. The body's `text` is what
-- Slack and Mattermost incoming webhooks show; `evalua` holds the same
-- facts structured (status, failed and undecided gates, regressions,
-- warnings) for anything else that reads it.
--
--   local n = ev.notify.send(url, res, { title = "nightly v1.4", report = "out/.../nightly.html" })
--   -- n.sent (posted), n.why (what triggered it), n.error (when the post failed)
--
-- The URL carries the webhook's secret, like a judge key: it is never
-- printed, never written into a report, and error messages name it only as
-- "the notification URL".
local json = require "evalua.core.json"
local options = require "evalua.core.options"
local C = require "evalua._client"

local M = {}

local SEND_KNOWN = options.set { "title", "report", "always", "timeout_ms" }

local function slice(dim, value)
  return dim == "all" and "all" or (dim .. "=" .. value)
end

-- The significant regressions of the whole run (not of single slices,
-- which the regression gate also leaves out unless asked).
local function regressions(res)
  local out = {}
  for _, r in ipairs(res.comparison and res.comparison.rows or {}) do
    if r.regression and r.dim == "all" then
      out[#out + 1] = { system = r.system, metric = r.metric, slice = slice(r.dim, r.value),
                        before = r.before, after = r.after, delta = r.delta, p = r.p }
    end
  end
  return out
end

local function gate_status(res)
  local status, listed = "pass", {}
  for _, g in ipairs(res.gates or {}) do
    if g.status == "fail" then status = "fail" elseif g.status == "undecided" and status ~= "fail" then status = "undecided" end
    if g.status ~= "pass" then
      listed[#listed + 1] = { system = g.system, name = g.name, status = g.status, message = g.message,
                              actual = g.actual, threshold = g.threshold }
    end
  end
  return status, listed
end

-- summary(res [, {title=, report=}]) -> the JSON body as a table
function M.summary(res, opts)
  opts = opts or {}
  local status, gates = gate_status(res)
  local regs = regressions(res)
  local warnings = res.comparison and res.comparison.warnings or {}
  local title = opts.title or res.meta.label or "evaluation"
  local lines = { ("*evalua: %s*: gates %s%s"):format(title, status == "fail" and "FAILED" or status,
    #regs > 0 and (", %d significant regression%s"):format(#regs, #regs == 1 and "" or "s") or "") }
  -- the system is named when the run has several
  local function who(system) return #res.systems > 1 and system and (system .. ": ") or "" end
  for _, g in ipairs(gates) do
    -- the regression gate's detail is the regression list below
    local detail = g.threshold and (": " .. g.message) or ""
    lines[#lines + 1] = ("• %s%s %s%s"):format(who(g.system), g.status == "fail" and "FAIL" or "undecided", g.name, detail)
  end
  for _, r in ipairs(regs) do
    lines[#lines + 1] = ("• %sregression %s[%s] %.4f -> %.4f (p=%.4f)"):format(who(r.system), r.metric, r.slice,
      r.before, r.after, r.p)
  end
  for _, w in ipairs(warnings) do lines[#lines + 1] = "warning: " .. w end
  if opts.report then lines[#lines + 1] = "report: " .. opts.report end
  return {
    text = table.concat(lines, "\n"),
    evalua = { title = title, label = res.meta.label, time = res.meta.time, status = status,
               gates = setmetatable(gates, json.array), regressions = setmetatable(regs, json.array),
               warnings = #warnings > 0 and warnings or nil, report = opts.report,
               baseline = res.comparison and res.comparison.baseline or nil },
  }
end

-- needed(res) -> why a notification is due ("a gate failed", ...), or nil
function M.needed(res)
  local status = gate_status(res)
  local regs = #regressions(res)
  if status == "fail" and regs > 0 then return "a gate failed and a regression is significant" end
  if status == "fail" then return "a gate failed" end
  if regs > 0 then return "a regression is significant" end
end

-- Splits URL into its origin and path; errors never repeat it.
local function split(url)
  if type(url) ~= "string" then error("ev.notify: the notification URL must be a string", 3) end
  local base, rest = url:match("^(https?://[^/?#]+)(.*)$")
  if not base then error("ev.notify: the notification URL must start with http:// or https://", 3) end
  if rest:sub(1, 1) ~= "/" then rest = "/" .. rest end
  return base, rest
end

local function redact(msg, url, base)
  msg = tostring(msg)
  for _, s in ipairs { url, base } do
    local at = msg:find(s, 1, true)
    while at do
      msg = msg:sub(1, at - 1) .. "the notification URL" .. msg:sub(at + #s)
      at = msg:find(s, 1, true)
    end
  end
  return msg
end

-- post(url, body [, timeout_ms]) -> true, or nil and the reason (without the URL).
-- The engine's base URL is the whole webhook URL, so under --sandbox the
-- operator allows exactly it ($EVALUA_JUDGE_URLS), not its host.
function M.post(url, body, timeout_ms)
  local base = split(url)
  local ok, engine = pcall(C.engine, { base_url = url, api_key_env = false, max_retries = 2, backoff_ms = 500,
                                       timeout_ms = timeout_ms or 15000, concurrency = 1 })
  if not ok then return nil, redact(engine, url, base) end
  local id = engine:submit("", json.encode(body))
  while true do
    for _, d in ipairs(engine:poll(1000)) do
      if d.id == id then
        engine:close()
        if d.error then return nil, redact(d.error, url, base) end
        if d.status < 200 or d.status >= 300 then return nil, ("HTTP %d"):format(d.status) end
        return true
      end
    end
  end
end

-- send(url, res [, {title=, report=, always=, timeout_ms=}]) -> { sent=, why=, error= }
-- Posts when needed(res) (or always); a post that fails is reported in
-- .error for the caller to say, never raised: the run's results stand.
function M.send(url, res, opts)
  opts = opts or {}
  options.check(opts, SEND_KNOWN, "ev.notify.send", 2)
  split(url)
  local why = M.needed(res) or (opts.always and "always") or nil
  if not why then return { sent = false } end
  local ok, err = M.post(url, M.summary(res, opts), opts.timeout_ms)
  return { sent = ok == true, why = why, error = err }
end

return M
