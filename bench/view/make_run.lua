-- The run bench/view opens: bench/dataplane/gen.lua's rows, each with the
-- texts of its first five retrieved documents as contexts (a generated
-- corpus of about 200 bytes a passage), through four built-in metrics,
-- sliced by query class, two systems (variant), written as evalua's JSON
-- report with its items in the full form (the rows' texts, which the
-- viewer shows and searches).
-- usage: evalua run bench/view/make_run.lua ROWS.jsonl OUTDIR
local ev = require "evalua"
local WORDS = {}
for w in ([[passage storage bucket retention lifecycle archive restore replica region quota encryption rotation
  checksum multipart upload abort threshold window latency index shard schema export import stream event
  policy version header signature timeout backoff consecutive failed object cache]]):gmatch("%S+") do
  WORDS[#WORDS + 1] = w
end
math.randomseed(11)
local docs = {}
for i = 0, 99999 do
  local w = {}
  for j = 1, 28 do w[j] = WORDS[math.random(#WORDS)] end
  local id = ("d%06d"):format(i)
  docs[id] = { text = id .. ": " .. table.concat(w, " ") .. "." }
end
local ds = ev.dataset.load(arg[1]):attach_contexts(docs, 5)
docs = nil
local res = ev.evaluate(ds, { metrics = { "recall@5", "mrr", "ndcg@10", "token_f1" },
                              slices = { "query_class" }, system = "variant", ci = {} })
ev.report.write(res, { dir = arg[2], name = "run", formats = { "json" }, items = "full" })
