-- The judge against servers that behave like real ones (issue 12): answers
-- of the wrong shape, non-finite numbers, shared requests that fail, no
-- usage, idle keep-alive closes, 413, SSE, x-ratelimit quotas, JSON in
-- prose, error bodies of other shapes. Each ends every item measured or
-- unmeasured with a reason, and nothing wrong is cached.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()
local say = mockmod.say

local function judge(opts) return mock:judge(nil, opts) end
local function user(text) return { { role = "user", content = text } } end
local function requests() return mock:stats().requests end

-- The entries on disk, once the cache's writer thread has caught up.
local function entries(dir)
  require("evalua.client.cache").collect(true)
  local p = io.popen(("find %s -name '*.json' | wc -l"):format(dir))
  local n = tonumber(p:read("a"))
  p:close()
  return n
end

-- A list of n items, f(i) applied to each through ev.map.
local function over(n, f, conc)
  local items = {}
  for i = 1, n do items[i] = i end
  return ev.map(items, f, { concurrency = conc or 8 })
end

TestServers = {}
function TestServers:setUp() mock:reset(); mock:config {} end
function TestServers:tearDown() mock:config {} end

-- Defect 3: {"relevance": 7} was stored; every rerun replayed it and a dry
-- run counted 0 requests. Now nothing is stored and the rerun asks again.
function TestServers:test_an_answer_that_fails_its_check_is_not_cached()
  local dir = h.tmpdir()
  local vars = { question = "q " .. say { answer = '{"relevance": 7, "reason": "x"}' }, text = "t" }
  local r = judge { cache = dir }:ask("relevance", vars)
  lu.assertEquals(r, { ok = false, unmeasured = true, invalid = true, judge_failed = true,
                       text = '{"relevance": 7, "reason": "x"}',
                       error = "invalid judge answer for 'relevance': expected relevance as a number from 0 to 1" })
  lu.assertEquals(entries(dir), 0)
  local j = judge { cache = dir }
  lu.assertEquals(j:ask("relevance", vars).invalid, true)
  lu.assertEquals(requests(), 2) -- asked again, not replayed
  lu.assertEquals({ j:stats().invalid, j:stats().cache_hits }, { 1, 0 })
  local dry = judge { cache = dir, dry_run = true }
  dry:ask("relevance", vars)
  lu.assertEquals(dry:estimate().requests, 1)
  -- a G-Eval score of a {pass, score, reason} mock is not stored either
  local m = ev.geval { name = "g", steps = { "Judge." }, logprobs = false }
  local row = { query = "q", answer = "a " .. say { answer = '{"pass": true, "score": 0.9, "reason": "ok"}' } }
  lu.assertEquals(m:score(row, judge { cache = dir }),
    { unmeasured = true, judge_failed = true,
      reason = "invalid judge answer for 'geval_score': expected score as a whole number" })
  lu.assertEquals(entries(dir), 0)
  h.sh("rm -rf " .. dir)
end

function TestServers:test_a_cached_entry_that_fails_the_check_is_asked_again()
  local dir = h.tmpdir()
  local msg = user(say { answer = '{"score": 7}' } .. " stale")
  lu.assertEquals(judge { cache = dir }:chat { messages = msg, json = true }.json, { score = 7 })
  lu.assertEquals(entries(dir), 1)
  local check = function(r) if r.json.score <= 5 then return r.json.score end return nil, "score above 5" end
  local r = judge { cache = dir }:chat { messages = msg, json = true, check = check }
  lu.assertEquals({ r.ok, r.invalid, r.error, r.cached }, { false, true, "invalid judge answer: score above 5", false })
  lu.assertEquals(requests(), 2)
  r = judge { cache = dir }:chat { messages = user(say { answer = '{"score": 4}' }), json = true, check = check }
  lu.assertEquals({ r.ok, r.value }, { true, 4 })
  lu.assertErrorMsgContains("judge:chat: unknown field 'temprature'", function()
    judge():chat { messages = msg, temprature = 0 }
  end)
  h.sh("rm -rf " .. dir)
end

