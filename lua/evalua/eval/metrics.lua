-- ev.metrics: retrieval measures with trec_eval's definitions, computed in C.
-- Per-query functions take a ranking and gold labels; evaluate() takes a
-- whole data set (rows or loaded TREC files) in one C call. Formulas and
-- the other tools' variants: docs/retrieval.md.
local C = require "evalua._retrieval"
local options = require "evalua.core.options"

local KNOWN = options.set { "level", "depth", "complete", "gain" }

local M = {}

local function cutoff(k, fname, arg)
  if k == nil then return nil end
  if math.type(k) ~= "integer" or k < 1 then
    error(("bad argument #%d to '%s' (positive integer cutoff expected, got %s)")
      :format(arg, fname, tostring(k)), 3)
  end
  return k
end

-- The value of one measure for one query; nil when its definition leaves it
-- undefined (the LlamaIndex and RAGAS variants on empty input).
local function one(spec, ranking, gold, opts)
  options.check(opts, KNOWN, "ev.metrics", 2) -- every measure tail-calls one: level 2 is its caller
  local values, names = C.score(ranking, gold, { spec }, opts)
  return values[names[1]]
end

-- f(ranking, gold [, k] [, opts]): k may be left out, opts taken in its place.
local function with_cutoff(base, fname)
  return function(ranking, gold, k, opts)
    if type(k) == "table" and opts == nil then k, opts = nil, k end
    k = cutoff(k, fname, 3)
    return one(k and (base .. "@" .. k) or base, ranking, gold, opts)
  end
end

M.precision = with_cutoff("precision", "precision")
M.recall = with_cutoff("recall", "recall")
M.success = with_cutoff("success", "success")
M.hit_rate = M.success
M.rr = with_cutoff("rr", "rr")
M.mrr = M.rr
M.ap = with_cutoff("ap", "ap")

function M.ndcg(ranking, gold, k, opts)
  if type(k) == "table" and opts == nil then k, opts = nil, k end
  k = cutoff(k, "ndcg", 3)
  local gain = opts and opts.gain or "linear"
  local base
  if gain == "linear" then base = "ndcg"
  elseif gain == "exp" then base = "ndcg_exp"
  else error(("bad argument #4 to 'ndcg' (gain must be \"linear\" or \"exp\", got %s)"):format(tostring(gain)), 2)
  end
  return one(k and (base .. "@" .. k) or base, ranking, gold, opts)
end

function M.rprec(ranking, gold, opts) return one("Rprec", ranking, gold, opts) end
function M.bpref(ranking, gold, opts) return one("bpref", ranking, gold, opts) end

-- {num_ret =, num_rel =, num_rel_ret =} of one query.
function M.counts(ranking, gold, opts)
  return (C.score(ranking, gold, { "num_ret", "num_rel", "num_rel_ret" }, opts))
end

-- Any measure by name (see docs/retrieval.md), e.g. "ragas.id_context_precision".
function M.measure(name, ranking, gold, opts) return one(name, ranking, gold, opts) end

-- Several measures of one query: {name = value}, and the names in order.
M.score = C.score

-- The column names that measures expand to; raises on an unknown name.
M.columns = C.columns

-- evaluate(data, measures [, opts]): data is a list of rows
-- ({qid =, retrieved =, gold_doc_ids =, graded_relevance =}) or the result
-- of load_trec. Returns {columns, per_query, summary, n, skipped}.
M.evaluate = C.evaluate

-- load_trec(qrels_path, run_path) -> data, or nil and a message naming the
-- file and line. data:rows{complete = bool} gives the same queries as rows.
M.load_trec = C.load_trec

return M
