-- A promptfoo config's `providers` as ev.provider objects:
--   openai:chat:MODEL, openai:MODEL    ev.provider.openai (config: apiBaseUrl,
--                                      apiKeyEnvar, temperature, max_tokens, ...)
--   http, https, or a URL as the id    ev.provider.http (config: url, method,
--                                      headers, body, transformResponse)
--   exec:COMMAND                       the command with the prompt, the options
--                                      and the context as its last three
--                                      arguments; its stdout, trimmed, is the output
--   echo                               the prompt itself, no request
-- Each provider is named by its label, else its id. Requests, the cache,
-- concurrency and retries are evalua's client's (docs/prompts.md).
local config = require "evalua.experiment.promptfoo.config"
local nunjucks = require "evalua.experiment.promptfoo.nunjucks"
local provider = require "evalua.experiment.provider"
local sender = require "evalua.experiment.provider_http"
local json = require "evalua.core.json"
local caught = require "evalua.core.caught"

local M = {}

local ENTRY = { id = true, label = true, config = true, transform = true }
local ENTRY_HINTS = {
  delay = "evalua's client paces requests itself (rpm/tpm on the judge)",
  prompts = "limiting a provider to some prompts is not supported; every provider runs every prompt",
  env = "set the environment before evalua runs",
}

-- ---- openai -----------------------------------------------------------------

local OPENAI = { apiBaseUrl = true, apiKey = true, apiKeyEnvar = true, temperature = true, max_tokens = true,
                 top_p = true, seed = true, stop = true, headers = true }
local OPENAI_HINTS = {
  apiHost = "give apiBaseUrl (the whole base URL, https://host/v1)",
  organization = "send it as a header (headers: {OpenAI-Organization: ...})",
  frequency_penalty = "evalua's openai provider sends temperature, top_p, max_tokens, seed and stop",
  presence_penalty = "evalua's openai provider sends temperature, top_p, max_tokens, seed and stop",
  max_completion_tokens = "give max_tokens",
  response_format = "structured output is not sent; check the format with is-json assertions",
  tools = "tool calls are evalua's agent providers (docs/agents.md), not a promptfoo config key here",
  functions = "tool calls are evalua's agent providers (docs/agents.md), not a promptfoo config key here",
  cost = "evalua prices a model by ev.judge.prices (docs/judge.md)",
  passthrough = "extra request fields are not sent",
}
local OPENAI_KINDS = { completion = "completion models", embedding = "embeddings", embeddings = "embeddings",
                       assistant = "assistants", image = "images", moderation = "moderation",
                       realtime = "the realtime API", responses = "the Responses API", transcription = "audio" }

-- "{{ env.NAME }}" -> NAME: a value taken from the environment, as evalua takes keys.
local function env_name(v)
  return type(v) == "string" and v:match("^%s*{{%-?%s*env%.([%w_]+)%s*%-?}}%s*$")
end

local function is_message_list(v)
  if type(v) ~= "table" or v[1] == nil then return false end
  for _, m in ipairs(v) do
    if type(m) ~= "table" or type(m.role) ~= "string" or type(m.content) ~= "string" then return false end
  end
  return true
end

-- The messages of a rendered prompt: a JSON list of {role, content} is a
-- chat prompt, anything else one user message.
function M.messages(prompt)
  if prompt:match("^%s*%[") then
    local v = json.decode(prompt)
    if is_message_list(v) then
      local out = {}
      for i, m in ipairs(v) do out[i] = { role = m.role, content = m.content } end
      return out
    end
  end
  return { { role = "user", content = prompt } }
end

local function cost_of(price, u)
  if not price or not u then return nil end
  return ((price.prompt or 0) * u.prompt_tokens + (price.completion or 0) * u.completion_tokens) / 1e6
end

