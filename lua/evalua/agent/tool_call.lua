-- tool_call_accuracy and tool_call_f1: RAGAS's ToolCallAccuracy and
-- ToolCallF1 (docs/agents.md). C are the calls made, in order, R the
-- reference calls.
--   tool_call_accuracy  0 unless the names of C and R are the same sequence
--                       (strict_order = false: the same names in any
--                       order); then the mean, over pairs of calls, of the
--                       share of R's argument keys whose values C's call
--                       has equal (both without arguments: 1). Pairs are
--                       by position, or without strict order the pairing
--                       of same-named calls with the largest total.
--   tool_call_f1        F1 of C against R, a call matching one of R with
--                       the same name and equal arguments, each used once.
-- Values compare as JSON values (agent/equal.lua), never as their text.
local equal = require "evalua.agent.equal"
local assign = require "evalua.agent.assign"
local options = require "evalua.core.options"
local json = require "evalua.core.json"

local M = {}

M.ACCURACY_KNOWN = { "strict_order" }
local ACCURACY = options.set(M.ACCURACY_KNOWN)

function M.accuracy_options(o)
  o = o or {}
  options.check(o, ACCURACY, "tool_call_accuracy", 1)
  if o.strict_order ~= nil and type(o.strict_order) ~= "boolean" then
    error("tool_call_accuracy: strict_order must be true or false", 0)
  end
  return { strict = o.strict_order ~= false }
end

M.F1_KNOWN = {}
function M.f1_options(o)
  options.check(o or {}, {}, "tool_call_f1", 1)
  return {}
end

-- The share of the reference call's argument keys that the call has with
-- equal values; a reference without arguments: 1 when the call has none.
local function arg_score(c, r)
  if not c.arguments then return 0 end
  if next(r.arguments) == nil then return next(c.arguments) == nil and 1 or 0 end
  local n, hit = 0, 0
  for k, v in pairs(r.arguments) do
    n = n + 1
    if c.arguments[k] ~= nil and equal.equal(c.arguments[k], v) then hit = hit + 1 end
  end
  return hit / n
end
M.arg_score = arg_score

local function names(list, sorted)
  local out = {}
  for i, c in ipairs(list) do out[i] = c.name end
  if sorted then table.sort(out) end
  return out
end

local function same_list(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function shown(list) return "[" .. table.concat(list, ", ") .. "]" end

function M.accuracy(C, R, o)
  if #C == 0 and #R == 0 then return { score = 1, reason = "no call expected and none made" } end
  if #C == 0 then return { score = 0, reason = ("no calls made; expected %s"):format(shown(names(R))) } end
  if #R == 0 then return { score = 0, reason = ("no call expected, but %d made"):format(#C) } end
  local nc, nr = names(C, not o.strict), names(R, not o.strict)
  if not same_list(nc, nr) then
    return { score = 0, reason = ("the names differ%s: called %s, expected %s"):format(o.strict and "" or " (in any order)",
      shown(names(C)), shown(names(R))) }
  end
  local total, pairs_ = 0, {}
  if o.strict then
    for i = 1, #R do
      local s = arg_score(C[i], R[i])
      total, pairs_[i] = total + s, { i, i, s }
    end
  else
    pairs_, total = assign.max(function(i, j)
      if R[i].name ~= C[j].name then return 0 end
      return arg_score(C[j], R[i]) + 1 -- + 1: same-named calls always pair, even with no argument right
    end, #R, #C)
    total = 0
    for _, p in ipairs(pairs_) do
      p[3] = arg_score(C[p[2]], R[p[1]])
      total = total + p[3]
    end
  end
  return { score = total / #R, pairs = pairs_,
           reason = ("names match%s; arguments right: %s of %d calls"):format(o.strict and " in order" or "",
             json.number(total), #R) }
end

-- A call that is one of R: same name, equal arguments.
local function same_call(c, r)
  return c.name == r.name and c.arguments ~= nil and equal.equal(c.arguments, r.arguments)
end

function M.f1(C, R)
  if #C == 0 and #R == 0 then
    return { unmeasured = true, reason = "no call expected and none made: precision and recall are 0/0" }
  end
  local tp = assign.matching(function(i, j) return same_call(C[j], R[i]) end, #R, #C)
  local p = #C > 0 and tp / #C or 0
  local r = #R > 0 and tp / #R or 0
  local f1 = (p + r) > 0 and 2 * p * r / (p + r) or 0
  return { score = f1, precision = p, recall = r, true_positives = tp,
           reason = ("%d of %d calls expected, %d of %d made are right (precision %s, recall %s)"):format(
             tp, #R, tp, #C, json.number(math.floor(p * 1e4 + 0.5) / 1e4), json.number(math.floor(r * 1e4 + 0.5) / 1e4)) }
end

return M
