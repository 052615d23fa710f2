-- The offline judge: the same interface as the HTTP judge, answered by
-- deterministic heuristics (judge/offline.lua) and an embedder that needs
-- no model, so every script runs on a fresh machine without a network.
local base = require "evalua.judge.base"
local offline = require "evalua.judge.offline"
local stats_mod = require "evalua.judge.stats"
local embedder = require "evalua._embed"
local trace = require "evalua.judge.trace"

local O = {}

local Judge = setmetatable({}, { __index = base })
Judge.__index = Judge
Judge.__name = "evalua.Judge"

local private = setmetatable({}, { __mode = "k" })

local NO_CHAT = "the offline judge cannot chat; it answers judge:ask(op, vars) and judge:embed{input=}"

function O.open(cfg)
  for k in pairs(cfg) do
    if k ~= "kind" and k ~= "support_threshold" then
      error(("ev.judge.open: option '%s' does not apply to the offline judge"):format(tostring(k)), 3)
    end
  end
  local t = cfg.support_threshold
  if t ~= nil and (type(t) ~= "number" or t < 0 or t > 1) then
    error("ev.judge.open: support_threshold must be a number from 0 to 1", 3)
  end
  local self = setmetatable({ kind = "offline", model = "offline" }, Judge)
  private[self] = { options = { support_threshold = t or offline.support_threshold },
                    stats = stats_mod.new("offline") }
  stats_mod.register(self, private[self].stats)
  return self
end

function Judge:chat(req)
  base.check_chat(req)
  return { ok = false, error = NO_CHAT, unmeasured = true, offline = true }
end

-- Vectors from the offline embedder (metrics/embed.c): IDF learnt from the
-- texts of this one call, folded into `dimensions` numbers (default 512).
function Judge:embed(req)
  base.check_embed(req)
  local input = type(req.input) == "string" and { req.input } or req.input
  local vectors = embedder.embed(input, { dimensions = req.dimensions })
  return { ok = true, embeddings = vectors, embedding = type(req.input) == "string" and vectors[1] or nil,
           model = "offline" }
end

-- Cosines from the embedder's sparse vectors (no folding), with the IDF
-- learnt from every query and candidate of the call: a data set's answers
-- and gold answers embedded together weigh words by that data set.
function Judge:similarity(queries, candidates, opts)
  base.check_similarity(queries, candidates, opts)
  return embedder.similarity(queries, candidates), {}
end

-- An operation's heuristic; one that returns nil and why leaves the item
-- unmeasured with that reason, marked offline (the offline judge cannot
-- estimate it: not a failure of the judge).
function Judge:answer(name, op, prepared, vars)
  local st = private[self]
  st.stats.asks = st.stats.asks + 1
  trace.note { operation = name, offline = true } -- no prompt is sent, so none is cached
  if not op.offline then
    return { ok = false, error = ("the offline judge has no heuristic for '%s'"):format(name), unmeasured = true,
             offline = true }
  end
  local value, reason = op.offline(prepared, st.options)
  if value == nil then return { ok = false, error = tostring(reason), unmeasured = true, offline = true } end
  return { ok = true, value = value, reason = reason, judge = "offline",
           no_logprobs = vars.logprobs and "the offline judge gives no logprobs" or nil }
end

-- What the offline judge can and cannot estimate, for report headers
-- (docs/judged_metrics.md has the reasons).
O.coverage = "estimates faithfulness, context precision/recall/relevance, relevancy, correctness and "
  .. "pairwise with a reference, agent_goal_accuracy against an expected outcome by token overlap, and sas by a "
  .. "model-free embedder; cannot estimate "
  .. "answer_relevance and answer_relevance_direct (no model to read how an answer addresses its question), "
  .. "pairwise without a reference, G-Eval criteria or LLMEvaluator instructions (no model to read them; "
  .. "a metric's own offline function can), or the other agent and conversation metrics (docs/agents.md)"

function Judge:stats()
  local out = stats_mod.snapshot(private[self].stats)
  out.kind, out.coverage = "offline", O.coverage
  return out
end

-- Nothing is ever sent, so a dry run counts nothing.
function Judge:estimate(fn)
  local st = private[self]
  if fn ~= nil and type(fn) ~= "function" then error("judge:estimate: expected a function or nothing", 2) end
  return stats_mod.estimate(st.stats)
end

-- Notes a warning in this judge's accounts; true when it is new.
function Judge:warn(msg)
  return stats_mod.warn(private[self].stats, msg)
end

function Judge:close() end

function Judge:__tostring()
  return "judge offline (offline)"
end

return O
