-- ev.provider: the systems under test that ev.generate asks for answers.
--
--   ev.provider.offline{}                         extractive heuristic, no network
--   ev.provider.openai{model=, base_url=, system=, temperature=, ...}   chat, any
--                                                 OpenAI-compatible server (via ev.judge)
--   ev.provider.http{url=, headers=, body=, extract=}   a RAG service of your own
--   ev.provider.exec{cmd=}                        a command: JSON on stdin and stdout
--
-- openai and offline take tools = {...}: then ev.generate runs an agent loop
-- (lua/evalua/agent/loop.lua, docs/agents.md) and the output carries the
-- whole trajectory (messages, steps, stop_reason, tool_errors).
--
-- provider:call(prompt, row) -> {ok = true, answer=, contexts=, retrieved=,
--   latency_ms=, prompt_tokens=, completion_tokens=, cost=, cached=}
--   | {ok = false, error=, dry_run=}. A failure is a result, never an error.
-- A cached answer keeps the latency and cost of when it was asked (what
-- this run paid is in provider:stats()).
-- See docs/prompts.md.
local options = require "evalua.core.options"
local caught = require "evalua.core.caught"
local json = require "evalua.core.json"
local template = require "evalua.experiment.template"
local sender = require "evalua.experiment.provider_http"
local cache = require "evalua.client.cache"
local offline = require "evalua.experiment.provider_offline"
local sys = require "evalua._sys"

-- The agent loop's options, checked; nil when the provider has no tools.
local AGENT_OPTIONS = { "tools", "fixtures", "max_steps" }

local function agent_setup(o, what)
  if o.tools == nil then
    for _, k in ipairs { "fixtures", "max_steps", "policy", "tool_choice", "parallel_tool_calls" } do
      if o[k] ~= nil then error(("%s: %s needs tools = {...}"):format(what, k), 3) end
    end
    return nil
  end
  local ok, set = pcall(require("evalua.agent.tools").set, o.tools, o.fixtures, what)
  if not ok then error(set, 3) end
  local n = o.max_steps == nil and require("evalua.agent.loop").max_steps or o.max_steps
  if math.tointeger(n) == nil or n < 1 then error(what .. ": max_steps must be a whole number >= 1", 3) end
  return { set = set, max_steps = math.tointeger(n) }
end

local function agent_run(agent, prompt, row, step)
  return require("evalua.agent.loop").run { system = prompt, row = row, tools = agent.set,
                                            max_steps = agent.max_steps, step = step }
end

local M = {}

local Provider = {}
Provider.__index = Provider
Provider.__name = "evalua.Provider"

-- concurrency: how many requests the provider has in flight at most (1 for
-- those that answer one at a time); ev.generate sizes its workers by it.
local function new(kind, name, call, extra)
  local p = setmetatable({ kind = kind, name = name, impl = call, concurrency = 1 }, Provider)
  for k, v in pairs(extra or {}) do p[k] = v end
  return p
end

function M.is_provider(x) return getmetatable(x) == Provider end

-- A provider's answer to one rendered prompt for one row.
function Provider:call(prompt, row)
  if type(prompt) ~= "string" then error("provider:call: prompt must be a string", 2) end
  local r = self.impl(self, prompt, row or {})
  if r.ok and type(r.answer) ~= "string" and not (self.agent and r.messages) then -- an agent may stop without a reply
    return { ok = false, error = ("provider '%s' gave no answer string"):format(self.name) }
  end
  return r
end

function Provider:stats()
  cache.collect(true) -- every answer's cache write done, so cache_errors is whole
  local out = {}
  for k, v in pairs(self.counts or {}) do out[k] = v end
  if self.judge then
    local s = self.judge:stats()
    out.requests, out.cache_hits, out.failures = s.requests, s.cache_hits, s.failures
    out.prompt_tokens, out.completion_tokens, out.cost = s.prompt_tokens, s.completion_tokens, s.cost
    out.cache_errors, out.cache_error = s.cache_errors, s.cache_error
    out.dry_run = self.judge:estimate().requests
  end
  return out
