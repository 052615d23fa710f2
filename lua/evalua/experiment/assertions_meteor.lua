-- meteor, with promptfoo's formula (NLTK's single-reference METEOR): the
-- words of candidate and reference (split at whitespace, trailing full
-- stops off, lower-cased) are matched in three stages, exact, then Porter
-- stems (porter.lua), then WordNet synonyms; from the m matches,
-- P = m / |candidate|, R = m / |reference|, Fmean = P R / (alpha P + (1 - alpha) R),
-- and the score is Fmean (1 - gamma (chunks / m)^beta); the best reference counts.
-- Synonyms come from WordNet 3.0 as Debian's wordnet-base installs it
-- (/usr/share/wordnet, or $EVALUA_WORDNET); promptfoo reads WordNet 3.1
-- through natural. Without the files the synonym stage is skipped and the
-- reason says so.
local porter = require "evalua.experiment.porter"
local overlap = require "evalua.experiment.assertions_overlap"

local M = {}

local function getenv(k)
  local ok, v = pcall(os.getenv, k)
  return ok and v or nil
end

-- ---- WordNet ------------------------------------------------------------------

local wordnet = { dir = nil, files = {}, cache = {} }

local function wn_dir()
  if wordnet.dir == nil then
    local dir = getenv("EVALUA_WORDNET") or "/usr/share/wordnet"
    local f = io.open(dir .. "/index.noun", "rb")
    if f then f:close() end
    wordnet.dir = f and dir or false
  end
  return wordnet.dir
end

local function wn_file(name)
  local f = wordnet.files[name]
  if f == nil then
    f = io.open(wn_dir() .. "/" .. name, "rb") or false
    wordnet.files[name] = f
  end
  return f or nil
end

-- The line of index file f that starts with "lemma ", by binary search
-- over byte offsets (the index is sorted; its header lines start with spaces).
local function index_line(f, lemma)
  local lo, hi = 0, f:seek("end")
  local key = lemma .. " "
  while lo < hi do
    local mid = (lo + hi) // 2
    f:seek("set", mid)
    if mid > 0 then f:read("l") end
    local pos = f:seek()
    local line = f:read("l")
    if not line then hi = mid
    else
      local word = line:match("^(%S+)") or ""
      if line:sub(1, 1) == " " or word < lemma then lo = math.max(pos + #line + 1, mid + 1)
      elseif word == lemma then return line
      else hi = mid end
    end
  end
  f:seek("set", lo)
  local line = f:read("l")
  if line and line:sub(1, #key) == key then return line end
end

local POS = { "noun", "verb", "adj", "adv" }

-- Every word of every synset of lemma, without those holding "_".
local function synonyms(word)
  local hit = wordnet.cache[word]
  if hit then return hit end
  local set = { [word] = true }
  for _, pos in ipairs(POS) do
    local index, data = wn_file("index." .. pos), wn_file("data." .. pos)
    local line = index and data and index_line(index, word)
    if line then
      local fields = {}
      for x in line:gmatch("%S+") do fields[#fields + 1] = x end
      local p_cnt = tonumber(fields[4]) or 0
      for i = 7 + p_cnt, #fields do
        data:seek("set", tonumber(fields[i]))
        local rec = data:read("l") or ""
        local w_cnt = tonumber(rec:match("^%d+ %d+ %a (%x+)") or "0", 16) or 0
        local rest = rec:match("^%d+ %d+ %a %x+ (.*)$") or ""
        local k = 0
        for lemma in rest:gmatch("(%S+) %x+") do
          k = k + 1
          if k > w_cnt then break end
          lemma = lemma:gsub("%(.-%)$", "")
          if not lemma:find("_", 1, true) then set[lemma:lower()] = true end
        end
      end
    end
  end
  wordnet.cache[word] = set
  return set
end

-- ---- matching -----------------------------------------------------------------

-- Greedy matching as NLTK's (and promptfoo's): candidates from the last,
-- each with the last unmatched reference word that fits.
local function match_stage(cand, ref, same)
  local pairs_, rc, rr = {}, {}, {}
  local used = {}
  for i = #cand, 1, -1 do
    local found = false
    for j = #ref, 1, -1 do
      if not used[j] and same(cand[i][2], ref[j][2]) then
        pairs_[#pairs_ + 1] = { cand[i][1], ref[j][1] }
        used[j] = true
        found = true
        break
      end
    end
    if not found then table.insert(rc, 1, cand[i]) end
  end
  for j = 1, #ref do if not used[j] then rr[#rr + 1] = ref[j] end end
  return pairs_, rc, rr
end

local function chunks(matches)
  if #matches == 0 then return 0 end
  local n = 1
  for i = 1, #matches - 1 do
    if matches[i + 1][1] ~= matches[i][1] + 1 or matches[i + 1][2] ~= matches[i][2] + 1 then n = n + 1 end
  end
  return n
end

local function enum(words)
  local out = {}
  for i, w in ipairs(words) do out[i] = { i, w:lower() } end
  return out
end

function M.single(candidate, reference, alpha, beta, gamma)
  local cand, ref = enum(candidate), enum(reference)
  local all = {}
  local function take(list) for _, p in ipairs(list) do all[#all + 1] = p end end
  local m, rc, rr = match_stage(cand, ref, function(a, b) return a == b end)
  take(m)
  local sc, sr = {}, {}
  for i, x in ipairs(rc) do sc[i] = { x[1], porter.stem(x[2]) } end
  for i, x in ipairs(rr) do sr[i] = { x[1], porter.stem(x[2]) } end
  local keep_c, keep_r
  m, keep_c, keep_r = match_stage(sc, sr, function(a, b) return a == b end)
  take(m)
  -- as in promptfoo (and NLTK), the synonym stage looks up the stems left over
  if wn_dir() then
    m = match_stage(keep_c, keep_r, function(a, b) return synonyms(a)[b] == true end)
    take(m)
  end
  table.sort(all, function(a, b) return a[1] < b[1] end)
  local n = #all
  if n == 0 or #cand == 0 or #ref == 0 then return 0 end
  local p, r = n / #cand, n / #ref
  local den = alpha * p + (1 - alpha) * r
  if den == 0 then return 0 end
  local fmean = p * r / den
  return (1 - gamma * (chunks(all) / n) ^ beta) * fmean
end

function M.score(candidate, references, alpha, beta, gamma)
  local cw, best = overlap.stopped_words(candidate), 0
  for _, r in ipairs(references) do
    local s = M.single(cw, overlap.stopped_words(r), alpha, beta, gamma)
    if s > best then best = s end
  end
  return best
end

local function share(v, what)
  if math.type(v) == nil or v ~= v or v < 0 or v > 1 then return nil, what .. ": expected a number from 0 to 1" end
  return v
end

local function positive(v, what)
  if math.type(v) == nil or v ~= v or v <= 0 or v == math.huge then return nil, what .. ": expected a number > 0" end
  return v
end

function M.add(A)
  local scored = overlap.scored
  A.types.meteor = { value = "references", threshold = "share", threshold_default = 0.5,
    keys = { alpha = share, beta = positive, gamma = share },
    check = function(answer, refs, row, c)
      local k = c.keys
      local pass, reason, s = scored("METEOR", function(a, r)
        return M.score(a, r, k.alpha or 0.9, k.beta or 3, k.gamma or 0.5)
      end)(answer, refs, row, c)
      if not wn_dir() then reason = reason .. " (no synonym stage: WordNet is not installed)" end
      return pass, reason, s
    end }
end

M.wordnet_dir = wn_dir
M.synonyms = synonyms
return M
