-- ev.assertions: deterministic checks of an output, as metrics. Each
-- assertion is a table in promptfoo's shape, {type =, value =, threshold =},
-- and passes or fails with a reason; "not-" before any type inverts it.
--
--   equals contains icontains contains-any icontains-any contains-all
--   icontains-all starts-with regex (a Lua pattern) is-json (value: an
--   optional schema) json-schema min-length max-length min-words max-words
--   similar (edit similarity >= threshold) latency (latency_ms <= threshold)
--   cost (cost <= threshold)
--
-- value may instead come from the row: {type = "icontains-any", field = "gold_answers"}.
-- A row may carry its own list in its `assert` field; ev.assertions.metric
-- checks the script's list and the row's together (1 when all pass).
-- Formulas and the JSON-schema subset: docs/prompts.md.
local json = require "evalua.json"
local text = require "evalua.text"
local schema = require "evalua.assertions_schema"
local options = require "evalua.options"

local M = {}

local function show(v)
  if type(v) == "string" then
    if #v > 60 then v = v:sub(1, 57) .. "..." end
    return (("%q"):format(v):gsub("\\\n", "\\n"))
  end
  if type(v) == "table" then return json.encode(v) end
  return tostring(v)
end

local function list_of(v)
  if type(v) == "table" then return v end
  return { v }
end

local function strings(v, what)
  for _, s in ipairs(list_of(v)) do
    if type(s) ~= "string" then return nil, what .. ": expected a string or a list of strings" end
  end
  if type(v) == "table" and #v == 0 then return nil, what .. ": expected at least one string" end
  return true
end

local function number(v, what)
  if type(v) ~= "number" or v ~= v then return nil, what .. ": expected a number" end
  return true
end

local function words(s)
  local n = 0
  for _ in s:gmatch("%S+") do n = n + 1 end
  return n
end

local function chars(s) return utf8.len(s) or #s end

local function has(hay, needle, fold)
  if fold then return hay:lower():find(needle:lower(), 1, true) ~= nil end
  return hay:find(needle, 1, true) ~= nil
end

