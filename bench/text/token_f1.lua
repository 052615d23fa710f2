-- Token F1 over many answer pairs: ev.text.token_f1_batch (C, one call),
-- ev.text.token_f1 called per pair from Lua, and a plain-Lua implementation
-- of the same function, timed in the same process (CPU time), each the best
-- of RUNS runs.
-- usage: evalua run bench/text/token_f1.lua [PAIRS [LUA_PAIRS [RUNS]]]
--   defaults: 1000000 pairs; the plain-Lua reference runs on the first
--   200000 of them (it is slow) and is compared per pair; 3 runs.
-- The data holds ASCII English answers and Chinese answers (CJK unified
-- ideographs only), where the plain-Lua version below computes exactly the
-- SQuAD-style F1 of docs/text.md; every pair it scores is checked against C.
local ev = require "evalua"

local N = math.tointeger(tonumber(arg[1])) or 1000000
local NLUA = math.min(N, math.tointeger(tonumber(arg[2])) or 200000)
local RUNS = math.tointeger(tonumber(arg[3])) or 3

-- ---- data ---------------------------------------------------------------
math.randomseed(20240601)
local words = { "the", "a", "an", "Paris", "France", "capital", "of", "is", "city", "June", "29,",
  "2007", "(1998)", "Denver", "Broncos", "won", "Super", "Bowl", "50", "it's", "U.S.", "river",
  "Seine", "largest", "population", "million", "people", "about", "2.1", "the", "and", "in" }
local hanzi = {}
for _, cp in utf8.codes("北京是中国的首都上海人口最多城市长江黄河流域面积平方公里年月日发布") do
  hanzi[#hanzi + 1] = utf8.char(cp)
end
local function english(n)
  local t = {}
  for i = 1, n do t[i] = words[math.random(#words)] end
  return table.concat(t, " ")
end
local function chinese(n)
  local t = {}
  for i = 1, n do t[i] = math.random(8) == 1 and tostring(math.random(2030)) or hanzi[math.random(#hanzi)] end
  return table.concat(t)
end
local preds, golds = {}, {}
for i = 1, N do
  local zh = math.random(10) == 1
  local gen = zh and chinese or english
  preds[i] = gen(math.random(zh and 3 or 2, zh and 15 or 12))
  local k = math.random(3)
  if k == 1 then
    golds[i] = gen(math.random(1, 6))
  else
    local list = {}
    for j = 1, k do list[j] = gen(math.random(1, 6)) end
    golds[i] = list
  end
end

-- ---- the plain-Lua implementation -----------------------------------------
local function tokens(s)
  -- %p is exactly ASCII punctuation; lower() is ASCII; each ideograph
  -- (3-byte UTF-8 from U+4E00 to U+9FFF) becomes its own token
  s = s:lower():gsub("%p", ""):gsub("[\228-\233][\128-\191][\128-\191]", " %0 ")
  local t, n = {}, 0
  for w in s:gmatch("%S+") do
    if w ~= "a" and w ~= "an" and w ~= "the" then n = n + 1; t[n] = w end
  end
  return t, n
end

local function f1(pt, pn, gt, gn)
  if pn == 0 or gn == 0 then return pn == gn and 1 or 0 end
  local count = {}
  for i = 1, gn do count[gt[i]] = (count[gt[i]] or 0) + 1 end
  local common = 0
  for i = 1, pn do
    local c = count[pt[i]]
    if c and c > 0 then count[pt[i]] = c - 1; common = common + 1 end
  end
  if common == 0 then return 0 end
  local p, r = common / pn, common / gn
  return 2 * p * r / (p + r)
end

local function lua_token_f1(pred, g)
  if type(g) == "string" then g = { g } end
  local pt, pn = tokens(pred)
  local best, any = 0, false
  for _, gold in ipairs(g) do
    local gt, gn = tokens(gold)
    if gn > 0 then
      any = true
      local s = f1(pt, pn, gt, gn)
      if s > best then best = s end
    end
  end
  if not any then return pn == 0 and 1 or 0 end
  return best
end

-- ---- timing -----------------------------------------------------------------
-- The best of `runs` timings: other processes on the machine only ever add.
local function time(f)
  local best, r = math.huge, nil
  for _ = 1, RUNS do
    r = nil
    collectgarbage()
    local t0 = os.clock()
    r = f()
    best = math.min(best, os.clock() - t0)
  end
  return best, r
end

local t_batch, batch = time(function() return ev.text.token_f1_batch(preds, golds) end)
local t_single = time(function()
  local f, out = ev.text.token_f1, {}
  for i = 1, N do out[i] = f(preds[i], golds[i]) end
  return out
end)
local t_lua, ref = time(function()
  local out = {}
  for i = 1, NLUA do out[i] = lua_token_f1(preds[i], golds[i]) end
  return out
end)

local mismatches = 0
for i = 1, NLUA do
  if ref[i] ~= batch[i] then mismatches = mismatches + 1 end
end

local lua_rate = NLUA / t_lua
print(("token F1, %d answer pairs (%d%% Chinese), CPU time, best of %d runs each"):format(N, 10, RUNS))
print(("  C batch   token_f1_batch      %8.3f s  %11.0f pairs/s  %6.1fx plain Lua"):format(t_batch, N / t_batch, N / t_batch / lua_rate))
print(("  C single  token_f1 per pair   %8.3f s  %11.0f pairs/s  %6.1fx plain Lua"):format(t_single, N / t_single, N / t_single / lua_rate))
print(("  plain Lua (first %d pairs) %8.3f s  %11.0f pairs/s   1.0x"):format(NLUA, t_lua, lua_rate))
print(("  pairs where plain Lua and C differ: %d of %d"):format(mismatches, NLUA))
if mismatches > 0 then ev.exit(1) end
