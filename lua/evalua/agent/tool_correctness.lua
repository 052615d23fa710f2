-- tool_correctness: DeepEval's ToolCorrectnessMetric, its deterministic
-- part (docs/agents.md#tool_correctness). E are the expected calls, C the
-- calls made. A call matches an expected one by name; with
-- evaluation_params {"input_parameters"} its arguments count too (a share
-- of keys, below), with {"output"} the tool's answer must equal the
-- expected output.
--   default                    the best pairing of E with C (each call used
--                              once), sum of match weights / |E|
--   should_consider_ordering   weighted longest common subsequence / |E|
--   should_exact_match         1 when |C| = |E| and C[i] matches E[i] exactly, else 0
-- Both empty: 1; E empty and C not: 0. strict_mode: threshold 1, and a score
-- below it is 0.
local equal = require "evalua.agent.equal"
local assign = require "evalua.agent.assign"
local options = require "evalua.core.options"

local M = {}

M.KNOWN = { "evaluation_params", "should_exact_match", "should_consider_ordering", "strict_mode", "threshold",
            "available_tools" }
local KNOWN = options.set(M.KNOWN)
local PARAMS = { input_parameters = true, output = true }

-- The options, checked; raises (a message without position) on misuse.
function M.options(o)
  o = o or {}
  options.check(o, KNOWN, "tool_correctness", 1)
  if o.available_tools ~= nil then
    error("tool_correctness: available_tools asks DeepEval's judge whether the tools chosen were the best "
      .. "ones; evalua's tool_correctness is the deterministic score only (leave available_tools out)", 0)
  end
  local ep = o.evaluation_params
  if ep ~= nil and (type(ep) ~= "table" or not equal.is_list(ep)) then
    error("tool_correctness: evaluation_params must be a list of \"input_parameters\" and \"output\"", 0)
  end
  local params = {}
  for i, p in ipairs(ep or {}) do
    if not PARAMS[p] then
      error(("tool_correctness: evaluation_params[%d] must be \"input_parameters\" or \"output\", got %s")
        :format(i, tostring(p)), 0)
    end
    params[p] = true
  end
  for _, k in ipairs { "should_exact_match", "should_consider_ordering", "strict_mode" } do
    if o[k] ~= nil and type(o[k]) ~= "boolean" then error(("tool_correctness: %s must be true or false"):format(k), 0) end
  end
  local threshold = o.threshold == nil and 0.5 or o.threshold
  if type(threshold) ~= "number" or threshold < 0 or threshold > 1 then
    error("tool_correctness: threshold must be a number from 0 to 1", 0)
  end
  if o.strict_mode then threshold = 1 end
  return { inputs = params.input_parameters, output = params.output, exact = o.should_exact_match == true,
           ordering = o.should_consider_ordering == true, strict = o.strict_mode == true, threshold = threshold }
end

local sorted_keys = require("evalua.core.tables").sorted_keys

-- DeepEval's share of argument keys: 1 for equal objects; else, over the
-- union of both objects' keys, 1 for each key with equal values and the
-- same share recursively for a key whose values are both objects. A list
-- or a scalar counts whole or not at all; an extra key costs as a missing one.
local function share(a, b)
  if equal.equal(a, b) then return 1 end
  local union, n = {}, 0
  for k in pairs(a) do union[k] = true end
  for k in pairs(b) do union[k] = true end
  for _ in pairs(union) do n = n + 1 end
  local sum = 0
  for _, k in ipairs(sorted_keys(a)) do
    local x, y = a[k], b[k]
    if y ~= nil then
      if equal.equal(x, y) then sum = sum + 1
      elseif equal.is_object(x) and equal.is_object(y) then sum = sum + share(x, y) end
    end
  end
  return sum / n
end
M.share = share

-- The tool's answer against an expected output: text against text; an
-- expected JSON value against the answer read as JSON.
local function same_output(expected, call)
  if call.output == nil then return false end
  if type(expected) == "string" then return call.output == expected end
  local ok, v = pcall(require("cjson.safe").decode, call.output)
  return ok and v ~= nil and equal.equal(v, expected)
end

-- How well call c matches expected call e: 0 to 1.
local function weight(o, e, c)
  if e.name ~= c.name then return 0 end
  local w = 1
  if o.inputs then
    if not c.arguments then return 0 end
    w = o.exact and (equal.equal(e.arguments, c.arguments) and 1 or 0) or share(e.arguments, c.arguments)
  end
  if o.output and not same_output(e.output, c) then w = 0 end
  return w
end

local function names(list)
  local out = {}
  for i, c in ipairs(list) do out[i] = c.name end
  return "[" .. table.concat(out, ", ") .. "]"
end

local function exact_score(o, E, C)
  if #C ~= #E then return 0, ("%d calls for %d expected"):format(#C, #E) end
  for i = 1, #E do
    if weight(o, E[i], C[i]) < 1 then return 0, ("call %d (%s) does not match expected call %d (%s)"):format(i, C[i].name, i, E[i].name) end
  end
  return 1, "the calls are exactly the expected ones"
end

-- Weighted longest common subsequence of E and C: its total weight.
local function lcs(o, E, C)
  local dp = {}
  for i = 0, #E do dp[i] = { [0] = 0 } end
  for j = 0, #C do dp[0][j] = 0 end
  for i = 1, #E do
    for j = 1, #C do
      local best = math.max(dp[i - 1][j], dp[i][j - 1])
      local w = weight(o, E[i], C[j])
      if w > 0 and dp[i - 1][j - 1] + w > best then best = dp[i - 1][j - 1] + w end
      dp[i][j] = best
    end
  end
  return dp[#E][#C]
end

-- compute(C, E, o) -> {score=, reason=, pass=, matches=}
function M.compute(C, E, o)
  if o.output then
    for i, e in ipairs(E) do
      if e.output == nil then
        return { unmeasured = true, reason = ("evaluation_params has \"output\", but expected call %d (%s) has no output")
          :format(i, e.name) }
      end
    end
  end
  local score, reason, matches
  if #E == 0 then
    score = #C == 0 and 1 or 0
    reason = #C == 0 and "no call expected and none made" or ("no call expected, but %d made %s"):format(#C, names(C))
  elseif o.exact then
    score, reason = exact_score(o, E, C)
  elseif o.ordering then
    local total = lcs(o, E, C)
    score = total / #E
    reason = ("in order: %s of %d expected calls matched; expected %s, called %s"):format(
      require("evalua.core.json").number(total), #E, names(E), names(C))
  else
    local total
    matches, total = assign.max(function(i, j) return weight(o, E[i], C[j]) end, #E, #C)
    score = total / #E
    local missing, used = {}, {}
    for _, m in ipairs(matches) do used[m[1]] = true end
    for i, e in ipairs(E) do if not used[i] then missing[#missing + 1] = e.name end end
    reason = ("%s of %d expected calls matched (order not considered)%s; called %s"):format(
      require("evalua.core.json").number(total), #E, #missing > 0 and ("; missing " .. table.concat(missing, ", ")) or "", names(C))
  end
  if o.strict and score < o.threshold then score = 0 end
  return { score = score, reason = reason, pass = score >= o.threshold, matches = matches }
end

return M
