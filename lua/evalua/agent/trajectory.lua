-- trajectory_match: agentevals' trajectory match evaluator
-- (docs/agents.md#trajectory_match), 1 or 0. A call of the output matches
-- a call of the reference when the names are equal and the arguments
-- match in the tool's mode; the argument matcher always reads (output
-- arguments, reference arguments).
--   strict     the same number of messages; message by message the same
--              role, tool calls in both or in neither, and the calls of a
--              message paired one to one (parallel calls in any order);
--              content is not compared
--   unordered  superset and subset both hold
--   superset   every reference call is matched by its own output call
--   subset     every output call matches its own reference call
-- tool_args_match_mode: exact (equal), ignore (any), subset (the output's
-- arguments are a subset of the reference's), superset (a superset);
-- tool_args_match_overrides = {tool = a mode | a list of key paths that
-- must be equal ("time.start") | function(output_args, reference_args) -> boolean}.
local equal = require "evalua.agent.equal"
local assign = require "evalua.agent.assign"
local options = require "evalua.core.options"

local M = {}

M.KNOWN = { "trajectory_match_mode", "tool_args_match_mode", "tool_args_match_overrides" }
local KNOWN = options.set(M.KNOWN)
local MODES = { strict = true, unordered = true, subset = true, superset = true }
local ARG_MODES = {
  exact = equal.equal,
  ignore = function() return true end,
  subset = function(out, ref) return equal.subset(out, ref) end,
  superset = function(out, ref) return equal.subset(ref, out) end,
}
local ARG_MODE_LIST = "exact, ignore, subset or superset"

-- A matcher of key paths: each path's value equal in both (absent in both counts as equal).
local function paths_matcher(paths)
  return function(out, ref)
    for _, p in ipairs(paths) do
      if not equal.equal(equal.at_path(out, p), equal.at_path(ref, p)) then return false end
    end
    return true
  end
end

local function override_matcher(name, v)
  local what = ("trajectory_match: tool_args_match_overrides[%q]"):format(name)
  if type(v) == "string" then
    if not ARG_MODES[v] then error(("%s: unknown mode '%s' (%s)"):format(what, v, ARG_MODE_LIST), 0) end
    return ARG_MODES[v]
  end
  if type(v) == "function" then
    return function(out, ref)
      local r = v(out, ref)
      if type(r) ~= "boolean" then error(("%s returned %s, not true or false"):format(what, type(r)), 0) end
      return r
    end
  end
  if type(v) == "table" and equal.is_list(v) and #v > 0 then
    for i, p in ipairs(v) do
      if type(p) ~= "string" or p == "" or p:find("^%.") or p:find("%.%.") or p:find("%.$") then
        error(("%s[%d]: expected a key path such as \"time.start\""):format(what, i), 0)
      end
    end
    return paths_matcher(v)
  end
  error(("%s: expected a mode (%s), a list of key paths or a function(output_args, reference_args)")
    :format(what, ARG_MODE_LIST), 0)
end

function M.options(o)
  o = o or {}
  options.check(o, KNOWN, "trajectory_match", 1)
  local mode = o.trajectory_match_mode or "strict"
  if not MODES[mode] then
    error(("trajectory_match: trajectory_match_mode must be strict, unordered, subset or superset, got %s")
      :format(tostring(mode)), 0)
  end
  local args = o.tool_args_match_mode or "exact"
  if not ARG_MODES[args] then
    error(("trajectory_match: tool_args_match_mode must be %s, got %s"):format(ARG_MODE_LIST, tostring(args)), 0)
  end
  local overrides = {}
  if o.tool_args_match_overrides ~= nil then
    if type(o.tool_args_match_overrides) ~= "table" then
      error("trajectory_match: tool_args_match_overrides must be a table {tool name = mode | key paths | function}", 0)
    end
    for name, v in pairs(o.tool_args_match_overrides) do
      if type(name) ~= "string" then error("trajectory_match: tool_args_match_overrides is keyed by tool name", 0) end
      overrides[name] = override_matcher(name, v)
    end
  end
  return { mode = mode, default = ARG_MODES[args], args = args, overrides = overrides }
end

-- Does output call c match reference call r?
local function matches(o, c, r)
  if c.name ~= r.name then return false end
  local m = o.overrides[c.name] or o.default
  if m == ARG_MODES.ignore then return true end
  if not c.arguments then return false end -- arguments that were not JSON match nothing
  return m(c.arguments, r.arguments)
end

-- Every call of `need` paired with its own call of `have`; ok(n, h) decides a pair.
local function covered(need, have, ok)
  local n = assign.matching(function(i, j) return ok(need[i], have[j]) end, #need, #have)
  return n == #need, n
end

local function calls_by_message(conv)
  local by = {}
  for _, c in ipairs(conv.calls) do
    by[c.message] = by[c.message] or {}
    table.insert(by[c.message], c)
  end
  return by
end

local function strict(o, out, ref)
  local a, b = out.messages, ref.messages
  if #a ~= #b then return false, ("%d messages against the reference's %d"):format(#a, #b) end
  local ca, cb = calls_by_message(out), calls_by_message(ref)
  for m = 1, #a do
    if a[m].role ~= b[m].role then
      return false, ("message %d is %s, the reference's is %s"):format(m, a[m].role, b[m].role)
    end
    local x, y = ca[m] or {}, cb[m] or {}
    if (#x > 0) ~= (#y > 0) then
      return false, ("message %d %s tool calls, the reference's %s"):format(m, #x > 0 and "makes" or "makes no",
        #y > 0 and "does" or "does not")
    end
    if #x ~= #y or not covered(y, x, function(r, c) return matches(o, c, r) end) then
      return false, ("the tool calls of message %d do not match the reference's"):format(m)
    end
  end
  return true, "every message matches the reference's role and tool calls"
end

-- compute(out, ref, o) -> {score = 1 | 0, match =, reason =}; out and ref
-- are parsed conversations (agent/data.lua).
function M.compute(out, ref, o)
  local ok, reason
  if o.mode == "strict" then
    ok, reason = strict(o, out, ref)
  else
    local C, R = out.calls, ref.calls
    local super, ns = covered(R, C, function(r, c) return matches(o, c, r) end)
    local sub, nb = covered(C, R, function(c, r) return matches(o, c, r) end)
    if o.mode == "superset" then ok = super
    elseif o.mode == "subset" then ok = sub
    else ok = super and sub end
    reason = ("%d of %d reference calls matched by an output call; %d of %d output calls match a reference call")
      :format(ns, #R, nb, #C)
  end
  return { score = ok and 1 or 0, match = ok, reason = ((ok and "match (%s): " or "no match (%s): "):format(o.mode)) .. reason }
end

return M
