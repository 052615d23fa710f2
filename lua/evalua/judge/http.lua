-- The HTTP judge: chat and embedding requests to an OpenAI-compatible
-- server through the C engine (concurrency, retries, rate limits), answered
-- from an on-disk cache when it can, with accounts (requests, tokens, cost)
-- and a budget. Inside ev.map a call yields while its request is in flight;
-- elsewhere it blocks. Failures are results ({ok = false, error = ...}),
-- never NaN.
local C = require "evalua._client"
local caught = require "evalua.core.caught"
local cache = require "evalua.client.cache"
local json = require "evalua.judge.json"
local sched = require "evalua.client.sched"
local ops = require "evalua.judge.ops"
local base = require "evalua.judge.base"
local stats_mod = require "evalua.judge.stats"
local run = require "evalua.core.run"
local options = require "evalua.core.options"
local trace = require "evalua.judge.trace"
local sys = require "evalua._sys"

local H = {
  -- USD per million tokens by model name: {prompt = x, completion = y}.
  prices = run.layered("prices", {}), -- ev.judge.prices: what a script sets lives in its run
}

local Judge = setmetatable({}, { __index = base })
Judge.__index = Judge
Judge.__name = "evalua.Judge"

local private = setmetatable({}, { __mode = "k" }) -- judge -> its state

local OPTIONS = {
  kind = true, base_url = true, model = true, embed_model = true, concurrency = true,
  cache = true, cache_mode = true, timeout_ms = true, connect_timeout_ms = true,
  max_retries = true, backoff_ms = true, max_backoff_ms = true, max_wait_ms = true,
  api_key_env = true, api_key = true, headers = true, rpm = true, tpm = true,
  budget = true, dry_run = true, price = true, json_repair = true, ca_file = true,
  seed = true, support_threshold = true, max_response_bytes = true,
}
local CACHE_MODES = { rw = true, ro = true, off = true, refresh = true }


-- The URL without user:password@, for keys, messages and stats.
local function public_url(url)
  return (url:gsub("^(%a[%w+.-]*://)[^/@]*@", "%1"):gsub("/+$", ""))
end

