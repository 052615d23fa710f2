-- Generates simulated RAG rows in the documented format for bench/dataplane:
-- about 850 bytes a row, 10 retrieved documents with scores (distinct, so
-- the ranking has no ties), 2-3 graded gold documents, one or two gold
-- answers, an answer that overlaps them, 10% of rows in Chinese, five query
-- classes and three pipeline variants. Deterministic (fixed seed).
-- usage: evalua run bench/dataplane/gen.lua OUT.jsonl N [SYSTEMS]
local json = require("evalua").json
local path, n, nsys = arg[1], tonumber(arg[2] or 10000), tonumber(arg[3] or 3)
assert(path and n, "usage: evalua run bench/dataplane/gen.lua OUT.jsonl N [SYSTEMS]")
math.randomseed(7)
local WORDS = {}
for w in ([[the upload part retry window bucket object storage region replica quota limit
  token latency cache index shard query answer document policy version lifecycle archive
  restore encryption key rotation access audit event stream batch export import schema
  timeout backoff header signature checksum multipart abort threshold consecutive failed]]):gmatch("%S+") do
  WORDS[#WORDS + 1] = w
end
local HAN = { "分片", "上传", "中止", "阈值", "连续", "失败", "存储", "对象", "区域", "副本", "配额", "密钥" }
local CLASSES = { "factoid", "how-to", "comparison", "troubleshooting", "definition" }

local function words(k, zh)
  local out = {}
  for i = 1, k do out[i] = zh and HAN[math.random(#HAN)] or WORDS[math.random(#WORDS)] end
  return table.concat(out, zh and "" or " ")
end

local f = assert(io.open(path, "w"))
local buf = {}
for i = 1, n do
  local zh = math.random() < 0.1
  local q = math.floor((i - 1) / nsys) + 1
  local gold, grades, ret = {}, {}, {}
  for g = 1, math.random(2, 3) do
    gold[g] = ("d%06d"):format(math.random(0, 99999))
    grades[gold[g]] = math.random(1, 3)
  end
  local score, seen = 30 + math.random() * 10, {}
  for r = 1, 10 do
    local id
    repeat
      id = math.random() < 0.25 and gold[math.random(#gold)] or ("d%06d"):format(math.random(0, 99999))
    until not seen[id]
    seen[id] = true
    score = score - 0.01 - math.random()
    ret[r] = { id = id, score = math.floor(score * 1000 + 0.5) / 1000 }
  end
  local gold_answer = words(zh and 6 or 12, zh)
  local answer = math.random() < 0.15 and gold_answer
    or gold_answer:sub(1, math.floor(#gold_answer * 0.6)) .. " " .. words(zh and 20 or 18, zh)
  local row = {
    qid = ("q%07d"):format(q), query = words(zh and 8 or 10, zh) .. "?", query_class = CLASSES[(q % 5) + 1],
    variant = ("v%d"):format((i - 1) % nsys + 1), language = zh and "zh" or "en",
    gold_doc_ids = gold, graded_relevance = grades, retrieved = ret,
    gold_answers = { gold_answer, words(6, zh) }, answer = answer,
  }
  buf[#buf + 1] = json.encode(row)
  if #buf == 1000 then f:write(table.concat(buf, "\n"), "\n"); buf = {} end
end
if #buf > 0 then f:write(table.concat(buf, "\n"), "\n") end
f:close()
