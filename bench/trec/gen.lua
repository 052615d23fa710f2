-- Generates the anchor case of bench/trec/run.sh: a run of NQ queries x 100
-- retrieved documents (scores rounded to 2 decimals, so there are ties) and
-- qrels of about 20 judged documents per query, grades 0..3, about half of
-- them among the retrieved. Deterministic (fixed seed).
-- usage: evalua run bench/trec/gen.lua DIR [NQ]   -> DIR/qrels.NQ, DIR/run.NQ
local dir, nq = arg[1], tonumber(arg[2] or 50000)
assert(dir, "usage: evalua run bench/trec/gen.lua DIR [NQ]")
os.execute("mkdir -p '" .. dir .. "'")
math.randomseed(42)
local run = assert(io.open(("%s/run.%d"):format(dir, nq), "w"))
local qrels = assert(io.open(("%s/qrels.%d"):format(dir, nq), "w"))
local GRADES = { 0, 0, 0, 0, 1, 1, 1, 2, 2, 3 }
for q = 1, nq do
  local qid = "q" .. q
  local docs, seen, lines = {}, {}, {}
  local score = 50 + math.random() * 50
  for rank = 1, 100 do
    local d
    repeat d = ("D%07d"):format(math.random(0, 9999999)) until not seen[d]
    seen[d], docs[rank] = true, d
    if math.random() < 0.8 then score = score - math.random() * 0.6 end -- else a tie
    lines[rank] = ("%s Q0 %s %d %.2f bench\n"):format(qid, d, rank, score)
  end
  run:write(table.concat(lines))
  lines = {}
  local judged = {}
  for _ = 1, math.random(15, 25) do
    local d = math.random() < 0.5 and docs[math.random(100)] or ("D%07d"):format(math.random(0, 9999999))
    if not judged[d] then
      judged[d] = true
      lines[#lines + 1] = ("%s 0 %s %d\n"):format(qid, d, GRADES[math.random(#GRADES)])
    end
  end
  qrels:write(table.concat(lines))
end
run:close()
qrels:close()
