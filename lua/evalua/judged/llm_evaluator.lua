-- ev.llm_evaluator: a judge metric from instructions, named inputs, declared
-- output keys and few-shot examples (Haystack's LLMEvaluator semantics);
-- the judge must answer a JSON object with exactly the declared keys.
--
--   local polite = ev.llm_evaluator {
--     name = "polite",
--     instructions = "Is the answer polite? score 1 if it is, 0 if not.",
--     inputs = { "query", "answer" },            -- row fields (or {name = field | fn(row)})
--     outputs = { "reason", "score" },
--     examples = { { inputs = { query = "..", answer = ".." }, outputs = { reason = "..", score = 0 } } },
--   }
--
-- This file also holds the machinery every judged metric (ev.rag, ev.geval)
-- uses: prompts as ev.template pairs, registered as judge operations, and
-- answers turned into values or "unmeasured" with a reason.
local ops = require "evalua.judge.ops"
local template = require "evalua.experiment.template"
local json = require "evalua.core.json"
local options = require "evalua.core.options"
local defaults = require "evalua.judged.prompts.llm_evaluator"
local vote = require "evalua.judge.vote"

local M = {}

local votes = {} -- step name -> how the answers of its samples combine (judge/vote.lua)

-- ---- the machinery of judged steps ------------------------------------------

-- prompt(base, override, name) -> {system = template, user = template}.
-- An override is text, a template or {file = path} (the user message), or a
-- table {system =, user =} replacing either message.
function M.prompt(base, override, name)
  local sys, user = base.system, base.user
  if override ~= nil then
    local is_pair = type(override) == "table" and not template.is_template(override) and override.file == nil
    if is_pair then
      for k in pairs(override) do
        if k ~= "system" and k ~= "user" then
          error(("prompt '%s': unknown key '%s' (expected system and user)"):format(name, tostring(k)), 3)
        end
      end
      sys, user = override.system or sys, override.user or user
    else
      user = override
    end
  end
  return { system = template.load(sys, name .. "/system"), user = template.load(user, name .. "/user") }
end

-- step(name, {prompt = {system=, user=}, parse = fn(json, vars), offline = fn(vars, opts)})
-- adds judge operation `name` to the built-in ones (the modules of ev.rag,
-- ev.geval and ev.llm_evaluator call it as they load), whose messages are
-- the templates rendered with the caller's vars (vars._prompt, when set,
-- replaces the default pair). Returns the default prompt pair. Built-in,
-- not the current run's (ev.judge.register_op), so that every run sees it,
-- a fresh run.new() too.
function M.step(name, def)
  local base = M.prompt(def.prompt, nil, name)
  votes[name] = def.vote
  ops.registry[name] = {
    prompt = { system = "{{system}}", user = "{{user}}" },
    prepare = function(vars)
      local p = vars._prompt or base
      return { system = p.system:render(vars), user = p.user:render(vars), vars = vars }
    end,
    parse = function(answer, prepared) return def.parse(answer, prepared.vars) end,
    offline = def.offline and function(prepared, o) return def.offline(prepared.vars, o or {}) end,
    max_tokens = def.max_tokens,
  }
  return base
end