end

function Provider:__tostring() return ("provider %s (%s)"):format(self.name, self.kind) end

-- Every provider opened after ev.provider.dry_run(true) (and those open
-- now) counts what it would send and sends nothing.
function M.dry_run(on)
  require("evalua.judge").dry_run(on) -- the switch is the run's (evalua.core.run), shared with the judges
end

-- ---- offline --------------------------------------------------------------------

local OFFLINE = options.set { "name", "question", "policy", table.unpack(AGENT_OPTIONS) }

-- With tools, a scripted policy plays the model: policy(state) with state
-- {messages =, row =, step =} returns the next assistant message, {content =}
-- or {tool_calls = {{name =, arguments =}...}}.
local function offline_agent(o, agent)
  if type(o.policy) ~= "function" then error("ev.provider.offline: with tools, give policy = function(state) -> message", 3) end
  if o.question ~= nil then error("ev.provider.offline: question does not apply to an agent (the row's user turns are sent)", 3) end
  local p = new("offline", o.name or "offline agent", function(self, prompt, row)
    local out = agent_run(agent, prompt, row, function(messages, k)
      local ok, msg = pcall(o.policy, { messages = messages, row = row, step = k })
      if not ok then
        if caught.fatal(msg) then error(msg, 0) end
        return { ok = false, error = "the policy raised: " .. tostring(msg) }
      end
      if type(msg) ~= "table" then return { ok = false, error = "the policy returned no message table" } end
      return { ok = true, message = msg, latency_ms = 0, prompt_tokens = 0, completion_tokens = 0, cost = 0, cached = false }
    end)
    self.counts[out.ok and "requests" or "failures"] = self.counts[out.ok and "requests" or "failures"] + 1
    return out
  end, { agent = true, tools = agent.set.specs })
  p.counts = { requests = 0, failures = 0 }
  return p
end

function M.offline(o)
  o = o or {}
  options.check(o, OFFLINE, "ev.provider.offline", 2)
  local agent = agent_setup(o, "ev.provider.offline")
  if agent then return offline_agent(o, agent) end
  local field = o.question or "query"
  local p = new("offline", o.name or "offline", function(self, prompt, row)
    local answer, why = offline.answer(row[field], row.contexts, prompt)
    if not answer then
      self.counts.failures = self.counts.failures + 1
      return { ok = false, error = why }
    end
    self.counts.requests = self.counts.requests + 1
    return { ok = true, answer = answer, latency_ms = 0, prompt_tokens = 0, completion_tokens = 0, cost = 0,
             cached = false }
  end)
  p.counts = { requests = 0, failures = 0 }
  return p
end

-- ---- openai ---------------------------------------------------------------------

local SAMPLING = { "temperature", "top_p", "max_tokens", "seed", "stop", "logprobs" }
local OPENAI = options.set { "name", "system", "temperature", "top_p", "max_tokens", "seed", "stop", "logprobs",
  "base_url", "model", "concurrency", "cache", "cache_mode", "timeout_ms", "connect_timeout_ms",
  "max_retries", "backoff_ms", "max_backoff_ms", "api_key_env", "headers", "rpm", "tpm", "budget",
  "dry_run", "price", "ca_file", "tool_choice", "parallel_tool_calls", table.unpack(AGENT_OPTIONS) }

local function cost_of(price, u)
  if not price or not u then return nil end
  return ((price.prompt or 0) * u.prompt_tokens + (price.completion or 0) * u.completion_tokens) / 1e6
end

