-- ev.assertions: deterministic checks of an output, as metrics. Each
-- assertion is a table in promptfoo's shape, {type =, value =, threshold =},
-- and passes or fails with a reason; "not-" before any type inverts it.
--
--   equals contains icontains contains-any icontains-any contains-all
--   icontains-all starts-with regex (PCRE2) lua-pattern is-json (value: an
--   optional schema) json-schema min-length max-length min-words max-words
--   similar (edit similarity >= threshold) latency (latency_ms <= threshold)
--   cost (cost <= threshold)
--   tool-call-f1 trajectory:tool-used trajectory:tool-sequence
--   trajectory:tool-args-match trajectory:step-count is-valid-openai-tools-call
--   (over the row's messages: lua/evalua/agent/assertions.lua, docs/agents.md)
--
-- value may instead come from the row: {type = "icontains-any", field = "gold_answers"}.
-- A row may carry its own list in its `assert` field; ev.assertions.metric
-- checks the script's list and the row's together (1 when all pass).
-- Every assertion is checked when it is built: one that could not decide
-- (no value, a list where one string is meant, a negative bound, a key the
-- type does not use) is an input error, never a verdict.
-- Formulas, the regex dialect and its limits: docs/prompts.md.
local json = require "evalua.core.json"
local text = require "evalua.eval.text"
local schema = require "evalua.experiment.assertions_schema"
local options = require "evalua.core.options"
local regex = require "evalua._regex"
local sys = require "evalua._sys"

local M = {}

-- At most 60 bytes of s, cut before a character, not inside one.
local function clip(s)
  if #s <= 60 then return s end
  local cut = 57
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xC0 == 0x80 do cut = cut - 1 end
  return s:sub(1, cut) .. "..."
end

local function show(v)
  if type(v) == "string" then return (("%q"):format(clip(v)):gsub("\\\n", "\\n")) end
  if type(v) == "table" then
    local ok, s = pcall(json.encode, v)
    return ok and s or tostring(v)
  end
  if math.type(v) == "float" and v == v and math.abs(v) ~= math.huge then return json.number(v) end -- -3, not -3.0
  return tostring(v)
end

-- A regular expression as people write one: /\d+/, unescaped.
local function slashed(s) return "/" .. clip(s):gsub("\n", "\\n") .. "/" end

local function is_list(v)
  return type(v) == "table" and (v[1] ~= nil or next(v) == nil)
end

-- ---- value kinds ------------------------------------------------------------
-- M.values[kind](v, what) -> the value prepared for check | nil, why. `what`
-- names the value ("assert[2].value", "field 'gold_answers'"). A kind both
-- refuses what cannot decide and converts once what each check would redo
-- (a pattern compiled, a string made a list).

M.values = {}

local function one_text(v, what, empty_ok)
  if type(v) == "table" then return nil, what .. ": expected one string, not a list" end
  if type(v) ~= "string" then return nil, what .. ": expected a string" end
  if v == "" and not empty_ok then
    return nil, what .. ": an empty string is in every answer, so the check cannot tell answers apart"
  end
  return v
end

-- One non-empty string (starts-with).
function M.values.text(v, what) return one_text(v, what) end

-- One string, possibly empty (equals: an empty answer is a real expectation).
function M.values.string(v, what) return one_text(v, what, true) end

-- A non-empty string or a non-empty list of them, as a list.
function M.values.texts(v, what)
  if type(v) ~= "table" then
    local s, why = one_text(v, what)
    if not s then return nil, (why:gsub("expected a string$", "expected a string or a list of strings")) end
    return { s }
  end
  if not is_list(v) or #v == 0 then return nil, what .. ": expected a string or a non-empty list of strings" end
  for i, s in ipairs(v) do
    local ok, why = one_text(s, ("%s[%d]"):format(what, i))
    if not ok then return nil, why end
  end
  return v
end

local function finite(v) return math.type(v) ~= nil and v == v and v ~= math.huge and v ~= -math.huge end

-- A count bound: a whole number >= 0.
function M.values.count(v, what)
  if math.type(v) == nil then return nil, what .. ": expected a number" end
  if not finite(v) then return nil, what .. ": expected a finite number" end
  if v < 0 then return nil, what .. ": expected a number >= 0, got " .. show(v) end
  if v ~= math.floor(v) then return nil, what .. ": expected a whole number, got " .. show(v) end
  return math.tointeger(v) or v
end

-- A PCRE2 pattern, compiled once.
function M.values.regex(v, what)
  local s, why = one_text(v, what)
  if not s then return nil, why end
  local re, err = regex.compile(s)
  if not re then
    if err:find("\\u", 1, true) then err = err .. " (write \\x{HHHH} for a code point)" end
    return nil, ("%s: bad regular expression: %s"):format(what, err)
  end
  return { re = re, source = s }
end

-- A Lua pattern (string.find), checked by a trial find.
function M.values.lua_pattern(v, what)
  local s, why = one_text(v, what)
  if not s then return nil, why end
  local ok, err = pcall(string.find, "", s)
  if not ok then return nil, what .. ": bad Lua pattern: " .. tostring(err):gsub("^.-: ", "") end
  return s
end

function M.values.schema(v, what)
  local ok, why = schema.validate(v, what)
  if not ok then return nil, why end
  return v
end

-- ---- threshold kinds --------------------------------------------------------

M.thresholds = {
  share = { what = "a number from 0 to 1", ok = function(v) return finite(v) and v >= 0 and v <= 1 end },
  ms = { what = "a number of milliseconds >= 0", ok = function(v) return finite(v) and v >= 0 end },
  usd = { what = "an amount in USD >= 0", ok = function(v) return finite(v) and v >= 0 end },
}

-- ---- checks -----------------------------------------------------------------

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

local function shown(list) return #list == 1 and show(list[1]) or show(list) end

local function any_all(fold, all)
  return function(answer, list)
    local found, missing = {}, {}
    for _, s in ipairs(list) do
      if has(answer, s, fold) then found[#found + 1] = s else missing[#missing + 1] = s end
    end
    if all then
      if #missing == 0 then return true, "contains all of " .. shown(list) end
      return false, "lacks " .. show(missing[1])
    end
    if #found > 0 then return true, "contains " .. show(found[1]) end
    return false, "contains none of " .. shown(list)
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
-- A cached answer keeps the latency and cost of when it was asked.
local function row_limit(field, unit)
  return function(_, _, row, c)
    local v, cached = row[field], row.cached == true
    if type(v) ~= "number" then
      return nil, ("the output has no %s%s"):format(field, cached and " (cached before evalua kept it)" or "")
    end
    local ok = v <= c.threshold
    return ok, ("%s = %g %s%s, %s <= %g"):format(field, v, unit, cached and " when asked (cached)" or "",
      ok and "within" or "above", c.threshold)
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

local function regex_check(answer, p)
  local first, last = p.re:find(answer)
  if first then return true, ("matches %s at %s"):format(slashed(p.source), show(answer:sub(first, last))) end
  if first == false then return false, "does not match " .. slashed(p.source) end
  return nil, ("regex %s: %s"):format(slashed(p.source), last)
end

local function lua_pattern_check(answer, p)
  local m = answer:match(p)
  if m then return true, ("matches %s at %s"):format(show(p), show(m)) end
  return false, "does not match " .. show(p)
end

-- type -> spec. A spec has
--   check(answer, value, row, c) -> pass (true | false | nil: cannot tell), reason
--   value = a kind of M.values, or nil when the type takes no value
--   optional = true when the value may be left out (is-json)
--   threshold = a kind of M.thresholds, or nil when the type takes none
--   threshold_default = the threshold when none is given (else one is required)
--   check_not = the check of "not-" when it is not the plain inverse
--   of_row = true when it reads the output's row, not its answer
--   shown(value) -> how the value appears in the assertion's name (default: quoted)
-- Keys a type does not use are refused, so nothing given is ignored.
M.types = {
  equals = { value = "string", check = function(answer, value)
    if answer == value then return true, "equals " .. show(value) end
    return false, "differs from " .. show(value)
  end },
  contains = { value = "texts", check = any_all(false, true) },
  icontains = { value = "texts", check = any_all(true, true) },
  ["contains-any"] = { value = "texts", check = any_all(false, false) },
  ["icontains-any"] = { value = "texts", check = any_all(true, false) },
  ["contains-all"] = { value = "texts", check = any_all(false, true) },
  ["icontains-all"] = { value = "texts", check = any_all(true, true) },
  ["starts-with"] = { value = "text", check = function(answer, value)
    if answer:sub(1, #value) == value then return true, "starts with " .. show(value) end
    return false, "does not start with " .. show(value)
  end },
  regex = { value = "regex", shown = slashed, check = regex_check },
  ["lua-pattern"] = { value = "lua_pattern", check = lua_pattern_check },
  ["is-json"] = { value = "schema", optional = true, check = json_check },
  ["json-schema"] = { value = "schema", check = json_check },
  ["min-length"] = { value = "count", check = limit(chars, "characters", ">=") },
  ["max-length"] = { value = "count", check = limit(chars, "characters", "<=") },
  ["min-words"] = { value = "count", check = limit(words, "words", ">=") },
  ["max-words"] = { value = "count", check = limit(words, "words", "<=") },
  similar = { value = "texts", threshold = "share", check = function(answer, value, _, c)
    local s = text.edit_similarity(answer, value)
    local ok = s >= c.threshold
    return ok, ("edit similarity %.4f %s %g"):format(s, ok and ">=" or "<", c.threshold)
  end },
  latency = { threshold = "ms", of_row = true, check = row_limit("latency_ms", "ms") },
  cost = { threshold = "usd", of_row = true, check = row_limit("cost", "USD") },
}

local KEY_LIST = { "type", "value", "field", "threshold", "name" }
local KEYS = options.set(KEY_LIST)

local function type_names()
  local names = {}
  for k in pairs(M.types) do names[#names + 1] = k end
  table.sort(names)
  return names
end

-- A type name read: {t = spec, base = name without "not-", negate =}, or nil and why.
local function type_of(name, where)
  if type(name) ~= "string" then return nil, where .. ".type: expected a string" end
  local negate, base = false, name
  if base:sub(1, 4) == "not-" then negate, base = true, base:sub(5) end
  local t = M.types[base]
  if t then return { t = t, base = base, negate = negate } end
  return nil, ("%s.type: unknown assertion type '%s'%s"):format(where, name, options.suggest(base, type_names()))
end

-- What a type takes, for the message when a key does not belong.
local function takes(t)
  if t.value and t.threshold then return "value or field, and threshold" end
  if t.value then return "value or field" end
  return "threshold"
end

-- Every key present belongs to the type, and every key it needs is there.
local function check_keys(a, t, where)
  for k in pairs(a) do
    if not KEYS[k] then
      return ("%s: unknown key '%s'%s"):format(where, tostring(k), options.hint(k, KEY_LIST))
    end
  end
  local given = a.value ~= nil and "value" or a.field ~= nil and "field" or nil
  if a.value ~= nil and a.field ~= nil then return where .. ": give value or field, not both" end
  if given and not t.value then
    return ("%s.%s: '%s' takes no %s, only %s"):format(where, given, a.type, given, takes(t))
  end
  if not given and t.value and not t.optional then
    return ("%s.value: '%s' needs a value (or a field of the row to take it from)"):format(where, a.type)
  end
  if a.field ~= nil and (type(a.field) ~= "string" or a.field == "") then
    return where .. ".field: expected a field name"
  end
  if a.threshold ~= nil and not t.threshold then
    return ("%s.threshold: '%s' takes no threshold, only %s"):format(where, a.type, takes(t))
  end
  if t.threshold then
    local kind = M.thresholds[t.threshold]
    if a.threshold == nil and t.threshold_default == nil then
      return ("%s.threshold: '%s' needs a threshold, %s"):format(where, a.type, kind.what)
    end
    if a.threshold ~= nil and not kind.ok(a.threshold) then
      return ("%s.threshold: expected %s, got %s"):format(where, kind.what, show(a.threshold))
    end
  end
  if a.name ~= nil and (type(a.name) ~= "string" or a.name == "") then return where .. ".name: expected a string" end
  return nil
end

-- compile(a, where) -> a compiled assertion | nil, message naming where.
function M.compile(a, where)
  if type(a) ~= "table" or a[1] ~= nil then return nil, where .. ": an assertion is a table {type =, value =}" end
  local kind, why = type_of(a.type, where)
  if not kind then return nil, why end
  local t = kind.t
  local bad = check_keys(a, t, where)
  if bad then return nil, bad end
  local value = nil
  if a.value ~= nil then
    value, why = M.values[t.value](a.value, where .. ".value")
    if value == nil then return nil, why end
  end
  local name = a.name or (a.type .. (a.value ~= nil and (" " .. (t.shown or show)(a.value))
    or a.field and (" {" .. a.field .. "}") or a.threshold and (" " .. show(a.threshold)) or ""))
  local threshold = a.threshold
  if threshold == nil then threshold = t.threshold_default end
  return { type = a.type, base = kind.base, negate = kind.negate, t = t, value = value, field = a.field,
           threshold = threshold, name = name }
end

-- run(c, row) -> {name=, pass = true|false|nil, reason=}
function M.run(c, row)
  if row.output_error ~= nil then return { name = c.name, reason = "no output: " .. tostring(row.output_error) } end
  local answer = row.answer
  if type(answer) ~= "string" and not c.t.of_row then return { name = c.name, reason = "the row has no answer" } end
  local value = c.value
  if c.field then
    local why
    value, why = M.values[c.t.value](row[c.field], "field '" .. c.field .. "'")
    if value == nil then return { name = c.name, reason = why } end
  end
  if c.negate and c.t.check_not then
    local pass, reason = c.t.check_not(answer, value, row, c)
    return { name = c.name, pass = pass, reason = reason }
  end
  local pass, reason = c.t.check(answer, value, row, c)
  if pass ~= nil and c.negate then pass, reason = not pass, "not: " .. reason end
  return { name = c.name, pass = pass, reason = reason }
end

local function compile_list(list, where)
  if list == nil then return {} end
  if not is_list(list) then return nil, where .. ": expected a list of assertions" end
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

-- An input error (exit status 3, no traceback) at the line of the code
-- `level` calls up, as error(msg, level) would place it.
local function refuse(msg, level)
  local _, where = pcall(error, "", level + 2) -- + this function and pcall
  sys.input_error(where .. msg)
end

-- The compiled lists of rows, by the list's JSON: a row's assertions are
-- compiled once, however many cells of a matrix carry the same row.
local function row_lists()
  local by_json = {}
  return function(list, field)
    local ok, key = pcall(json.encode, list)
    local hit = ok and by_json[key]
    if hit then return hit end
    local compiled, why = compile_list(list, field)
    if compiled and ok then by_json[key] = compiled end
    return compiled, why
  end
end

-- check_rows(ds [, field [, lists]]): every row's own list compiles, or an
-- input error naming file, line and field stops the run before anything
-- is sent or asked.
function M.check_rows(ds, field, lists)
  field, lists = field or "assert", lists or row_lists()
  for i = 1, ds.n do
    local row = ds.rows[i]
    local list = row[field]
    if list ~= nil then
      local _, why = lists(list, field)
      if why then
        sys.input_error(("%s:%s: %s"):format(ds.path or "(rows)", tostring(row._line or i), M.field_message(why)))
      end
    end
  end
end

-- Every assertion of a row: the script's, then the row's own.
function M.evaluate(compiled, row, field, lists)
  field = field or "assert"
  local own, why = (lists or compile_list)(row[field], field)
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
-- the row passes every assertion of list and of its own field. ev.evaluate
-- calls its check(ds) first, so a bad row list stops the run up front.
function M.metric(list, opts)
  opts = opts or {}
  options.check(opts, METRIC, "ev.assertions.metric", 2)
  local compiled, why = compile_list(list, "assertions")
  if not compiled then refuse("ev.assertions.metric: " .. why, 2) end
  local field = opts.field or "assert"
  local lists = row_lists()
  return {
    name = opts.name or "assertions", higher_is_better = true,
    description = "1 when the output passes every assertion (the script's and the row's '" .. field .. "')",
    check = function(ds) M.check_rows(ds, field, lists) end,
    fn = function(row)
      local results, bad = M.evaluate(compiled, row, field, lists)
      if not results then return { unmeasured = true, reason = bad } end
      return verdict(results)
    end,
  }
end

-- metrics(list) -> one metric per assertion, named by the assertion, so
-- each is reported and gated on its own (1 pass, 0 fail).
function M.metrics(list)
  local compiled, why = compile_list(list, "assertions")
  if not compiled then refuse("ev.assertions.metrics: " .. why, 2) end
  local out = {}
  for i, c in ipairs(compiled) do
    out[i] = { name = c.name, higher_is_better = true, description = "assertion " .. c.name,
               fn = function(row) return verdict { M.run(c, row) } end }
  end
  return out
end

require("evalua.agent.assertions").add(M) -- the tool-call and trajectory types

return M