local function openai(problems, doc, e, model, cfg, opts)
  local o = { name = e.name, model = model, cache = opts.cache, concurrency = opts.concurrency }
  local req = { temperature = 0 }
  for _, k in ipairs { "temperature", "max_tokens", "top_p", "seed", "stop" } do
    local v = config.value(cfg[k])
    if v ~= nil then o[k], req[k] = v, v end
  end
  o.base_url = config.value(cfg.apiBaseUrl)
  if nunjucks.has_tags(o.base_url) then
    return problems:add(doc.file, doc:line(cfg, "apiBaseUrl"), "%s.config.apiBaseUrl: a template is not rendered "
      .. "here; give the URL (or leave it out for $OPENAI_BASE_URL)", e.where)
  end
  local key = config.value(cfg.apiKey)
  if key ~= nil then
    local name = env_name(key)
    if not name then
      return problems:add(doc.file, doc:line(cfg, "apiKey"), "%s.config.apiKey: evalua takes keys from the "
        .. "environment only: write apiKey: '{{ env.NAME }}' or apiKeyEnvar: NAME (default $OPENAI_API_KEY)", e.where)
    end
    o.api_key_env = name
  end
  if cfg.apiKeyEnvar ~= nil then o.api_key_env = cfg.apiKeyEnvar end
  o.headers = config.value(cfg.headers)
  local ok, p = pcall(provider.openai, o)
  if not ok then
    return problems:add(doc.file, e.line, "%s: %s", e.where, (tostring(caught.pass_on(p)):gsub("^.-ev%.provider%.openai: ", "")))
  end
  local price = require("evalua.judge").prices[p.judge.model]
  -- the rendered prompt may be a chat prompt: send its messages
  p.impl = function(_, prompt)
    local q = { messages = M.messages(prompt) }
    for k, v in pairs(req) do q[k] = v end
    local r = p.judge:chat(q)
    if not r.ok then return { ok = false, error = r.error, dry_run = r.dry_run } end
    local u = r.usage
    return { ok = true, answer = r.text, latency_ms = r.latency_ms, cached = r.cached,
             prompt_tokens = u and u.prompt_tokens, completion_tokens = u and u.completion_tokens,
             cost = cost_of(price, u) }
  end
  return p
end

-- ---- http -------------------------------------------------------------------

local HTTP = { url = true, method = true, headers = true, body = true, transformResponse = true }
local HTTP_HINTS = {
  transformRequest = "the body is the request; build it with the body template",
  queryParams = "put the query in the url",
  validateStatus = "evalua's client retries 429 and 5xx and fails other statuses",
  responseParser = "give transformResponse: a path such as json.output",
  request = "raw HTTP requests are not supported; give url, headers and body",
  tokenEstimation = "token counts come from the response or are left unmeasured",
  session = "sessions are not supported",
  maxRetries = "retries are evalua's client's (--max-retries of the judge options)",
  timeout = "timeouts are evalua's client's",
}

