-- ev.scorers: the deterministic scorers of autoevals, by their names.
-- Each takes (output, expected [, opts]) and returns a score from 0 to 1:
--
--   ev.scorers.Levenshtein("abc", "axc")            -- 1 - distance / longer length: 0.6667
--   ev.scorers.NumericDiff(105, 100)                -- 1 - |a - b| / (|a| + |b|), scaled first: 0.9756
--   ev.scorers.ExactMatch({ a = 1 }, '{"a": 1}')    -- 1: objects and lists compare as JSON
--   ev.scorers.JSONDiff(output, expected)           -- recursive: strings by Levenshtein, numbers by NumericDiff
--   ev.scorers.ListContains(list, list, { allow_extra_entities = true })
--   ev.scorers.metric("JSONDiff", { output = "answer", expected = "reference" })  -- for ev.evaluate
--
-- Differences from autoevals (docs/assertions.md#autoevals-scorers):
-- Levenshtein counts characters (code points), where autoevals' JavaScript
-- counts UTF-16 units (and its Python code points too); objects compare
-- as JSON values, so the order of keys never counts (autoevals compares
-- JSON text, in which it does).
local text = require "evalua.eval.text"
local caught = require "evalua.core.caught"
local json = require "evalua.core.json"
local options = require "evalua.core.options"
local J = require "evalua.experiment.assertions_json"
local K = require "evalua.experiment.assertions_values"

local M = {}

local function need(v, kind, what)
  if type(v) ~= kind then error(("ev.scorers.%s: expected %s, got %s"):format(what, kind, type(v)), 3) end
end

-- 1 - edit distance / the longer length, in characters; 1 for two empty strings.
function M.Levenshtein(output, expected)
  need(output, "string", "Levenshtein")
  need(expected, "string", "Levenshtein")
  if output == "" and expected == "" then return 1 end
  return text.edit_similarity(output, expected)
end

local function numeric(a, b)
  if a == 0 and b == 0 then return 1 end
  local scale = math.max(math.abs(a), math.abs(b))
  local x, y = a / scale, b / scale
  return 1 - math.abs(x - y) / (math.abs(x) + math.abs(y))
end

function M.NumericDiff(output, expected)
  need(output, "number", "NumericDiff")
  need(expected, "number", "NumericDiff")
  if not (K.finite(output) and K.finite(expected)) then error("ev.scorers.NumericDiff: expected finite numbers", 2) end
  return numeric(output, expected)
end

local function is_json_table(v) return type(v) == "table" and v ~= J.null end

-- autoevals' normalisation: text as it is, numbers as JavaScript writes
-- them, JSON values as JSON; a string that is JSON read when the other
-- side is an object or list.
local function scalar_text(v)
  if type(v) == "number" then return K.js_string(v) end
  if v == nil or v == J.null then return "null" end
  return tostring(v)
end

function M.ExactMatch(output, expected)
  local objects = is_json_table(output) or is_json_table(expected)
  if objects then
    local a = type(output) == "string" and J.decode(output) or output
    local b = type(expected) == "string" and J.decode(expected) or expected
    if a == nil or b == nil then return 0 end
    return J.equal(a, b) and 1 or 0
  end
  return scalar_text(output) == scalar_text(expected) and 1 or 0
end

-- A string that holds a JSON object or list, read (autoevals' ValidJSON rule).
local function parsed(v)
  if type(v) ~= "string" then return v end
  local x = J.decode(v)
  if J.is_array(x) or J.is_object(x) then return x end
  return v
end

local function as_number(v)
  if type(v) == "boolean" then return v and 1 or 0 end -- Python's bool is an int
  return v
end

local function keys_of(a, b)
  local seen, out = {}, {}
  for _, t in ipairs { a, b } do
    for k in pairs(t) do if not seen[k] then seen[k] = true; out[#out + 1] = k end end
  end
  return out
end

local function json_diff(a, b, o)
  if not o.preserve_strings then a, b = parsed(a), parsed(b) end
  if a == J.null then a = nil end
  if b == J.null then b = nil end
  if J.is_object(a) and J.is_object(b) then
    local keys = keys_of(a, b)
    if #keys == 0 then return 1 end
    local sum = 0
    for _, k in ipairs(keys) do sum = sum + json_diff(a[k], b[k], o) end
    return sum / #keys
  end
  if J.is_array(a) and J.is_array(b) then
    if #a == 0 and #b == 0 then return 1 end
    local sum = 0
    for i = 1, math.min(#a, #b) do sum = sum + json_diff(a[i], b[i], o) end
    return sum / math.max(#a, #b)
  end
  if type(a) == "string" and type(b) == "string" then return o.string_scorer(a, b) end
  local na, nb = as_number(a), as_number(b)
  if type(na) == "number" and type(nb) == "number" then return o.number_scorer(na, nb) end
  if a == nil and b == nil then return 1 end
  if a == nil or b == nil then return 0 end
  return o.string_scorer(json.encode(a), json.encode(b))
end

local DIFF = options.set { "string_scorer", "number_scorer", "preserve_strings" }

function M.JSONDiff(output, expected, opts)
  opts = opts or {}
  options.check(opts, DIFF, "ev.scorers.JSONDiff", 2)
  local o = { string_scorer = opts.string_scorer or M.Levenshtein, number_scorer = opts.number_scorer or numeric,
              preserve_strings = opts.preserve_strings }
  return json_diff(output, expected, o)
end

-- The assignment of rows to columns of cost (n <= m) with the least total
-- cost: the agent metrics' Hungarian method (agent/assign.lua).
local assignment = require("evalua.agent.assign").min_cost
M.assignment = assignment

local LIST = options.set { "pairwise_scorer", "allow_extra_entities" }

-- The best one-to-one pairing of output and expected items by the pairwise
-- scorer (Levenshtein), summed, over the longer list (or over expected
-- with allow_extra_entities).
function M.ListContains(output, expected, opts)
  opts = opts or {}
  options.check(opts, LIST, "ev.scorers.ListContains", 2)
  need(output, "table", "ListContains")
  need(expected, "table", "ListContains")
  local score_of = opts.pairwise_scorer or M.Levenshtein
  local n, m = #output, #expected
  if n == 0 and m == 0 then return 1 end
  if n == 0 or m == 0 then return 0 end
  local rows, cols, flip = output, expected, false
  if n > m then rows, cols, flip, n, m = expected, output, true, m, n end
  local cost, sims = {}, {}
  for i = 1, n do
    cost[i], sims[i] = {}, {}
    for j = 1, m do
      local s = flip and score_of(cols[j], rows[i]) or score_of(rows[i], cols[j])
      sims[i][j], cost[i][j] = s, 1 - s
    end
  end
  local match, sum = assignment(cost, n, m), 0
  for i = 1, n do sum = sum + sims[i][match[i]] end
  local denominator = opts.allow_extra_entities and #expected or math.max(#output, #expected)
  return sum / denominator
end

local METRIC = options.set { "output", "expected", "name", "opts" }

-- metric(name, {output = field, expected = field [, name =, opts =]}) -> a
-- metric for ev.evaluate scoring each row with the scorer.
function M.metric(scorer, o)
  local fn = type(scorer) == "string" and M[scorer] or nil
  if not fn or scorer == "metric" then error(("ev.scorers.metric: no scorer '%s'"):format(tostring(scorer)), 2) end
  o = o or {}
  options.check(o, METRIC, "ev.scorers.metric", 2)
  local out_f, exp_f = o.output or "answer", o.expected or "reference"
  return { name = o.name or scorer, higher_is_better = true,
           description = ("autoevals' %s of '%s' against '%s'"):format(scorer, out_f, exp_f),
           fn = function(row)
             local a, b = row[out_f], row[exp_f]
             if a == nil or b == nil then
               return { unmeasured = true, reason = ("no '%s' in the row"):format(a == nil and out_f or exp_f) }
             end
             local ok, s = pcall(fn, a, b, o.opts)
             if not ok then return { unmeasured = true, reason = tostring(caught.pass_on(s)):gsub("^.-: ", "", 1) } end
             return s
           end }
end

return M
