-- ev.geval: G-Eval, a judge metric from criteria in plain words.
--
--   local m = ev.geval {
--     name = "cites_source",
--     criteria = "The answer cites one of the retrieved passages.",   -- or steps = {...}
--     params = { "input", "actual_output", "context" },               -- what the judge sees
--     scale = { 1, 5 }, threshold = 0.5, samples = 1,
--   }
--   print(table.concat(m:steps(judge), "\n"))   -- pin them: ev.geval{..., steps = {...}}
--
-- Steps are generated once from the criteria (and cached by the judge). The
-- score is weighted by the probabilities of the score tokens when the server
-- returns logprobs, else the plain integer (result.weighted = false and
-- result.fallback say why), and normalised to 0-1. The offline judge cannot
-- read a criterion: offline, only a metric's own offline function scores.
-- docs/judged_metrics.md.
local E = require "evalua.judged.llm_evaluator"
local options = require "evalua.core.options"
local mean_sd = require("evalua.judge.vote").mean_sd
local json = require "evalua.judge.json"
local P = require "evalua.judged.prompts.geval"

local M = { prompts = P }

-- Test-case fields: their labels in the prompt and the row fields they read.
M.params = {
  input = { label = "Input", field = "query" },
  actual_output = { label = "Actual Output", field = "answer" },
  expected_output = { label = "Expected Output", field = "gold_answers" },
  context = { label = "Context", field = "contexts" },
  -- a conversation (docs/agents.md): its messages as a transcript, and its metadata
  turns = { label = "Turns", field = "messages" },
  scenario = { label = "Scenario", field = "scenario" },
  expected_outcome = { label = "Expected Outcome", field = "expected_outcome" },
  chatbot_role = { label = "Chatbot Role", field = "chatbot_role" },
}

local MIN_PROB = math.log(0.01)

local function trim(s) return (tostring(s):gsub("^%s+", ""):gsub("%s+$", "")) end

-- The token of tokens that holds the value of key in the JSON answer they
-- spell, or nil and why not. Found through the JSON structure, so a digit
-- equal to the score elsewhere (in the reason) is never taken for it.
local function value_token(tokens, key)
  local text = {}
  for i, t in ipairs(tokens) do
    if type(t) ~= "table" or type(t.token) ~= "string" then return nil, "the logprobs hold a token that is not text" end
    text[i] = t.token
  end
  text = table.concat(text)
  local value, first = json.find(text)
  local at = type(value) == "table" and value[key] ~= nil and json.value_at(text, first, key)
  if not at then return nil, ("the answer's tokens spell no JSON object with a %s"):format(key) end
  local pos = 0
  for _, t in ipairs(tokens) do
    pos = pos + #t.token
    if pos >= at then return t end
  end
end