function M.openai(o)
  o = o or {}
  options.check(o, OPENAI, "ev.provider.openai", 2)
  local agent = agent_setup(o, "ev.provider.openai")
  if agent and o.system ~= nil then
    error("ev.provider.openai: with tools the rendered prompt is the system message; leave system out", 2)
  end
  local cfg, req = {}, { temperature = 0 }
  local AGENT_ONLY = { tools = true, fixtures = true, max_steps = true, tool_choice = true, parallel_tool_calls = true }
  for k, v in pairs(o) do
    if k ~= "name" and k ~= "system" and not AGENT_ONLY[k] then cfg[k] = v end
  end
  for _, k in ipairs(SAMPLING) do
    cfg[k] = nil
    if o[k] ~= nil then req[k] = o[k] end
  end
  local judges = require "evalua.judge"
  local ok, judge = pcall(judges.open, cfg)
  if not ok then error((tostring(judge):gsub("^ev%.judge%.open", "ev.provider.openai")), 2) end
  local price = o.price or judges.prices[judge.model]
  local system = o.system
  if system ~= nil and type(system) ~= "string" then error("ev.provider.openai: system must be a string", 2) end
  if agent then
    local extra = { tools = agent.set.specs, tool_choice = o.tool_choice, parallel_tool_calls = o.parallel_tool_calls }
    return new("openai", o.name or judge.model, function(_, prompt, row)
      return agent_run(agent, prompt, row, function(messages)
        local q = { messages = messages, extra = extra }
        for k, v in pairs(req) do q[k] = v end
        local r = judge:chat(q) -- each step is a request of its own, cached as any
        if not r.ok then return { ok = false, error = r.error, dry_run = r.dry_run } end
        local u = r.usage
        return { ok = true, message = { content = r.text ~= "" and r.text or nil, tool_calls = r.tool_calls },
                 latency_ms = r.latency_ms, cached = r.cached, prompt_tokens = u and u.prompt_tokens,
                 completion_tokens = u and u.completion_tokens, cost = cost_of(price, u) }
      end)
    end, { judge = judge, model = judge.model, concurrency = judge:stats().concurrency_window, agent = true,
           tools = agent.set.specs })
  end
  return new("openai", o.name or judge.model, function(_, prompt)
    local messages = { { role = "user", content = prompt } }
    if system then table.insert(messages, 1, { role = "system", content = system }) end
    local q = { messages = messages }
    for k, v in pairs(req) do q[k] = v end
    local r = judge:chat(q)
    if not r.ok then return { ok = false, error = r.error, dry_run = r.dry_run } end
    local u = r.usage
    return { ok = true, answer = r.text, latency_ms = r.latency_ms, cached = r.cached,
             prompt_tokens = u and u.prompt_tokens, completion_tokens = u and u.completion_tokens,
             cost = cost_of(price, u), -- a cached answer's: what it cost when asked
             finish_reason = r.finish_reason, logprobs = r.logprobs } -- for finish-reason and perplexity
  end, { judge = judge, model = judge.model, concurrency = judge:stats().concurrency_window })
end

-- ---- http -----------------------------------------------------------------------

local HTTP = options.set { "name", "url", "method", "headers", "body", "extract", "concurrency", "timeout_ms",
  "max_retries", "backoff_ms", "max_backoff_ms", "cache", "dry_run" }

-- The default extract: a JSON object with answer (and optionally contexts,
-- retrieved, prompt_tokens, completion_tokens, cost).
local function default_extract(response)
  if type(response) ~= "table" then return nil, "the response is not a JSON object" end
  return response
end

local DEFAULT_BODY = '{"prompt": {{prompt | json}}, "query": {{query | default("") | json}}}'

-- The request body for a row: a template over the row's fields plus
-- `prompt`, or a function(row, prompt) -> table (sent as JSON) or string.
local function body_maker(body, what)
  if type(body) == "function" then
    return function(prompt, row)
      local b = body(row, prompt)
      if type(b) == "table" then return json.encode(b) end
      if type(b) ~= "string" then error(what .. ": body function must return a table or a string", 0) end
      return b
    end
  end
  local t = template.load(body or DEFAULT_BODY, what .. " body")
  return function(prompt, row)
    return t:render(setmetatable({ prompt = prompt }, { __index = row }))
  end
