-- The overlap scores of ev.assertions, with promptfoo's formulas:
-- levenshtein (a distance bound), rouge-n (js-rouge's ROUGE-N F1), bleu
-- (sentence BLEU-4, clipped counts, the closest reference length, 1e-7 for
-- a zero precision), gleu (Google-BLEU: min of n-gram precision and recall
-- over n = 1..4, best reference); meteor is in assertions_meteor.lua.
-- The edit distance is ev.text's (C). docs/assertions.md.
local K = require "evalua.experiment.assertions_values"
local text = require "evalua.eval.text"

local M = {}

-- js-rouge's tokens (an approximation of its Penn Treebank tokenizer):
-- runs of letters, digits and apostrophes, and each other visible
-- character on its own.
function M.treebank_tokens(s)
  local out = {}
  for run in s:gmatch("%S+") do
    for word, punct in run:gmatch("([%w\128-\255']*)([^%w\128-\255']*)") do
      if word ~= "" then out[#out + 1] = word end
      for ch in punct:gmatch(".") do out[#out + 1] = ch end
    end
  end
  return out
end

local function ngrams(tokens, n)
  local out = {}
  for i = 1, #tokens - n + 1 do out[#out + 1] = table.concat(tokens, " ", i, i + n - 1) end
  return out
end
M.ngrams = ngrams

local function counts(list)
  local c = {}
  for _, g in ipairs(list) do c[g] = (c[g] or 0) + 1 end
  return c
end

-- ROUGE-N as js-rouge (promptfoo's fork, which promptfoo calls with n = 1)
-- computes it: the F1 of precision and recall of the n-grams, each
-- candidate n-gram matching at most as often as the reference holds it;
-- nil for an empty candidate or reference (js-rouge raises).
function M.rouge_n(candidate, reference, n)
  local cand = ngrams(M.treebank_tokens(candidate), n or 1)
  local refs = ngrams(M.treebank_tokens(reference), n or 1)
  if #cand == 0 or #refs == 0 then return nil end
  local left, hit = counts(refs), 0
  for _, g in ipairs(cand) do
    if (left[g] or 0) > 0 then hit, left[g] = hit + 1, left[g] - 1 end
  end
  if hit == 0 then return 0 end
  local p, r = hit / #cand, hit / #refs
  return 2 * p * r / (p + r)
end

-- promptfoo's words: lower-cased, trimmed, split at whitespace.
local function lower_words(s)
  local out = {}
  for w in s:lower():gmatch("%S+") do out[#out + 1] = w end
  return out
end

-- Sentence BLEU-4 with uniform weights, as promptfoo computes it.
function M.bleu(candidate, references)
  local cw = lower_words(candidate)
  if #cw == 0 then return nil end -- promptfoo raises on an empty candidate
  local refs, closest = {}, nil
  for i, r in ipairs(references) do
    refs[i] = lower_words(r)
    local len = #refs[i]
    if closest == nil or math.abs(len - #cw) < math.abs(closest - #cw) then closest = len end
  end
  local log_sum = 0
  for n = 1, 4 do
    local cgrams = ngrams(cw, n)
    local cc, best = counts(cgrams), 0
    for _, r in ipairs(refs) do
      local rc, clipped = counts(ngrams(r, n)), 0
      for g, k in pairs(cc) do clipped = clipped + math.min(k, rc[g] or 0) end
      if clipped > best then best = clipped end
    end
    local p = #cgrams > 0 and best / #cgrams or 0
    log_sum = log_sum + 0.25 * math.log(p == 0 and 1e-7 or p)
  end
  local bp = #cw > closest and 1 or math.exp(1 - #cw / closest)
  return bp * math.exp(log_sum)
end

-- Words with trailing full stops taken off, as promptfoo's gleu and meteor read them.
function M.stopped_words(s, lower)
  local out = {}
  for w in (lower and s:lower() or s):gmatch("%S+") do out[#out + 1] = (w:gsub("%.+$", "")) end
  return out
end

local function gleu_one(cw, rw)
  if #cw == #rw then
    local same = true
    for i = 1, #cw do if cw[i] ~= rw[i] then same = false; break end end
    if same then return 1 end
  end
  local match, ctotal, rtotal = 0, 0, 0
  for n = 1, 4 do
    local cg, rg = ngrams(cw, n), ngrams(rw, n)
    local rc = counts(rg)
    for g, k in pairs(counts(cg)) do match = match + math.min(k, rc[g] or 0) end
    ctotal, rtotal = ctotal + #cg, rtotal + #rg
  end
  if ctotal == 0 or rtotal == 0 then return 0 end
  return math.min(match / ctotal, match / rtotal)
end

function M.gleu(candidate, references)
  if not candidate:find("%S") then return 0 end
  local cw, best = M.stopped_words(candidate, true), 0
  for _, r in ipairs(references) do
    local s = gleu_one(cw, M.stopped_words(r, true))
    if s > best then best = s end
  end
  return best
end

-- A score against a threshold (>=), promptfoo's reason.
function M.scored(label, fn)
  return function(answer, refs, _, c)
    local s = fn(answer, refs, c)
    if s == nil then return nil, label .. ": the output or the reference has no words to score" end
    local ok = s >= c.threshold
    return ok, ("%s %.4f %s %s"):format(label, s, ok and ">=" or "<", K.show(c.threshold)), s
  end
end

function M.add(A)
  local T = A.types
  T.levenshtein = { value = "string", threshold = "distance", threshold_default = 5, check = function(answer, v, _, c)
    local bound = math.tointeger(math.floor(c.threshold)) -- nil past any integer: no bound
    local d = text.edit_distance(answer, v, bound)
    if d then return true, ("edit distance %d <= %s"):format(d, K.show(c.threshold)) end
    return false, ("edit distance above %s"):format(K.show(c.threshold))
  end }
  T["rouge-n"] = { value = "string", threshold = "share", threshold_default = 0.75,
                   check = M.scored("ROUGE-N", function(answer, ref) return M.rouge_n(answer, ref, 1) end) }
  T.bleu = { value = "references", threshold = "share", threshold_default = 0.5,
             check = M.scored("BLEU", function(answer, refs) return M.bleu(answer, refs) end) }
  T.gleu = { value = "references", threshold = "share", threshold_default = 0.5,
             check = M.scored("GLEU", function(answer, refs) return M.gleu(answer, refs) end) }
end

return M
