-- Simulated answer / gold-answer pairs for bench/embed/sas.sh, one a line,
-- tab-separated: the answer, then one or two gold answers. English from a
-- small vocabulary with punctuation and capitals (so normalisation has work
-- to do), 10% Chinese (runs of ideographs). Deterministic (fixed seed).
-- usage: evalua run bench/embed/sas_gen.lua OUT.tsv PAIRS
local path, n = arg[1], math.tointeger(tonumber(arg[2] or "")) or 50000
assert(path, "usage: evalua run bench/embed/sas_gen.lua OUT.tsv PAIRS")
math.randomseed(11)
local WORDS = {}
for w in ([[The upload part retry window bucket object storage region replica quota limit
  token latency cache index shard query answer document policy version lifecycle archive
  restore encryption key rotation access audit event stream batch export import schema
  timeout backoff header signature checksum multipart abort threshold consecutive failed
  a an the of in is are after three seven days refunds valid week Paris capital 2007 U.S.
  it's don't re-try v2]]):gmatch("%S+") do
  WORDS[#WORDS + 1] = w
end
local HAN = {}
for _, cp in utf8.codes("分片上传中止阈值连续失败存储对象区域副本配额密钥三个后北京是中国的首都") do HAN[#HAN + 1] = utf8.char(cp) end
local PUNCT = { "", "", "", ",", ".", "?", ";", ":" }

local function text(k, zh)
  local t = {}
  for i = 1, k do
    if zh then t[i] = HAN[math.random(#HAN)]
    else t[i] = WORDS[math.random(#WORDS)] .. PUNCT[math.random(#PUNCT)] end
  end
  return table.concat(t, zh and "" or " ")
end

local f = assert(io.open(path, "w"))
local buf = {}
for _ = 1, n do
  local zh = math.random() < 0.1
  local gold = text(math.random(zh and 4 or 6, zh and 12 or 18), zh)
  local answer
  if math.random() < 0.15 then answer = gold
  else
    local keep = {}
    for w in gold:gmatch(zh and utf8.charpattern or "%S+") do
      if math.random() < 0.6 then keep[#keep + 1] = w end
    end
    answer = table.concat(keep, zh and "" or " ") .. (zh and "" or " ") .. text(math.random(2, 14), zh)
  end
  local line = answer .. "\t" .. gold
  if math.random() < 0.5 then line = line .. "\t" .. text(math.random(3, 8), zh) end
  buf[#buf + 1] = line
  if #buf == 1000 then f:write(table.concat(buf, "\n"), "\n"); buf = {} end
end
if #buf > 0 then f:write(table.concat(buf, "\n"), "\n") end
f:close()