end

-- The fields an extract function returned, checked: answer a string,
-- contexts a list of strings, retrieved a list (of ids or {id=, score=}).
local function read_extracted(x, why)
  if type(x) ~= "table" then return nil, why or "extract returned no table" end
  if type(x.answer) ~= "string" then return nil, "extract gave no answer string" end
  if x.contexts ~= nil and type(x.contexts) ~= "table" then return nil, "extract gave contexts that are not a list" end
  if x.retrieved ~= nil and type(x.retrieved) ~= "table" then return nil, "extract gave retrieved that is not a list" end
  return x
end

local function parse_with(extract)
  return function(body)
    local decoded = json.decode(body)
    if decoded == nil then return nil, "the response is not JSON" end
    local ok, x, why = pcall(extract, decoded, body)
    if not ok then return nil, "extract raised: " .. tostring(x) end
    return read_extracted(x, why)
  end
end

local function answer_of(r, parse)
  if not r.ok then return { ok = false, error = r.error, dry_run = r.dry_run } end
  local x, why = parse(r.body)
  if not x then return { ok = false, error = why } end
  return { ok = true, answer = x.answer, contexts = x.contexts, retrieved = x.retrieved,
           latency_ms = r.latency_ms, cached = r.cached, prompt_tokens = x.prompt_tokens,
           completion_tokens = x.completion_tokens, cost = x.cost }
end

function M.http(o)
  if type(o) ~= "table" then error("ev.provider.http: expected a table {url = ...}", 2) end
  options.check(o, HTTP, "ev.provider.http", 2)
  if type(o.url) ~= "string" then error("ev.provider.http: url is required", 2) end
  if o.method ~= nil and o.method ~= "POST" then
    error("ev.provider.http: method must be \"POST\" (requests go through the judge's engine, which posts)", 2)
  end
  if o.extract ~= nil and type(o.extract) ~= "function" then
    error("ev.provider.http: extract must be a function(response) -> {answer=, contexts=, retrieved=}", 2)
  end
  local s = sender.open(o, "ev.provider.http")
  local make_body = body_maker(o.body, "ev.provider.http")
  local parse = parse_with(o.extract or default_extract)
  local valid = function(body) return parse(body) ~= nil end
  return new("http", o.name or o.url, function(_, prompt, row)
    local ok, body = pcall(make_body, prompt, row)
    if not ok then return { ok = false, error = tostring(body) } end
    return answer_of(sender.post(s, body, valid), parse)
  end, { counts = s.stats, url = s.url, concurrency = s.engine:stats().window })
end

-- ---- exec -----------------------------------------------------------------------

local EXEC = options.set { "name", "cmd", "extract", "cache", "dry_run" }

function M.exec(o)
  if type(o) ~= "table" then error("ev.provider.exec: expected a table {cmd = ...}", 2) end
  options.check(o, EXEC, "ev.provider.exec", 2)
  if sys.sandboxed() then error("ev.provider.exec: running commands is not available in --sandbox mode", 2) end
  if type(o.cmd) ~= "string" or o.cmd == "" then error("ev.provider.exec: cmd must be a command line", 2) end
  local x = { cmd = o.cmd, dir = sender.cache_dir(o.cache, "ev.provider.exec"), dry_run = o.dry_run,
              stats = sender.new_stats() }
  local parse = parse_with(o.extract or default_extract)
  local valid = function(body) return parse(body) ~= nil end
  return new("exec", o.name or o.cmd, function(_, prompt, row)
    local vars = type(row.table) == "function" and row:table() or row
    local ok, input = pcall(json.encode, { prompt = prompt, vars = vars })
    if not ok then return { ok = false, error = "cannot encode the row as JSON: " .. tostring(input) } end
    return answer_of(sender.run(x, input, valid), parse)
  end, { counts = x.stats })
end

return M
