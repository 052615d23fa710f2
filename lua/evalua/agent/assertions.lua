-- promptfoo's assertion types over a row's trajectory (its `messages`),
-- added to ev.assertions (docs/agents.md#assertions):
--   tool-call-f1                 F1 of the tool names called against value's names, as sets; passes at threshold (default 1)
--   trajectory:tool-used         every named tool called; {name =, min =, max =}: a count
--   trajectory:tool-sequence     the tools called in this order (in_order: with others between; exact: only these)
--   trajectory:tool-args-match   some call of the tool has these arguments (partial: at least these; exact)
--   trajectory:step-count        the number of steps (tool calls, assistant messages) within min..max
--   is-valid-openai-tools-call   every call names an offered tool and its arguments fit that tool's schema
-- Names in the trajectory types match as promptfoo matches them: without
-- regard to case, with * and ? as wildcards; tool-call-f1 compares names
-- exactly, as promptfoo does.
local data = require "evalua.agent.data"
local equal = require "evalua.agent.equal"
local schema = require "evalua.experiment.assertions_schema"
local json = require "evalua.core.json"

local M = {}

local function is_list(v) return type(v) == "table" and equal.is_list(v) and next(v) ~= nil end
local function is_object(v) return type(v) == "table" and not is_list(v) end

-- A name or a glob ("search_*"), case-insensitive.
local function glob(p)
  local lua = p:lower():gsub("[%^%$%(%)%%%.%[%]%+%-]", "%%%0"):gsub("%*", ".*"):gsub("%?", ".")
  return "^" .. lua .. "$"
end

local function name_ok(v) return type(v) == "string" and v:find("%S") ~= nil end

-- A matcher {pattern =, label =} from a name, or from {name =} / {pattern =}.
local function matcher(v, what, extra)
  if type(v) == "string" then
    if not name_ok(v) then return nil, what .. ": expected a tool name" end
    return { pattern = glob(v), label = v }
  end
  if not is_object(v) then return nil, what .. ": expected a tool name or {name =}" end
  for k in pairs(v) do
    if k ~= "name" and k ~= "pattern" and not (extra and extra[k]) then
      return nil, ("%s.%s: not a key here (name or pattern%s)"):format(what, tostring(k), extra and extra.shown or "")
    end
  end
  local p = v.pattern or v.name
  if v.pattern ~= nil and v.name ~= nil then return nil, what .. ": give name or pattern, not both" end
  if not name_ok(p) then return nil, what .. ": needs a name or pattern" end
  return { pattern = glob(p), label = p }
end

local function matches(m, name) return name:lower():find(m.pattern) ~= nil end

local function count_bound(v, what)
  if v == nil then return true end
  if math.tointeger(v) == nil or v < 0 then return nil, what .. ": expected a whole number >= 0" end
  return true
end

-- ---- value kinds ----------------------------------------------------------------

local values = {}

-- tool-call-f1: a list of names or "a, b"; at least one.
function values.tool_names(v, what)
  local list = v
  if type(v) == "string" then
    list = {}
    for name in v:gmatch("[^,]+") do
      name = name:match("^%s*(.-)%s*$")
      if name ~= "" then list[#list + 1] = name end
    end
  end
  if not is_list(list) then return nil, what .. ": expected a list of tool names or \"name, name\"" end
  local set, out = {}, {}
  for i, n in ipairs(list) do
    if not name_ok(n) then return nil, ("%s[%d]: expected a tool name"):format(what, i) end
    if not set[n] then set[n], out[#out + 1] = true, n end
  end
  return out
end

local COUNT_KEYS = { min = true, max = true, shown = ", min, max" }

-- trajectory:tool-used: a name, a list of names, or {name =, min =, max =}.
function values.tools_used(v, what)
  if type(v) == "string" or is_list(v) then
    local list = type(v) == "string" and { v } or v
    local out = {}
    for i, x in ipairs(list) do
      if type(x) ~= "string" then return nil, ("%s[%d]: expected a tool name"):format(what, i) end
      local m, why = matcher(x, ("%s[%d]"):format(what, i))
      if not m then return nil, why end
      out[i] = m
    end
    return { list = out }
  end
  local m, why = matcher(v, what, COUNT_KEYS)
  if not m then return nil, why end
  local ok
  ok, why = count_bound(v.min, what .. ".min")
  if not ok then return nil, why end
  ok, why = count_bound(v.max, what .. ".max")
  if not ok then return nil, why end
  local lo, hi = v.min or 1, v.max
  if hi and hi < lo then return nil, ("%s: min %d is above max %d"):format(what, lo, hi) end
  return { count = m, min = lo, max = hi }
end

-- trajectory:tool-sequence: a list of steps, or {mode =, steps =}; a step is
-- a name, {name =}, or a list of them (calls made together, in one message).
function values.sequence(v, what)
  local mode, steps = "in_order", v
  if is_object(v) then
    for k in pairs(v) do
      if k ~= "mode" and k ~= "steps" then return nil, ("%s.%s: not a key here (mode, steps)"):format(what, tostring(k)) end
    end
    mode, steps = v.mode or "in_order", v.steps
    if mode ~= "in_order" and mode ~= "exact" then return nil, what .. ".mode: expected \"in_order\" or \"exact\"" end
    what = what .. ".steps"
  end
  if not is_list(steps) then return nil, what .. ": expected a non-empty list of steps" end
  local groups, grouped = {}, false
  for i, s in ipairs(steps) do
    local w = ("%s[%d]"):format(what, i)
    local list = is_list(s) and s or { s }
    grouped = grouped or is_list(s)
    local g = {}
    for j, x in ipairs(list) do
      local m, why = matcher(x, is_list(s) and ("%s[%d]"):format(w, j) or w)
      if not m then return nil, why end
      g[j] = m
    end
    groups[i] = g
  end
  return { mode = mode, groups = groups, grouped = grouped }
end

-- trajectory:tool-args-match: {name =, args = {...}, mode = "partial" | "exact"}.
function values.args_match(v, what)
  local m, why = matcher(v, what, { args = true, arguments = true, mode = true, shown = ", args, mode" })
  if not m then return nil, why end
  if v.args ~= nil and v.arguments ~= nil then return nil, what .. ": give args or arguments, not both" end
  local args = v.args
  if args == nil then args = v.arguments end
  if args == nil then return nil, what .. ": needs args (the expected arguments)" end
  local mode = v.mode or "partial"
  if mode ~= "partial" and mode ~= "exact" then return nil, what .. ".mode: expected \"partial\" or \"exact\"" end
  return { m = m, args = args, mode = mode }
end

local STEP_TYPES = { tool = true, message = true }

-- trajectory:step-count: {min =, max =, type = "tool" | "message" | a list, name =}.
function values.step_count(v, what)
  if not is_object(v) then return nil, what .. ": expected {min =, max =}" end
  for k in pairs(v) do
    if k ~= "min" and k ~= "max" and k ~= "type" and k ~= "name" and k ~= "pattern" then
      return nil, ("%s.%s: not a key here (min, max, type, name, pattern)"):format(what, tostring(k))
    end
  end
  if v.min == nil and v.max == nil then return nil, what .. ": needs min or max" end
  for _, k in ipairs { "min", "max" } do
    local ok, why = count_bound(v[k], what .. "." .. k)
    if not ok then return nil, why end
  end
  if v.min and v.max and v.max < v.min then return nil, ("%s: min %d is above max %d"):format(what, v.min, v.max) end
  local types
  if v.type ~= nil then
    if type(v.type) ~= "string" and not is_list(v.type) then
      return nil, what .. ".type: expected \"tool\", \"message\" or a list of them"
    end
    types = {}
    for i, t in ipairs(type(v.type) == "string" and { v.type } or v.type) do
      if not STEP_TYPES[t] then
        return nil, ("%s.type%s: expected \"tool\" or \"message\" (the steps of a chat trajectory), got %s")
          :format(what, type(v.type) == "table" and ("[" .. i .. "]") or "", json.encode(t))
      end
      types[t] = true
    end
  end
  local m
  if v.name ~= nil or v.pattern ~= nil then
    local why
    m, why = matcher({ name = v.name, pattern = v.pattern }, what)
    if not m then return nil, why end
  end
  return { min = v.min, max = v.max, types = types, m = m }
end

-- is-valid-openai-tools-call: the offered tools (else the row's `tools`).
function values.tools(v, what)
  local tools, why = data.tools(v, what)
  if not tools then return nil, (why:gsub("^field '([^']*)': ", "%1: ")) end
  return tools
end

-- ---- checks ---------------------------------------------------------------------

-- The row's parsed trajectory, or nil and why it has none.
local function trajectory(row)
  if row.messages == nil then return nil, "the row has no messages (a trajectory)" end
  local p, why = data.row(row)
  if not p then return nil, why end
  return p.messages
end

local function of_trajectory(check)
  return function(_, value, row, c)
    local conv, why = trajectory(row)
    if not conv then return nil, why end
    return check(conv, value, row, c)
  end
end

local function called(conv)
  local out = {}
  for i, call in ipairs(conv.calls) do out[i] = call.name end
  return #out > 0 and table.concat(out, ", ") or "(none)"
end

local function f1(conv, names, _, c)
  local want, got, n_got = {}, {}, 0
  for _, n in ipairs(names) do want[n] = true end
  for _, call in ipairs(conv.calls) do
    if not got[call.name] then got[call.name], n_got = true, n_got + 1 end
  end
  local hit = 0
  for n in pairs(want) do if got[n] then hit = hit + 1 end end
  local p = n_got > 0 and hit / n_got or 0
  local r = hit / #names
  local score = (p + r) > 0 and 2 * p * r / (p + r) or 0
  local ok = score >= c.threshold
  return ok, ("tool call F1 %.3f %s %g (precision %.3f, recall %.3f); expected %s, called %s"):format(score,
    ok and ">=" or "<", c.threshold, p, r, table.concat(names, ", "), called(conv))
end

local function count_of(conv, m)
  local n = 0
  for _, call in ipairs(conv.calls) do if matches(m, call.name) then n = n + 1 end end
  return n
end

local function tools_used(conv, v)
  if v.list then
    local missing = {}
    for _, m in ipairs(v.list) do
      if count_of(conv, m) == 0 then missing[#missing + 1] = m.label end
    end
    if #missing > 0 then return false, ("missing %s; called %s"):format(table.concat(missing, ", "), called(conv)) end
    return true, "called " .. called(conv)
  end
  local n = count_of(conv, v.count)
  local ok = n >= v.min and (v.max == nil or n <= v.max)
  return ok, ("%s called %d time%s (expected %s)"):format(v.count.label, n, n == 1 and "" or "s",
    v.max and ("%d to %d"):format(v.min, v.max) or ("at least %d"):format(v.min))
end

-- The forbidden form: none of the listed tools called.
local function tools_not_used(conv, v)
  if not v.list then
    local pass, reason = tools_used(conv, v)
    return not pass, "not: " .. reason
  end
  local used = {}
  for _, m in ipairs(v.list) do
    if count_of(conv, m) > 0 then used[#used + 1] = m.label end
  end
  if #used > 0 then return false, ("called the forbidden %s; called %s"):format(table.concat(used, ", "), called(conv)) end
  return true, "called none of them; called " .. called(conv)
end

-- Does the group of matchers pair one to one with the calls of a message?
local function group_matches(calls, group)
  if #calls ~= #group then return false end
  local n = require("evalua.agent.assign").matching(function(i, j) return matches(group[i], calls[j].name) end,
    #group, #calls)
  return n == #group
end

local function sequence(conv, v)
  local units = {} -- each call on its own, or the calls of each message when steps are grouped
  if v.grouped then
    local by = {}
    for _, call in ipairs(conv.calls) do
      if not by[call.message] then by[call.message] = {}; units[#units + 1] = by[call.message] end
      table.insert(by[call.message], call)
    end
  else
    for _, call in ipairs(conv.calls) do units[#units + 1] = { call } end
  end
  local function fits(unit, g) return group_matches(unit, g) end
  local ok
  if v.mode == "exact" then
    ok = #units == #v.groups
    for i = 1, #v.groups do ok = ok and fits(units[i], v.groups[i]) end
  else
    local k = 1
    for _, unit in ipairs(units) do
      if k <= #v.groups and fits(unit, v.groups[k]) then k = k + 1 end
    end
    ok = k > #v.groups
  end
  local want = {}
  for i, g in ipairs(v.groups) do
    local labels = {}
    for j, m in ipairs(g) do labels[j] = m.label end
    want[i] = #labels > 1 and ("[" .. table.concat(labels, " + ") .. "]") or labels[1]
  end
  return ok, ("%s %s sequence %s; called %s"):format(ok and "follows" or "does not follow", v.mode == "exact" and "exactly the"
    or "the", table.concat(want, ", "), called(conv))
end

-- promptfoo's partial match: every key of the expected object present with
-- a partial match; lists of the same length, item by item; the rest equal.
local function partial(actual, expected)
  if type(expected) == "table" and equal.is_list(expected) and next(expected) ~= nil then
    if type(actual) ~= "table" or not equal.is_list(actual) or #actual ~= #expected then return false end
    for i = 1, #expected do if not partial(actual[i], expected[i]) then return false end end
    return true
  end
  if equal.is_object(expected) and next(expected) ~= nil then
    if not equal.is_object(actual) then return false end
    for k, x in pairs(expected) do
      if actual[k] == nil or not partial(actual[k], x) then return false end
    end
    return true
  end
  return equal.equal(actual, expected)
end

local function args_match(conv, v)
  local seen = {}
  for _, call in ipairs(conv.calls) do
    if matches(v.m, call.name) then
      if call.arguments then
        local ok = v.mode == "exact" and equal.equal(call.arguments, v.args) or (v.mode == "partial" and partial(call.arguments, v.args))
        if ok then return true, ("%s matches %s (%s)"):format(call.name, json.encode(v.args), v.mode) end
        seen[#seen + 1] = json.encode(call.arguments)
      else
        seen[#seen + 1] = "(not JSON)"
      end
    end
  end
  if #seen == 0 then return false, ("no call of %s; called %s"):format(v.m.label, called(conv)) end
  return false, ("no call of %s has %s (%s); its arguments: %s"):format(v.m.label, json.encode(v.args), v.mode,
    table.concat(seen, ", "))
end

-- Steps: each assistant message with text ("message") and each tool call ("tool").
local function step_count(conv, v)
  local n = 0
  local function counted(kind, name)
    if v.types and not v.types[kind] then return end
    if v.m and not matches(v.m, name) then return end
    n = n + 1
  end
  for _, msg in ipairs(conv.messages) do
    if msg.role == "assistant" and data.text(msg.content):find("%S") then counted("message", "message") end
  end
  for _, call in ipairs(conv.calls) do counted("tool", call.name) end
  local ok = (v.min == nil or n >= v.min) and (v.max == nil or n <= v.max)
  local range = v.min and v.max and ("%d to %d"):format(v.min, v.max) or v.min and ("at least %d"):format(v.min)
    or ("at most %d"):format(v.max)
  return ok, ("%d step%s (expected %s)"):format(n, n == 1 and "" or "s", range)
end

local function valid_calls(conv, tools, row)
  tools = tools or (data.row(row) or {}).tools
  if not tools then return nil, "no tools to check against: the row has no tools (or give them as the value)" end
  if #conv.calls == 0 then return false, "no tool calls in the output" end
  local by = {}
  for _, t in ipairs(tools) do by[t.name] = t end
  for i, call in ipairs(conv.calls) do
    local t = by[call.name]
    if not t then return false, ("call %d names %s, which is not an offered tool"):format(i, call.name) end
    if not call.arguments then return false, ("call %d (%s): %s"):format(i, call.name, call.error or "arguments not JSON") end
    if t.parameters then
      local ok, why = schema.validate(t.parameters, ("tool %s's parameters"):format(t.name))
      if not ok then return nil, "cannot check: " .. why end
      local bad = schema.check(t.parameters, call.arguments, "arguments")
      if bad then return false, ("call %d (%s): %s"):format(i, call.name, bad) end
    end
  end
  return true, ("%d call%s fit the offered tools"):format(#conv.calls, #conv.calls == 1 and "" or "s")
end

-- add(A): the kinds and types into ev.assertions (A = its module table).
function M.add(A)
  for k, f in pairs(values) do A.values[k] = f end
  local T = A.types
  T["tool-call-f1"] = { value = "tool_names", threshold = "share", threshold_default = 1, of_row = true,
                        check = of_trajectory(f1) }
  T["trajectory:tool-used"] = { value = "tools_used", of_row = true, check = of_trajectory(tools_used),
                                check_not = of_trajectory(tools_not_used) }
  T["trajectory:tool-sequence"] = { value = "sequence", of_row = true, check = of_trajectory(sequence) }
  T["trajectory:tool-args-match"] = { value = "args_match", of_row = true, check = of_trajectory(args_match) }
  T["trajectory:step-count"] = { value = "step_count", of_row = true, check = of_trajectory(step_count) }
  T["is-valid-openai-tools-call"] = { value = "tools", optional = true, of_row = true,
                                      check = of_trajectory(valid_calls) }
end

M.partial = partial
M.glob = glob
return M
