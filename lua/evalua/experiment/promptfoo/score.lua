-- One promptfoo case's assertions, compiled through evalua's assertion
-- registry (ev.assertions: the types are its types), and their verdict as
-- promptfoo computes it: the case's score is the weighted mean of its
-- assertions' scores (weight 1 unless given; 0 when every weight is 0); it
-- passes when no assertion fails, or, with a threshold, when the score is
-- at least the threshold. A named metric is the weighted mean of its
-- assertions. Where promptfoo would count an error as a failure, evalua
-- leaves the case unmeasured with the reason (docs/promptfoo.md).
local assertions = require "evalua.experiment.assertions"
local config = require "evalua.experiment.promptfoo.config"
local nunjucks = require "evalua.experiment.promptfoo.nunjucks"
local json = require "evalua.core.json"
local caught = require "evalua.core.caught"

local M = {}

local SET_KEYS = { type = true, assert = true, threshold = true, weight = true, metric = true }

-- The registry's types that a judge grades or embeds (ev.evaluate's judge,
-- the runner's --judge): without one they could only be unmeasured.
M.JUDGED = {}
for t in ([[similar llm-rubric g-eval model-graded-closedqa closed-qa factuality model-graded-factuality
  answer-relevance context-faithfulness context-recall context-relevance select-best]]):gmatch("%S+") do M.JUDGED[t] = true end

-- ---- transforms: Lua expressions over output and context ----------------------------

local SAFE = { "string", "math", "table", "utf8", "tostring", "tonumber", "type", "pairs", "ipairs", "select",
               "error", "pcall", "assert", "next" }

local function transform_env()
  local env = { json = { decode = json.decode, encode = json.encode, null = json.null } }
  for _, k in ipairs(SAFE) do env[k] = _G[k] end
  return env
end

-- compile_transform(src, where) -> fn(output, context) | nil, why. src is a
-- Lua expression of output and context ("output:upper()"), or a function
-- "function(output, context) ... end".
function M.compile_transform(src, where)
  local code = src:match("^%s*function%s*%(") and ("return " .. src)
    or ("return function(output, context) return " .. src .. "\nend")
  local chunk, err = load(code, "=" .. where, "t", transform_env())
  if not chunk then return nil, ("transform: not a Lua expression: %s"):format((tostring(err):gsub("^[^:]*:%d+: ", ""))) end
  local ok, fn = pcall(chunk)
  if not ok then return nil, "transform: raised: " .. tostring(caught.pass_on(fn)) end
  if type(fn) ~= "function" then return nil, ("transform: gives a %s, not a function"):format(type(fn)) end
  return fn
end

-- The output after a transform: text, or nil and why.
local function apply(fn, output, context, what)
  local ok, v = pcall(fn, output, context)
  if not ok then return nil, ("%s raised: %s"):format(what, tostring(caught.pass_on(v))) end
  if type(v) == "string" then return v end
  if type(v) == "number" then return json.number(v) end
  if type(v) == "boolean" then return tostring(v) end
  if type(v) == "table" then
    local ok2, s = pcall(json.encode, v)
    if ok2 then return s end
    return nil, ("%s gave a table that is not JSON: %s"):format(what, tostring(caught.pass_on(s)))
  end
  return nil, ("%s gave %s, not a text"):format(what, type(v))
end
M.apply = apply

-- ---- preparing a case's assertions --------------------------------------------------

-- A value with the case's vars rendered into its strings (promptfoo renders
-- assertion values), and file:// values read.
local function rendered(problems, e, v, vars, where)
  local line = e.doc:line(e.a, "value")
  if line == 0 then line = e.line end
  if type(v) == "string" then
    local f = v:match("^file://(.*)$")
    if f then
      local x, why = config.file_value(config.resolve(e.doc.dir, f))
      if x == nil then problems:add(e.doc.file, line, "%s: %s", where, why) end
      return x, x == nil
    end
    if not nunjucks.has_tags(v) then return v end
    local t, why = nunjucks.compile(v, where)
    if not t then problems:add(e.doc.file, line, "%s: %s", where, why) return nil, true end
    local s, err = nunjucks.render(t, vars)
    if not s then problems:add(e.doc.file, line, "%s: %s", where, err) end
    return s, s == nil
  end
  if config.is_list(v) then
    local out, bad = setmetatable({}, json.array), false
    for i, x in ipairs(v) do
      if type(x) == "string" then
        local r, b = rendered(problems, e, x, vars, ("%s[%d]"):format(where, i))
        out[i], bad = r, bad or b
      else out[i] = x end
    end
    return out, bad
  end
  return v
end

local prepare_list

