-- Metrics by name. A metric is a table:
--   { name = "cites_source",                -- how reports and gates call it
--     fn = function(row, ctx) ... end,      -- per row: number | boolean | {score=, reason=}
--                                            --   | {unmeasured = true, reason=} | nil
--     batch = function(rows, ctx) ... end,  -- or: a list of such values for all rows at once
--     judged = false,                        -- true when it asks the judge (coverage is reported)
--     higher_is_better = true,
--     description = "..." }
-- Built-in names resolve to retrieval measures (ev.metrics), answer metrics
-- (ev.text) or judged metrics registered by other modules; ev.register adds
-- a user's own, after which it is indistinguishable from a built-in one.
local M = {}

local registered = {}
local order = {}

local function check_metric(m, level)
  if type(m) ~= "table" then error("a metric is a table {name=, fn=|batch=}", level) end
  if type(m.name) ~= "string" or m.name == "" then error("a metric needs a name", level) end
  if type(m.fn) ~= "function" and type(m.batch) ~= "function" then
    error(("metric '%s' needs fn(row) or batch(rows)"):format(m.name), level)
  end
  if m.higher_is_better == nil then m.higher_is_better = true end
  return m
end

-- register(name, fn [, opts]) or register{name=, fn=, ...}
function M.register(name, fn, opts)
  local m
  if type(name) == "table" then
    m = name
  else
    m = {}
    for k, v in pairs(opts or {}) do m[k] = v end
    m.name, m.fn = name, fn
  end
  check_metric(m, 3)
  if not registered[m.name] then order[#order + 1] = m.name end
  registered[m.name] = m
  return m
end

function M.registered()
  local out = {}
  for i, name in ipairs(order) do out[i] = registered[name] end
  return out
end

-- ---- answer metrics over row.answer and row.gold_answers ----------------

local function missing_answer(row)
  if type(row.answer) ~= "string" then return "no 'answer' in the row" end
  local g = row.gold_answers
  if g == nil or (type(g) == "table" and #g == 0) then return "no 'gold_answers' in the row" end
end

-- One C call for the whole column; if it rejects a row (invalid UTF-8, say),
-- rows are scored one by one so only the bad ones are unmeasured.
local function answer_metric(name, fn, description, opts)
  return {
    name = name, description = description,
    batch = function(rows)
      local text = require "evalua.text"
      local out, idx, preds, golds = {}, {}, {}, {}
      for i, row in ipairs(rows) do
        local why = missing_answer(row)
        if why then
          out[i] = { unmeasured = true, reason = why }
        else
          idx[#idx + 1], preds[#preds + 1], golds[#golds + 1] = i, row.answer, row.gold_answers
        end
      end
      local ok, values = pcall(text[fn .. "_batch"], preds, golds, opts)
      for j, i in ipairs(idx) do
        if ok then
          out[i] = values[j]
        else
          local one_ok, v = pcall(text[fn], preds[j], golds[j], opts)
          out[i] = one_ok and v or { unmeasured = true, reason = tostring(v) }
        end
      end
      return out
    end,
  }
end

local answer_metrics = {
  exact_match = answer_metric("exact_match", "exact_match",
    "1 when the answer equals a gold answer byte for byte"),
  exact_match_norm = answer_metric("exact_match_norm", "exact_match",
    "1 when the normalised answer equals a normalised gold answer (SQuAD)", { normalize = true }),
  token_f1 = answer_metric("token_f1", "token_f1", "SQuAD token F1, max over gold answers"),
  rouge_l = answer_metric("rouge_l", "rouge_l",
    "ROUGE-L F1 (longest common subsequence of tokens), max over gold answers"),
  edit_similarity = answer_metric("edit_similarity", "edit_similarity",
    "1 - Levenshtein distance / longer length, in code points, max over gold answers"),
}

-- ---- retrieval measures: ev.evaluate computes all of them in one C call --

local function retrieval_metric(name)
  return {
    name = name, retrieval = true,
    description = "retrieval measure " .. name .. " (trec_eval's definition; docs/retrieval.md)",
    batch = function(rows, ctx)
      return M.retrieval_columns(rows, { name }, ctx and ctx.retrieval)[name]
    end,
  }
end

-- retrieval_columns(rows, names [, opts]) -> { [name] = values aligned with rows };
-- a row the measures cannot score (no ranking, no gold labels) is unmeasured with the reason.
function M.retrieval_columns(rows, names, opts)
  local r = require("evalua.metrics").evaluate(rows, names, opts)
  local out = {}
  for _, name in ipairs(names) do
    local col = {}
    for i = 1, #rows do
      local q = r.per_query[i]
      if q.skipped then col[i] = { unmeasured = true, reason = q.skipped }
      elseif q[name] == nil then col[i] = { unmeasured = true, reason = name .. " is undefined for this row" }
      else col[i] = q[name] end
    end
    out[name] = col
  end
  return out
end

-- A single measure: lists such as "P.5,10" name several columns; ask for each.
local function is_retrieval_name(name)
  local ok, cols = pcall(require("evalua.metrics").columns, { name })
  if ok and #cols > 1 then
    error(("'%s' names %d measures; give each as its own metric (%s)"):format(name, #cols,
      table.concat(cols, ", ")), 4)
  end
  return ok
end

-- resolve(spec) -> metric table
function M.resolve(spec)
  if type(spec) == "table" then return check_metric(spec, 3) end
  if type(spec) ~= "string" then error("a metric is a name or a table, got " .. type(spec), 3) end
  if not registered[spec] then require "evalua.rag" end -- registers the judged metrics' names; a load error is raised
  if registered[spec] then return registered[spec] end
  if answer_metrics[spec] then return check_metric(answer_metrics[spec], 3) end
  if is_retrieval_name(spec) then return check_metric(retrieval_metric(spec), 3) end
  error(("unknown metric '%s' (register it with ev.register, or see docs/evaluate.md)"):format(spec), 3)
end

return M
