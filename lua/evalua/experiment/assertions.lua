-- ev.assertions: checks of an output, as metrics. Each assertion is a
-- table in promptfoo's shape, {type =, value =, threshold =, weight =,
-- metric =}, and passes or fails with a score and a reason; "not-" before
-- any type inverts it. M.types is the registry, keyed by promptfoo's exact
-- type names (a promptfoo config's runner dispatches into it); the
-- families live in assertions_*.lua, and docs/assertions.md lists them all.
--
-- value may instead come from the row: {type = "icontains-any", field = "gold_answers"}.
-- A row may carry its own list in its `assert` field; ev.assertions.metric
-- checks the script's list and the row's together. Every assertion is
-- checked when it is built: one that could not decide (no value, a list
-- where one string is meant, a negative bound, a key the type does not
-- use) is an input error, never a verdict.
local json = require "evalua.core.json"
local options = require "evalua.core.options"
local sys = require "evalua._sys"
local K = require "evalua.experiment.assertions_values"

local M = { values = K.values, thresholds = K.thresholds, show = K.show, split_commas = K.split_commas }
local show, is_list = K.show, K.is_list

-- type -> spec. A spec has
--   check(answer, value, row, c, ctx) -> pass (true | false | nil: cannot
--     tell), reason [, score in 0..1 (default: 1 for a pass, 0 for a fail)]
--   value = a kind of M.values, or nil when the type takes no value
--   optional = true when the value may be left out (is-json)
--   threshold = a kind of M.thresholds, or nil when the type takes none
--   threshold_default = the threshold when none is given (else one is required)
--   keys = {name = check(v, what) -> value | nil, why}: the type's own keys
--   check_not = the check of "not-" when it is not the plain inverse
--   of_row = true when it reads the output's row, not (only) its answer
--   across = true when it compares the outputs of a case's cells (max-score)
--   shown(value) -> how the value appears in the assertion's name (default: quoted)
-- Keys a type does not use are refused, so nothing given is ignored.
M.types = {}

local KEY_LIST = { "type", "value", "field", "threshold", "name", "weight", "metric" }
local KEYS = options.set(KEY_LIST)

local function type_names()
  local names = {}
  for k in pairs(M.types) do names[#names + 1] = k end
  table.sort(names)
  return names
end
M.type_names = type_names

-- A type name read: {t = spec, base = name without "not-", negate =}, or nil and why.
local function type_of(name, where)
  if type(name) ~= "string" then return nil, where .. ".type: expected a string" end
  local negate, base = false, name
  if base:sub(1, 4) == "not-" then negate, base = true, base:sub(5) end
  local t = M.types[base]
  if t and negate and t.no_not then
    return nil, ("%s.type: '%s' has no not- form (%s)"):format(where, name, t.no_not)
  end
  if t then return { t = t, base = base, negate = negate } end
  return nil, ("%s.type: unknown assertion type '%s'%s"):format(where, name, options.suggest(base, type_names()))
end

-- What a type takes, for the message when a key does not belong.
local function takes(t)
  local parts = {}
  if t.value then parts[#parts + 1] = "value or field" end
  if t.threshold then parts[#parts + 1] = "threshold" end
  for k in pairs(t.keys or {}) do parts[#parts + 1] = k end
  table.sort(parts, function(a, b) return a == "value or field" or (b ~= "value or field" and a < b) end)
  if #parts == 0 then return "no value" end
  return table.concat(parts, ", ")
end

local function check_threshold(a, t, where)
  if a.threshold ~= nil and not t.threshold then
    return ("%s.threshold: '%s' takes no threshold, only %s"):format(where, a.type, takes(t))
  end
  if t.threshold then
    local kind = M.thresholds[t.threshold]
    if a.threshold == nil and t.threshold_default == nil and not t.optional_threshold then
      return ("%s.threshold: '%s' needs a threshold, %s"):format(where, a.type, kind.what)
    end
    if a.threshold ~= nil and not kind.ok(a.threshold) then
      return ("%s.threshold: expected %s, got %s"):format(where, kind.what, show(a.threshold))
    end
  end
end

-- Every key present belongs to the type, and every key it needs is there.
local function check_keys(a, t, where)
  for k in pairs(a) do
    if not KEYS[k] and not (t.keys and t.keys[k]) then
      local names = { table.unpack(KEY_LIST) }
      for own in pairs(t.keys or {}) do names[#names + 1] = own end
      return ("%s: unknown key '%s'%s"):format(where, tostring(k), options.hint(k, names))
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
  local bad = check_threshold(a, t, where)
  if bad then return bad end
  if a.name ~= nil and (type(a.name) ~= "string" or a.name == "") then return where .. ".name: expected a string" end
  if a.metric ~= nil and (type(a.metric) ~= "string" or a.metric == "") then
    return where .. ".metric: expected a metric name"
  end
  if a.weight ~= nil and not (K.finite(a.weight) and a.weight >= 0) then
    return ("%s.weight: expected a number >= 0, got %s"):format(where, show(a.weight))
  end
  return nil
end

-- The type's own keys, each checked and converted.
local function own_keys(a, t, where)
  local out = {}
  for k, f in pairs(t.keys or {}) do
    if a[k] ~= nil then
      local v, why = f(a[k], where .. "." .. k)
      if v == nil then return nil, why end
      out[k] = v
    end
  end
  return out
end

-- compile(a, where [, {base = folder}]) -> a compiled assertion | nil,
-- message naming where. base: the folder file:// values are read from.
function M.compile(a, where, opts)
  if type(a) ~= "table" or a[1] ~= nil then return nil, where .. ": an assertion is a table {type =, value =}" end
  if a.type == "assert-set" then return M.compile_set(a, where, opts) end
  if a.type == "not-assert-set" then
    return nil, where .. ".type: 'not-assert-set' has no not- form (negate the assertions inside it)"
  end
  local kind, why = type_of(a.type, where)
  if not kind then return nil, why end
  local t = kind.t
  local bad = check_keys(a, t, where)
  if bad then return nil, bad end
  local value = nil
  if a.value ~= nil then
    local raw = a.value
    if not t.raw_value then -- a script type reads its own file:// (the code, not a value)
      raw, why = K.resolve(a.value, where .. ".value", opts and opts.base)
      if raw == nil then return nil, why end
    end
    value, why = M.values[t.value](raw, where .. ".value", opts)
    if value == nil then return nil, why end
  elseif t.value and t.optional and t.default then
    value = t.default()
  end
  local extra
  extra, why = own_keys(a, t, where)
  if not extra then return nil, why end
  local name = a.name or (a.type .. (a.value ~= nil and (" " .. (t.shown or show)(a.value))
    or a.field and (" {" .. a.field .. "}") or a.threshold and (" " .. show(a.threshold)) or ""))
  local threshold = a.threshold
  if threshold == nil then threshold = t.threshold_default end
  return { type = a.type, base = kind.base, negate = kind.negate, t = t, value = value, field = a.field,
           threshold = threshold, name = name, weight = a.weight or 1, metric = a.metric, keys = extra,
           where = where }
end

local function result(c, pass, reason, score)
  return { name = c.name, pass = pass, reason = reason, score = score, weight = c.weight, metric = c.metric,
           type = c.type, across = c.t and c.t.across or nil }
end

-- run(c, row [, ctx]) -> {name=, pass = true|false|nil, score=, reason=, weight=, metric=}
-- ctx: ev.evaluate's (ctx.judge for the types that embed or judge).
function M.run(c, row, ctx)
  if c.set then return M.run_set(c, row, ctx) end
  if c.t.across then
    return result(c, nil, "compares the outputs of a case's cells: ev.assertions.metric scores it over the data set")
  end
  if row.output_error ~= nil then return result(c, nil, "no output: " .. tostring(row.output_error)) end
  local answer = row.answer
  if type(answer) ~= "string" and not c.t.of_row then return result(c, nil, "the row has no answer") end
  local value = c.value
  if c.field then
    local why
    value, why = M.values[c.t.value](row[c.field], "field '" .. c.field .. "'")
    if value == nil then return result(c, nil, why) end
  end
  local pass, reason, score
  if c.negate and c.t.check_not then
    pass, reason, score = c.t.check_not(answer, value, row, c, ctx)
  else
    pass, reason, score = c.t.check(answer, value, row, c, ctx)
    if pass ~= nil and c.negate then
      pass, reason, score = not pass, "not: " .. reason, score and 1 - score
    end
  end
  if pass == nil then return result(c, nil, reason) end
  if score == nil then score = pass and 1 or 0 end
  if c.weight == 0 and not pass then -- promptfoo: a weight-0 assertion only reports its score
    pass, reason = true, reason .. " (weight 0: reported, never failing)"
  end
  return result(c, pass, reason, score)
end

-- ---- scores of several assertions ---------------------------------------------

-- aggregate(results [, threshold]) -> pass (nil: unmeasured), score, reason:
-- promptfoo's rule. score is the weighted mean of the scores; the list
-- passes when none failed, or, with a threshold, when score >= threshold.
-- An assertion that could not be checked leaves the list unmeasured
-- unless another failed (without a threshold, a fail stands regardless).
function M.aggregate(results, threshold)
  local failed, open, total, weights = {}, nil, 0, 0
  for _, r in ipairs(results) do
    if r.pass == nil then open = open or (r.name .. ": " .. r.reason)
    else
      total, weights = total + r.score * r.weight, weights + r.weight
      if r.pass == false then failed[#failed + 1] = r.name .. ": " .. r.reason end
    end
  end
  if open and (threshold ~= nil or #failed == 0) then return nil, nil, open end
  local score = weights > 0 and total / weights or 0
  if threshold ~= nil then
    local pass = score >= threshold
    return pass, score, ("aggregate score %.4f %s threshold %s%s"):format(score, pass and ">=" or "<", show(threshold),
      #failed > 0 and ("; failed: " .. table.concat(failed, "; ")) or "")
  end
  if #failed > 0 then
    return false, score, ("%d of %d failed: %s"):format(#failed, #results, table.concat(failed, "; "))
  end
  return true, score, ("all %d passed"):format(#results)
end

-- assert-set: {type = "assert-set", assert = {...}, threshold =, weight =, metric =, name =}
local SET_KEYS = options.set { "type", "assert", "threshold", "weight", "metric", "name" }

function M.compile_set(a, where, opts)
  for k in pairs(a) do
    if not SET_KEYS[k] then
      return nil, ("%s: unknown key '%s' (an assert-set takes assert, threshold, weight, metric, name)")
        :format(where, tostring(k))
    end
  end
  if not is_list(a.assert) or #a.assert == 0 then return nil, where .. ".assert: expected a non-empty list of assertions" end
  if a.threshold ~= nil and not M.thresholds.share.ok(a.threshold) then
    return nil, ("%s.threshold: expected a number from 0 to 1, got %s"):format(where, show(a.threshold))
  end
  if a.weight ~= nil and not (K.finite(a.weight) and a.weight >= 0) then
    return nil, ("%s.weight: expected a number >= 0, got %s"):format(where, show(a.weight))
  end
  local children = {}
  for i, x in ipairs(a.assert) do
    local w = ("%s.assert[%d]"):format(where, i)
    if type(x) == "table" and x.type == "assert-set" then return nil, w .. ": an assert-set cannot hold another" end
    local c, why = M.compile(x, w, opts)
    if not c then return nil, why end
    if c.t.across then return nil, w .. ": " .. c.type .. " compares cells, so it stands outside an assert-set" end
    children[i] = c
  end
  return { set = children, type = "assert-set", name = a.name or a.metric or ("assert-set of " .. #children),
           threshold = a.threshold, weight = a.weight or 1, metric = a.metric }
end

function M.run_set(c, row, ctx)
  local results = {}
  for i, child in ipairs(c.set) do results[i] = M.run(child, row, ctx) end
  local pass, score, reason = M.aggregate(results, c.threshold)
  local r = result(c, pass, reason, score)
  r.assertions = results
  return r
end

-- ---- lists of a script and of rows ------------------------------------------

local function compile_list(list, where, opts)
  if list == nil then return {} end
  if not is_list(list) then return nil, where .. ": expected a list of assertions" end
  local out = {}
  for i, a in ipairs(list) do
    local c, why = M.compile(a, ("%s[%d]"):format(where, i), opts)
    if not c then return nil, why end
    out[i] = c
  end
  return out
end
M.compile_list = compile_list

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
local function row_lists(opts)
  local by_json = {}
  return function(list, field)
    local ok, key = pcall(json.encode, list)
    local hit = ok and by_json[key]
    if hit then return hit end
    local compiled, why = compile_list(list, field, opts)
    if compiled and ok then by_json[key] = compiled end
    return compiled, why
  end
end

local function bad_row_threshold(v, name)
  if v == nil or M.thresholds.share.ok(v) then return nil end
  return ("field '%s': expected a number from 0 to 1, got %s"):format(name, show(v))
end

-- check_rows(ds [, field [, lists [, threshold_field]]]): every row's own
-- list (and its threshold) compiles, or an input error naming file, line
-- and field stops the run before anything is sent or asked.
function M.check_rows(ds, field, lists, threshold_field)
  field, lists = field or "assert", lists or row_lists()
  for i = 1, ds.n do
    local row = ds.rows[i]
    local list = row[field]
    local why
    if list ~= nil then
      local _
      _, why = lists(list, field)
      why = why and M.field_message(why)
    end
    why = why or (threshold_field and bad_row_threshold(row[threshold_field], threshold_field))
    if why then sys.input_error(("%s:%s: %s"):format(ds.path or "(rows)", tostring(row._line or i), why)) end
  end
end

-- Every assertion of a row: the script's, then the row's own.
function M.evaluate(compiled, row, field, lists, ctx)
  field = field or "assert"
  local own, why = (lists or compile_list)(row[field], field)
  if not own then return nil, M.field_message(why) end
  local out = {}
  for _, c in ipairs(compiled) do out[#out + 1] = M.run(c, row, ctx) end
  for _, c in ipairs(own) do out[#out + 1] = M.run(c, row, ctx) end
  return out
end

-- promptfoo's named scores: per `metric` name, the weighted mean of the
-- scores of the assertions (and sets) that carry it; nil when none does.
function M.named_scores(results)
  local sum, weight, any = {}, {}, false
  for _, r in ipairs(results) do
    if r.metric and r.score ~= nil then
      sum[r.metric] = (sum[r.metric] or 0) + r.score * r.weight
      weight[r.metric] = (weight[r.metric] or 0) + r.weight
      any = true
    end
  end
  if not any then return nil end
  local out = {}
  for k, s in pairs(sum) do out[k] = weight[k] > 0 and s / weight[k] or 0 end
  return out
end

-- A metric value from results: score 1 when the row passes, 0 when it
-- fails (or, with score = "weighted", promptfoo's weighted score);
-- unmeasured when it cannot tell. The weighted score is in the detail.
local function verdict(results, threshold, scoring)
  local counted = {}
  for _, r in ipairs(results) do if not r.across then counted[#counted + 1] = r end end
  if #counted == 0 then return { unmeasured = true, reason = "no assertions for this row" } end
  local pass, score, reason = M.aggregate(counted, threshold)
  if pass == nil then return { unmeasured = true, reason = reason, assertions = results } end
  local value = scoring == "weighted" and score or (pass and 1 or 0)
  return { score = value, pass = pass, weighted_score = score, reason = reason, assertions = results,
           named_scores = M.named_scores(counted) }
end
M.verdict = verdict

local METRIC = options.set { "name", "field", "threshold", "threshold_field", "score", "case", "base" }

local function check_metric_opts(opts)
  options.check(opts, METRIC, "ev.assertions.metric", 3)
  if opts.threshold ~= nil and not M.thresholds.share.ok(opts.threshold) then
    refuse("ev.assertions.metric: threshold: expected a number from 0 to 1, got " .. show(opts.threshold), 3)
  end
  if opts.score ~= nil and opts.score ~= "pass" and opts.score ~= "weighted" then
    refuse('ev.assertions.metric: score: expected "pass" or "weighted"', 3)
  end
end

-- metric(list [, opts]) -> a metric: 1 when the row passes every assertion
-- of list and of its own field. opts: name ("assertions"), field
-- ("assert"), threshold (the cases' threshold: pass when the weighted
-- score reaches it), threshold_field (a row's own threshold, promptfoo's
-- test threshold; default "threshold"), score ("pass" | "weighted"), case
-- (the field naming a case across cells, for max-score and select-best;
-- default "qid"), base (the folder of file:// values). ev.evaluate calls
-- its check(ds) first, so a bad row list stops the run up front.
function M.metric(list, opts)
  opts = opts or {}
  check_metric_opts(opts)
  local copts = { base = opts.base }
  local compiled, why = compile_list(list, "assertions", copts)
  if not compiled then refuse("ev.assertions.metric: " .. why, 2) end
  local field, tfield = opts.field or "assert", opts.threshold_field or "threshold"
  local lists = row_lists(copts)
  local function threshold_of(row)
    local t = row[tfield]
    if t == nil then t = opts.threshold end
    return t
  end
  local m = {
    name = opts.name or "assertions", higher_is_better = true,
    description = "1 when the output passes every assertion (the script's and the row's '" .. field .. "')",
    check = function(ds) M.check_rows(ds, field, lists, tfield) end,
    fn = function(row, ctx)
      local results, bad = M.evaluate(compiled, row, field, lists, ctx)
      if not results then return { unmeasured = true, reason = bad } end
      return verdict(results, threshold_of(row), opts.score)
    end,
  }
  return require("evalua.experiment.assertions_cells").wrap(M, m, compiled, {
    field = field, lists = lists, case = opts.case or "qid", threshold_of = threshold_of, score = opts.score })
end

-- metrics(list) -> one metric per assertion, named by the assertion, so
-- each is reported and gated on its own (1 pass, 0 fail).
function M.metrics(list, opts)
  local compiled, why = compile_list(list, "assertions", opts)
  if not compiled then refuse("ev.assertions.metrics: " .. why, 2) end
  local out = {}
  for i, c in ipairs(compiled) do
    if c.t and c.t.across then refuse(("ev.assertions.metrics: assertions[%d]: %s compares the cells of a case; "
      .. "use ev.assertions.metric"):format(i, c.type), 2) end
    out[i] = { name = c.name, higher_is_better = true, description = "assertion " .. c.name,
               fn = function(row, ctx) return verdict({ M.run(c, row, ctx) }) end }
  end
  return out
end

require("evalua.experiment.assertions_text").add(M)
require("evalua.experiment.assertions_overlap").add(M)
require("evalua.experiment.assertions_meteor").add(M)
require("evalua.experiment.assertions_output").add(M)
require("evalua.experiment.assertions_markup").add(M)
require("evalua.experiment.assertions_script").add(M)
require("evalua.experiment.assertions_graded").add(M)
require("evalua.experiment.assertions_cells").add(M)
require("evalua.agent.assertions").add(M) -- the tool-call and trajectory types

return M
