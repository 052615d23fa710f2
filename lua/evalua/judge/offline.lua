-- The offline judge's heuristics: deterministic, no network. Text is split
-- into tokens by ev.text.tokens (the tokens the answer metrics use: lower-
-- cased, punctuation and articles dropped, Chinese/Japanese/Korean
-- characters one token each); support and relevance are token overlaps.
-- Without ev.text, a small local tokenizer of the same spirit is used.
local has_text, text_mod = pcall(require, "evalua.eval.text")

local O = {}

-- Tokens that carry no content; overlaps ignore them (unless a text has
-- nothing else).
O.stopwords = {}
for w in ([[a an the of to in on at by for with and or but not no is are was were be been
  being it its this that these those as from do does did what which who whom how when where
  why there their they them he she his her we our you your i me my so than then into over
  的 了 是 在 和 与 及 或 吗 呢 吧 之 也 都 就 而 の は が を に で と も]]):gmatch("%S+") do
  O.stopwords[w] = true
end

O.support_threshold = 0.5

-- Code point classes: 1 = part of a word, 2 = a token of its own, nil = separator.
local function class(cp)
  if cp < 0x80 then
    return (cp >= 48 and cp <= 57 or cp >= 65 and cp <= 90 or cp >= 97 and cp <= 122) and 1 or nil
  end
  if cp >= 0x3040 and cp <= 0x30FF or cp >= 0x3400 and cp <= 0x4DBF or cp >= 0x4E00 and cp <= 0x9FFF
    or cp >= 0xAC00 and cp <= 0xD7AF or cp >= 0xF900 and cp <= 0xFAFF or cp >= 0x20000 and cp <= 0x3134F then
    return 2
  end
  if cp <= 0xBF or cp == 0xD7 or cp == 0xF7 or cp >= 0x2000 and cp <= 0x2BFF
    or cp >= 0x3000 and cp <= 0x303F or cp >= 0xFE30 and cp <= 0xFE4F or cp >= 0xFF00 and cp <= 0xFF65 then
    return nil
  end
  return 1
end

-- Full-width ASCII letters and digits (U+FF10.., U+FF21.., U+FF41..) read as ASCII.
local function fold(cp)
  if cp >= 0xFF10 and cp <= 0xFF19 or cp >= 0xFF21 and cp <= 0xFF3A or cp >= 0xFF41 and cp <= 0xFF5A then
    cp = cp - 0xFEE0
  end
  if cp >= 65 and cp <= 90 then cp = cp + 32 end
  return cp
end

