-- Custom metrics: a function of a row, registered once, then sliced,
-- aggregated, reported and gated like any built-in metric.
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder
local opt = ev.cli.parse(arg, { { "out", "out/custom", "folder for the reports", path = "out" } })

-- The answer cites at least one of the documents the pipeline retrieved.
ev.register("cites_retrieved", function(row)
  if not row.citations then return { unmeasured = true, reason = "this pipeline does not cite" } end
  for _, r in ipairs(row.retrieved) do
    for _, id in ipairs(row.citations) do
      if r.id == id then return { score = 1, reason = "cites " .. id } end
    end
  end
  local cited = table.concat(row.citations, ", ")
  return { score = 0, reason = cited == "" and "no citation" or ("cites only %s, never retrieved"):format(cited) }
end)

-- The answer stays within a length budget (in tokens) for its query class.
local budget = { factoid = 20, comparison = 40, ["how-to"] = 60 }
ev.register("within_budget", function(row)
  local n = #ev.text.tokens(row.answer)
  return { score = n <= budget[row.query_class], reason = ("%d tokens, budget %d"):format(n, budget[row.query_class]) }
end)

local ds = ev.dataset.load(here .. "/data/rag_eval.jsonl")
local res = ev.evaluate(ds, { metrics = { "cites_retrieved", "within_budget", "token_f1" },
                              system = "variant", slices = { "query_class" } })
ev.report.print(res)
ev.report.write(res, { dir = opt.out, name = "custom", formats = { "md", "json", "csv", "html", "junit" } })
