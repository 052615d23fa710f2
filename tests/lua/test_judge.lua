-- The HTTP judge against the mock OpenAI-compatible server: result shapes,
-- exact retry counts, Retry-After, fail-fast errors, the concurrency cap as
-- the server saw it, the cache, budgets, dry runs and accounting. Expected
-- numbers follow from the mock's documented rules (tests/mock/mock_openai.py:
-- usage counts words, the default reply is "mock answer: " + the words).
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()
local say = mockmod.say

local function judge(opts) return mock:judge(nil, opts) end

local function user(text) return { { role = "user", content = text } } end

local function requests() return mock:stats().requests end

TestJudge = {}
function TestJudge:setUp() mock:reset() end

function TestJudge:test_chat_result_shape()
  local r = judge():chat { messages = user("hello") }
  lu.assertEquals(r.ok, true)
  lu.assertEquals(r.text, "mock answer: hello")
  -- usage as the mock counts it: 1 prompt word, 3 answer words
  lu.assertEquals(r.usage, { prompt_tokens = 1, completion_tokens = 3, total_tokens = 4 })
  lu.assertEquals(r.model, "m")
  lu.assertEquals(r.system_fingerprint, "fp_mock")
  lu.assertEquals(r.cached, false)
  lu.assertEquals(r.attempts, 1)
  lu.assertTrue(r.latency_ms > 0)
  lu.assertEquals(requests(), 1)
end

