-- The types of ev.assertions that read the output's row, not only its
-- text: cost, latency, perplexity and perplexity-score (from the row's
-- `logprobs`), finish-reason, is-valid-openai-function-call, and similar
-- (embeddings of the judge, cosine >= threshold). A value the row lacks
-- leaves the assertion unmeasured with its reason, never a pass or a fail.
local json = require "evalua.core.json"
local schema = require "evalua.experiment.assertions_schema"
local K = require "evalua.experiment.assertions_values"

local M = {}
local show = K.show

-- Of a row, not of its answer: a missing value leaves the check unmeasured.
-- A cached answer keeps the latency and cost of when it was asked.
local function row_limit(field, unit)
  return function(_, _, row, c)
    local v, cached = row[field], row.cached == true
    if type(v) ~= "number" then
      return nil, ("the output has no %s%s"):format(field, cached and " (cached before evalua kept it)" or "")
    end
    local ok = v <= c.threshold
    return ok, ("%s = %g %s%s, %s <= %g"):format(field, v, unit, cached and " when asked (cached)" or "",
      ok and "within" or "above", c.threshold)
  end
end

-- The token log-probabilities of the row: `logprobs` as a list of numbers,
-- or as OpenAI's content list [{token =, logprob =}].
local function logprobs(row)
  local lp = row.logprobs
  if type(lp) == "table" and type(lp.content) == "table" then lp = lp.content end
  if type(lp) ~= "table" or #lp == 0 then
    return nil, "the output has no logprobs (ask the provider for them: logprobs = true)"
  end
  local out = {}
  for i, x in ipairs(lp) do
    local v = type(x) == "table" and x.logprob or x
    if type(v) ~= "number" or v ~= v or v > 0 then return nil, ("logprobs[%d] is not a log-probability"):format(i) end
    out[i] = v
  end
  return out
end