-- ask(judge, name, vars [, prompt [, sampling]]) -> {ok = true, value =, reason =} | {ok = false, error =}
-- With sampling = {samples = n > 1, temperature =} a step that declares how
-- its answers combine (def.vote, judge/vote.lua) is asked n times (sample
-- indices 0..n-1, temperature 1 unless given) and answers with the vote,
-- plus samples, failed_samples and spread or agreement.
function M.ask(judge, name, vars, prompt, sampling)
  vars._prompt = prompt
  local n = sampling and sampling.samples or 1
  if n <= 1 or not votes[name] then return judge:ask(name, vars) end
  local values, first, failed = {}, nil, nil
  for s = 1, n do
    local v = {}
    for k, x in pairs(vars) do v[k] = x end
    v.sample, v.temperature = s > 1 and s - 1 or nil, sampling.temperature or 1
    local r = judge:ask(name, v)
    if r.ok then values[#values + 1], first = r.value, first or r else failed = failed or r end
  end
  if #values == 0 then return failed end -- the first failure, with its flags
  local value, detail = vote.combine(votes[name], values)
  if value == nil then return { ok = false, error = detail, unmeasured = true } end
  return { ok = true, value = value, reason = first.reason, judge = first.judge, samples = #values,
           failed_samples = n - #values, spread = detail.spread, agreement = detail.agreement }
end

-- sampling_of(o, what, level) -> {samples =, temperature =} from a metric's
-- options, checked (errors at `level` as for error()); nil for one sample.
function M.sampling_of(o, what, level)
  local n, t = o.samples, o.temperature
  if n ~= nil and (math.tointeger(n) == nil or n < 1) then
    error(what .. ": samples must be a whole number >= 1", level + 1)
  end
  if t ~= nil and (type(t) ~= "number" or t < 0) then
    error(what .. ": temperature must be a number >= 0", level + 1)
  end
  if (n or 1) == 1 then return nil end
  return { samples = math.tointeger(n), temperature = t }
end

-- Copies the sampling details of an answer r onto a metric's result.
function M.sampled(out, r)
  out.samples, out.failed_samples = r.samples, r.failed_samples
  out.spread, out.agreement = r.spread, r.agreement
  return out
end

function M.unmeasured(reason, extra)
  local t = extra or {}
  t.unmeasured, t.reason = true, reason
  return t
end

-- The unmeasured result of a failed judge answer r ({ok = false, error =}),
-- its reason prefixed by the step when given. It keeps why there is no
-- answer, which decides whether the run is undecided (judge/health.lua):
-- judge_failed (the judge gave no usable answer), offline (the offline
-- judge cannot estimate this), refusal (the model's refusal text).
function M.failure(step, r)
  local why = r.error or "the judge failed"
  return M.unmeasured(step and ("%s: %s"):format(step, why) or why,
    { judge_failed = r.judge_failed, offline = r.offline, refusal = r.refusal })
end

-- The judge of an ev.evaluate context, or nil and the reason it is missing.
function M.judge_of(ctx)
  local j = type(ctx) == "table" and ctx.judge or nil
  if j == nil then return nil, "no judge: pass judge = ev.judge.open(...) to ev.evaluate" end
  return j
end

-- 1 or 0 from the ways models write a yes/no verdict ("idk": not
-- established, so 0); nil when unreadable.
function M.verdict(v)
  if v == 1 or v == true then return 1 end
  if v == 0 or v == false then return 0 end
  if type(v) == "string" then
    local s = v:lower():match("^%s*(.-)%s*$")
    if s == "1" or s == "yes" or s == "true" then return 1 end
    if s == "0" or s == "no" or s == "false" or s == "idk" then return 0 end
  end
  return nil
end

-- A metric table that ev.evaluate runs, also callable with options to make
-- a configured copy: ev.rag.faithfulness{threshold = 0.8}.
local Metric = {}
Metric.__index = Metric
Metric.__call = function(self, opts)
  if type(opts) ~= "table" then error(("%s{...}: expected a table of options"):format(self.name), 2) end
  if self.known then options.check(opts, self.known, self.what or self.name, 2) end
  local merged = {}
  for k, v in pairs(self.options) do merged[k] = v end
  for k, v in pairs(opts) do merged[k] = v end
  return self.make(merged)
end
Metric.__tostring = function(self) return "metric " .. self.name end

-- m:score(row, judge) runs the metric on one row outside ev.evaluate.
function Metric:score(row, judge)
  return self.fn(row, { judge = judge })
end

M.Metric = Metric

-- metric(make, options) -> a Metric built by make(options).
function M.metric(fields)
  return setmetatable(fields, Metric)
end

-- ---- LLMEvaluator -----------------------------------------------------------------

local function names_of(list, what)
  if type(list) ~= "table" or #list == 0 then
    error(("llm_evaluator: %s must be a non-empty list of names"):format(what), 4)
  end
  for i, n in ipairs(list) do
    if type(n) ~= "string" or not n:match("^[%a_][%w_]*$") then
      error(("llm_evaluator: %s[%d] must be a name (letters, digits, _)"):format(what, i), 4)
    end
  end
  return list
end

-- inputs: {"query", ...} (row fields of those names) or {name = field | fn(row)}.
local function input_spec(inputs)
  if type(inputs) ~= "table" then error("llm_evaluator: inputs must be a list or a table of name = field", 3) end
  local spec = {}
  if #inputs > 0 then
    for _, n in ipairs(names_of(inputs, "inputs")) do spec[#spec + 1] = { name = n, from = n } end
  else
    for n, from in pairs(inputs) do
      if type(from) ~= "string" and type(from) ~= "function" then
        error(("llm_evaluator: inputs.%s must be a row field name or a function(row)"):format(n), 3)
      end
      spec[#spec + 1] = { name = n, from = from }
    end
    table.sort(spec, function(a, b) return a.name < b.name end)
  end
  if #spec == 0 then error("llm_evaluator: inputs is empty", 3) end
  return spec
end

local function check_keys(t, keys, what)
  if type(t) ~= "table" or t[1] ~= nil then return ("%s is not a JSON object"):format(what) end
  local want = {}
  for _, k in ipairs(keys) do
    want[k] = true
    if t[k] == nil or t[k] == json.null then return ("%s has no key '%s'"):format(what, k) end
  end
  local extra = {}
  for k in pairs(t) do
    if not want[k] then extra[#extra + 1] = tostring(k) end
  end
  table.sort(extra)
  if #extra > 0 then return ("%s has unexpected key '%s'"):format(what, extra[1]) end
  return nil
end

local function check_examples(examples, inputs, outputs)
  if examples == nil then return {} end
  if type(examples) ~= "table" then error("llm_evaluator: examples must be a list", 3) end
  local names = {}
  for i, s in ipairs(inputs) do names[i] = s.name end
  for i, ex in ipairs(examples) do
    local bad = type(ex) ~= "table" and ("examples[%d] is not a table"):format(i)
      or check_keys(ex.inputs, names, ("examples[%d].inputs"):format(i))
      or check_keys(ex.outputs, outputs, ("examples[%d].outputs"):format(i))
    if bad then error("llm_evaluator: " .. bad, 3) end
  end
  return examples
end

-- The step shared by every LLMEvaluator: vars {instructions, keys, examples, inputs}.
M.step("llm_evaluator", {
  prompt = defaults,
  vote = "outputs",
  parse = function(answer, vars)
    local bad = check_keys(answer, vars.keys, "the answer")
    if bad then return nil, bad end
    return answer, type(answer.reason) == "string" and answer.reason or nil
  end,
  -- The offline judge cannot follow free-form instructions: offline, only
  -- the metric's own offline function answers.
  offline = function(vars)
    if not vars.offline then
      return nil, ("the offline judge cannot follow the instructions of '%s': it needs a model judge "
        .. "(or an offline function on the metric)"):format(vars.name)
    end
    local out = vars.offline(vars.inputs)
    local bad = check_keys(out, vars.keys, "the offline function's result")
    if bad then return nil, bad end
    return out, type(out.reason) == "string" and out.reason or nil
  end,
})

local function read_inputs(spec, row)
  local out = {}
  for _, s in ipairs(spec) do
    local v
    if type(s.from) == "function" then v = s.from(row) else v = row[s.from] end
    if v == nil then
      return nil, type(s.from) == "string" and ("no '%s' in the row"):format(s.from)
        or ("input '%s' is nil for this row"):format(s.name)
    end
    out[s.name] = v
  end
  return out
end

local function score_of(outputs, score)
  local v
  if type(score) == "function" then v = score(outputs) else v = outputs[score] end
  if type(v) == "boolean" then v = v and 1 or 0 end
  if type(v) == "string" then v = tonumber(v) end
  if type(v) ~= "number" or v ~= v then
    return nil, type(score) == "string" and ("output '%s' is not a number"):format(score)
      or "the score function returned no number"
  end
  return v
end

-- ev.llm_evaluator{name=, instructions=, inputs=, outputs=, examples=, score=,
--   prompt=, offline=, threshold=, higher_is_better=, description=, samples=, temperature=} -> metric
local KNOWN = options.set { "name", "instructions", "inputs", "outputs", "examples", "score", "prompt",
                            "offline", "threshold", "higher_is_better", "description", "samples", "temperature" }

function M.new(o)
  if type(o) ~= "table" then error("ev.llm_evaluator: expected a table of options", 2) end
  options.check(o, KNOWN, "ev.llm_evaluator", 2) -- new is tail-called by __call
  if type(o.name) ~= "string" or o.name == "" then error("llm_evaluator: name is required", 2) end
  if type(o.instructions) ~= "string" then error("llm_evaluator: instructions must be a string", 2) end
  local inputs = input_spec(o.inputs)
  local outputs = names_of(o.outputs, "outputs")
  local examples = check_examples(o.examples, inputs, outputs)
  local score = o.score
  if score == nil then
    for _, k in ipairs(outputs) do if k == "score" then score = "score" end end
    score = score or outputs[1]
  end
  if o.offline ~= nil and type(o.offline) ~= "function" then error("llm_evaluator: offline must be a function", 2) end
  local prompt = M.prompt(defaults, o.prompt, o.name)
  local sampling = M.sampling_of(o, "ev.llm_evaluator", 2) -- new is tail-called by __call
  local self = M.metric {
    name = o.name, judged = true, description = o.description or o.instructions,
    higher_is_better = o.higher_is_better ~= false, threshold = o.threshold,
    inputs = inputs, outputs = outputs, examples = examples, prompt = prompt,
  }

  -- self:run(judge, inputs) -> {ok = true, outputs =, reason =} | {ok = false, error =, ...}
  function self.run(_, judge, values)
    local r = M.ask(judge, "llm_evaluator",
      { instructions = o.instructions, keys = outputs, examples = examples, inputs = values,
        name = o.name, offline = o.offline }, prompt, sampling)
    if not r.ok then return r end
    return { ok = true, outputs = r.value, reason = r.reason, sampled = r }
  end

  self.fn = function(row, ctx)
    local judge, why = M.judge_of(ctx)
    if not judge then return M.unmeasured(why) end
    local values, missing = read_inputs(inputs, row)
    if not values then return M.unmeasured(missing) end
    local r = self:run(judge, values)
    if not r.ok then return M.failure(nil, r) end
    local s, bad = score_of(r.outputs, score)
    if s == nil then return M.unmeasured(bad, { outputs = r.outputs }) end
    local out = M.sampled({ score = s, reason = r.reason, outputs = r.outputs }, r.sampled)
    if o.threshold then out.pass = s >= o.threshold end
    return out
  end
  self.options, self.make, self.known, self.what = o, M.new, KNOWN, "ev.llm_evaluator"
  return self
end

return setmetatable(M, { __call = function(_, o) return M.new(o) end })
