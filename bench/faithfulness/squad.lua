-- How often offline faithfulness ranks a faithful answer above the same
-- answer with a number, date or name swapped for one the context never
-- mentions, on SQuAD (a JSON file of the v1.1 or v2.0 format; not in the
-- repository). Two forms of answer: the human answer span, and the context
-- sentence that holds it. A smoke detector's accuracy, not a judge's.
--   evalua run bench/faithfulness/squad.lua PATH/dev-v2.0.json
local ev = require "evalua"
local cjson = require "cjson"

local path = arg[1]
if not path then
  io.stderr:write("usage: evalua run bench/faithfulness/squad.lua dev-v2.0.json\n")
  os.exit(2)
end
local f = assert(io.open(path, "rb"))
local data = cjson.decode(f:read("a"))
f:close()

local MONTHS = { "January", "February", "March", "April", "May", "June", "July", "August", "September",
                 "October", "November", "December" }

local function tokens_of(s)
  local set = {}
  for _, t in ipairs(ev.text.tokens(s)) do set[t] = true end
  return set
end

local function absent(ctx, s)
  for _, t in ipairs(ev.text.tokens(s)) do
    if ctx[t] then return false end
  end
  return true
end

-- Capitalised names of every answer, by article, for swaps from elsewhere.
local names = {}
for a, article in ipairs(data.data) do
  for _, p in ipairs(article.paragraphs) do
    for _, qa in ipairs(p.qas) do
      local ans = qa.answers[1] and qa.answers[1].text
      if ans and ans:match("^%u%l+ %u%l+$") then names[#names + 1] = { text = ans, article = a } end
    end
  end
end

-- The answer with one fact swapped, and what kind; nil when it has none.
local function swap(ans, ctx, article)
  for _, m in ipairs(MONTHS) do
    local s, e = ans:find(m, 1, true)
    if s then
      for k = 1, 12 do
        local other = MONTHS[(k + 5) % 12 + 1]
        if other ~= m and not ctx[other:lower()] then return ans:sub(1, s - 1) .. other .. ans:sub(e + 1), "date" end
      end
    end
  end
  local s, e, num = ans:find("(%d+)")
  if s then
    for d = 1, 50 do
      local other = tostring(tonumber(num) + d)
      if not ctx[other] then return ans:sub(1, s - 1) .. other .. ans:sub(e + 1), "number" end
    end
  end
  local ns, ne = ans:find("%u%l+ %u%l+")
  if ns then
    for _, n in ipairs(names) do
      if n.article ~= article and absent(ctx, n.text) then
        return ans:sub(1, ns - 1) .. n.text .. ans:sub(ne + 1), "name"
      end
    end
  end
end

-- The sentence of the context around byte offset `at`.
local function sentence_at(context, at)
  local start = 1
  for pos in context:gmatch("()[%.!?]%s+%u") do
    if pos >= at then break end
    start = pos + 2
  end
  local stop = context:find("[%.!?]%s+%u", at) or #context
  return (context:sub(start, stop):gsub("^%s+", ""))
end

local judge = ev.judge.open("offline")

-- tally[form/kind] = {n, higher, tie, lower} over every pair.
local function measure()
  local tally = {}
  local function count(form, kind, faithful, swapped)
    local key = form .. "/" .. kind
    local t = tally[key] or { higher = 0, tie = 0, lower = 0, n = 0 }
    tally[key] = t
    local a, b = faithful.score or 0, swapped.score or 0
    t.n = t.n + 1
    if a > b then t.higher = t.higher + 1 elseif a == b then t.tie = t.tie + 1 else t.lower = t.lower + 1 end
  end
  for a, article in ipairs(data.data) do
    for _, p in ipairs(article.paragraphs) do
      local ctx = tokens_of(p.context)
      for _, qa in ipairs(p.qas) do
        local ans = qa.answers[1]
        local bad, kind
        if ans and not qa.is_impossible then bad, kind = swap(ans.text, ctx, a) end
        if bad then
          local row = { query = qa.question, contexts = { p.context }, answer = ans.text }
          local good = ev.rag.faithfulness:score(row, judge)
          row.answer = bad
          count("span", kind, good, ev.rag.faithfulness:score(row, judge))
          local sentence = sentence_at(p.context, ans.answer_start + 1)
          local s, e = sentence:find(ans.text, 1, true)
          if s then
            row.answer = sentence
            good = ev.rag.faithfulness:score(row, judge)
            row.answer = sentence:sub(1, s - 1) .. bad .. sentence:sub(e + 1)
            count("sentence", kind, good, ev.rag.faithfulness:score(row, judge))
          end
        end
      end
    end
  end
  return tally
end

local function report(title, tally)
  print(title)
  local keys = {}
  for k in pairs(tally) do keys[#keys + 1] = k end
  table.sort(keys)
  print("form/kind\tpairs\tfaithful higher\ttie\tlower")
  local all = { n = 0, higher = 0, tie = 0, lower = 0 }
  for _, k in ipairs(keys) do
    local t = tally[k]
    print(("%s\t%d\t%.3f\t%.3f\t%.3f"):format(k, t.n, t.higher / t.n, t.tie / t.n, t.lower / t.n))
    for _, f in ipairs { "n", "higher", "tie", "lower" } do all[f] = all[f] + t[f] end
  end
  print(("all\t%d\t%.3f\t%.3f\t%.3f"):format(all.n, all.higher / all.n, all.tie / all.n, all.lower / all.n))
end

local offline = ev.judge.offline
local was = offline.check_names
offline.check_names = false
report("words and numbers only", measure())
offline.check_names = true
report("with the name check", measure())
offline.check_names = was
