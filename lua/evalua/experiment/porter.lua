-- The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping",
-- 1980), the original algorithm that promptfoo's meteor uses through the
-- natural package's PorterStemmer. Lower-case ASCII words; other words are
-- returned as they are.
local M = {}

local function is_cons(w, i)
  local c = w:sub(i, i)
  if c:find("[aeiou]") then return false end
  if c == "y" then return i == 1 or not is_cons(w, i - 1) end
  return true
end

-- m: the number of VC sequences in w[1..j].
local function measure(w, j)
  local n, i = 0, 1
  while i <= j and is_cons(w, i) do i = i + 1 end
  while i <= j do
    while i <= j and not is_cons(w, i) do i = i + 1 end
    if i > j then break end
    n = n + 1
    while i <= j and is_cons(w, i) do i = i + 1 end
  end
  return n
end

local function has_vowel(w, j)
  for i = 1, j do if not is_cons(w, i) then return true end end
  return false
end

local function double_cons(w, j)
  return j >= 2 and w:sub(j, j) == w:sub(j - 1, j - 1) and is_cons(w, j)
end

-- cvc at j, the last c not w, x or y.
local function cvc(w, j)
  if j < 3 or not is_cons(w, j) or is_cons(w, j - 1) or not is_cons(w, j - 2) then return false end
  return not w:sub(j, j):find("[wxy]")
end

local function ends(w, s) return #w >= #s and w:sub(-#s) == s end
local function stem_len(w, s) return #w - #s end

-- Replace suffix s by r when the stem's measure is above min.
local function rule(w, s, r, min)
  if ends(w, s) then
    if measure(w, stem_len(w, s)) > min then return w:sub(1, stem_len(w, s)) .. r, true end
    return w, true
  end
  return w, false
end

local function step1ab(w)
  if ends(w, "sses") then w = w:sub(1, -3)
  elseif ends(w, "ies") then w = w:sub(1, -3)
  elseif ends(w, "ss") then -- stays
  elseif ends(w, "s") then w = w:sub(1, -2) end
  if ends(w, "eed") then
    if measure(w, #w - 3) > 0 then w = w:sub(1, -2) end
    return w
  end
  local cut
  if ends(w, "ed") and has_vowel(w, #w - 2) then cut = 2
  elseif ends(w, "ing") and has_vowel(w, #w - 3) then cut = 3 end
  if not cut then return w end
  w = w:sub(1, -cut - 1)
  if ends(w, "at") or ends(w, "bl") or ends(w, "iz") then return w .. "e" end
  if double_cons(w, #w) and not w:sub(-1):find("[lsz]") then return w:sub(1, -2) end
  if measure(w, #w) == 1 and cvc(w, #w) then return w .. "e" end
  return w
end

local function step1c(w)
  if ends(w, "y") and has_vowel(w, #w - 1) then return w:sub(1, -2) .. "i" end
  return w
end

local STEP2 = { { "ational", "ate" }, { "tional", "tion" }, { "enci", "ence" }, { "anci", "ance" }, { "izer", "ize" },
  { "bli", "ble" }, { "alli", "al" }, { "entli", "ent" }, { "eli", "e" }, { "ousli", "ous" }, { "ization", "ize" },
  { "ation", "ate" }, { "ator", "ate" }, { "alism", "al" }, { "iveness", "ive" }, { "fulness", "ful" },
  { "ousness", "ous" }, { "aliti", "al" }, { "iviti", "ive" }, { "biliti", "ble" }, { "logi", "log" } }
local STEP3 = { { "icate", "ic" }, { "ative", "" }, { "alize", "al" }, { "iciti", "ic" }, { "ical", "ic" },
  { "ful", "" }, { "ness", "" } }
local STEP4 = { "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
  "ate", "iti", "ous", "ive", "ize" }

-- The longest matching suffix of the list decides (a list in Porter's order
-- per last letters; the first match is the rule).
local function steps(w, list)
  local best
  for _, r in ipairs(list) do
    if ends(w, r[1]) and (not best or #r[1] > #best[1]) then best = r end
  end
  if best then w = rule(w, best[1], best[2], 0) end
  return w
end

local function step4(w)
  local best
  for _, s in ipairs(STEP4) do
    if ends(w, s) and (not best or #s > #best) then best = s end
  end
  if not best then return w end
  local j = stem_len(w, best)
  if best == "ion" and not w:sub(j, j):find("[st]") then return w end
  if measure(w, j) > 1 then return w:sub(1, j) end
  return w
end

local function step5(w)
  if ends(w, "e") then
    local m = measure(w, #w - 1)
    if m > 1 or (m == 1 and not cvc(w, #w - 1)) then w = w:sub(1, -2) end
  end
  if ends(w, "ll") and measure(w, #w) > 1 then w = w:sub(1, -2) end
  return w
end

function M.stem(w)
  if #w <= 2 or w:find("[^a-z]") then return w end
  w = step1ab(w)
  w = step1c(w)
  w = steps(w, STEP2)
  w = steps(w, STEP3)
  w = step4(w)
  return step5(w)
end

return M