-- transformResponse as a path: json, json.a.b, json.items[0].text, json["k"].
local function response_path(s)
  if s == "json" then return {} end
  local rest = s:match("^json(.+)$")
  if not rest then return nil end
  local steps = {}
  local pos = 1
  while pos <= #rest do
    local name, after = rest:match("^%.([%a_][%w_]*)()", pos)
    if name then steps[#steps + 1], pos = name, after
    else
      local n
      n, after = rest:match("^%[(%d+)%]()", pos)
      if n then steps[#steps + 1], pos = tonumber(n) + 1, after
      else
        local k
        k, after = rest:match("^%[[\"']([^\"']*)[\"']%]()", pos)
        if not k then return nil end
        steps[#steps + 1], pos = k, after
      end
    end
  end
  return steps
end

local function walk(v, steps)
  for _, s in ipairs(steps) do
    if type(v) ~= "table" then return nil end
    v = v[s]
  end
  return v
end

local function as_output(v)
  if type(v) == "string" then return v end
  if v == nil or v == json.null then return nil end
  if type(v) == "number" then return json.number(v) end
  if type(v) == "boolean" then return tostring(v) end
  return json.encode(v)
end

-- Every string in a body (a table) compiled as a template; problems named.
local function body_templates(problems, doc, v, where, line)
  if type(v) == "string" then
    if not nunjucks.has_tags(v) then return function() return v end end
    local t, why = nunjucks.compile(v, where)
    if not t then problems:add(doc.file, line, "%s: %s", where, why) return nil end
    return function(vars)
      local s, err = nunjucks.render(t, vars)
      if not s then error(where .. ": " .. err, 0) end
      return s
    end
  end
  if type(v) ~= "table" then return function() return v end end
  local parts, is_list = {}, config.is_list(v)
  for k, x in pairs(v) do
    parts[k] = body_templates(problems, doc, x, where .. (is_list and ("[" .. k .. "]") or ("." .. k)),
      doc:line(v, k) ~= 0 and doc:line(v, k) or line)
  end
  return function(vars)
    local out = is_list and setmetatable({}, json.array) or {}
    for k, f in pairs(parts) do out[k] = f(vars) end
    return out
  end
end

local function http(problems, doc, e, id, cfg, opts)
  local url = config.value(cfg.url) or (id:match("^https?://") and id)
  if type(url) ~= "string" then return problems:add(doc.file, e.line, "%s.config.url: missing", e.where) end
  if nunjucks.has_tags(url) then
    return problems:add(doc.file, doc:line(cfg, "url"), "%s.config.url: a template is not rendered here; give the URL",
      e.where)
  end
  local method = config.value(cfg.method)
  if method ~= nil and tostring(method):upper() ~= "POST" then
    return problems:add(doc.file, doc:line(cfg, "method"), "%s.config.method: evalua's client sends POST only, "
      .. "not %s", e.where, tostring(method))
  end
  local headers = {}
  for k, v in pairs(config.value(cfg.headers) or {}) do
    local name = env_name(v)
    if name then headers[k] = { env = name }
    elseif type(v) ~= "string" or nunjucks.has_tags(v) then
      problems:add(doc.file, doc:line(cfg.headers, k), "%s.config.headers.%s: a header is a fixed text or "
        .. "'{{ env.NAME }}' (the whole value from the environment)", e.where, k)
    else headers[k] = v end
  end
  local body = config.value(cfg.body)
  local make = body == nil and function(vars) return { prompt = vars.prompt } end
    or body_templates(problems, doc, body, e.where .. ".config.body", doc:line(cfg, "body"))
  local tr = config.value(cfg.transformResponse)
  local steps = tr == nil and {} or type(tr) == "string" and response_path(tr:match("^%s*(.-)%s*$"))
  if not steps then
    return problems:add(doc.file, doc:line(cfg, "transformResponse"), "%s.config.transformResponse: evalua reads a "
      .. "path into the JSON response (json.output, json.choices[0].message.content), not JavaScript", e.where)
  end
  if not make then return end
  local ok, p = pcall(provider.http, {
    name = e.name, url = url, headers = next(headers) and headers or nil, cache = opts.cache,
    concurrency = opts.concurrency,
    body = function(row, prompt)
      local vars = setmetatable({ prompt = prompt }, { __index = row.vars })
      local b = make(vars)
      if type(b) == "table" then return json.encode(b) end
      return tostring(b)
    end,
    extract = function(response)
      local v = walk(response, steps)
      local out = as_output(v)
      if out == nil then return nil, ("transformResponse %s found nothing in the response"):format(tr or "json") end
      return { answer = out }
    end,
  })
  if not ok then return problems:add(doc.file, e.line, "%s: %s", e.where, (tostring(caught.pass_on(p)):gsub("^.-ev%.provider%.http: ", ""))) end
  return p
end

-- ---- exec and echo ------------------------------------------------------------

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function exec(problems, doc, e, cmd, cfg, opts)
  if next(cfg) ~= nil then
    config.check_keys(problems, doc, cfg, e.where .. ".config", {}, {})
    return
  end
  if cmd == "" then return problems:add(doc.file, e.line, "%s: exec: needs a command", e.where) end
  local ok, p = pcall(provider.exec, { name = e.name, cmd = cmd, cache = opts.cache })
  if not ok then return problems:add(doc.file, e.line, "%s: %s", e.where, (tostring(caught.pass_on(p)):gsub("^.-ev%.provider%.exec: ", ""))) end
  local x = { dir = sender.cache_dir(opts.cache, "exec"), stats = sender.new_stats() }
  p.counts = x.stats
  -- promptfoo's contract: the prompt, the provider's options and the
  -- context as the last three arguments; stdout, trimmed, is the output
  p.impl = function(_, prompt, row)
    x.cmd = ("%s %s %s %s"):format(cmd, shell_quote(prompt), shell_quote(json.encode { id = "exec:" .. cmd, config = {} }),
      shell_quote(json.encode { vars = row.vars or {}, prompt = { raw = prompt } }))
    local r = sender.run(x, "", function() return true end)
    if not r.ok then -- named by the command as configured, not with the prompt's arguments
      local err = r.error
      if err and err:sub(1, #x.cmd + 2) == "'" .. x.cmd .. "'" then err = "'" .. cmd .. "'" .. err:sub(#x.cmd + 3) end
      return { ok = false, error = err, dry_run = r.dry_run }
    end
    local out = r.body:gsub("\27%[[0-?]*[ -/]*[@-~]", ""):match("^%s*(.-)%s*$")
    return { ok = true, answer = out, latency_ms = r.latency_ms, cached = r.cached }
  end
  return p
end

local function echo(problems, doc, e, cfg)
  if next(cfg) ~= nil then return config.check_keys(problems, doc, cfg, e.where .. ".config", {}, {}) end
  local p = provider.offline { name = e.name }
  p.impl = function(self, prompt)
    self.counts.requests = self.counts.requests + 1
    return { ok = true, answer = prompt, latency_ms = 0, prompt_tokens = 0, completion_tokens = 0, cost = 0,
             cached = false }
  end
  return p
end

-- ---- the list -----------------------------------------------------------------

local function make(problems, doc, e, opts)
  local id, cfg = e.id, e.config
  local kind, model = id:match("^openai:([%w%-]+):(.+)$")
  if kind and kind ~= "chat" then
    return problems:add(doc.file, e.line, "%s: %s: %s are not supported (openai:chat:MODEL and openai:MODEL are)",
      e.where, id, OPENAI_KINDS[kind] or ("openai:" .. kind))
  end
  model = model or id:match("^openai:(.+)$")
  if model then
    config.check_keys(problems, doc, cfg, e.where .. ".config", OPENAI, OPENAI_HINTS)
    return openai(problems, doc, e, model, cfg, opts)
  end
  if id == "http" or id == "https" or id:match("^https?://") then
    config.check_keys(problems, doc, cfg, e.where .. ".config", HTTP, HTTP_HINTS)
    return http(problems, doc, e, id, cfg, opts)
  end
  local cmd = id:match("^exec:%s*(.*)$")
  if cmd then return exec(problems, doc, e, cmd, cfg, opts) end
  if id == "echo" then return echo(problems, doc, e, cfg) end
  problems:add(doc.file, e.line, "%s: the provider '%s' is not supported (evalua runs openai:chat:MODEL, "
    .. "openai:MODEL, http, https, exec:COMMAND and echo)", e.where, id)
end

-- An entry: "id", {id =, label =, config =, transform =} or {"id": {config =}}.
local function entry_of(problems, doc, v, i, list)
  local where, line = ("providers[%d]"):format(i), doc:line(list, i)
  if type(v) == "string" then return { id = v, config = {}, where = where, line = line } end
  if type(v) ~= "table" or config.is_list(v) then
    return problems:add(doc.file, line, "%s: expected a provider id or {id =, config =}", where)
  end
  if v.id == nil then
    local k, inner = next(v)
    if k ~= nil and next(v, k) == nil and type(inner) == "table" then -- {"openai:gpt-4o-mini": {config: ...}}
      v, line = inner, doc:line(v, k)
      v.id = k
    elseif k == "exec" and next(v, k) == nil and type(inner) == "string" then -- - exec: cmd, unquoted, is a mapping
      return { id = "exec:" .. inner, config = {}, where = where, line = line }
    end
  end
  config.check_keys(problems, doc, v, where, ENTRY, ENTRY_HINTS)
  if type(v.id) ~= "string" then return problems:add(doc.file, line, "%s.id: expected a provider id", where) end
  if v.id:match("^file://") then
    return problems:add(doc.file, line, "%s.id: provider files are not supported: write the provider in the config", where)
  end
  local cfg = config.value(v.config) or {}
  if type(cfg) ~= "table" then return problems:add(doc.file, doc:line(v, "config"), "%s.config: expected a mapping", where) end
  local label = config.value(v.label)
  if label ~= nil and type(label) ~= "string" then
    return problems:add(doc.file, doc:line(v, "label"), "%s.label: expected a string", where)
  end
  return { id = v.id, label = label, config = cfg, where = where, line = line, transform = config.value(v.transform),
           transform_line = doc:line(v, "transform") }
end

-- read(problems, doc, cfg, opts) -> list of {name, p, transform = source, ...}
-- opts: cache (a folder, false, or nil for the judge's), concurrency.
function M.read(problems, doc, cfg, opts)
  local spec = cfg.providers or cfg.targets
  local key = cfg.providers ~= nil and "providers" or "targets"
  if spec == nil or spec == config.null then
    problems:add(doc.file, 1, "providers: missing (a list such as [openai:gpt-4o-mini])")
    return {}
  end
  if type(spec) == "string" then spec = { spec } end
  if not config.is_list(spec) then
    problems:add(doc.file, doc:line(cfg, key), "%s: expected a list of providers", key)
    return {}
  end
  local out, seen = {}, {}
  for i, v in ipairs(spec) do
    local e = entry_of(problems, doc, v, i, spec)
    if e then
      e.name = e.label or e.id
      if seen[e.name] then
        problems:add(doc.file, e.line, "%s: two providers are named '%s' (give each a label)", e.where, e.name)
      end
      seen[e.name] = true
      e.p = make(problems, doc, e, opts)
      out[#out + 1] = e
    end
  end
  return out
end

return M
