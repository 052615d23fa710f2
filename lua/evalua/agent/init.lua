-- ev.agent: tool calls, trajectories and conversations (docs/agents.md).
--
--   ev.agent.check(ds)     -- every row's messages, tools and expected calls well formed
--   ds:turns()             -- one row per user turn
local data = require "evalua.agent.data"

local M = { data = data }

-- check(ds): every row's agent fields are well formed (an input error otherwise).
M.check = data.check

-- turns(ds) -> one row per user turn (agent/data.lua).
M.turns = data.turns

return M
