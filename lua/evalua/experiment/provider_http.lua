-- Requests of the http and exec providers: the judge's C engine (evalua._client)
-- for concurrency and retries on 429/5xx/timeouts, its content-addressed
-- cache for answers, dry runs, and identical requests in flight sent once.
-- Results are {ok=, body=, latency_ms=, cached=, attempts=} or
-- {ok = false, error=}; the provider reads the body.
local C = require "evalua._client"
local json = require "evalua.core.json"
local cache = require "evalua.client.cache"
local sched = require "evalua.client.sched"
local sys = require "evalua._sys"
local run = require "evalua.core.run"

local M = {}

local VERSION = "evalua-provider-1"


function M.new_stats()
  return { requests = 0, cache_hits = 0, failures = 0, dry_run = 0, latency_ms = 0, cache_errors = 0 }
end

-- cache(dir | false | nil) -> the folder answers are kept in, or nil
function M.cache_dir(dir, what)
  if dir == false then return nil end
  if dir ~= nil and type(dir) ~= "string" then error(what .. ": cache must be a folder name or false", 4) end
  dir = dir or C.env().cache_dir or C.default_cache_dir()
  local ok, err = pcall(cache.open, dir, true)
  if not ok then error(what .. ": cache: " .. tostring(err), 4) end
  return dir
end

-- The store of sender or runner x's cache folder (cache.open keeps one per folder).
local function store_of(x)
  x.cache = x.cache or cache.open(x.dir, true)
  return x.cache
end

function M.key(kind, where, body)
  return C.cache_key(("%s\n%s\n%s\n%s"):format(VERSION, kind, where, body))
end

-- An entry is a head line with what the answer took when it was asked,
-- then the body as it came. A body never starts with '#' (only JSON is
-- stored), so an entry of an older version, the body alone, reads as
-- such, with its latency unknown.
local HEAD = "#evalua-provider-entry 2 "

local function entry(body, latency_ms)
  return HEAD .. json.encode { latency_ms = latency_ms } .. "\n" .. body
end

