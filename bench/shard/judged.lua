-- The run bench/shard/run.sh splits over shards: N simulated rows, each
-- scored by one judge request (a unique question), through ev.evaluate.
--   evalua run bench/shard/judged.lua --rows 100000 --cache DIR [--shard i/N]
-- The judge is $OPENAI_BASE_URL (the mock); the rows are generated, so every
-- shard and the merge see the same data (and the same hash).
local ev = require "evalua"

local opt = ev.cli.parse(arg, {
  { "rows", 100000, "simulated rows, one judge request each" },
  { "cache", "", "the judge cache folder the shards share" },
  { "concurrency", 64, "judge requests in flight" },
  { "out", "", "report folder (JSON), when wanted" },
})

local rows = {}
for i = 1, opt.rows do rows[i] = { qid = ("q%06d"):format(i), query = ("simulated question number %d"):format(i) } end
local ds = ev.dataset.from_rows(rows, "simulated")

local judge = ev.judge.open { model = "bench-judge", cache = opt.cache, concurrency = opt.concurrency,
                              api_key_env = false }

local function judged(row)
  local r = judge:chat { messages = { { role = "user", content = row.query } } }
  if not r.ok then return { unmeasured = true, reason = r.error } end
  return #r.text > 0 and 1 or 0
end

local res = ev.evaluate(ds, { metrics = { { name = "answered", fn = judged, judged = true } },
                              judge = judge, concurrency = opt.concurrency, quiet = true, ci = false })
if opt.out ~= "" then ev.report.write(res, { dir = opt.out, name = "judged", formats = { "json" } }) end