-- Defect 4: 1e400 decoded to infinity and passed as a score.
function TestServers:test_a_non_finite_number_is_invalid_never_a_score()
  lu.assertEquals({ ev.judge.json.lenient("[1e400]") }, { nil, "the answer holds a number that is not finite" })
  lu.assertEquals({ ev.judge.json.lenient('{"score": -1e999}') }, { nil, "the answer holds a number that is not finite" })
  ev.judge.register_op("anynumber", { prompt = { system = "Give a score.", user = "{{x}}" },
    parse = function(a) return type(a) == "table" and tonumber(a.score) or nil, "no score" end })
  local dir = h.tmpdir()
  local r = judge { cache = dir, json_repair = false }:ask("anynumber", { x = say { answer = '{"score": 1e400}' } })
  lu.assertEquals(r, { ok = false, unmeasured = true, invalid = true, judge_failed = true,
                       error = "the judge's answer is not valid JSON: the answer holds a number that is not finite" })
  lu.assertEquals(entries(dir), 0)
  h.sh("rm -rf " .. dir)
end

-- Defect 5: against a server answering 500, G-Eval asked for its steps
-- once per row (12 rows: 13 requests, 106 s). Now once, and every row is
-- unmeasured with that reason.
function TestServers:test_a_failed_shared_request_is_asked_once_for_all_rows()
  local m = ev.geval { name = "g", criteria = "Useful. " .. say { faults = { "500", "500", "500", "500" } } }
  local j = judge { max_retries = 1 }
  local rows = {}
  for i = 1, 12 do rows[i] = { query = "q" .. i, answer = "a" } end
  local out = ev.map(rows, function(row) return m:score(row, j) end, { concurrency = 6 })
  lu.assertEquals(requests(), 2) -- one logical request, two attempts
  local reason = "steps: gave up after 2 attempts: HTTP 500: mock error 500"
  for i = 1, 12 do lu.assertEquals(out[i], { unmeasured = true, judge_failed = true, reason = reason }) end
  lu.assertEquals({ j:stats().requests, j:stats().failures }, { 1, 1 })
end

-- Defect 6 and the no-usage mode: 20 of 20 requests went out under a
-- budget of 10 tokens. The tokens are estimated and marked so.
function TestServers:test_a_server_without_usage_gets_estimated_tokens_and_the_budget_holds()
  mock:config { no_usage = true }
  local dir = h.tmpdir()
  local j = judge { cache = dir, budget = { tokens = 10 } }
  local out = over(20, function(i) return j:chat { messages = user("budget item " .. i) } end, 1)
  lu.assertEquals(requests(), 1)
  lu.assertEquals(out[1].ok, true)
  -- 3 + 4 + ceil(13 / 4) prompt; "mock answer: budget item 1" is 26 bytes
  lu.assertEquals(out[1].usage, { prompt_tokens = 11, completion_tokens = 7, total_tokens = 18, estimated = true })
  for i = 2, 20 do
    lu.assertEquals(out[i], { ok = false, unmeasured = true, budget_exhausted = true, judge_failed = true,
                              error = "budget exhausted: 18 of 10 tokens used or reserved" })
  end
  local s = j:stats()
  lu.assertEquals({ s.total_tokens, s.estimated_requests, s.tokens_estimated, s.budget_refused }, { 18, 1, true, 19 })
  lu.assertEquals(s.system_fingerprint, nil)
  lu.assertEquals(entries(dir), 1)
  h.sh("rm -rf " .. dir)
end

