-- Tokenising for the retrievers: English words are lower-cased and lightly
-- stemmed; Chinese runs become character unigrams and bigrams, as lexical
-- Chinese search does.
local common = require "generator.common"

local M = {}

M.STOP = common.set_of {
  "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "and", "or",
  "is", "are", "be", "it", "its", "this", "that", "do", "does", "i", "my", "me", "you", "your",
  "can", "how", "what", "which", "when", "after", "get", "one", "much", "many", "into", "as",
  "there", "so", "if", "not", "than", "them", "they", "all", "any", "has", "have", "should",
}
local ZH_STOP = common.set_of {
  "的", "了", "吗", "是", "在", "和", "与", "有", "个", "一", "也", "要", "把", "就", "可", "以",
  "到", "么", "什", "怎", "少", "多",
}

-- Plural-only stemming: "uploads" -> "upload", "policies" -> "policy".
local function stem(w)
  if #w > 4 and w:sub(-3) == "ies" then return w:sub(1, -4) .. "y" end
  if #w > 3 and w:sub(-1) == "s" and not w:match("[siu]s$") then return w:sub(1, -2) end
  return w
end

local function is_cjk(cp)
  return (cp >= 0x4E00 and cp <= 0x9FFF) or (cp >= 0x3400 and cp <= 0x4DBF)
end

-- Splits text into English words (stemmed, stop words kept) and runs of
-- Chinese characters (each run a list of characters).
function M.split(text)
  local words, runs, word, run = {}, {}, {}, {}
  local function flush()
    if #word > 0 then words[#words + 1] = stem(table.concat(word):lower()); word = {} end
    if #run > 0 then runs[#runs + 1] = run; run = {} end
  end
  for _, cp in utf8.codes(text) do
    if cp < 128 and string.char(cp):match("%w") then
      if #run > 0 then flush() end
      word[#word + 1] = string.char(cp)
    elseif is_cjk(cp) then
      if #word > 0 then flush() end
      run[#run + 1] = utf8.char(cp)
    else
      flush()
    end
  end
  flush()
  return words, runs
end

-- Index terms: English words without stop words, Chinese unigrams (without
-- stop characters) and bigrams.
function M.terms(text)
  local words, runs = M.split(text)
  local out = {}
  for _, w in ipairs(words) do
    if not M.STOP[w] then out[#out + 1] = w end
  end
  for _, run in ipairs(runs) do
    for i, ch in ipairs(run) do
      if not ZH_STOP[ch] then out[#out + 1] = ch end
      if run[i + 1] then out[#out + 1] = ch .. run[i + 1] end
    end
  end
  return out
end

function M.unique_terms(text)
  local seen, out = {}, {}
  for _, t in ipairs(M.terms(text)) do
    if not seen[t] then seen[t] = true; out[#out + 1] = t end
  end
  return out
end

-- Adjacent pairs: English word pairs (stop words skipped) and Chinese
-- character trigrams, i.e. the word order bag-of-words retrievers ignore.
function M.adjacent_pairs(text)
  local words, runs = M.split(text)
  local out, prev = {}, nil
  for _, w in ipairs(words) do
    if not M.STOP[w] then
      if prev then out[prev .. " " .. w] = true end
      prev = w
    end
  end
  for _, run in ipairs(runs) do
    for i = 1, #run - 2 do out[run[i] .. run[i + 1] .. run[i + 2]] = true end
  end
  return out
end

return M