function TestJudge:test_logprobs_are_returned()
  local r = judge():chat { messages = user("two words"), logprobs = true, top_logprobs = 2 }
  lu.assertEquals(#r.logprobs, 5) -- "mock", " answer", ":", " two", " words"
  lu.assertEquals(r.logprobs[1].token, "mock")
  lu.assertEquals(r.logprobs[1].logprob, -0.01)
  lu.assertEquals(r.logprobs[4].top_logprobs, { { token = " two", logprob = -0.04 },
                                                { token = " two_1", logprob = -2.04 } })
  local body = mock:requests()[1].body
  lu.assertEquals(body.logprobs, true)
  lu.assertEquals(body.top_logprobs, 2)
end

function TestJudge:test_json_answers_are_parsed_leniently()
  local r = judge():chat { messages = user("x"), json = true }
  lu.assertEquals(r.json, { answer = "mock answer: x" })
  lu.assertEquals(mock:requests()[1].body.response_format, { type = "json_object" })
  r = judge():chat { json = true, messages = user(say { answer = 'Sure:\n```json\n{"score": 4, "tags": ["a",],}\n```' }) }
  lu.assertEquals(r.json, { score = 4, tags = { "a" } })
  lu.assertEquals(r.repaired, nil)
end

function TestJudge:test_invalid_json_gets_one_repair_request()
  local msg = user(say { id = "repair1", answers = { "I think it is four.", '{"score": 4}' } })
  local r = judge():chat { json = true, messages = msg }
  lu.assertEquals(r.ok, true)
  lu.assertEquals(r.json, { score = 4 })
  lu.assertEquals(r.repaired, true)
  local seen = mock:requests()
  lu.assertEquals(#seen, 2)
  lu.assertEquals(seen[2].body.messages[2], { role = "assistant", content = "I think it is four." })
  lu.assertStrContains(seen[2].body.messages[3].content, "not valid JSON")
end

function TestJudge:test_invalid_json_without_repair_is_an_invalid_result()
  local r = judge { json_repair = false }:chat { json = true, messages = user(say { answer = "no json here" }) }
  lu.assertEquals(r.ok, false)
  lu.assertEquals(r.invalid, true)
  lu.assertEquals(r.unmeasured, true)
  lu.assertEquals(r.error, "the judge's answer is not valid JSON: no JSON object in the answer")
  lu.assertEquals(requests(), 1)
end

function TestJudge:test_exact_retry_counts_for_each_fault()
  -- "drop" follows a fault that closed the connection: on a reused keep-alive
  -- connection libcurl itself re-sends once (see docs/judge.md).
  local j = judge { timeout_ms = 300, max_retries = 6 }
  local r = j:chat { messages = user(say { faults = { "429", "500", "timeout", "drop", "truncate", "503" } }) }
  lu.assertEquals(r.ok, true, r.error)
  lu.assertEquals(r.attempts, 7)
  lu.assertEquals(requests(), 7)
  local s = j:stats()
  lu.assertEquals({ s.requests, s.attempts, s.retries, s.failures, s.rate_limited }, { 1, 7, 6, 0, 1 })
  lu.assertEquals(s.concurrency_window, 16 / 2 + 1 / 8) -- halved by the 429, then + 1/window for the success
end

function TestJudge:test_a_malformed_body_is_retried()
  local r = judge():chat { messages = user(say { faults = { "malformed", "malformed" } }) }
  lu.assertEquals(r.ok, true)
  lu.assertEquals(r.attempts, 3)
  lu.assertEquals(requests(), 3)
end

function TestJudge:test_retries_run_out_with_an_explicit_failure()
  local r = judge { max_retries = 2 }:chat { messages = user(say { faults = { "500", "500", "500", "500" } }) }
  lu.assertEquals(r, { ok = false, status = 500, attempts = 3, unmeasured = true, judge_failed = true,
                       error = "gave up after 3 attempts: HTTP 500: mock error 500" })
  lu.assertEquals(requests(), 3)
  r = judge { max_retries = 1, timeout_ms = 200 }:chat { messages = user(say { faults = { "timeout", "timeout" } }) }
  lu.assertEquals(r.error, "gave up after 2 attempts: timed out after 200 ms")
  lu.assertEquals(r.status, nil)
end

function TestJudge:test_client_errors_fail_fast_with_the_server_message()
  for _, code in ipairs { "400", "401", "403", "404" } do
    mock:reset()
    local r = judge():chat { messages = user(say { faults = { code }, message = "nope " .. code }) }
    lu.assertEquals(r, { ok = false, status = tonumber(code), attempts = 1, unmeasured = true, judge_failed = true,
                         error = "HTTP " .. code .. ": nope " .. code
                           .. (code == "401" and " (no API key was sent: set $OPENAI_API_KEY or name another variable with api_key_env)" or "") })
    lu.assertEquals(requests(), 1)
  end
  mock:reset()
  local r = judge():chat { messages = user(say { faults = { "quota" } }) }
  lu.assertEquals(r.error, "HTTP 429: You exceeded your current quota, please check your plan and billing details.")
  lu.assertEquals(r.attempts, 1)
  lu.assertEquals(requests(), 1)
end

-- The gap between the 429 and the retry, as the server saw the arrivals.
local function retry_gap(directive)
  local r = judge():chat { messages = user(say(directive)) }
  lu.assertEquals(r.ok, true)
  lu.assertEquals(r.attempts, 2)
  local seen = mock:requests()
  return seen[2].t - seen[1].t
end

function TestJudge:test_retry_after_in_seconds_is_honoured()
  local gap = retry_gap { faults = { "429" }, retry_after = "1" }
  lu.assertTrue(gap >= 0.99 and gap < 2, "gap " .. gap) -- backoff alone would be under 5 ms
end

function TestJudge:test_retry_after_as_an_http_date_is_honoured()
  -- The date has whole seconds: 1.5 s ahead, truncated, is 0.5 to 1.5 s
  -- away (backoff alone would be under 5 ms).
  local gap = retry_gap { faults = { "429" }, retry_after_date = 1.5 }
  lu.assertTrue(gap >= 0.45 and gap < 2.5, "gap " .. gap)
end

function TestJudge:test_a_retry_after_beyond_max_wait_fails_at_once()
  local r = judge { max_wait_ms = 5000 }:chat { messages = user(say { faults = { "429" }, retry_after = "3600" }) }
  lu.assertEquals(r.ok, false)
  lu.assertEquals(r.attempts, 1)
  lu.assertEquals(r.error, "HTTP 429; the server asked to wait 3600 s, more than max_wait_ms (5000) (Rate limit reached for requests)")
end

function TestJudge:test_the_concurrency_cap_holds_at_the_server()
  local j = judge { concurrency = 4 }
  local items = {}
  for i = 1, 16 do items[i] = i end
  local t0 = ev.sys.monotonic()
  local out = ev.map(items, function(i)
    return j:chat { messages = user(say { latency_ms = 100 } .. " cap " .. i) }.ok
  end, { concurrency = 32 })
  local wall = ev.sys.monotonic() - t0
  for i = 1, 16 do lu.assertEquals(out[i], true) end
  lu.assertEquals(mock:stats().peak_in_flight, 4)
  lu.assertEquals(j:stats().peak_in_flight, 4)
  lu.assertEquals(j:stats().concurrency_window, 4)
  lu.assertTrue(wall >= 0.4 and wall < 1.2, "wall " .. wall) -- 16 / 4 = 4 rounds of 100 ms
end

function TestJudge:test_the_cache_avoids_every_repeat()
  local dir = h.tmpdir()
  local function run(mode, sample)
    local j = judge { cache = dir, cache_mode = mode }
    local items = {}
    for i = 1, 10 do items[i] = i end
    return ev.map(items, function(i)
      return j:chat { messages = user("cached question " .. i), sample = sample }
    end), j
  end
  local first = run()
  lu.assertEquals(requests(), 10)
  lu.assertEquals(first[3].cached, false)
  local second, j2 = run()
  lu.assertEquals(requests(), 10) -- nothing sent again
  for i = 1, 10 do
    lu.assertEquals(second[i].cached, true)
    lu.assertEquals(second[i].text, first[i].text)
    lu.assertEquals(second[i].usage, first[i].usage)
  end
  local s = j2:stats()
  lu.assertEquals({ s.requests, s.cache_hits, s.prompt_tokens }, { 0, 10, 0 })
  run(nil, 1) -- a second sample is a different request
  lu.assertEquals(requests(), 20)
  run("off")
  lu.assertEquals(requests(), 30)
  run("refresh")
  lu.assertEquals(requests(), 40)
  run("ro", 2) -- reads, never writes: sample 2 stays uncached
  run("ro", 2)
  lu.assertEquals(requests(), 60)
  h.sh("rm -rf " .. dir)
end

function TestJudge:test_identical_requests_in_flight_are_sent_once()
  local dir = h.tmpdir()
  local j = judge { cache = dir }
  local items = {}
  for i = 1, 10 do items[i] = i end
  local msg = user(say { latency_ms = 100 } .. " the same question")
  local out = ev.map(items, function() return j:chat { messages = msg } end)
  lu.assertEquals(requests(), 1)
  local cached = 0
  for i = 1, 10 do
    lu.assertEquals(out[i].text, out[1].text)
    if out[i].cached then cached = cached + 1 end
  end
  lu.assertEquals(cached, 9)
  lu.assertEquals({ j:stats().requests, j:stats().cache_hits }, { 1, 9 })
  -- with the cache off, every call goes to the server
  local off = judge { cache = false }
  ev.map(items, function() return off:chat { messages = msg } end)
  lu.assertEquals(requests(), 11)
  h.sh("rm -rf " .. dir)
end

function TestJudge:test_failures_are_not_cached()
  local dir = h.tmpdir()
  local msg = user(say { faults = { "400" } })
  lu.assertEquals(judge { cache = dir }:chat { messages = msg }.ok, false)
  lu.assertEquals(judge { cache = dir }:chat { messages = msg }.ok, true) -- asked again
  lu.assertEquals(requests(), 2)
  h.sh("rm -rf " .. dir)
end

function TestJudge:test_budget_exhaustion_leaves_the_rest_unmeasured()
  -- Each request costs 6 tokens at the mock ("item N": 2 + "mock answer: item N": 4).
  local j = judge { budget = { tokens = 20 } }
  local items = {}
  for i = 1, 10 do items[i] = i end
  local out, info = ev.map(items, function(i) return j:chat { messages = user("item " .. i) } end,
                           { concurrency = 1 })
  lu.assertEquals(requests(), 4) -- 0, 6, 12, 18 < 20 were allowed; 24 is not
  for i = 1, 4 do lu.assertEquals(out[i].ok, true) end
  for i = 5, 10 do
    lu.assertEquals(out[i], { ok = false, unmeasured = true, budget_exhausted = true, judge_failed = true,
                              error = "budget exhausted: 24 of 20 tokens used or reserved" })
  end
  lu.assertEquals(info.failed, 6)
  lu.assertEquals(j:stats().budget_refused, 6)
end

function TestJudge:test_a_cost_budget_needs_a_price_and_counts_cost()
  lu.assertErrorMsgContains("budget.cost needs a price for model 'm'", judge, { budget = { cost = 1 } })
  local j = judge { price = { prompt = 1000, completion = 2000 }, budget = { cost = 0.02 } }
  local r1 = j:chat { messages = user("one") }   -- 1 + 3 tokens: 0.001 + 0.006
  local r2 = j:chat { messages = user("two") }
  local r3 = j:chat { messages = user("three") }
  lu.assertEquals({ r1.ok, r2.ok, r3.ok }, { true, true, true })
  local r4 = j:chat { messages = user("four") }
  lu.assertEquals(r4.error, "budget exhausted: $0.0210 of $0.0200 used or reserved")
  lu.assertAlmostEquals(j:stats().cost, 0.021, 1e-12)
end

function TestJudge:test_dry_run_sends_nothing_and_estimates()
  local j = judge { dry_run = true }
  local r = j:chat { messages = user("dry item"), max_tokens = 10 }
  lu.assertEquals(r, { ok = false, error = "dry run: request not sent", unmeasured = true, dry_run = true })
  -- "dry item": 8 ASCII bytes = 2 tokens, + 4 per message + 3 = 9; completion = max_tokens
  lu.assertEquals(j:estimate(), { requests = 1, prompt_tokens = 9, completion_tokens = 10, total_tokens = 19 })
  lu.assertEquals(requests(), 0)
end

function TestJudge:test_estimate_runs_a_function_without_sending()
  local j = judge { price = { prompt = 1e6, completion = 0 } }
  local e = j:estimate(function()
    ev.map({ 1, 2, 3 }, function(i) return j:chat { messages = user("abcd" .. i) } end)
  end)
  -- "abcdN": 5 bytes = 2 tokens + 7 = 9 each; completion 256 each (no max_tokens)
  lu.assertEquals(e, { requests = 3, prompt_tokens = 27, completion_tokens = 768, total_tokens = 795, cost = 27 })
  lu.assertEquals(requests(), 0)
  lu.assertEquals(j:chat { messages = user("abcd1") }.ok, true) -- a live judge again
end

function TestJudge:test_stats_count_tokens_cost_model_and_fingerprint()
  local j = judge { price = { prompt = 1, completion = 2 } }
  j:chat { messages = user("a b c") }         -- 3 + 5
  j:chat { messages = user(say { faults = { "500" } } .. " d") }
  local s = j:stats()
  -- the directive counts as words too: see the request the server saw
  lu.assertEquals(s.requests, 2)
  lu.assertEquals(s.attempts, 3)
  lu.assertEquals(s.retries, 1)
  lu.assertEquals(s.model, "m")
  lu.assertEquals(s.system_fingerprint, "fp_mock")
  lu.assertEquals(s.system_fingerprints, { "fp_mock" })
  lu.assertEquals(s.total_tokens, s.prompt_tokens + s.completion_tokens)
  lu.assertAlmostEquals(s.cost, (s.prompt_tokens * 1 + s.completion_tokens * 2) / 1e6, 1e-15)
  local run = ev.judge.stats()
  lu.assertTrue(#run.judges >= 1)
  lu.assertTrue(run.requests >= 2)
end

function TestJudge:test_embeddings()
  local j = judge()
  local r = j:embed { input = { "alpha beta", "gamma" } }
  lu.assertEquals(r.ok, true)
  lu.assertEquals(#r.embeddings, 2)
  lu.assertEquals(#r.embeddings[1], 8)
  lu.assertEquals(r.usage.prompt_tokens, 3)
  local one = j:embed { input = "alpha beta" }
  lu.assertEquals(one.embedding, r.embeddings[1])
  lu.assertEquals(mock:requests()[1].path, "/v1/embeddings")
end

function TestJudge:test_rpm_spaces_requests()
  local j = judge { rpm = 600 } -- one every 100 ms
  ev.map({ 1, 2, 3, 4 }, function(i) return j:chat { messages = user("rpm " .. i) } end)
  local seen = mock:requests()
  lu.assertEquals(#seen, 4)
  -- arrival times carry the server's scheduling jitter, which does not add
  -- up: the whole span shows the pacing (paced 0.3 s, less what the first
  -- request's new connection costs over the last one's: under a sanitizer
  -- on a loaded machine, tens of ms; a burst would be a few ms), each gap
  -- only that none is a burst
  lu.assertTrue(seen[4].t - seen[1].t >= 0.2, "span " .. (seen[4].t - seen[1].t))
  for i = 2, 4 do lu.assertTrue(seen[i].t - seen[i - 1].t >= 0.05, "gap " .. (seen[i].t - seen[i - 1].t)) end
end

function TestJudge:test_a_dead_server_is_an_explicit_failure()
  local j = ev.judge.open { base_url = "http://127.0.0.1:1/v1", model = "m", cache = false,
                            max_retries = 2, backoff_ms = 1, api_key_env = false }
  local r = j:chat { messages = user("anyone?") }
  lu.assertEquals(r.ok, false)
  lu.assertEquals(r.attempts, 3)
  lu.assertStrContains(r.error, "gave up after 3 attempts: connection failed: ")
end

function TestJudge:test_bad_options_and_calls_are_errors_that_name_them()
  lu.assertErrorMsgContains("unknown option 'concurency'", judge, { concurency = 4 })
  lu.assertErrorMsgContains("'api_key' is not accepted", judge, { api_key = "sk-x" })
  lu.assertErrorMsgContains("cache_mode must be rw, ro, off or refresh", judge, { cache_mode = "yes" })
  lu.assertErrorMsgContains("judge option 'concurrency' must be an integer from 1 to 10000 (got 0)", judge, { concurrency = 0 })
  -- a double past int's range was cast first and then refused as "at least 1" (issue 26, item 3)
  lu.assertErrorMsgContains("judge option 'concurrency' must be an integer from 1 to 10000 (got 10000000000.0)", judge,
                            { concurrency = 1e10 })
  lu.assertErrorMsgContains("judge option 'timeout_ms' must be a number from 1 to 2147483647 (got inf)", judge,
                            { timeout_ms = math.huge })
  lu.assertErrorMsgContains("base_url must start with http:// or https://", judge, { base_url = "ftp://x" })
  local j = judge()
  lu.assertErrorMsgContains("messages[1] needs a role and a content string", j.chat, j, { messages = { {} } })
  lu.assertErrorMsgContains("temperature must be a number", j.chat, j, { messages = user("x"), temperature = "hot" })
  lu.assertErrorMsgContains("judge:embed: unknown field 'imput'", j.embed, j, { imput = "x" })
  lu.assertErrorMsgContains("judge:chat: check must be a function", j.chat, j, { messages = user("x"), check = 1 })
  lu.assertErrorMsgContains("judge engine: unknown option 'concurrancy'", require("evalua._client").engine,
    { base_url = mock.url, concurrancy = 3 })
end

function TestJudge:test_calls_inside_a_sort_comparator_block_instead_of_yielding()
  local j = judge()
  local out = ev.map({ 1 }, function()
    local t = { "b", "a" }
    table.sort(t, function(x, y) return j:chat { messages = user(x .. y) }.ok and x < y end)
    return t[1]
  end)
  lu.assertEquals(out[1], "a")
end

local code = lu.LuaUnit.run()
mock:stop()
os.exit(code, true)