-- One assertion: {c = compiled, weight, metric, transform} or
-- {set = {...}, threshold, weight, metric}; nil after a problem.
local function prepare(problems, e, vars, in_set)
  local a, d, where = e.a, e.doc, e.where
  if not config.is_map(a) then problems:add(d.file, e.line, "%s: an assertion is a mapping {type, value}", where) return nil end
  local item = { weight = config.value(a.weight) or 1, metric = config.value(a.metric) }
  if nunjucks.has_tags(item.metric) then -- promptfoo renders metric names with the case's vars
    local t = nunjucks.compile(item.metric, where .. ".metric")
    item.metric = t and nunjucks.render(t, vars) or item.metric
  end
  if type(item.weight) ~= "number" or item.weight ~= item.weight or item.weight < 0 or item.weight == math.huge then
    problems:add(d.file, d:line(a, "weight"), "%s.weight: expected a number >= 0", where)
    return nil
  end
  if item.metric ~= nil and (type(item.metric) ~= "string" or item.metric == "") then
    problems:add(d.file, d:line(a, "metric"), "%s.metric: expected a name", where)
    return nil
  end
  if a.type == "assert-set" then
    config.check_keys(problems, d, a, where, SET_KEYS)
    item.threshold = config.value(a.threshold)
    if item.threshold ~= nil and type(item.threshold) ~= "number" then
      problems:add(d.file, d:line(a, "threshold"), "%s.threshold: expected a number", where)
    end
    local list = config.value(a.assert)
    if not config.is_list(list) or #list == 0 then
      problems:add(d.file, e.line, "%s.assert: an assert-set needs a list of assertions", where)
      return nil
    end
    local entries = {}
    for i, x in ipairs(list) do
      entries[i] = { a = x, doc = d, line = d:line(list, i), where = ("%s.assert[%d]"):format(where, i) }
    end
    item.set = prepare_list(problems, entries, vars, true)
    item.name = a.metric or ("assert-set of " .. #list)
    return item.set and item
  end
  local src = config.value(a.transform)
  if src ~= nil then
    local fn, why
    if type(src) == "string" then fn, why = M.compile_transform(src, where .. ".transform")
    else why = "transform: expected a Lua expression" end
    if not fn then problems:add(d.file, d:line(a, "transform"), "%s.%s", where, why) return nil end
    item.transform = fn
  end
  local plain = {}
  for k, v in pairs(a) do
    if k ~= "weight" and k ~= "metric" and k ~= "transform" then plain[k] = config.value(v) end
  end
  if plain.value ~= nil then
    local bad
    plain.value, bad = rendered(problems, e, plain.value, vars, where .. ".value")
    if bad then return nil end -- said already
  end
  local c, why = assertions.compile(plain, where)
  if not c then
    local key = why:match("^[^:]-%.([%w_]+):") or why:match("unknown key '([^']+)'")
    problems:add(d.file, key and d:line(a, key) or e.line, "%s", why)
    return nil
  end
  if c.t and c.t.across then -- select-best, max-score: a verdict over a case's cells, not one output
    local why2 = in_set and "is a verdict over a case's cells, not part of an assert-set"
      or item.transform and "compares the outputs as the provider gave them: a transform here would do nothing"
      or (a.weight ~= nil or a.metric ~= nil) and "enters no score: weight and metric here would do nothing"
    if why2 then problems:add(d.file, d:line(a, "type"), "%s.type: '%s' %s", where, tostring(a.type), why2) return nil end
    item.across = true
  end
  item.c, item.name = c, c.name
  if M.JUDGED[c.base] then
    problems.judged = problems.judged or {}
    table.insert(problems.judged, { file = d.file, line = d:line(a, "type"), type = a.type })
  end
  return item
end

function prepare_list(problems, entries, vars, in_set)
  local out, ok = {}, true
  for i, e in ipairs(entries) do
    out[i] = prepare(problems, e, vars, in_set)
    ok = ok and out[i] ~= nil
  end
  return ok and out or nil
end
M.prepare_list = prepare_list

-- A case's prepared list split: the assertions of each output, and those
-- that compare the case's cells (select-best, max-score).
function M.split(items)
  local own, across = {}, {}
  for _, it in ipairs(items) do table.insert(it.across and across or own, it) end
  return own, across
end

-- ---- verdicts ---------------------------------------------------------------------

local function fmt(x) return ("%.2f"):format(x) end

local run_list

-- {name, pass, score, reason, weight, metric} of one assertion on output.
local function run_item(item, output, row, context, ctx)
  if item.set then
    local v = run_list(item.set, output, row, context, item.threshold, ctx)
    return { name = item.name, type = "assert-set", pass = v.pass, score = v.weighted, reason = v.reason,
             weight = item.weight, metric = item.metric, named = v.named }
  end
  local out = output
  if item.transform then
    local why
    out, why = apply(item.transform, output, context, "the assertion's transform")
    if not out then return { name = item.name, reason = why, weight = item.weight, metric = item.metric } end
  end
  local r = assertions.run(item.c, setmetatable({ answer = out }, { __index = row }), ctx)
  local score = type(r.score) == "number" and r.score or (r.pass == true and 1 or r.pass == false and 0 or nil)
  local pass, reason = r.pass, r.reason
  if item.weight == 0 and pass == false then -- promptfoo: weight 0 reports its score and never fails
    pass, reason = true, reason .. " (weight 0: reported, never failing)"
  end
  return { name = r.name, type = item.c.type, pass = pass, score = score, reason = reason, weight = item.weight,
           metric = item.metric }
end

-- The verdict of a list: {pass = true|false|nil, weighted, reason, results, named}.
function run_list(items, output, row, context, threshold, ctx)
  local results, total, wsum, failed, open = {}, 0, 0, {}, nil
  local named, named_w, named_open = {}, {}, {}
  for i, item in ipairs(items) do
    local r = run_item(item, output, row, context, ctx)
    results[i] = r
    if r.pass == nil or r.score == nil then
      if r.weight > 0 then open = open or r end -- weight 0 can neither fail the case nor change its score
      if r.metric then named_open[r.metric] = r.name .. ": " .. r.reason end
    else
      total, wsum = total + r.score * r.weight, wsum + r.weight
      if r.pass == false then failed[#failed + 1] = r end
      if r.metric then
        named[r.metric] = (named[r.metric] or 0) + r.score * r.weight
        named_w[r.metric] = (named_w[r.metric] or 0) + r.weight
      end
    end
    for k, v in pairs(r.named or {}) do
      if k ~= r.metric and v.score then
        named[k], named_w[k] = (named[k] or 0) + v.score, (named_w[k] or 0) + 1
      elseif k ~= r.metric then named_open[k] = v.reason end
    end
  end
  local names = {}
  for k, v in pairs(named) do names[k] = { score = named_w[k] > 0 and v / named_w[k] or 0 } end
  for k, why in pairs(named_open) do names[k] = { reason = why } end
  local out = { results = results, named = names }
  if #items == 0 then out.reason = "no assertions" return out end
  local score = wsum > 0 and total / wsum or 0
  if threshold ~= nil then
    if open then out.reason = open.name .. ": " .. open.reason return out end
    out.weighted, out.pass = score, score >= threshold
    out.reason = ("aggregate score %s %s %s threshold"):format(fmt(score), out.pass and ">=" or "<", json.number(threshold))
    return out
  end
  if #failed > 0 then
    local parts = {}
    for i, r in ipairs(failed) do parts[i] = r.name .. ": " .. r.reason end
    out.pass, out.weighted = false, not open and score or nil
    out.reason = ("%d of %d failed: %s"):format(#failed, #items, table.concat(parts, "; "))
    return out
  end
  if open then out.reason = open.name .. ": " .. open.reason return out end
  out.pass, out.weighted = true, score
  out.reason = ("all %d passed"):format(#items)
  return out
end

-- verdict(case, row [, transform [, ctx]]) -> {pass, weighted, reason, results,
-- named}: the case's assertions on the row's output (after the provider's and
-- the case's transforms); ctx is ev.evaluate's (its judge grades and embeds).
function M.verdict(case, row, provider_transform, ctx)
  if row.output_error ~= nil then
    return { reason = "no output: " .. tostring(row.output_error), results = {}, named = {}, error = true }
  end
  local output = row.answer
  if type(output) ~= "string" then return { reason = "the row has no output", results = {}, named = {}, error = true } end
  local context = { vars = case.vars, prompt = row.prompt_name, provider = row.provider }
  for _, step in ipairs { { provider_transform, "the provider's transform" }, { case.transform, "options.transform" } } do
    if step[1] then
      local why
      output, why = apply(step[1], output, context, step[2])
      if not output then return { reason = why, results = {}, named = {} } end
    end
  end
  local v = run_list(case.items, output, row, context, case.threshold, ctx)
  v.output = output
  return v
end

-- A comparison's result joins an output's verdict as promptfoo joins it: the
-- case passes when it passed and the comparison passed; a comparison that
-- fails sets the case's score (0) and reason. A case with no assertion of its
-- own takes the comparison's verdict. One that could not tell leaves a
-- passing case unmeasured.
local function join(v, r)
  v.results[#v.results + 1] = r
  local why = r.name .. ": " .. r.reason
  if v.reason == "no assertions" then v.pass, v.weighted, v.reason = r.pass, r.score, why
  elseif r.pass == false then v.pass, v.weighted, v.reason = false, r.score, why
  elseif r.pass == nil and v.pass == true then v.pass, v.reason = nil, why end
end

-- compare(case, entries, ctx): each comparison of the case over its outputs
-- ({row =, v =} per cell, in the cells' order), joined into each verdict.
-- Cells without an output take no part.
function M.compare(case, entries, ctx)
  local group = {}
  for _, e in ipairs(entries) do
    if not e.v.error and e.v.output ~= nil then
      group[#group + 1] = { v = e.v, results = e.v.results,
                            row = setmetatable({ answer = e.v.output }, { __index = e.row }) }
    end
  end
  for _, item in ipairs(case.across) do
    local c, verdicts, why = item.c, nil, nil
    if #group < 2 then why = "one cell with an output: nothing to compare" else verdicts, why = c.t.compare(group, c, ctx) end
    for i, g in ipairs(group) do
      local r = { name = item.name, type = c.type, across = true, weight = item.weight, reason = why }
      if verdicts then r.pass, r.score, r.reason = verdicts[i].pass, verdicts[i].score, verdicts[i].reason end
      join(g.v, r)
    end
  end
end

return M