local function local_tokens(text)
  local out, word = {}, {}
  local function flush()
    if #word > 0 then
      out[#out + 1] = utf8.char(table.unpack(word))
      word = {}
    end
  end
  for _, cp in utf8.codes(text) do
    cp = fold(cp)
    local c = class(cp)
    if c == 1 then
      word[#word + 1] = cp
    else
      flush()
      if c == 2 then out[#out + 1] = utf8.char(cp) end
    end
  end
  flush()
  return out
end

O.local_tokens = local_tokens

function O.tokens(text)
  text = tostring(text or "")
  if not utf8.len(text) then text = text:gsub("[\128-\255]", " ") end -- invalid UTF-8
  if has_text and text_mod.tokens then return text_mod.tokens(text) end
  return local_tokens(text)
end

-- Content tokens: tokens without stopwords, or all tokens when only
-- stopwords are left.
function O.content_tokens(text)
  local all, out = O.tokens(text), {}
  for _, t in ipairs(all) do
    if not O.stopwords[t] then out[#out + 1] = t end
  end
  return #out > 0 and out or all
end

local function set_of(list)
  local s = {}
  for _, t in ipairs(list) do s[t] = true end
  return s
end

-- Sentences: split after . ! ? followed by space, after 。！？； and at line
-- breaks; pieces without a word are dropped.
function O.sentences(text)
  local out = {}
  text = tostring(text or ""):gsub("([%.!?])%s+", "%1\n")
  text = text:gsub("\u{3002}", "\u{3002}\n"):gsub("\u{FF01}", "\u{FF01}\n")
             :gsub("\u{FF1F}", "\u{FF1F}\n"):gsub("\u{FF1B}", "\u{FF1B}\n")
  for line in text:gmatch("[^\n]+") do
    local s = line:match("^%s*(.-)%s*$")
    if #O.tokens(s) > 0 then out[#out + 1] = s end
  end
  return out
end

-- Sentences that decline to answer make no claim about the world.
O.refusal_patterns = {
  "does not say", "doesn't say", "couldn't find", "could not find", "can't find", "cannot find",
  "don't answer", "do not answer", "doesn't answer", "does not answer", "not mentioned",
  "no information", "i don't know", "i do not know", "cannot answer", "can't answer", "unable to answer",
  "没有提到", "没有说明", "无法回答", "不知道", "没有相关信息", "找不到", "わかりません", "分かりません",
}

function O.is_refusal(sentence)
  local low = sentence:lower()
  for _, p in ipairs(O.refusal_patterns) do
    if low:find(p, 1, true) then return true end
  end
  return false
end

-- Claims of an answer: its sentences, without the ones that decline to answer.
function O.claims(text)
  local out = {}
  for _, s in ipairs(O.sentences(text)) do
    if not O.is_refusal(s) then out[#out + 1] = s end
  end
  return out
end

-- Share of the statement's content tokens found in the context token set.
function O.support(statement, context_set)
  local words = O.content_tokens(statement)
  if #words == 0 then return 0, 0, 0 end
  local found = 0
  for _, w in ipairs(words) do
    if context_set[w] then found = found + 1 end
  end
  return found / #words, found, #words
end

-- A number the statement gives that the context never mentions: the
-- commonest way a fluent answer goes wrong, and word overlap alone misses it.
local function unsupported_number(statement, context_set)
  for _, t in ipairs(O.tokens(statement)) do
    if t:find("%d") and not context_set[t] then return t end
  end
end

-- A capitalised word (a name, a month) past the statement's first word
-- (or anywhere in a phrase without a lower-case word) that the context
-- never mentions: a swapped name keeps most of a
-- sentence's words, so overlap alone misses it too. Acronyms (URL, SDK)
-- are left to the word overlap, and a name is found in the context whole
-- ("Levi's" as levis), piece by piece ("Standard-tier" as standard, tier)
-- or without a plural s. O.check_names = false turns the check off.
O.check_names = true

local function found(word, context_set)
  local function all_in(list)
    for _, t in ipairs(list) do
      if not context_set[t] and not O.stopwords[t] then return false end
    end
    return true
  end
  if all_in(O.tokens(word)) or all_in(O.tokens((word:gsub("%p", " ")))) then return true end
  local singular = word:match("^(.-)s%p*$")
  return singular ~= nil and #singular > 1 and all_in(O.tokens(singular))
end

-- Whether text holds a Chinese, Japanese or Korean character (U+2E80 on).
local function has_cjk(text)
  for _, cp in utf8.codes(text) do
    if cp >= 0x2E80 and class(cp) == 2 then return true end
  end
  return false
end

-- A context with CJK text may name in its own script what a statement
-- without any names in Latin letters ("China" for 中国): then names are
-- left to the word overlap.
local function unsupported_name(statement, context_set, cjk_context)
  if not O.check_names or cjk_context and not has_cjk(statement) then return nil end
  -- a phrase without a lower-case word ("February 7, 2016") is all names
  local first = statement:find("%f[%w]%l") ~= nil
  for word in statement:gmatch("%S+") do
    if not first and word:match("^%p*%u%l") and not found(word, context_set) then
      return (word:gsub("^%p+", ""):gsub("%p+$", ""))
    end
    first = false
  end
end

-- A statement is supported when its numbers and names all occur in the
-- context and at least `threshold` of its content words do.
function O.verdicts(statements, context, threshold)
  threshold = threshold or O.support_threshold
  local ctx = set_of(O.tokens(context))
  local cjk = utf8.len(context) and has_cjk(context)
  local out = {}
  for i, s in ipairs(statements) do
    local share, found, total = O.support(s, ctx)
    local number = unsupported_number(s, ctx)
    local name = not number and utf8.len(s) and unsupported_name(s, ctx, cjk)
    local reason
    if total == 0 then reason = "the statement has no words"
    elseif number then reason = ("the number %s is not in the context"):format(number)
    elseif name then reason = ("the name %s is not in the context"):format(name)
    else
      reason = ("%d of %d words are in the context (%d%%; supported from %d%%)"):format(
        found, total, math.floor(share * 100 + 0.5), math.floor(threshold * 100 + 0.5))
    end
    out[i] = { statement = s, verdict = total > 0 and not number and not name and share >= threshold and 1 or 0,
               reason = reason }
  end
  return out
end

-- Graded verdicts: 2 (fully) when a statement is supported as above; 1
-- (partly) when its words pass but a number or name does not, or when at
-- least half the threshold of its words occur; else 0.
function O.grades(statements, context, threshold)
  threshold = threshold or O.support_threshold
  local ctx = set_of(O.tokens(context))
  local out = {}
  for i, v in ipairs(O.verdicts(statements, context, threshold)) do
    local share, _, total = O.support(v.statement, ctx)
    local grade = v.verdict == 1 and 2 or (total > 0 and share >= threshold / 2 and 1) or 0
    out[i] = { statement = v.statement, grade = grade,
               reason = ("%s: %s"):format(({ [0] = "unsupported", "partly", "fully" })[grade], v.reason) }
  end
  return out
end

-- Relevance of text to question: the share of the question's content
-- tokens (distinct) that appear in the text; nil and why for a question
-- without words (nothing to look for is not a relevance of 0).
function O.relevance(question, text)
  local q = set_of(O.content_tokens(question))
  local t = set_of(O.tokens(text))
  local total, found = 0, 0
  for w in pairs(q) do
    total = total + 1
    if t[w] then found = found + 1 end
  end
  if total == 0 then return nil, "the question has no words to look for" end
  return found / total, ("%d of %d question words appear in the text"):format(found, total)
end

return O