-- cached(x, key) -> body, {latency_ms =} | nil, from sender or runner x's cache
function M.cached(x, key)
  if not x.dir then return nil end
  local data = store_of(x):get(key)
  if not data then return nil end
  if data:sub(1, #HEAD) ~= HEAD then return data, {} end
  local nl = data:find("\n", 1, true)
  if not nl then return nil end
  local meta = json.decode(data:sub(#HEAD + 1, nl - 1))
  return data:sub(nl + 1), type(meta) == "table" and meta or {}
end

-- A cache write that failed is counted and the first kept and said on
-- stderr: the run goes on without the cache rather than stopping.
local function cache_trouble(x, err)
  local s = x.stats
  s.cache_errors = s.cache_errors + 1
  if not s.cache_error then
    s.cache_error = err
    io.stderr:write("evalua: provider cache: ", err,
                    " (the run goes on; later cache errors are counted in provider:stats())\n")
  end
end

-- Queues an answer of sender or runner x for its cache.
function M.store(x, key, body, latency_ms)
  if not x.dir then return end
  x.store = x.store or cache.writer(store_of(x), function(err) cache_trouble(x, err) end)
  x.store(key, entry(body, latency_ms))
end

-- ---- the HTTP sender ----------------------------------------------------------

-- split("http://h:8000/a/b?x=1") -> "http://h:8000", "/a/b?x=1"
local function split_url(url)
  local origin, path = url:match("^(https?://[^/]+)(.*)$")
  if not origin then return nil end
  if path == "" then path = "/" end
  return origin, path
end

-- open{url=, headers=, concurrency=, timeout_ms=, max_retries=, cache=, dry_run=}
function M.open(o, what)
  local origin, path = split_url(o.url)
  if not origin then error(("%s: url must be http://host[:port]/path, got '%s'"):format(what, o.url), 4) end
  -- the whole URL is the engine's base, so under --sandbox the operator
  -- allows exactly it ($EVALUA_JUDGE_URLS), not its host
  local ok, engine = pcall(C.engine, {
    base_url = o.url, api_key_env = false, headers = o.headers, concurrency = o.concurrency or 16,
    timeout_ms = o.timeout_ms, max_retries = o.max_retries, backoff_ms = o.backoff_ms,
    max_backoff_ms = o.max_backoff_ms,
  })
  if not ok then error(what .. ": " .. tostring(engine):gsub("^judge: ", ""), 4) end
  return { engine = engine, url = origin .. path, dir = M.cache_dir(o.cache, what),
           dry_run = o.dry_run, inflight = {}, stats = M.new_stats() }
end

local function from_engine(d)
  if d.error then
    local msg = d.error
    if d.retryable and d.attempts > 1 then msg = ("gave up after %d attempts: %s"):format(d.attempts, msg) end
    return { ok = false, error = msg, status = d.status ~= 0 and d.status or nil }
  end
  return { ok = true, body = d.body, latency_ms = d.latency_ms, attempts = d.attempts, cached = false }
end

-- post(sender, body) -> result; the answer is stored once valid(body) holds.
-- A valid cached answer for key, counted as a hit; nil otherwise.
local function cache_hit(x, key, valid)
  local hit, meta = M.cached(x, key)
  if not (hit and valid(hit)) then return nil end
  x.stats.cache_hits = x.stats.cache_hits + 1
  local ms = meta.latency_ms
  return { ok = true, body = hit, latency_ms = type(ms) == "number" and ms or nil, attempts = 0, cached = true }
end

-- Under a dry run, the refusal (what = what was not done), counted; nil otherwise.
local function dry_run(x, what)
  if not (x.dry_run or run.current():dry()) then return nil end -- ev.provider.dry_run, $EVALUA_DRY_RUN
  x.stats.dry_run = x.stats.dry_run + 1
  return { ok = false, error = "dry run: " .. what, dry_run = true }
end

function M.post(s, body, valid)
  local key = M.key("http", s.url, body)
  local hit = cache_hit(s, key, valid)
  if hit then return hit end
  local lead = s.inflight[key]
  if lead then
    local r = from_engine(sched.await(s.engine, lead))
    if r.ok then r.cached, r.shared = true, true; s.stats.cache_hits = s.stats.cache_hits + 1; return r end
  end
  local refused = dry_run(s, "request not sent")
  if refused then return refused end
  s.stats.requests = s.stats.requests + 1
  local id = s.engine:submit("", body)
  s.inflight[key] = id
  local r = from_engine(sched.await(s.engine, id))
  s.inflight[key] = nil
  if not r.ok then s.stats.failures = s.stats.failures + 1; return r end
  s.stats.latency_ms = s.stats.latency_ms + r.latency_ms
  if valid(r.body) then M.store(s, key, r.body, r.latency_ms) end
  return r
end

-- ---- the exec runner ---------------------------------------------------------

local function read_all(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end

-- run(runner, input) -> result: cmd with input on stdin, its stdout as body.
function M.run(x, input, valid)
  local key = M.key("exec", x.cmd, input)
  local early = cache_hit(x, key, valid) or dry_run(x, "command not run")
  if early then return early end
  x.stats.requests = x.stats.requests + 1
  local inp, err = os.tmpname(), os.tmpname()
  local f = assert(io.open(inp, "wb"))
  f:write(input)
  f:close()
  local start = sys.monotonic()
  local p = assert(io.popen(("(%s\n) < %s 2> %s"):format(x.cmd, inp, err), "r"))
  local out = p:read("a")
  local ok, how, code = p:close()
  local latency = (sys.monotonic() - start) * 1000
  local stderr = read_all(err):match("^%s*(.-)%s*$")
  os.remove(inp)
  os.remove(err)
  if not ok then
    x.stats.failures = x.stats.failures + 1
    return { ok = false, error = ("'%s' %s %s%s"):format(x.cmd, how == "exit" and "exited with status" or "killed by signal",
      tostring(code), stderr ~= "" and (": " .. stderr:sub(1, 300)) or "") }
  end
  x.stats.latency_ms = x.stats.latency_ms + latency
  if valid(out) then M.store(x, key, out, latency) end
  return { ok = true, body = out, latency_ms = latency, attempts = 1, cached = false }
end

return M
