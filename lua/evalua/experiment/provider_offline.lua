-- The offline provider: an extractive answerer over the row's retrieved
-- contexts, so a prompt matrix runs with no network and no key. It is a
-- heuristic, not a model: it answers with the context sentences that share
-- the most words with the question, in context order. Deterministic.
--
-- The rendered prompt steers it in two ways a reader can predict:
-- "in N sentences" (N in digits) takes the N best sentences (default 1),
-- "at most N words" cuts the answer to N words.
local text = require "evalua.eval.text"

local M = {}

-- Sentences of a context: split after . ! ? followed by a space, after
-- their full-width forms, and at line breaks.
local FULL_WIDTH = { "\u{3002}", "\u{FF01}", "\u{FF1F}" } -- 。！？

local function sentences(s)
  local marked = s:gsub("([%.!%?])%s+", "%1\n")
  for _, p in ipairs(FULL_WIDTH) do marked = marked:gsub(p, p .. "\n") end
  local out = {}
  for line in marked:gmatch("[^\n]+") do
    line = line:match("^%s*(.-)%s*$")
    if line ~= "" then out[#out + 1] = line end
  end
  return out
end

local function word_set(s)
  local set = {}
  for _, w in ipairs(text.tokens(s)) do set[w] = true end
  return set
end

local function shared(words, sentence)
  local n = 0
  for w in pairs(word_set(sentence)) do
    if words[w] then n = n + 1 end
  end
  return n
end

local function cut_words(s, n)
  local words = {}
  for w in s:gmatch("%S+") do words[#words + 1] = w end
  if #words <= n then return s end
  return table.concat(words, " ", 1, n)
end

-- answer(question, contexts, prompt) -> answer | nil, why
function M.answer(question, contexts, prompt)
  if type(contexts) ~= "table" or #contexts == 0 then return nil, "the row has no contexts to answer from" end
  if type(question) ~= "string" then return nil, "the row has no question" end
  local words, all = word_set(question), {}
  for _, c in ipairs(contexts) do
    if type(c) == "string" then
      for _, s in ipairs(sentences(c)) do
        all[#all + 1] = { text = s, pos = #all + 1, score = shared(words, s) }
      end
    end
  end
  if #all == 0 then return nil, "the row's contexts hold no text" end
  local ranked = { table.unpack(all) }
  table.sort(ranked, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.pos < b.pos
  end)
  local want = math.tointeger(tonumber(prompt:match("in (%d+) sentences?"))) or 1
  local chosen = {}
  for k = 1, math.min(math.max(want, 1), #ranked) do chosen[k] = ranked[k] end
  table.sort(chosen, function(a, b) return a.pos < b.pos end)
  local parts = {}
  for k, s in ipairs(chosen) do parts[k] = s.text end
  local answer = table.concat(parts, " ")
  local limit = math.tointeger(tonumber(prompt:match("at most (%d+) words")))
  if limit then answer = cut_words(answer, limit) end
  return answer
end

return M
