-- The types of ev.assertions that compare the outputs of one case across
-- the cells of a matrix (prompt x provider): max-score (the output whose
-- other assertions score highest passes, the others fail) and select-best
-- (the judge picks the best output for a criterion). A case is the rows
-- sharing the metric's `case` field (default qid) after ev.generate.
local E = require "evalua.judged.llm_evaluator"
local K = require "evalua.experiment.assertions_values"
local offline = require "evalua.judge.offline"

local M = {}

local METHODS = { average = true, sum = true }

-- max-score's value: {method = "average" | "sum", weights = {type = w}, threshold = min}.
local function max_score_value(v, what)
  if type(v) ~= "table" or K.is_list(v) and next(v) ~= nil then return nil, what .. ": expected {method =, weights =, threshold =}" end
  for k in pairs(v) do
    if k ~= "method" and k ~= "weights" and k ~= "threshold" then
      return nil, ("%s.%s: not a key here (method, weights, threshold)"):format(what, tostring(k))
    end
  end
  if v.method ~= nil and not METHODS[v.method] then return nil, what .. '.method: expected "average" or "sum"' end
  if v.weights ~= nil then
    if type(v.weights) ~= "table" then return nil, what .. ".weights: expected {assertion type = weight}" end
    for k, w in pairs(v.weights) do
      if not (K.finite(w) and w >= 0) then return nil, ("%s.weights.%s: expected a number >= 0"):format(what, tostring(k)) end
    end
  end
  if v.threshold ~= nil and not K.finite(v.threshold) then return nil, what .. ".threshold: expected a number" end
  return { method = v.method or "average", weights = v.weights or {}, threshold = v.threshold }
end

-- The score of one output from its other assertions' results.
local function cell_score(results, v)
  local sum, weights = 0, 0
  for _, r in ipairs(results) do
    if r.score ~= nil and not r.across then
      local w = v.weights[r.type] or 1
      sum, weights = sum + r.score * w, weights + w
    end
  end
  if weights == 0 then return nil end
  return v.method == "sum" and sum or sum / weights
end

local function max_score(group, c)
  local v, best, at = c.value, nil, nil
  local scores = {}
  for i, g in ipairs(group) do
    scores[i] = cell_score(g.results, v)
    if scores[i] == nil then return nil, ("cell %s has no scored assertion to compare"):format(g.row.system or i) end
    if best == nil or scores[i] > best then best, at = scores[i], i end
  end
  local out = {}
  for i, g in ipairs(group) do
    local pass = i == at and (v.threshold == nil or best >= v.threshold)
    local why = i == at and (pass and "the highest score" or ("the highest score, under the threshold " .. K.show(v.threshold)))
      or ("not the highest score (%s has %.4f)"):format(tostring(group[at].row.system or at), best)
    out[i] = { pass = pass, score = pass and 1 or 0, reason = ("score %.4f: %s"):format(scores[i], why) }
  end
  return out
end

E.step("assert_select_best", {
  prompt = {
    system = "You compare several outputs for one criterion and choose the single best. Answer with a JSON "
      .. 'object {"best": <index of the best output, from 0>, "reason": "<one sentence>"}.',
    user = "Criterion: {{criterion}}\n\n{{outputs}}",
  },
  parse = function(answer, vars)
    local i = type(answer) == "table" and math.tointeger(tonumber(answer.best))
    if not i or i < 0 or i >= vars.n then return nil, ("expected best as an index from 0 to %d"):format(vars.n - 1) end
    return i, type(answer.reason) == "string" and answer.reason or nil
  end,
  -- no model reads the criterion: the output sharing most of its words wins, the first of equal ones
  offline = function(vars)
    local best, at, why
    for i, text in ipairs(vars.texts) do
      local r, w = offline.relevance(vars.criterion, text)
      if r == nil then return nil, "offline: " .. w end
      if best == nil or r > best then best, at, why = r, i - 1, w end
    end
    return at, "offline: the most criterion words (" .. why .. ")"
  end,
})

local function select_best(group, c, ctx)
  local judge, why = E.judge_of(ctx)
  if not judge then return nil, why end
  local parts, texts = {}, {}
  for i, g in ipairs(group) do
    texts[i] = tostring(g.row.answer)
    parts[i] = ("Output %d:\n%s"):format(i - 1, texts[i])
  end
  local r = judge:ask("assert_select_best", { criterion = c.value, outputs = table.concat(parts, "\n\n"), n = #group,
                                              texts = texts })
  if not r.ok then return nil, "select-best: " .. tostring(r.error) end
  local out = {}
  for i in ipairs(group) do
    local pass = i - 1 == r.value
    out[i] = { pass = pass, score = pass and 1 or 0,
               reason = (pass and "chosen as the best" or "not chosen") .. (r.reason and (": " .. r.reason) or "") }
  end
  return out
end

function M.add(A)
  A.values.max_score = max_score_value
  A.types["max-score"] = { value = "max_score", optional = true, across = true, compare = max_score,
                           no_not = "it ranks the cells", default = function() return max_score_value({}, "") end }
  A.types["select-best"] = { value = "text", across = true, compare = select_best, no_not = "it ranks the cells" }
end

-- wrap(A, m, compiled, info) -> m, given a batch over the data set when the
-- list holds a cross-cell type: each row's own assertions run first, then
-- each case's cells are compared and the comparison joins each row's results.
function M.wrap(A, m, compiled, info)
  local across = {}
  for _, c in ipairs(compiled) do if c.t and c.t.across then across[#across + 1] = c end end
  if #across == 0 then return m end
  local fn = m.fn
  m.fn = nil
  m.batch = function(rows, ctx)
    local per, groups, order = {}, {}, {}
    for i = 1, #rows do
      local row = rows[i]
      local results, bad = A.evaluate(compiled, row, info.field, info.lists, ctx)
      per[i] = { row = row, results = results, bad = bad }
      local key = row[info.case]
      if key == nil then per[i].bad = per[i].bad or ("the row has no '%s' to group its cells by"):format(info.case)
      else
        key = tostring(key)
        if not groups[key] then groups[key] = {}; order[#order + 1] = key end
        table.insert(groups[key], per[i])
      end
    end
    for _, key in ipairs(order) do
      local group = {}
      for _, p in ipairs(groups[key]) do if p.results then group[#group + 1] = p end end
      for _, c in ipairs(across) do
        local verdicts, why = nil, nil
        if #group < 2 then why = "one cell only: nothing to compare" else verdicts, why = c.t.compare(group, c, ctx) end
        for i, p in ipairs(group) do
          local r = { name = c.name, weight = c.weight, metric = c.metric, type = c.type }
          if verdicts then r.pass, r.score, r.reason = verdicts[i].pass, verdicts[i].score, verdicts[i].reason
          else r.reason = why end
          for j, x in ipairs(p.results) do if x.name == c.name and x.pass == nil and x.score == nil then
            p.results[j] = r; break end end
        end
      end
    end
    local out = {}
    for i, p in ipairs(per) do
      if p.bad then out[i] = { unmeasured = true, reason = p.bad }
      else out[i] = A.verdict(p.results, info.threshold_of(p.row), info.score) end
    end
    return out
  end
  m.fn_single = fn
  return m
end

return M