-- ... and the report says its token figure is an estimate.
function TestServers:test_a_report_marks_estimated_tokens()
  mock:config { no_usage = true }
  local dir = h.tmpdir()
  local r = h.run(("OPENAI_BASE_URL=%s EVALUA_MODEL=mock-judge EVALUA_CACHE_DIR=%s/cache %s run "
    .. "scripts/rag_report.lua --judge openai --quiet --out %s/out --format md,json"):format(mock.url, dir, h.bin, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, ".*judge: mock%-judge; 1228 requests, 572 cached, 0 retries, 0 failed, 0 invalid answers, "
    .. "%d+ tokens %(estimated%)\n.*")
  local meta = require("cjson").decode(h.read(dir .. "/out/rag_report.json")).meta.judge
  -- 1,095 chat answers without usage; the 133 embedding answers carry theirs
  lu.assertEquals({ meta.tokens_estimated, meta.estimated_requests }, { true, 1095 })
  h.sh("rm -rf " .. dir)
end

function TestServers:test_idle_keep_alive_connections_closed_by_the_server()
  mock:config { idle_close_ms = 150 }
  local j = judge()
  for i = 1, 3 do
    local r = j:chat { messages = user("idle " .. i) }
    lu.assertEquals({ r.ok, r.attempts }, { true, 1 })
    ev.sys.sleep(0.3)
  end
  lu.assertEquals(requests(), 3)
end

function TestServers:test_a_body_over_the_servers_limit_fails_at_once_with_its_reason()
  mock:config { max_request_bytes = 100000 }
  local dir = h.tmpdir()
  local r = judge { cache = dir }:chat { messages = user(("long "):rep(25000)) }
  lu.assertEquals(r, { ok = false, unmeasured = true, status = 413, attempts = 1, judge_failed = true,
                       error = "HTTP 413: request body too large (125055 bytes)" })
  lu.assertEquals(entries(dir), 0)
  h.sh("rm -rf " .. dir)
end

function TestServers:test_server_sent_events_are_read_as_one_answer()
  mock:config { sse = true }
  local dir = h.tmpdir()
  local r = judge { cache = dir }:chat { messages = user("stream me please"), extra = { stream = true } }
  lu.assertEquals({ r.ok, r.text, r.finish_reason, r.model }, { true, "mock answer: stream me please", "stop", "m" })
  lu.assertEquals(r.usage.estimated, true)
  lu.assertEquals(entries(dir), 1)
  r = judge { cache = dir }:chat { messages = user("stream me please"), extra = { stream = true } }
  lu.assertEquals({ r.cached, r.text }, { true, "mock answer: stream me please" })
  h.sh("rm -rf " .. dir)
end

function TestServers:test_json_in_prose_or_fences_is_measured()
  for _, wrap in ipairs { "prose", "fence" } do
    mock:config { wrap = wrap }
    local dir = h.tmpdir()
    local j = judge { cache = dir }
    local out = over(6, function(i)
      return j:ask("relevance", { question = "what is item " .. i, text = "item " .. i .. " is a thing" })
    end)
    for i = 1, 6 do lu.assertEquals({ out[i].ok, out[i].value }, { true, 1 }, wrap) end
    lu.assertEquals({ requests(), entries(dir) }, { 6, 6 }, wrap)
    mock:reset()
    h.sh("rm -rf " .. dir)
  end
end

-- A quota in x-ratelimit-* headers: starts are paced from them, so the
-- server rarely needs to answer 429 (a burst of 16 before the first answer
-- is the most it can see).
function TestServers:test_a_quota_server_is_paced_by_its_headers()
  mock:config { quota = { requests = 8, window_s = 0.5 } }
  local j = judge { concurrency = 4, max_retries = 8 }
  local out = over(24, function(i) return j:chat { messages = user("quota " .. i) } end)
  for i = 1, 24 do lu.assertEquals(out[i].ok, true) end
  local s = mock:stats()
  lu.assertEquals(s.statuses["200"], 24)
  lu.assertEquals(s.statuses["429"], nil)
  lu.assertEquals(j:stats().rate_limited, 0)
end

-- A token quota ("1.2s"-style resets): requests count prompt + max_tokens
-- against it, as OpenAI does, so the pacing errs on the safe side.
function TestServers:test_a_token_quota_is_paced_by_its_headers()
  mock:config { quota = { tokens = 400, window_s = 1.2 } }
  local j = judge { concurrency = 4, max_retries = 8 }
  local out = over(24, function(i) return j:chat { messages = user("token quota " .. i), max_tokens = 10 } end)
  for i = 1, 24 do lu.assertEquals(out[i].ok, true) end
  lu.assertEquals(mock:stats().statuses, { ["200"] = 24 })
  lu.assertEquals(j:stats().rate_limited, 0)
end

-- Defect 9: the server's own words stay in the reason, whatever the shape.
function TestServers:test_error_bodies_of_other_servers_keep_their_message()
  local function reason(shape)
    return judge():chat { messages = user(say { faults = { "404" }, error_shape = shape,
                                                 message = "Cannot POST /v1/embeddings" }) }.error
  end
  for _, shape in ipairs { "string", "detail", "html" } do
    lu.assertEquals(reason(shape), "HTTP 404: Cannot POST /v1/embeddings", shape)
  end
end

-- Issue 13, item 15: a 20 MB answer cost 700 MB of memory. Answers are
-- bounded (max_response_bytes, 8 MiB by default) with a clear error.
function TestServers:test_a_huge_answer_is_refused_with_a_clear_error()
  local r = judge():chat { messages = user(say { answer_bytes = 20 * 1024 * 1024 }) }
  lu.assertEquals(r, { ok = false, unmeasured = true, attempts = 1, status = 200, judge_failed = true,
                       error = "the server's answer is larger than max_response_bytes (8388608 bytes)" })
  r = judge { max_response_bytes = 32 * 1024 * 1024 }:chat { messages = user(say { answer_bytes = 10 * 1024 * 1024 }) }
  lu.assertEquals({ r.ok, #r.text }, { true, 10 * 1024 * 1024 })
end

local code = lu.LuaUnit.run()
mock:stop()
os.exit(code, true)
