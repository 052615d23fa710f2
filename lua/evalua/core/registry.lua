-- Metrics by name. A metric is a table:
--   { name = "cites_source",                -- how reports and gates call it
--     fn = function(row, ctx) ... end,      -- per row: number | boolean | {score=, reason=}
--                                            --   | {unmeasured = true, reason=} | nil
--     batch = function(rows, ctx) ... end,  -- or: a list of such values for all rows at once
--     judged = false,                        -- true when it asks the judge (coverage is reported)
--     higher_is_better = true,
--     check = function(ds) ... end,         -- optional: refuses bad rows before any metric runs
--     description = "..." }
-- Built-in names resolve to judged and agent metrics, answer metrics
-- (ev.text) or retrieval measures (ev.metrics); ev.register adds a user's
-- own, which wins over a built-in of the same name.
-- The names live in the current run (evalua.core.run), so a fresh run starts
-- with the built-in metrics only.
local run = require "evalua.core.run"

local M = {}

local function check_metric(m, level)
  if type(m) ~= "table" then error("a metric is a table {name=, fn=|batch=}", level) end
  if type(m.name) ~= "string" or m.name == "" then error("a metric needs a name", level) end
  if type(m.fn) ~= "function" and type(m.batch) ~= "function" and not m.builtin then
    error(("metric '%s' needs fn(row) or batch(rows)"):format(m.name), level)
  end
  if m.check ~= nil and type(m.check) ~= "function" then
    error(("metric '%s': check must be a function(ds)"):format(m.name), level)
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
  local r = run.current()
  if not r.metrics[m.name] then r.metric_order[#r.metric_order + 1] = m.name end
  r.metrics[m.name] = m
  return m
end

function M.registered()
  local r, out = run.current(), {}
  for i, name in ipairs(r.metric_order) do out[i] = r.metrics[name] end
  return out
end

-- ---- built-in metrics: ev.evaluate runs them in C over the columns ----

-- An answer metric over row.answer and row.gold_answers (max over golds).
local function answer_metric(name, description)
  return { name = name, description = description, builtin = "answer" }
end

local answer_metrics = {
  exact_match = answer_metric("exact_match", "1 when the answer equals a gold answer byte for byte"),
  exact_match_norm = answer_metric("exact_match_norm",
    "1 when the normalised answer equals a normalised gold answer (SQuAD)"),
  token_f1 = answer_metric("token_f1", "SQuAD token F1, max over gold answers"),
  rouge_l = answer_metric("rouge_l",
    "ROUGE-L F1 (longest common subsequence of tokens), max over gold answers"),
  edit_similarity = answer_metric("edit_similarity",
    "1 - Levenshtein distance / longer length, in code points, max over gold answers"),
}

-- A retrieval measure with trec_eval's definition; a row without a ranking
-- or gold labels is unmeasured with the reason.
local function retrieval_metric(name)
  return {
    name = name, builtin = "retrieval", retrieval = true,
    description = "retrieval measure " .. name .. " (trec_eval's definition; docs/retrieval.md)",
  }
end

-- A single measure: lists such as "P.5,10" name several columns; ask for each.
local function is_retrieval_name(name)
  local ok, cols = pcall(require("evalua.eval.metrics").columns, { name })
  if ok and #cols > 1 then
    error(("'%s' names %d measures; give each as its own metric (%s)"):format(name, #cols,
      table.concat(cols, ", ")), 4)
  end
  return ok
end

-- The judged and agent metrics, by name; their modules load on first use
-- (a load error is raised) and know nothing of this registry.
local JUDGED_MODULES = { "evalua.judged.rag", "evalua.agent" }

local function judged_metric(name)
  for _, mod in ipairs(JUDGED_MODULES) do
    local m = require(mod).metrics[name]
    if m then return m end
  end
end

-- resolve(spec) -> metric table: the run's own, then the answer and
-- retrieval built-ins, then the judged ones. No judged or agent metric has
-- a built-in's name (test_registry holds that), so the order only keeps a
-- run of built-ins from loading the 30 judged and agent modules (their
-- compilation was a tenth of evaluating 20,000 rows).
function M.resolve(spec)
  if type(spec) == "table" then return check_metric(spec, 3) end
  if type(spec) ~= "string" then error("a metric is a name or a table, got " .. type(spec), 3) end
  local own = run.current().metrics[spec]
  if own then return own end
  if answer_metrics[spec] then return check_metric(answer_metrics[spec], 3) end
  if is_retrieval_name(spec) then return check_metric(retrieval_metric(spec), 3) end
  own = judged_metric(spec)
  if own then return own end
  error(("unknown metric '%s' (register it with ev.register, or see docs/evaluate.md)"):format(spec), 3)
end

return M