-- exp(-mean log p): promptfoo's perplexity.
function M.perplexity(lps)
  local sum = 0
  for _, v in ipairs(lps) do sum = sum + v end
  return math.exp(-sum / #lps)
end

local function perplexity(_, _, row, c)
  local lps, why = logprobs(row)
  if not lps then return nil, why end
  local p = M.perplexity(lps)
  if c.threshold == nil then return true, ("perplexity %.4f (no threshold)"):format(p) end
  local ok = p <= c.threshold
  return ok, ("perplexity %.4f %s %s"):format(p, ok and "<=" or ">", show(c.threshold))
end

-- 1 / (1 + perplexity), passing at >= threshold (always without one).
local function perplexity_score(_, _, row, c)
  local lps, why = logprobs(row)
  if not lps then return nil, why end
  local s = 1 / (1 + M.perplexity(lps))
  if c.threshold == nil then return true, ("perplexity score %.4f (no threshold)"):format(s), s end
  local ok = s >= c.threshold
  return ok, ("perplexity score %.4f %s %s"):format(s, ok and ">=" or "<", show(c.threshold)), s
end

local function finish_reason(_, want, row)
  local got = row.finish_reason
  if type(got) ~= "string" or got == "" then return false, "the provider gave no finish reason" end
  if got:lower() == want:lower() then return true, "finish reason " .. show(got) end
  return false, ("finish reason %s, not %s"):format(show(got), show(want))
end

-- The function call of an output: its answer as JSON {name =, arguments =},
-- or the row's function_call / first tool call.
local function function_call(answer, row)
  local call = row.function_call
  if call == nil and type(row.tool_calls) == "table" and row.tool_calls[1] then
    call = row.tool_calls[1]["function"] or row.tool_calls[1]
  end
  if call == nil and type(answer) == "string" then
    local decoded = json.decode(answer)
    if type(decoded) == "table" then call = decoded.function_call or decoded end
  end
  if type(call) ~= "table" or type(call.name) ~= "string" then
    return nil, "the output is not a function call {name =, arguments =}"
  end
  local args = call.arguments
  if type(args) == "string" then
    local decoded, err = json.decode(args)
    if decoded == nil then return nil, ("the arguments of %s are not JSON: %s"):format(call.name, tostring(err)) end
    args = decoded
  end
  return { name = call.name, arguments = args or {} }
end

-- The functions to check against: the value, else the row's `functions`,
-- else its `tools` ({type = "function", function = {...}} or plain).
local function functions_of(value, row)
  local list = value or row.functions or row.tools
  if type(list) ~= "table" then return nil end
  local out = {}
  for _, f in ipairs(list) do
    local fn = type(f) == "table" and (f["function"] or f) or nil
    if type(fn) == "table" and type(fn.name) == "string" then out[fn.name] = fn end
  end
  return out
end

local function valid_function_call(answer, value, row)
  local fns = functions_of(value, row)
  if not fns then return nil, "no functions to check against: give them as the value, or the row's functions or tools" end
  local call, why = function_call(answer, row)
  if not call then return false, why end
  local fn = fns[call.name]
  if not fn then return false, ("calls %s, which is not an offered function"):format(call.name) end
  if fn.parameters then
    local ok, bad = schema.validate(fn.parameters, ("function %s's parameters"):format(fn.name))
    if not ok then return nil, "cannot check: " .. bad end
    bad = schema.check(fn.parameters, call.arguments, "arguments")
    if bad then return false, ("%s: %s"):format(call.name, bad) end
  end
  return true, ("calls %s with arguments fitting its schema"):format(call.name)
end

-- similar: the answer's embedding against the value's (or each of a list,
-- the best counting), by the judge's embedding model.
local function similar(answer, refs, _, c, ctx)
  local judge = ctx and ctx.judge
  if not judge then return nil, "similar needs a judge to embed with (judge = ..., or --judge)" end
  local sims, errs = judge:similarity({ answer }, { refs }, c.keys.model and { model = c.keys.model } or nil)
  if not sims[1] then return nil, "embedding failed: " .. tostring(errs[1]) end
  local best, at = -math.huge, 1
  for i, s in ipairs(sims[1]) do if s > best then best, at = s, i end end
  local ok = best >= c.threshold
  local score = math.max(0, math.min(1, best))
  return ok, ("cosine %.4f %s %s (with %s)"):format(best, ok and ">=" or "<", show(c.threshold), show(refs[at])), score
end

local function function_list(v, what)
  if type(v) ~= "table" or not K.is_list(v) or #v == 0 then return nil, what .. ": expected a list of functions" end
  for i, f in ipairs(v) do
    local fn = type(f) == "table" and (f["function"] or f) or nil
    if type(fn) ~= "table" or type(fn.name) ~= "string" then
      return nil, ("%s[%d]: expected a function {name =, parameters =}"):format(what, i)
    end
    if fn.parameters then
      local ok, why = schema.validate(fn.parameters, ("%s[%d].parameters"):format(what, i))
      if not ok then return nil, why end
    end
  end
  return v
end

local function model_name(v, what)
  if type(v) ~= "string" or v == "" then return nil, what .. ": expected a model name" end
  return v
end

function M.add(A)
  A.values.functions = function_list
  local T = A.types
  T.latency = { threshold = "ms", of_row = true, check = row_limit("latency_ms", "ms") }
  T.cost = { threshold = "usd", of_row = true, check = row_limit("cost", "USD") }
  T.perplexity = { threshold = "positive", threshold_default = nil, optional_threshold = true, of_row = true,
                   check = perplexity }
  T["perplexity-score"] = { threshold = "share", optional_threshold = true, of_row = true, check = perplexity_score }
  T["finish-reason"] = { value = "text", of_row = true, check = finish_reason }
  T["is-valid-openai-function-call"] = { value = "functions", optional = true, of_row = true,
                                         check = valid_function_call }
  T["is-valid-function-call"] = T["is-valid-openai-function-call"]
  T.similar = { value = "references", threshold = "share", threshold_default = 0.75, keys = { model = model_name },
                check = similar }
end

M.function_call = function_call
return M