-- weighted_score(tokens, raw, lo, hi) -> score, kept | nil, why
-- tokens: the answer's logprobs content ({token=, logprob=, top_logprobs=}),
-- which spell the answer. The token holding the score's value (found in
-- the answer's JSON) must be the raw score itself; its digit alternatives
-- in [lo, hi] with probability >= 1% are weighted by their probabilities:
-- sum(s * p) / sum(p).
function M.weighted_score(tokens, raw, lo, hi)
  if type(tokens) ~= "table" or #tokens == 0 then return nil, "the server returned no logprobs" end
  local want = tostring(math.tointeger(raw) or raw)
  local t, why = value_token(tokens, "score")
  if not t then return nil, why end
  if trim(t.token) ~= want then
    return nil, ("the score %s is not a token of its own (its token is '%s')"):format(want, trim(t.token))
  end
  local sum, weighted, kept = 0, 0, {}
  for _, alt in ipairs(type(t.top_logprobs) == "table" and t.top_logprobs or {}) do
    local tok, lp = trim(alt.token or ""), tonumber(alt.logprob)
    local s = tok:match("^%d+$") and tonumber(tok)
    if s and lp and lp >= MIN_PROB and s >= lo and s <= hi then
      local p = math.exp(lp)
      sum, weighted = sum + p, weighted + s * p
      kept[#kept + 1] = { score = s, p = p }
    end
  end
  if sum == 0 then return nil, "no score token with probability >= 1% among the alternatives" end
  return weighted / sum, kept
end

-- ---- judge operations --------------------------------------------------------------

E.step("geval_steps", {
  prompt = P.steps,
  parse = function(answer)
    local list = type(answer) == "table" and answer.steps
    if type(list) ~= "table" or #list == 0 then return nil, 'expected {"steps": ["...", ...]}' end
    local out = {}
    for i, s in ipairs(list) do
      if type(s) ~= "string" or not s:find("%S") then return nil, ("steps[%d] is not text"):format(i) end
      out[i] = trim(s)
    end
    return out
  end,
  offline = function(vars)
    return {
      ("Read the %s."):format(table.concat(vars.params, ", ")),
      ("Check how far the %s meets the criterion: %s"):format(vars.params[2] or vars.params[1], trim(vars.criteria)),
      ("Score from %d (not at all) to %d (fully)."):format(vars.lo, vars.hi),
    }, "offline: steps from the criterion's text"
  end,
})

-- The judge's answer: a whole number in [lo, hi] (0 or 1 when strict).
local function parse_score(answer, vars)
  local s = type(answer) == "table" and answer.score
  if type(s) == "string" then s = tonumber(trim(s)) end
  if type(s) ~= "number" or math.tointeger(s) == nil then return nil, "expected score as a whole number" end
  s = math.tointeger(s)
  if s < vars.lo or s > vars.hi then
    return nil, ("score %d is outside %d-%d"):format(s, vars.lo, vars.hi)
  end
  return s, type(answer.reason) == "string" and answer.reason or nil
end

-- The offline judge cannot read a criterion: offline, a G-Eval metric
-- scores only by its own offline function (offline = function(case) ->
-- score, reason), whose score is checked like a judge's answer; without
-- one the item is unmeasured, saying so.
local function offline_score(vars)
  if not vars.offline then
    return nil, ("the offline judge cannot read the criterion of '%s': G-Eval needs a model judge "
      .. "(or an offline function on the metric)"):format(vars.name)
  end
  local score, reason = vars.offline(vars.fields)
  if score == nil then return nil, tostring(reason or "the offline function gave no score") end
  local s, why = parse_score({ score = score, reason = reason }, vars)
  if s == nil then return nil, "the offline function's score: " .. why end
  return s, why
end

E.step("geval_score", { prompt = P.score, parse = parse_score, offline = offline_score })
E.step("geval_strict", { prompt = P.strict, parse = parse_score, offline = offline_score })

-- ---- options ----------------------------------------------------------------------------

local function check_scale(o)
  local sc = o.scale or { 1, 5 }
  local lo, hi = math.tointeger(sc[1]), math.tointeger(sc[2])
  if type(sc) ~= "table" or not lo or not hi or lo >= hi or lo < 0 then
    error("geval: scale must be {low, high}, whole numbers with 0 <= low < high", 4)
  end
  return lo, hi
end

-- rubric: {{from, to, "text"}, ...} or {{from=, to=, text=}, ...}, within the
-- scale, sorted and without overlaps.
local function check_rubric(rubric, lo, hi)
  if rubric == nil then return {} end
  if type(rubric) ~= "table" then error("geval: rubric must be a list of {from, to, text}", 4) end
  local out = {}
  for i, b in ipairs(rubric) do
    local from, to, text = b.from or b[1], b.to or b[2], b.text or b[3]
    from, to = math.tointeger(from), math.tointeger(to)
    if not from or not to or type(text) ~= "string" then
      error(("geval: rubric[%d] must be {from, to, text} with whole numbers"):format(i), 4)
    end
    if from > to or from < lo or to > hi then
      error(("geval: rubric[%d] (%d-%d) must lie within the scale %d-%d"):format(i, from, to, lo, hi), 4)
    end
    out[i] = { from = from, to = to, text = text }
  end
  table.sort(out, function(a, b) return a.from < b.from end)
  for i = 2, #out do
    if out[i].from <= out[i - 1].to then
      error(("geval: rubric bands %d-%d and %d-%d overlap"):format(out[i - 1].from, out[i - 1].to,
        out[i].from, out[i].to), 4)
    end
  end
  return out
end

local function check_params(params)
  params = params or { "input", "actual_output" }
  if type(params) ~= "table" or #params == 0 then error("geval: params must be a non-empty list", 4) end
  for i, p in ipairs(params) do
    if not M.params[p] then
      local known = {}
      for k in pairs(M.params) do known[#known + 1] = k end
      table.sort(known)
      error(("geval: params[%d] '%s' is not one of %s"):format(i, tostring(p), table.concat(known, ", ")), 4)
    end
  end
  return params
end

-- The test case of a row: {{label=, value=}...}, plus the raw texts by param.
local function case_of(o, params, row)
  local case, texts = {}, {}
  for _, p in ipairs(params) do
    local from = (o.fields or {})[p] or M.params[p].field
    local v
    if type(from) == "function" then v = from(row) else v = row[from] end
    if type(v) == "table" then
      if p == "context" then v = table.concat(v, "\n\n")
      elseif p == "turns" then v = require("evalua.agent.transcript").render(v)
      else v = v[1] end
    end
    if type(v) ~= "string" or not v:find("%S") then
      return nil, ("no '%s' in the row (%s)"):format(type(from) == "string" and from or p, p)
    end
    case[#case + 1] = { label = M.params[p].label, value = v }
    texts[p] = v
  end
  return case, texts
end

-- ---- the metric -------------------------------------------------------------------------

local function judge_once(self, judge, vars, sample)
  local o, strict = self.options, self.strict
  local step = strict and "geval_strict" or "geval_score"
  local prompt = strict and self.prompts.strict or self.prompts.score
  local want_lp = not strict and o.logprobs ~= false
  local ask = { logprobs = want_lp or nil, top_logprobs = want_lp and (o.top_logprobs or 20) or nil,
                temperature = self.temperature, sample = sample > 1 and sample - 1 or nil }
  for k, v in pairs(vars) do ask[k] = v end
  local lo, hi = vars.lo, vars.hi
  -- the score is checked before the answer may enter the cache
  local r = E.ask(judge, step, ask, prompt)
  if not r.ok then
    if want_lp and r.status == 400 then
      r.error = r.error .. " (the request asked for logprobs, which some servers refuse: "
        .. "ev.geval{..., logprobs = false} asks without them)"
    end
    return nil, r
  end
  local raw, reason, tokens = r.value, r.reason, r.logprobs
  local why = strict and "strict mode scores 0 or 1" or (not want_lp and "logprobs = false") or r.no_logprobs
  local value = raw
  if not why then
    local w, kept = M.weighted_score(tokens, raw, lo, hi)
    if w then value = w else why = kept end
  end
  return { score = (value - lo) / (hi - lo), raw = value, integer = raw, reason = reason,
           weighted = why == nil, fallback = why }
end

local Geval = {}

-- m:steps(judge) -> the evaluation steps (generated once, then kept), or
-- nil and why they could not be generated. A failure is kept for the run
-- too: the request is shared by every row, so one that failed after its
-- retries is not asked again row after row.
function Geval.steps(self, judge)
  if self.pinned then return self.pinned end
  if self.generated then return self.generated end
  if self.steps_error then return nil, self.steps_error end
  if not judge then error("geval: steps(judge) needs a judge to generate steps from the criteria", 2) end
  local labels = {}
  for i, p in ipairs(self.params) do labels[i] = M.params[p].label end
  -- Asked from a coroutine of its own, the request blocks instead of
  -- yielding to ev.map, so the other rows wait for these steps rather than
  -- each sending the same request.
  local r = coroutine.wrap(function()
    return E.ask(judge, "geval_steps", { criteria = self.criteria, params = labels, lo = self.lo, hi = self.hi },
      self.prompts.steps)
  end)()
  if not r.ok then
    self.steps_failure = self.steps_failure or r
    self.steps_error = self.steps_error or "steps: " .. tostring(r.error)
    return nil, self.steps_error
  end
  self.generated = self.generated or r.value
  return self.generated
end

local function score_row(self, row, ctx)
  local judge, why = E.judge_of(ctx)
  if not judge then return E.unmeasured(why) end
  local case, texts = case_of(self.options, self.params, row)
  if not case then return E.unmeasured(texts) end
  local steps, err = self:steps(judge)
  if not steps then return self.steps_failure and E.failure("steps", self.steps_failure) or E.unmeasured(err) end
  local vars = { name = self.name, criteria = self.criteria, steps = steps, rubric = self.rubric, case = case,
                 lo = self.strict and 0 or self.lo, hi = self.strict and 1 or self.hi, fields = texts,
                 offline = self.options.offline }
  local samples, failures = {}, {}
  for s = 1, self.samples do
    local r, e = judge_once(self, judge, vars, s)
    if r then samples[#samples + 1] = r else failures[#failures + 1] = e end
  end
  if #samples == 0 then return E.failure(nil, failures[1]) end
  local first = samples[1]
  local out = { reason = first.reason, weighted = first.weighted, fallback = first.fallback }
  if self.samples == 1 then
    out.score, out.raw, out.integer = first.score, first.raw, first.integer
  else
    local scores = {}
    for i, r in ipairs(samples) do scores[i] = r.score end
    out.score, out.spread = mean_sd(scores)
    out.samples, out.measured_samples, out.failed_samples = samples, #samples, #failures
    for _, r in ipairs(samples) do
      if not r.weighted then out.weighted, out.fallback = false, r.fallback end
    end
  end
  out.pass = out.score >= self.threshold
  return out
end

-- ev.geval{name=, criteria= | steps=, params=, fields=, rubric=, scale=, threshold=,
--   strict=, samples=, temperature=, logprobs=, top_logprobs=, prompts=, offline=} -> metric
local KNOWN = options.set { "name", "criteria", "steps", "params", "fields", "rubric", "scale", "threshold",
                            "strict", "samples", "temperature", "logprobs", "top_logprobs", "prompts",
                            "description", "offline" }

function M.new(o)
  if type(o) ~= "table" then error("ev.geval: expected a table of options", 2) end
  options.check(o, KNOWN, "ev.geval", 3)
  if type(o.name) ~= "string" or o.name == "" then error("geval: name is required", 3) end
  if o.criteria == nil and o.steps == nil then error("geval: give criteria or steps", 3) end
  if o.criteria ~= nil and type(o.criteria) ~= "string" then error("geval: criteria must be a string", 3) end
  if o.steps ~= nil then
    if type(o.steps) ~= "table" or #o.steps == 0 then error("geval: steps must be a non-empty list of strings", 3) end
    for i, s in ipairs(o.steps) do
      if type(s) ~= "string" then error(("geval: steps[%d] must be a string"):format(i), 3) end
    end
  end
  if o.offline ~= nil and type(o.offline) ~= "function" then
    error("geval: offline must be a function(case) -> score, reason", 3)
  end
  local lo, hi = check_scale(o)
  local rubric = check_rubric(o.rubric, lo, hi)
  local samples = o.samples or 1
  if math.tointeger(samples) == nil or samples < 1 then error("geval: samples must be a whole number >= 1", 3) end
  local strict = o.strict == true
  local threshold = strict and 1 or (o.threshold or 0.5)
  if type(threshold) ~= "number" then error("geval: threshold must be a number", 3) end
  local given = o.prompts or {}
  for k in pairs(given) do
    if not P[k] then error(("geval: no prompt step '%s' (steps, score, strict)"):format(tostring(k)), 3) end
  end
  local prompts = {}
  for k, base in pairs(P) do prompts[k] = E.prompt(base, given[k], "geval." .. k) end
  local self = E.metric {
    name = o.name, judged = true, higher_is_better = true, threshold = threshold,
    description = o.description or o.criteria or table.concat(o.steps, " "),
    criteria = o.criteria, pinned = o.steps, params = check_params(o.params), rubric = rubric,
    lo = lo, hi = hi, strict = strict, samples = math.tointeger(samples), prompts = prompts,
    temperature = o.temperature or (samples > 1 and 1 or 0),
    options = o, make = M.new, known = KNOWN, what = "ev.geval",
  }
  self.steps = Geval.steps
  self.fn = function(row, ctx) return score_row(self, row, ctx) end
  return self
end

-- Not a tail call: M.new's errors (level 3) then name the caller's line.
return setmetatable(M, { __call = function(_, o) local m = M.new(o) return m end })
