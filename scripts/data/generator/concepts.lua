-- Retriever 2: concept vectors, the hybrid's "dense-like" signal. Text is
-- mapped onto the hand-built lexicon of source/concepts.lua (English phrases
-- matched on stemmed words, Chinese forms as substrings), weighted
-- (1 + ln tf) * idf, and compared by cosine. It finds paraphrases and crosses
-- languages; it knows nothing of word order or numbers.
local text = require "generator.text"

local M = {}

function M.lexicon(raw)
  local lex = {}
  for i, c in ipairs(raw) do
    local forms = {}
    for _, f in ipairs(c.en) do forms[#forms + 1] = (text.split(f)) end
    lex[i] = { name = c[1], en = forms, zh = c.zh }
  end
  return lex
end

local function count_phrase(words, phrase)
  local n = 0
  for i = 1, #words - #phrase + 1 do
    local hit = true
    for j = 1, #phrase do
      if words[i + j - 1] ~= phrase[j] then hit = false; break end
    end
    if hit then n = n + 1 end
  end
  return n
end

local function count_substring(s, needle)
  local n, pos = 0, 1
  while true do
    local a, e = s:find(needle, pos, true)
    if not a then return n end
    n, pos = n + 1, e + 1
  end
end

-- concept index -> number of occurrences in s
function M.counts(lex, s)
  local words = text.split(s)
  local counts = {}
  for ci, c in ipairs(lex) do
    local n = 0
    for _, phrase in ipairs(c.en) do n = n + count_phrase(words, phrase) end
    for _, form in ipairs(c.zh) do n = n + count_substring(s, form) end
    if n > 0 then counts[ci] = n end
  end
  return counts
end

function M.index(lex, docs)
  local idx = { lex = lex, counts = {}, title_counts = {}, df = {}, N = #docs, by_name = {} }
  for ci, c in ipairs(lex) do idx.by_name[c.name] = ci end
  for i, d in ipairs(docs) do
    idx.counts[i] = M.counts(lex, d.title .. " " .. d.text)
    idx.title_counts[i] = M.counts(lex, d.title)
    for ci = 1, #lex do
      if idx.counts[i][ci] then idx.df[ci] = (idx.df[ci] or 0) + 1 end
    end
  end
  return idx
end

-- idf = ln((N + 1) / (df + 1))
function M.idf(idx, ci)
  return math.log((idx.N + 1) / ((idx.df[ci] or 0) + 1))
end

-- Weighted vector over all concept indices (0 where absent) and its norm.
local function vector(idx, counts)
  local v, norm = {}, 0
  for ci = 1, #idx.lex do
    local n = counts[ci]
    local w = n and (1 + math.log(n)) * M.idf(idx, ci) or 0
    v[ci], norm = w, norm + w * w
  end
  return v, math.sqrt(norm)
end

function M.scores(idx, query)
  local qv, qn = vector(idx, M.counts(idx.lex, query))
  local scores = {}
  for i = 1, idx.N do
    local dv, dn = vector(idx, idx.counts[i])
    local dot = 0
    for ci = 1, #qv do dot = dot + qv[ci] * dv[ci] end
    scores[i] = (qn > 0 and dn > 0) and dot / (qn * dn) or 0
  end
  return scores
end

return M