-- Rough token counts (about 4 ASCII bytes or one other character each),
-- used for dry runs, budgets and the tokens-per-minute limit.
local function estimate_text(s)
  local high = select(2, s:gsub("[\128-\255]", ""))
  return math.ceil((#s - high) / 4 + high / 3)
end

local function estimate_request(body)
  local prompt = 3
  for _, m in ipairs(body.messages or {}) do
    prompt = prompt + 4 + (type(m.content) == "string" and estimate_text(m.content) or 0)
  end
  local input = body.input
  if type(input) == "string" then prompt = prompt + estimate_text(input) end
  if type(input) == "table" then
    for _, s in ipairs(input) do prompt = prompt + estimate_text(s) end
  end
  local completion = body.messages and (body.max_tokens or 256) or 0
  return prompt, completion
end

local function check_options(cfg)
  options.check(cfg, OPTIONS, "ev.judge.open", 4)
  local mode = cfg.cache_mode or "rw"
  if not CACHE_MODES[mode] then
    error(("ev.judge.open: cache_mode must be rw, ro, off or refresh (got %s)"):format(tostring(mode)), 4)
  end
  if cfg.budget ~= nil and type(cfg.budget) ~= "table" then
    error("ev.judge.open: budget must be a table {tokens = n, cost = usd}", 4)
  end
  for _, k in ipairs { "tokens", "cost" } do
    local v = cfg.budget and cfg.budget[k]
    if v ~= nil and (type(v) ~= "number" or v < 0) then
      error(("ev.judge.open: budget.%s must be a number >= 0"):format(k), 4)
    end
  end
end

local function cache_dir_of(cfg, env)
  if cfg.cache == false then return nil end
  if cfg.cache ~= nil and type(cfg.cache) ~= "string" then
    error("ev.judge.open: cache must be a folder name or false", 4)
  end
  return cfg.cache or env.cache_dir or C.default_cache_dir()
end

function H.open(cfg)
  check_options(cfg)
  local env = C.env()
  local base_url = cfg.base_url or env.base_url or "https://api.openai.com/v1"
  local model = cfg.model or env.model
  if type(model) ~= "string" or model == "" then
    error("ev.judge.open: no model: pass model = \"...\" or set $EVALUA_MODEL", 3)
  end
  local ok, engine = pcall(C.engine, {
    base_url = base_url, api_key_env = cfg.api_key_env, api_key = cfg.api_key,
    headers = cfg.headers, ca_file = cfg.ca_file, concurrency = cfg.concurrency,
    timeout_ms = cfg.timeout_ms, connect_timeout_ms = cfg.connect_timeout_ms,
    max_retries = cfg.max_retries, backoff_ms = cfg.backoff_ms,
    max_backoff_ms = cfg.max_backoff_ms, max_wait_ms = cfg.max_wait_ms,
    rpm = cfg.rpm, tpm = cfg.tpm, seed = cfg.seed, max_response_bytes = cfg.max_response_bytes,
  })
  if not ok then error("ev.judge.open: " .. tostring(engine):gsub("^judge: ", ""), 3) end
  local dir = cache_dir_of(cfg, env)
  local mode = dir and (cfg.cache_mode or "rw") or "off"
  local store
  if mode ~= "off" then
    local opened, got = pcall(cache.open, dir, mode ~= "ro")
    if not opened then error("ev.judge.open: cache: " .. tostring(got), 3) end
    store = got
  end
  local price = cfg.price or H.prices[model]
  if cfg.budget and cfg.budget.cost and not price then
    error(("ev.judge.open: budget.cost needs a price for model '%s' (price = {prompt=, completion=} "
      .. "in USD per million tokens, or ev.judge.prices)"):format(model), 3)
  end
  local self = setmetatable({
    kind = "http", model = model, embed_model = cfg.embed_model or model,
    base_url = public_url(base_url), cache_dir = dir, cache_mode = mode,
  }, Judge)
  private[self] = {
    engine = engine, dir = dir, cache = store, read = store and (mode == "rw" or mode == "ro"),
    inflight = mode ~= "off" and {} or nil, -- cache key -> engine id of a request being sent
    write = mode == "rw" or mode == "refresh", price = price, budget = cfg.budget or {},
    dry_run = cfg.dry_run or run.current():dry(),
    repair = cfg.json_repair ~= false,
    stats = stats_mod.new(model), spent = { tokens = 0, cost = 0 },
    reserved = { tokens = 0, cost = 0 }, dry_keys = {},
  }
  stats_mod.register(self, private[self].stats)
  return self
end
-- ---- requests ----------------------------------------------------------

local function cost_of(price, prompt, completion)
  if not price then return nil end
  return ((price.prompt or 0) * prompt + (price.completion or 0) * completion) / 1e6
end

-- What the server said went wrong: OpenAI's {"error": {"message"}}, an
-- error string, {"message"}, FastAPI's {"detail"} (vLLM), or a short plain
-- text or HTML body (Express: "Cannot POST /v1/embeddings").
local function server_message(body)
  local env = json.decode(body or "")
  if type(env) ~= "table" then
    local text = (body or ""):gsub("<[^>]*>", " "):gsub("%s+", " "):match("^%s*(.-)%s*$")
    if text ~= "" and #text <= 300 and not text:find("[{}]") then return text end
    return nil
  end
  local e, d = env.error, env.detail
  if type(e) == "table" and type(e.message) == "string" then return e.message end
  if type(e) == "string" then return e end
  if type(env.message) == "string" then return env.message end
  if type(d) == "string" then return d end
  if type(d) == "table" and type(d[1]) == "table" and type(d[1].msg) == "string" then return d[1].msg end
  return nil
end

local function failure_of(st, d)
  local msg = d.error
  local detail = server_message(d.body)
  if detail and msg:match("^HTTP %d+$") then msg = msg .. ": " .. detail
  elseif detail then msg = msg .. " (" .. detail .. ")" end
  if d.status == 401 and not st.engine:has_key() then
    msg = msg .. " (no API key was sent: set $OPENAI_API_KEY or name another variable with api_key_env)"
  end
  if d.retryable and d.attempts > 1 then msg = ("gave up after %d attempts: %s"):format(d.attempts, msg) end
  return { ok = false, error = msg, status = d.status ~= 0 and d.status or nil,
           attempts = d.attempts, unmeasured = true }
end

-- A structured refusal (OpenAI: content null, refusal "..."): the model's
-- answer, not a broken response, so it is a result and is not retried.
local function refusal_of(msg, finish)
  local text = msg.refusal
  if type(text) ~= "string" or not text:find("%S") or (type(msg.content) == "string" and msg.content:find("%S")) then
    return nil
  end
  return { ok = false, refusal = text, error = "the judge refused to answer: " .. text, finish_reason = finish,
           unmeasured = true }
end

-- The result fields of a chat answer; nil, message when its shape is wrong.
local function chat_result(env, req)
  local choice = type(env.choices) == "table" and env.choices[1]
  local msg = type(choice) == "table" and choice.message
  local finish = type(choice) == "table" and type(choice.finish_reason) == "string" and choice.finish_reason or nil
  local refused = type(msg) == "table" and refusal_of(msg, finish)
  if refused then return refused end
  -- an answer of tool calls (ev.generate's agent loop) may have no content
  local calls = type(msg) == "table" and type(msg.tool_calls) == "table" and msg.tool_calls[1] ~= nil and msg.tool_calls
  if type(msg) ~= "table" or (type(msg.content) ~= "string" and not calls) then
    return nil, "the response has no choices[1].message.content"
  end
  local r = { ok = true, text = type(msg.content) == "string" and msg.content or "", finish_reason = finish,
              tool_calls = calls and json.denull(calls) or nil }
  local lp = req.logprobs and type(choice.logprobs) == "table" and choice.logprobs.content
  if type(lp) == "table" then r.logprobs = json.denull(lp) end
  if req.json then
    local value, err = json.lenient(msg.content)
    if value == nil then return r, err end
    r.json = json.denull(value)
  end
  return r
end

local function embed_result(env, req)
  if type(env.data) ~= "table" then return nil, "the response has no data list" end
  local vectors = {}
  for k, item in ipairs(env.data) do
    local i = type(item) == "table" and (math.tointeger(item.index) or k - 1) -- some servers send no index
    if not i or type(item.embedding) ~= "table" then
      return nil, "a data item has no index and embedding"
    end
    for _, x in ipairs(item.embedding) do
      if type(x) ~= "number" or x ~= x or x == math.huge or x == -math.huge then
        return nil, "an embedding holds a value that is not a finite number"
      end
    end
    vectors[i + 1] = item.embedding
  end
  local n = type(req.input) == "table" and #req.input or 1
  for i = 1, n do
    if not vectors[i] then return nil, ("no embedding for input %d"):format(i) end
  end
  return { ok = true, embeddings = vectors, embedding = type(req.input) == "string" and vectors[1] or nil }
end

-- A response without usage (llama.cpp, small servers) gets usage marked
-- estimated; request() fills in the estimate.
local function decorate(r, env)
  local u = type(env.usage) == "table" and env.usage or nil
  local pt, ct = math.tointeger(u and u.prompt_tokens) or 0, math.tointeger(u and u.completion_tokens) or 0
  r.usage = { prompt_tokens = pt, completion_tokens = ct, total_tokens = pt + ct, estimated = not u or nil }
  r.model = type(env.model) == "string" and env.model or nil
  r.system_fingerprint = type(env.system_fingerprint) == "string" and env.system_fingerprint or nil
  return r
end

-- Turns a decoded response into a result; nil, message, partial when the
-- envelope is wrong (or, with json, the answer is not JSON). Every field is
-- type-checked, so a JSON null reads as absent.
local function read_envelope(path, env, req)
  local r, why
  if path == "/embeddings" then r, why = embed_result(env, req) else r, why = chat_result(env, req) end
  if not r then return nil, why end
  decorate(r, env)
  if why then return nil, why, r end
  return r
end

-- A chat answer sent as server-sent events (a server that streams though
-- not asked, or `extra = {stream = true}`): the deltas joined into one
-- ordinary response.
local function from_events(body)
  local text, env = {}, { choices = { { message = {} } } }
  local choice = env.choices[1]
  for data in body:gmatch("data:%s*([^\r\n]+)") do
    local ev = data ~= "[DONE]" and json.decode(data)
    if type(ev) == "table" then
      local c = type(ev.choices) == "table" and ev.choices[1]
      local delta = type(c) == "table" and c.delta
      if type(delta) == "table" and type(delta.content) == "string" then text[#text + 1] = delta.content end
      if type(c) == "table" and type(c.finish_reason) == "string" then choice.finish_reason = c.finish_reason end
      env.model = ev.model or env.model
      env.usage = type(ev.usage) == "table" and ev.usage or env.usage
      env.system_fingerprint = ev.system_fingerprint or env.system_fingerprint
    end
  end
  if #text == 0 and not choice.finish_reason then return nil end
  choice.message.content = table.concat(text)
  return env
end

local function read_response(path, body, req)
  if body:match("^%s*data:") then
    local env = from_events(body)
    if env then return read_envelope(path, env, req) end
  end
  local env, err = json.decode(body)
  if type(env) ~= "table" then return nil, "the response is not JSON: " .. tostring(err) end
  return read_envelope(path, env, req)
end

-- A cache entry: one line of metadata (the answer's latency, the request
-- without headers or key), then the server's response as it came. A hit
-- decodes the response only, however long the request was; the latency
-- comes first so it is read without decoding the request.
local function cache_entry(url, text, sample, body, latency_ms)
  return table.concat { '{"v":2,"latency_ms":', json.encode(latency_ms), ',"url":', json.encode(url),
                        ',"sample":', tostring(sample), ',"request":', text, "}\n", body }
end

-- A cache problem (a full disk, a read-only folder, an entry that is not a
-- file) is counted, kept in the stats, and said once per judge on stderr:
-- the run goes on without the cache rather than stopping.
local function cache_trouble(st, err)
  local s = st.stats
  s.cache_errors = s.cache_errors + 1
  s.cache_error = s.cache_error or err
  if not st.cache_warned then
    st.cache_warned = true
    io.stderr:write("evalua: judge cache: ", err, " (the run goes on; later cache errors are counted in judge:stats())\n")
  end
end

-- Queues an answer for the cache; a failed write comes back to cache_trouble.
local function store(st, key, data)
  st.store = st.store or cache.writer(st.cache, function(err) cache_trouble(st, err) end)
  st.store(key, data)
end

local function cache_lookup(self, st, key, path, req)
  local data, err = st.cache:get(key)
  if not data then
    if err then cache_trouble(st, err) end
    return nil
  end
  local nl = data:find("\n", 1, true)
  if not nl or data:sub(1, 7) ~= '{"v":2,' then return nil end
  local r = read_response(path, data:sub(nl + 1), req)
  if not r then return nil end
  -- the latency of when it was asked; none in entries of older versions
  r.cached, r.attempts, r.latency_ms = true, 0, tonumber(data:match('^{"v":2,"latency_ms":([^,]+),'))
  return r
end

-- The caller's check of an answer (judge:chat{check = fn}): fn(r) returns
-- value, reason, or nil and why the answer is unusable. A passing answer
-- carries them as r.value, r.reason; true when it passed (or no check).
local function passes(req, r)
  if not req.check then return true end
  local value, reason = req.check(r)
  if value == nil then return false, tostring(reason) end
  r.value, r.reason = value, reason
  return true
end

local function invalid(r, why)
  return { ok = false, error = "invalid judge answer: " .. why, check_error = why, text = r.text,
           attempts = r.attempts, cached = r.cached, unmeasured = true, invalid = true }
end

-- Tokens of a request and answer without server usage: the same estimate
-- as dry runs and budgets (docs/judge.md), marked estimated.
local function fill_estimate(r, body)
  local u = r.usage
  if not (u and u.estimated) then return end
  local prompt = estimate_request(body)
  u.prompt_tokens = prompt
  u.completion_tokens = estimate_text(r.text or "")
  u.total_tokens = u.prompt_tokens + u.completion_tokens
end

local function account(self, st, r, est_total)
  local s, u = st.stats, r.usage
  s.prompt_tokens = s.prompt_tokens + u.prompt_tokens
  s.completion_tokens = s.completion_tokens + u.completion_tokens
  if u.estimated then s.estimated_requests = s.estimated_requests + 1 end
  local cost = cost_of(st.price, u.prompt_tokens, u.completion_tokens)
  if cost then s.cost = (s.cost or 0) + cost end
  st.spent.tokens = st.spent.tokens + u.total_tokens
  st.spent.cost = st.spent.cost + (cost or 0)
  st.engine:adjust_tokens(u.total_tokens - est_total)
  stats_mod.saw(s, r.model, r.system_fingerprint)
end

local function budget_check(st, prompt, completion)
  local b = st.budget
  local tokens = st.spent.tokens + st.reserved.tokens
  local cost = st.spent.cost + st.reserved.cost
  if b.tokens and tokens >= b.tokens then
    return ("budget exhausted: %d of %d tokens used or reserved"):format(tokens, b.tokens)
  end
  if b.cost and cost >= b.cost then
    return ("budget exhausted: $%.4f of $%.4f used or reserved"):format(cost, b.cost)
  end
  return nil, prompt + completion, cost_of(st.price, prompt, completion) or 0
end

-- Sends text to path until it gets a well-formed answer or gives up. The
-- engine owns the retry policy (host/client/engine.h, docs/judge.md
-- "Retries"): it retries faults itself, and an answer this side cannot
-- read is handed back to it (engine:retry), which says whether the budget
-- allows another attempt and how long it waits first.
local function exchange(self, st, path, text, req, est, key)
  local s = st.stats
  s.requests = s.requests + 1
  local id, counted = st.engine:submit(path, text, est, req.operation), 0
  while true do
    if st.inflight then st.inflight[key] = id end
    local d = sched.await(st.engine, id)
    s.attempts = s.attempts + d.attempts - counted
    counted = d.attempts
    if d.error then return failure_of(st, d) end
    local r, why, partial = read_response(path, d.body, req)
    if r or partial then
      r = r or partial
      r.attempts, r.latency_ms, r.cached = d.attempts, d.latency_ms, false
      return r, why, d.body
    end
    id = st.engine:retry(d, path, text, est, req.operation)
    if not id then
      return { ok = false, error = ("invalid response after %d attempts: %s"):format(d.attempts, why),
               status = d.status, attempts = d.attempts, unmeasured = true }
    end
  end
end

local repair_request, room_request, cut_note

-- The answer of an identical request already in flight (id lead), as a
-- cached answer; nil when it came back unusable, so the caller asks itself.
local function share_answer(st, lead, path, req)
  local d = sched.await(st.engine, lead)
  local s = st.stats
  if d.error then
    s.failures = s.failures + 1
    return failure_of(st, d)
  end
  local r = read_response(path, d.body, req)
  if r and r.refusal then return r end -- the same answer: refused
  if not r or not passes(req, r) then return nil end
  r.cached, r.attempts, r.latency_ms = true, 0, d.latency_ms
  s.cache_hits = s.cache_hits + 1
  stats_mod.saw(s, r.model, r.system_fingerprint)
  return r
end

-- The cached answer for key when there is one that passes the caller's
-- check; an entry that fails it (stored by an older version) is asked again.
local function cached_answer(self, st, key, path, req)
  local hit = st.read and cache_lookup(self, st, key, path, req)
  if not hit or not passes(req, hit) then return nil end
  local s = st.stats
  s.cache_hits = s.cache_hits + 1
  stats_mod.saw(s, hit.model, hit.system_fingerprint)
  return hit
end

-- A dry run counts each distinct request once (by cache key): identical
-- requests are sent once in a real run too.
local function dry_answer(st, key, body)
  local s = st.stats
  if not st.dry_keys[key] then
    st.dry_keys[key] = true
    local prompt, completion = estimate_request(body)
    stats_mod.dry(s, prompt, completion, cost_of(st.price, prompt, completion))
  end
  return { ok = false, error = "dry run: request not sent", unmeasured = true, dry_run = true }
end

-- Sends a request the cache could not answer, within the budget.
local function send(self, st, path, body, text, req, key)
  local s = st.stats
  local prompt, completion = estimate_request(body)
  local refused, est_tokens, est_cost = budget_check(st, prompt, completion)
  if refused then
    s.budget_refused = s.budget_refused + 1
    return { ok = false, error = refused, unmeasured = true, budget_exhausted = true }
  end
  st.reserved.tokens, st.reserved.cost = st.reserved.tokens + est_tokens, st.reserved.cost + est_cost
  local r, why, raw = exchange(self, st, path, text, req, est_tokens, key)
  if st.inflight then st.inflight[key] = nil end
  st.reserved.tokens, st.reserved.cost = st.reserved.tokens - est_tokens, st.reserved.cost - est_cost
  if r.usage then
    fill_estimate(r, body)
    account(self, st, r, est_tokens)
  end
  return r, why, raw
end

-- One logical request: cache, dry run, budget, then the server. An answer
-- is stored only once it passed every check: the envelope, JSON when asked,
-- and the caller's check (after the repair request, if any).
local function request(self, path, body, req)
  local st = private[self]
  local text = json.encode(body)
  local sample = math.tointeger(req.sample) or 0
  local key = C.cache_key(("evalua-judge-1\n%s%s\n%d\n%s"):format(self.base_url, path, sample, text))
  trace.note { key = key, operation = req.operation or path:match("[^/]+$") }
  local s = st.stats
  local hit = cached_answer(self, st, key, path, req)
  if hit then
    fill_estimate(hit, body)
    return hit
  end
  local lead = st.inflight and st.inflight[key]
  if lead then
    local shared = share_answer(st, lead, path, req)
    if shared then return shared end
  end
  if st.dry_run then return dry_answer(st, key, body) end
  local r, why, raw = send(self, st, path, body, text, req, key)
  local cut = r.ok and r.finish_reason == "length"
  if r.ok and why then -- a JSON answer that does not parse
    s.invalid = s.invalid + 1
    if st.repair and not req.no_repair then
      if cut then return room_request(self, body, req, r) end
      return repair_request(self, body, req, r, why)
    end
    return { ok = false, error = cut_note(body, r) .. "the judge's answer is not valid JSON: " .. why, text = r.text,
             attempts = r.attempts, finish_reason = r.finish_reason, unmeasured = true, invalid = true }
  end
  if not r.ok then
    s.failures = s.failures + 1
    if r.refusal then s.refused = s.refused + 1 end
    return r
  end
  local ok, bad = passes(req, r)
  if not ok then
    s.invalid = s.invalid + 1
    if cut and st.repair and not req.no_repair then return room_request(self, body, req, r) end
    return invalid(r, cut_note(body, r) .. bad)
  end
  if st.write then
    store(st, key, cache_entry(self.base_url .. path, text, sample, raw, r.latency_ms))
  end
  return r
end

-- "the answer was cut at max_tokens (N); " for an answer the server cut
-- short (finish_reason "length"), else "".
function cut_note(body, r)
  if r.finish_reason ~= "length" then return "" end
  if body.max_tokens then return ("the answer was cut at max_tokens (%d); "):format(body.max_tokens) end
  return "the answer was cut at the server's length limit (no max_tokens was sent); "
end

-- An answer cut short that cannot be used: the same request once more with
-- twice the room (max_tokens doubled, or without one, twice the tokens
-- the cut answer took, at least 1,024).
function room_request(self, body, req, cut)
  local again = {}
  for k, v in pairs(req) do again[k] = v end
  local used = cut.usage and cut.usage.completion_tokens or 0
  again.max_tokens = body.max_tokens and 2 * body.max_tokens or math.max(2 * used, 1024)
  again.no_repair = true
  local r = Judge.chat(self, again)
  if r.ok then
    r.repaired, r.attempts = true, (r.attempts or 0) + (cut.attempts or 0)
    return r
  end
  local first = (cut_note(body, cut):gsub("; $", ""))
  local why = r.finish_reason == "length"
    and ("%s, and again with twice the room (max_tokens = %d)"):format(first, again.max_tokens)
    or ("%s; asked again with max_tokens = %d: %s"):format(first, again.max_tokens, r.check_error or r.error)
  if r.check_error then r.check_error, why = why, "invalid judge answer: " .. why end
  r.error = why
  return r
end

-- One follow-up asking the model to restate its answer as JSON.
function repair_request(self, body, req, bad, why)
  local messages = {}
  for i, m in ipairs(body.messages) do messages[i] = m end
  messages[#messages + 1] = { role = "assistant", content = bad.text }
  messages[#messages + 1] = { role = "user", content =
    "Your reply was not valid JSON (" .. why .. "). Reply again with only the JSON object." }
  local again = {}
  for k, v in pairs(req) do again[k] = v end
  again.messages, again.no_repair = messages, true
  local r = Judge.chat(self, again)
  if r.check_error then return r end -- JSON this time, but it failed the caller's check
  if r.ok then
    r.repaired, r.attempts = true, (r.attempts or 0) + (bad.attempts or 0)
    return r
  end
  r.error = "the judge's answer is not valid JSON, and neither was the repaired one: " .. tostring(r.error)
  return r
end

local function check_messages(messages)
  if type(messages) ~= "table" or #messages == 0 then
    error("judge:chat: messages must be a non-empty list of {role=, content=}", 4)
  end
  for i, m in ipairs(messages) do
    local calls = type(m) == "table" and m.role == "assistant" and type(m.tool_calls) == "table" -- content may be absent
    if type(m) ~= "table" or type(m.role) ~= "string"
       or (type(m.content) ~= "string" and type(m.content) ~= "table" and not calls) then
      error(("judge:chat: messages[%d] needs a role and a content string"):format(i), 4)
    end
  end
end

local SAMPLING = { "temperature", "top_p", "max_tokens", "seed", "presence_penalty", "frequency_penalty" }

local function chat_body(self, req)
  check_messages(req.messages)
  local body = { model = req.model or self.model, messages = req.messages, stop = req.stop }
  for _, k in ipairs(SAMPLING) do
    local v = req[k]
    if v ~= nil and type(v) ~= "number" then error(("judge:chat: %s must be a number"):format(k), 3) end
    body[k] = v
  end
  if req.json then body.response_format = { type = "json_object" } end
  if req.logprobs then
    body.logprobs = true
    body.top_logprobs = req.top_logprobs
  end
  if req.extra ~= nil then
    if type(req.extra) ~= "table" then error("judge:chat: extra must be a table", 3) end
    for k, v in pairs(req.extra) do body[k] = v end
  end
  return body
end

-- A failure that is not a dry run is marked judge_failed: the judge gave no
-- usable answer (judge/health.lua counts these).
local function marked(r)
  if not r.ok and not r.dry_run then r.judge_failed = true end
  return r
end

-- judge:chat{messages=, json=, logprobs=, top_logprobs=, temperature=, max_tokens=, seed=, sample=}
function Judge:chat(req)
  base.check_chat(req)
  return marked(request(self, "/chat/completions", chat_body(self, req), req))
end

-- judge:embed{input = string | {string...}, model=, dimensions=}
function Judge:embed(req)
  base.check_embed(req)
  local body = { model = req.model or self.embed_model, input = req.input, dimensions = req.dimensions,
                 encoding_format = "float" }
  return marked(request(self, "/embeddings", body, req))
end

-- One judge operation: its prompt sent with a JSON answer asked for, the
-- answer checked by the operation's parser before it may enter the cache.
function Judge:answer(name, op, prepared, vars)
  local st = private[self]
  st.stats.asks = st.stats.asks + 1
  local r = self:chat { messages = ops.render(op, prepared), json = true, operation = name,
                        temperature = vars.temperature or 0, max_tokens = op.max_tokens,
                        seed = vars.seed, sample = vars.sample, logprobs = vars.logprobs,
                        top_logprobs = vars.top_logprobs,
                        check = function(answer) return op.parse(answer.json, prepared) end }
  if r.check_error then
    return { ok = false, error = ("invalid judge answer for '%s': %s"):format(name, r.check_error),
             text = r.text, unmeasured = true, invalid = true, judge_failed = true }
  end
  if not r.ok then
    return { ok = false, error = r.error, status = r.status, unmeasured = true, invalid = r.invalid,
             judge_failed = r.judge_failed, refusal = r.refusal, dry_run = r.dry_run }
  end
  return { ok = true, value = r.value, reason = r.reason, cached = r.cached, judge = self.model,
           logprobs = r.logprobs }
end

-- The cache folder as an absolute path (it exists once the judge is open), for a later process elsewhere.
local function absolute(dir)
  local ok, real = pcall(sys.realpath, dir or "")
  if not ok then caught.pass_on(real) end -- refused (outside the sandbox's folders): the path as given
  return dir and (ok and real or dir)
end

-- judge:stats() -> accounts of this judge with what the engine saw: 429s,
-- the most requests in flight, the current window
function Judge:stats()
  local st = private[self]
  local out = stats_mod.snapshot(st.stats)
  local e = st.engine:stats()
  out.kind = "http"
  out.cache_dir, out.cache_mode = absolute(st.dir), self.cache_mode -- where the viewer finds a call's prompt and answer
  out.rate_limited, out.peak_in_flight, out.concurrency_window = e.rate_limited, e.peak_in_flight, e.window
  out.engine_waits = e.waits
  return out
end

-- judge:estimate() -> what a dry run counted; judge:estimate(fn) runs fn
-- with this judge in dry-run mode and returns what it would have sent.
function Judge:estimate(fn)
  local st = private[self]
  if fn == nil then return stats_mod.estimate(st.stats) end
  if type(fn) ~= "function" then error("judge:estimate: expected a function or nothing", 2) end
  local before, was = stats_mod.estimate(st.stats), st.dry_run
  st.dry_run = true
  local ok, err = pcall(fn)
  st.dry_run = was
  if not ok then error(err, 0) end
  return stats_mod.estimate(st.stats, before)
end

-- Notes a warning in this judge's accounts; true when it is new.
function Judge:warn(msg)
  return stats_mod.warn(private[self].stats, msg)
end

function Judge:close()
  local st = private[self]
  if st and st.engine then st.engine:close() end
end

function Judge:__tostring()
  return ("judge %s (http at %s)"):format(self.model, self.base_url)
end

-- Every HTTP judge opened from now on in this run (and those open now)
-- only counts what it would send.
function H.dry_run(on)
  local r = run.current()
  r.dry_run = on
  on = r:dry() -- $EVALUA_DRY_RUN stays on
  for _, st in pairs(private) do st.dry_run = on end
end

return H