local function any_all(fold, all)
  return function(answer, value)
    local found, missing = {}, {}
    for _, s in ipairs(list_of(value)) do
      if has(answer, s, fold) then found[#found + 1] = s else missing[#missing + 1] = s end
    end
    if all then
      if #missing == 0 then return true, "contains all of " .. show(value) end
      return false, "lacks " .. show(missing[1])
    end
    if #found > 0 then return true, "contains " .. show(found[1]) end
    return false, "contains none of " .. show(value)
  end
end

local function limit(measure, unit, cmp)
  return function(answer, value)
    local n = measure(answer)
    local ok = cmp == "<=" and n <= value or cmp == ">=" and n >= value
    return ok, ("%d %s, %s %s"):format(n, unit, ok and "within" or "outside", cmp .. " " .. tostring(value))
  end
end

-- Of a row, not of its answer: a missing value leaves the check unmeasured.
local function row_limit(field, unit)
  return function(_, _, row, a)
    local v = row[field]
    if type(v) ~= "number" then return nil, ("the output has no %s"):format(field) end
    local ok = v <= a.threshold
    return ok, ("%s = %g %s, %s <= %g"):format(field, v, unit, ok and "within" or "above", a.threshold)
  end
end

local function json_check(answer, value)
  local decoded, err = json.decode(answer)
  if decoded == nil then return false, "not JSON: " .. tostring(err) end
  if value == nil then return true, "valid JSON" end
  local why = schema.check(value, decoded)
  if why then return false, why end
  return true, "valid JSON matching the schema"
end

-- type -> {check = fn(answer, value, row, a) -> pass|nil, reason; need = validator of value}
M.types = {
  equals = { need = strings, check = function(answer, value)
    if answer == value then return true, "equals " .. show(value) end
    return false, "differs from " .. show(value)
  end },
  contains = { need = strings, check = any_all(false, true) },
  icontains = { need = strings, check = any_all(true, true) },
  ["contains-any"] = { need = strings, check = any_all(false, false) },
  ["icontains-any"] = { need = strings, check = any_all(true, false) },
  ["contains-all"] = { need = strings, check = any_all(false, true) },
  ["icontains-all"] = { need = strings, check = any_all(true, true) },
  ["starts-with"] = { need = strings, check = function(answer, value)
    if answer:sub(1, #value) == value then return true, "starts with " .. show(value) end
    return false, "does not start with " .. show(value)
  end },
  regex = { need = function(v, what)
    if type(v) ~= "string" then return nil, what .. ": expected a Lua pattern" end
    local ok, err = pcall(string.find, "", v)
    if not ok then return nil, what .. ": bad Lua pattern: " .. tostring(err):gsub("^.-: ", "") end
    return true
  end, check = function(answer, value)
    local m = answer:match(value)
    if m then return true, ("matches %s at %s"):format(show(value), show(m)) end
    return false, "does not match " .. show(value)
  end },
  ["is-json"] = { optional = true, need = schema.validate, check = json_check },
  ["json-schema"] = { need = schema.validate, check = json_check },
  ["min-length"] = { need = number, check = limit(chars, "characters", ">=") },
  ["max-length"] = { need = number, check = limit(chars, "characters", "<=") },
  ["min-words"] = { need = number, check = limit(words, "words", ">=") },
  ["max-words"] = { need = number, check = limit(words, "words", "<=") },
  similar = { need = strings, threshold = true, check = function(answer, value, _, a)
    local s = text.edit_similarity(answer, value)
    local ok = s >= a.threshold
    return ok, ("edit similarity %.4f %s %g"):format(s, ok and ">=" or "<", a.threshold)
  end },
  latency = { value_free = true, threshold = true, check = row_limit("latency_ms", "ms") },
  cost = { value_free = true, threshold = true, check = row_limit("cost", "USD") },
}

local KEYS = options.set { "type", "value", "field", "threshold", "name" }

-- validate(a, where) -> a compiled assertion | nil, message naming where.
function M.compile(a, where)
  if type(a) ~= "table" then return nil, where .. ": an assertion is a table {type =, value =}" end
  for k in pairs(a) do
    if not KEYS[k] then return nil, ("%s: unknown key '%s' (type, value, field, threshold, name)"):format(where, tostring(k)) end
  end
  if type(a.type) ~= "string" then return nil, where .. ".type: expected a string" end
  local negate, base = false, a.type
  if base:sub(1, 4) == "not-" then negate, base = true, base:sub(5) end
  local t = M.types[base]
  if not t then return nil, ("%s.type: unknown assertion type '%s'"):format(where, a.type) end
  if t.threshold and type(a.threshold) ~= "number" then
    return nil, ("%s.threshold: '%s' needs a number"):format(where, a.type)
  end
  if a.field ~= nil and type(a.field) ~= "string" then return nil, where .. ".field: expected a field name" end
  if a.field ~= nil and a.value ~= nil then return nil, where .. ": give value or field, not both" end
  if a.value ~= nil or not (t.value_free or t.optional or a.field) then
    local ok, why = t.need(a.value, where .. ".value")
    if not ok then return nil, why end
  end
  local name = a.name or (a.type .. (a.value ~= nil and (" " .. show(a.value))
    or a.field and (" {" .. a.field .. "}") or a.threshold and (" " .. tostring(a.threshold)) or ""))
  return { type = a.type, base = base, negate = negate, t = t, value = a.value, field = a.field,
           threshold = a.threshold, name = name }
end

-- run(c, row) -> {name=, pass = true|false|nil, reason=}
function M.run(c, row)
  if row.output_error ~= nil then return { name = c.name, reason = "no output: " .. tostring(row.output_error) } end
  local answer = row.answer
  if type(answer) ~= "string" and not c.t.value_free then return { name = c.name, reason = "the row has no answer" } end
  local value = c.value
  if c.field then
    value = row[c.field]
    local ok, why = c.t.need(value, "field '" .. c.field .. "'")
    if not ok then return { name = c.name, reason = why } end
  end
  local pass, reason = c.t.check(answer, value, row, c)
  if pass ~= nil and c.negate then pass, reason = not pass, "not: " .. reason end
  return { name = c.name, pass = pass, reason = reason }
end

local function compile_list(list, where)
  if list == nil then return {} end
  if type(list) ~= "table" then return nil, where .. ": expected a list of assertions" end
  local out = {}
  for i, a in ipairs(list) do
    local c, why = M.compile(a, ("%s[%d]"):format(where, i))
    if not c then return nil, why end
    out[i] = c
  end
  return out
end

-- "assert[2].type: unknown ..." -> "field 'assert[2].type': unknown ...",
-- the form every bad-input message takes.
function M.field_message(why)
  return (why:gsub("^([^:]+): ", "field '%1': ", 1))
end

-- check_rows(ds [, field]): every row's own list compiles, or an input
-- error naming file, line and field stops the run before anything is sent.
function M.check_rows(ds, field)
  field = field or "assert"
  for i = 1, ds.n do
    local row = ds.rows[i]
    local list = row[field]
    if list ~= nil then
      local _, why = compile_list(list, field)
      if why then
        require("evalua._sys").input_error(("%s:%s: %s"):format(ds.path or "(rows)", tostring(row._line or i),
          M.field_message(why)))
      end
    end
  end
end

-- Every assertion of a row: the script's, then the row's own.
function M.evaluate(compiled, row, field)
  local own, why = compile_list(row[field or "assert"], field or "assert")
  if not own then return nil, M.field_message(why) end
  local out = {}
  for _, c in ipairs(compiled) do out[#out + 1] = M.run(c, row) end
  for _, c in ipairs(own) do out[#out + 1] = M.run(c, row) end
  return out
end

-- A score from results: 1 when all pass, 0 when one fails; unmeasured when
-- none fails but one could not be checked.
local function verdict(results)
  if #results == 0 then return { unmeasured = true, reason = "no assertions for this row" } end
  local failed, open, passed = {}, nil, 0
  for _, r in ipairs(results) do
    if r.pass == false then failed[#failed + 1] = r.name .. ": " .. r.reason
    elseif r.pass == nil then open = open or (r.name .. ": " .. r.reason)
    else passed = passed + 1 end
  end
  if #failed > 0 then
    return { score = 0, reason = ("%d of %d failed: %s"):format(#failed, #results, table.concat(failed, "; ")),
             assertions = results }
  end
  if open then return { unmeasured = true, reason = open, assertions = results } end
  return { score = 1, reason = ("all %d passed"):format(passed), assertions = results }
end

local METRIC = options.set { "name", "field" }

-- metric(list [, {name = "assertions", field = "assert"}]) -> a metric: 1 when
-- the row passes every assertion of list and of its own field.
function M.metric(list, opts)
  opts = opts or {}
  options.check(opts, METRIC, "ev.assertions.metric", 2)
  local compiled, why = compile_list(list, "assertions")
  if not compiled then error("ev.assertions.metric: " .. why, 2) end
  local field = opts.field or "assert"
  return {
    name = opts.name or "assertions", higher_is_better = true,
    description = "1 when the output passes every assertion (the script's and the row's '" .. field .. "')",
    fn = function(row)
      local results, bad = M.evaluate(compiled, row, field)
      if not results then return { unmeasured = true, reason = bad } end
      return verdict(results)
    end,
  }
end

-- metrics(list) -> one metric per assertion, named by the assertion, so
-- each is reported and gated on its own (1 pass, 0 fail).
function M.metrics(list)
  local compiled, why = compile_list(list, "assertions")
  if not compiled then error("ev.assertions.metrics: " .. why, 2) end
  local out = {}
  for i, c in ipairs(compiled) do
    out[i] = { name = c.name, higher_is_better = true, description = "assertion " .. c.name,
               fn = function(row) return verdict { M.run(c, row) } end }
  end
  return out
end

return M
