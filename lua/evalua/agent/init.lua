-- ev.agent: tool calls, trajectories and conversations (docs/agents.md).
--
--   metrics = { "tool_correctness", ev.agent.tool_call_accuracy{ strict_order = false },
--               ev.agent.trajectory_match{ trajectory_match_mode = "superset" } }
--   ev.agent.tool_call_f1(actual, reference)        -- {score =, reason =, ...}
--   ev.evaluate(ds:turns(), {...})                  -- turn by turn
--
-- The deterministic metrics follow DeepEval (tool_correctness), RAGAS
-- (tool_call_accuracy, tool_call_f1) and agentevals (trajectory_match),
-- with their option names; the judged ones (agent/judged.lua,
-- agent/conversation.lua) follow DeepEval (argument_correctness,
-- task_completion, knowledge_retention, role_adherence,
-- conversation_completeness, turn_relevancy, conversational_geval) and
-- RAGAS (agent_goal_accuracy, topic_adherence).
local metric = require "evalua.agent.metric"
local data = require "evalua.agent.data"

local M = { data = data }

local tool_correctness = require "evalua.agent.tool_correctness"
local tool_call = require "evalua.agent.tool_call"
local trajectory = require "evalua.agent.trajectory"

M.tool_correctness = metric.define {
  name = "tool_correctness", options = tool_correctness.options, compute = tool_correctness.compute,
  reads = metric.row_calls, given = metric.given_calls,
  description = "DeepEval's tool correctness: expected calls matched by the calls made, over the expected calls",
}

M.tool_call_accuracy = metric.define {
  name = "tool_call_accuracy", options = tool_call.accuracy_options, compute = tool_call.accuracy,
  reads = metric.row_calls, given = metric.given_calls,
  description = "RAGAS's tool call accuracy: 0 unless the call names follow the reference; then the share of "
    .. "reference arguments right",
}

M.tool_call_f1 = metric.define {
  name = "tool_call_f1", options = tool_call.f1_options, compute = tool_call.f1,
  reads = metric.row_calls, given = metric.given_calls,
  description = "RAGAS's tool call F1: calls with the expected name and arguments, precision and recall",
}

M.trajectory_match = metric.define {
  name = "trajectory_match", options = trajectory.options, compute = trajectory.compute,
  reads = function(p)
    if not p.messages then return nil, "the row has no messages" end
    if not p.reference then return nil, "the row has no reference_messages" end
    return p.messages, p.reference
  end,
  given = function(a, b)
    local out, why = data.conversation_of(a, "actual")
    if not out then return nil, why end
    local ref
    ref, why = data.conversation_of(b, "reference", true)
    if not ref then return nil, why end
    return out, ref
  end,
  description = "agentevals' trajectory match: 1 when the calls made match the reference trajectory's",
}

local judged = require "evalua.agent.judged"
local conversation = require "evalua.agent.conversation"

local NAMES = { "tool_correctness", "tool_call_accuracy", "tool_call_f1", "trajectory_match" }
for _, group in ipairs { judged, conversation } do
  for _, name in ipairs(group.NAMES) do
    M[name] = group[name]
    NAMES[#NAMES + 1] = name
  end
end
M.conversational_geval = conversation.conversational_geval
M.view = require "evalua.agent.view"
M.prompts = judged.prompts

-- check(ds): every row's agent fields are well formed (an input error otherwise).
M.check = data.check

-- turns(ds) -> a data set of one row per user turn (agent/data.lua's turn_rows).
function M.turns(ds) return ds:turns() end

-- The agent metrics by name, as ev.evaluate finds them (evalua.core.registry
-- reads a run's own metrics first, so a script's metric of the same name wins).
M.metrics = {}
for _, name in ipairs(NAMES) do M.metrics[name] = M[name] end

return M
