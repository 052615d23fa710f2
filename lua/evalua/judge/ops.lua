-- The judge operations: what a metric asks a judge, the same on an HTTP
-- judge (a prompt and a JSON shape) and on the offline judge (a heuristic).
-- Each operation is {prompt = {system=, user=}, prepare=, parse=, offline=}:
--   prepare(vars) checks the caller's variables and returns the strings the
--     prompt's {{name}} placeholders take (it raises on misuse);
--   parse(answer, prepared) turns the decoded JSON answer into value, reason,
--     or nil and a message when the answer has the wrong shape;
--   offline(prepared, judge_options) computes value, reason without a model.
-- Prompts are plain strings a later module may replace; register() adds a run's own.
local json = require "evalua.judge.json"
local offline = require "evalua.judge.offline"
local run = require "evalua.core.run"

local R = { registry = {} }

local function fail(op, msg) error(("judge:ask('%s'): %s"):format(op, msg), 0) end

local function need_string(op, vars, field, optional)
  local v = vars[field]
  if v == nil and optional then return "" end
  if type(v) ~= "string" then fail(op, ("vars.%s must be a string (got %s)"):format(field, type(v))) end
  return v
end

local function need_strings(op, vars, field)
  local v = vars[field]
  if type(v) ~= "table" then fail(op, ("vars.%s must be a list of strings (got %s)"):format(field, type(v))) end
  for i = 1, #v do
    if type(v[i]) ~= "string" then fail(op, ("vars.%s[%d] must be a string"):format(field, i)) end
  end
  return v
end

-- A context is a string or a list of passages (joined by blank lines).
local function context_text(op, vars)
  local c = vars.context
  if type(c) == "table" then return table.concat(need_strings(op, vars, "context"), "\n\n") end
  return need_string(op, vars, "context")
end

-- 1/0 from the shapes models use for a yes/no verdict.
local function verdict_value(v)
  if v == 1 or v == true or v == "1" then return 1 end
  if v == 0 or v == false or v == "0" then return 0 end
  if type(v) == "string" then
    local s = v:lower()
    if s == "yes" or s == "supported" or s == "true" then return 1 end
    if s == "no" or s == "unsupported" or s == "false" or s == "idk" then return 0 end
  end
  return nil
end

