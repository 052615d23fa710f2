-- Spearman correlation between the offline embedder's similarity and human
-- similarity scores on the STS Benchmark (sts-dev.csv or sts-test.csv from
-- http://ixa2.si.ehu.eus/stswiki; tab-separated, score in column 5 and the
-- sentences in 6 and 7). The data is not in the repository: its texts carry
-- licences of their own.
--   evalua run bench/embed/sts.lua PATH/sts-test.csv [char_weight]
local ev = require "evalua"
local embed = require "evalua._embed"

local path, weight = arg[1], tonumber(arg[2] or "")
if not path then
  io.stderr:write("usage: evalua run bench/embed/sts.lua sts-test.csv [char_weight]\n")
  os.exit(2)
end
local a, b, gold = {}, {}, {}
for line in io.lines(path) do
  local f = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = field end
  if tonumber(f[5]) and f[6] and f[7] then
    gold[#gold + 1], a[#a + 1], b[#b + 1] = tonumber(f[5]), f[6], f[7]
  end
end
local opts = weight and { char_weight = weight } or nil
local sims = embed.similarity(a, b, opts)
local cos = {}
for i, s in ipairs(sims) do cos[i] = s[1] end
local alone = {}
for i = 1, #a do alone[i] = embed.similarity({ a[i] }, { b[i] }, opts)[1][1] end
local lexical = {}
for i = 1, #a do lexical[i] = ev.text.token_f1(a[i], b[i]) end
print(("pairs %d"):format(#gold))
print(("spearman offline embedder %.4f"):format(ev.stats.spearman(cos, gold)))
print(("spearman offline embedder, IDF from each pair alone %.4f"):format(ev.stats.spearman(alone, gold)))
print(("spearman token F1 (reference) %.4f"):format(ev.stats.spearman(lexical, gold)))
