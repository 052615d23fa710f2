-- ev.judge: LLM judges. Two implementations of one interface (judge/base.lua):
-- the HTTP judge (judge/http.lua) asks an OpenAI-compatible server, the
-- offline judge (judge/offline_judge.lua) answers the same operations with
-- deterministic heuristics. Metrics call ask, embed, stats and estimate
-- alike on either.
local ops = require "evalua.judge.ops"
local http = require "evalua.judge.http"
local offline_judge = require "evalua.judge.offline_judge"
local stats_mod = require "evalua.judge.stats"

local M = {
  -- USD per million tokens by model name: {prompt = x, completion = y}.
  prices = http.prices,
  ops = ops.registry,
  offline = require "evalua.judge.offline",
  json = require "evalua.judge.json",
}

-- ev.judge.open{...} | ev.judge.open("offline") | ev.judge.open("openai")
-- (No tail calls below: error levels count on M.open's frame.)
function M.open(cfg)
  local judge
  if cfg == "offline" then judge = offline_judge.open({}); return judge end
  if cfg == nil or cfg == "openai" then judge = http.open({}); return judge end
  if type(cfg) ~= "table" then
    error("ev.judge.open: expected \"offline\", \"openai\" or a table of options", 2)
  end
  if cfg.kind == "offline" then judge = offline_judge.open(cfg); return judge end
  if cfg.kind ~= nil and cfg.kind ~= "openai" then
    error("ev.judge.open: kind must be \"openai\" or \"offline\"", 2)
  end
  local copy = {}
  for k, v in pairs(cfg) do copy[k] = v end
  copy.kind = nil
  judge = http.open(copy)
  return judge
end

-- Every judge opened from now on (and those open now) only counts what it
-- would send: ev.judge.dry_run(true), e.g. from a script's --dry-run flag.
function M.dry_run(on)
  http.dry_run(on ~= false)
end

-- Accounts of every judge of this run: totals plus one entry per judge.
function M.stats()
  return stats_mod.run_totals()
end

M.register_op = ops.register

-- Whether a judge server is configured ($OPENAI_BASE_URL is set): what
-- ev.judge.open() would ask, rather than the offline judge.
function M.configured()
  local url = require("evalua._client").env().base_url
  return url ~= nil and url ~= ""
end

return M