R.registry.statements = {
  prompt = {
    system = [[You break an answer into the separate factual statements it makes. Each statement must make sense on its own: write out the names that pronouns stand for, and keep one claim to a statement. Add nothing that the answer does not say. Reply with a JSON object {"statements": ["...", "..."]}. An answer that makes no factual claim gives {"statements": []}.]],
    user = "<question>\n{{question}}\n</question>\n<answer>\n{{answer}}\n</answer>",
  },
  prepare = function(vars)
    return { answer = need_string("statements", vars, "answer"),
             question = need_string("statements", vars, "question", true) }
  end,
  parse = function(answer)
    local list = type(answer) == "table" and answer.statements
    if type(list) ~= "table" then return nil, 'expected {"statements": [...]}' end
    local out = {}
    for i = 1, #list do
      if type(list[i]) ~= "string" then return nil, ("statements[%d] is not a string"):format(i) end
      if list[i]:find("%S") then out[#out + 1] = list[i] end
    end
    return out
  end,
  offline = function(p)
    return offline.claims(p.answer), "split at sentence ends, refusals dropped"
  end,
}

R.registry.verdicts = {
  prompt = {
    system = [[You check statements against a context. For each statement, in the order given, decide whether the context supports it: verdict 1 when the statement follows directly from the context, 0 when the context contradicts it or does not mention it. Judge by the context alone, not by what you know. Reply with a JSON object {"verdicts": [{"statement": "...", "verdict": 1, "reason": "..."}]} with one entry per statement, in the same order.]],
    user = "<context>\n{{context}}\n</context>\n<statements>\n{{statements}}\n</statements>",
  },
  prepare = function(vars)
    local list = need_strings("verdicts", vars, "statements")
    return { context = context_text("verdicts", vars), list = list,
             statements = json.encode(list) }
  end,
  parse = function(answer, p)
    local list = type(answer) == "table" and answer.verdicts
    if type(list) ~= "table" then return nil, 'expected {"verdicts": [...]}' end
    if #list ~= #p.list then
      return nil, ("%d verdicts for %d statements"):format(#list, #p.list)
    end
    local out = {}
    for i, v in ipairs(list) do
      local verdict = type(v) == "table" and verdict_value(v.verdict)
      if not verdict then return nil, ("verdicts[%d] has no verdict 1 or 0"):format(i) end
      out[i] = { statement = p.list[i], verdict = verdict,
                 reason = type(v.reason) == "string" and v.reason or nil }
    end
    return out
  end,
  offline = function(p, opts)
    return offline.verdicts(p.list, p.context, opts.support_threshold)
  end,
}

R.registry.relevance = {
  prompt = {
    system = [[You rate how relevant a text is to a question: 1 when it answers the question directly and completely, 0 when it is off topic or evades the question, and a value in between for a partial answer. Reply with a JSON object {"relevance": 0.5, "reason": "..."} where relevance is a number from 0 to 1.]],
    user = "<question>\n{{question}}\n</question>\n<text>\n{{text}}\n</text>",
  },
  prepare = function(vars)
    return { question = need_string("relevance", vars, "question"),
             text = need_string("relevance", vars, "text") }
  end,
  parse = function(answer)
    local v = type(answer) == "table" and tonumber(answer.relevance)
    if not v or v ~= v or v < 0 or v > 1 then return nil, "expected relevance as a number from 0 to 1" end
    return v, type(answer.reason) == "string" and answer.reason or nil
  end,
  offline = function(p)
    return offline.relevance(p.question, p.text)
  end,
}

-- The operation named name, or an error naming the known ones.
function R.get(name)
  local own = run.current().ops
  local op = own[name] or R.registry[name]
  if op then return op end
  local known = {}
  for k in pairs(R.registry) do known[#known + 1] = k end
  for k in pairs(own) do
    if not R.registry[k] then known[#known + 1] = k end
  end
  table.sort(known)
  error(("judge:ask: unknown operation '%s' (known: %s)"):format(tostring(name), table.concat(known, ", ")), 3)
end

-- Adds (or replaces, for this run) an operation after checking its shape;
-- it lives in the current run (evalua.core.run), beside the built-in ones.
function R.register(name, op)
  if type(name) ~= "string" or not name:match("^[%w_]+$") then
    error("ev.judge.register_op: name must be a word", 2)
  end
  if type(op) ~= "table" or type(op.prompt) ~= "table" or type(op.prompt.system) ~= "string"
     or type(op.prompt.user) ~= "string" or type(op.parse) ~= "function" then
    error("ev.judge.register_op: op needs prompt = {system=, user=} strings and a parse function", 2)
  end
  for _, f in ipairs { "prepare", "offline" } do
    if op[f] ~= nil and type(op[f]) ~= "function" then
      error("ev.judge.register_op: op." .. f .. " must be a function", 2)
    end
  end
  run.current().ops[name] = op
end

-- The chat messages for op with the prepared strings substituted. Values
-- are inserted as they are: never evaluated, never re-scanned.
function R.render(op, prepared)
  local function fill(template)
    return (template:gsub("{{([%w_]+)}}", function(k)
      local v = prepared[k]
      return type(v) == "string" and v or ""
    end))
  end
  return { { role = "system", content = fill(op.prompt.system) },
           { role = "user", content = fill(op.prompt.user) } }
end

-- prepare() or, for an op registered without one, its vars as given.
function R.prepare(op, vars)
  if type(vars) ~= "table" then error("judge:ask: vars must be a table", 3) end
  if op.prepare then return op.prepare(vars) end
  return vars
end

return R
