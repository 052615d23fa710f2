-- The engine's retry waits against the mock server (host/client/engine.c,
-- docs/judge.md "Backoff" and "Retry-After"): a Retry-After is waited out
-- exactly as asked, at the end of a run too; a 500 without one draws its
-- backoff from the first retry's range at the end of a run (nothing queued,
-- a place free for every waiting retry) and from the full range while other
-- requests wait for a place; ev.map lets items waiting out a Retry-After
-- step aside, up to 4 per place. The engine's `wait_ms` is the sum of the
-- waits it drew or was told; the draws quoted below are the engine's
-- generator (xorshift64, host/client/engine.c uniform01) computed by hand
-- for the seed: seed 4 gives 0.2689, 0.6949, 0.4834, 0.3839 ...
local lu = require "luaunit"
local ev = require "evalua"
local C = require "evalua._client"
local cjson = require "cjson"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()
local say = mockmod.say

local function engine(opts)
  local o = { base_url = mock.url, api_key_env = false }
  for k, v in pairs(opts or {}) do o[k] = v end
  return C.engine(o)
end

local function body(directive, text)
  return cjson.encode { model = "m", messages = { { role = "user", content = say(directive) .. (text or "") } } }
end

-- Drives e until every id in ids has finished; their results by id.
local function wait_all(e, ids)
  local out, left = {}, #ids
  while left > 0 do
    for _, d in ipairs(e:poll(1000)) do
      out[d.id], left = d, left - 1
    end
  end
  return out
end

TestClientRetry = {}
function TestClientRetry:setUp() mock:reset(); mock:config {} end

function TestClientRetry:test_a_retry_after_is_waited_out_exactly_at_the_end_of_a_run()
  local e = engine { backoff_ms = 50 }
  -- alone in the engine: the end of a run, where a 500's backoff is capped
  local a = e:submit("/chat/completions", body { faults = { "429" }, retry_after = "1" })
  local b = e:submit("/chat/completions", body({ faults = { "500" }, retry_after = "1", error_headers = true }, " b"))
  local r = wait_all(e, { a, b })
  lu.assertEquals({ r[a].attempts, r[a].wait_ms }, { 2, 1000 })
  lu.assertEquals({ r[b].attempts, r[b].wait_ms }, { 2, 1000 }) -- a 5xx's Retry-After is not capped either
  local seen = mock:requests()
  lu.assertEquals(#seen, 4)
  lu.assertTrue(seen[3].t - seen[1].t >= 0.99, "the retry came early")
  e:close()
end

function TestClientRetry:test_a_500_without_retry_after_at_the_end_of_a_run_draws_from_the_first_range()
  for seed = 1, 5 do
    mock:reset()
    local e = engine { backoff_ms = 50, max_backoff_ms = 8000, max_retries = 6, seed = seed }
    local id = e:submit("/chat/completions", body({ faults = { "500", "500", "500", "500", "500", "500" } }, seed))
    local r = wait_all(e, { id })[id]
    lu.assertEquals(r.attempts, 7)
    lu.assertEquals(r.error, nil)
    -- six waits of at most 50 ms; the full ranges would be 50, 100, ..., 1600 ms
    lu.assertTrue(r.wait_ms <= 300, ("seed %d: waited %.1f ms"):format(seed, r.wait_ms))
    e:close()
  end
end

function TestClientRetry:test_a_500_backoff_is_not_capped_while_requests_wait_for_a_place()
  -- One place: while a's retries wait, b1..b4 (200 ms each) hold it or are
  -- queued, so a's waits come from the full ranges 50, 100, 200 ms: with
  -- seed 4, 13.4 + 69.5 + 96.7 = 179.6 ms, which waits capped at 50 ms
  -- each (150 ms at most) could not give.
  local e = engine { concurrency = 1, backoff_ms = 50, max_backoff_ms = 8000, seed = 4 }
  local a = e:submit("/chat/completions", body { faults = { "500", "500", "500" } })
  local ids = { a }
  for i = 1, 4 do ids[#ids + 1] = e:submit("/chat/completions", body({ latency_ms = 200 }, " b" .. i)) end
  local r = wait_all(e, ids)
  lu.assertEquals(r[a].attempts, 4)
  lu.assertTrue(r[a].wait_ms > 150, ("waited %.1f ms"):format(r[a].wait_ms))
  lu.assertAlmostEquals(r[a].wait_ms, 179.6, 0.1)
  e:close()
end

function TestClientRetry:test_a_backoff_drawn_before_the_end_is_redrawn_when_it_comes()
  -- One place, backoff_ms 100, seed 4. a's first wait: 0.2689 x 100 = 26.9
  -- ms, while b1 (50 ms) holds the place. Its second is drawn while b2 is
  -- queued, from the full range: 0.6949 x 200 = 139 ms. When b2 is done
  -- nothing waits for the place: that wait is drawn again from [0, 100),
  -- 0.4834 x 100 = 48.3 ms from when it began, and the earlier time kept.
  -- The third, at the end of the run: 0.3839 x 100 = 38.4 ms. In all 113.6
  -- ms (without the redraw 26.9 + 139 + 38.4 = 204.3).
  local e = engine { concurrency = 1, backoff_ms = 100, max_backoff_ms = 8000, seed = 4 }
  local a = e:submit("/chat/completions", body { faults = { "500", "500", "500" } })
  local b1 = e:submit("/chat/completions", body({ latency_ms = 50 }, " b1"))
  local b2 = e:submit("/chat/completions", body({ latency_ms = 50 }, " b2"))
  local r = wait_all(e, { a, b1, b2 })
  lu.assertEquals(r[a].attempts, 4)
  lu.assertAlmostEquals(r[a].wait_ms, 113.6, 0.1)
  e:close()
end

function TestClientRetry:test_a_429_without_retry_after_keeps_its_backoff()
  -- alone, at the end of a run, yet from the full ranges 50, 100, 200 ms:
  -- seed 4 as above, 13.4 + 69.5 + 96.7 = 179.6 ms
  local e = engine { backoff_ms = 50, max_backoff_ms = 8000, seed = 4 }
  local id = e:submit("/chat/completions", body { faults = { "429", "429", "429" } })
  local r = wait_all(e, { id })[id]
  lu.assertEquals(r.attempts, 4)
  lu.assertAlmostEquals(r.wait_ms, 179.6, 0.1)
  e:close()
end

-- ev.map: an item waiting out a Retry-After holds no place.
function TestClientRetry:test_map_items_waiting_out_a_retry_after_give_up_their_place()
  local judge = mock:judge(nil, { concurrency = 2 })
  local items = {}
  for i = 1, 6 do items[i] = i end
  local t0 = ev.sys.monotonic()
  local out = ev.map(items, function(i)
    local d = i <= 2 and { faults = { "429" }, retry_after_ms = "600" } or { latency_ms = 100 }
    return judge:chat { messages = { { role = "user", content = say(d) .. " item " .. i } } }.ok
  end, { concurrency = 2 })
  local wall = ev.sys.monotonic() - t0
  lu.assertEquals(out, { true, true, true, true, true, true })
  local first, retry = {}, nil
  for _, q in ipairs(mock:requests()) do
    local i = tonumber(q.body.messages[1].content:match("item (%d+)"))
    if first[i] and i == 1 then retry = retry or q.t end
    first[i] = first[i] or q.t
  end
  -- items 3..6 went out while items 1 and 2 waited (retry-after-ms: 600),
  -- before item 1's retry: without parking item 3 could start only after it
  for i = 3, 6 do
    lu.assertTrue(first[i] < retry, ("item %d at %.2f s, the retry at %.2f s"):format(i, first[i] - first[1], retry - first[1]))
  end
  lu.assertTrue(retry - first[1] >= 0.6, "the retry came early")
  lu.assertTrue(wall < 1.0, ("wall %.2f s"):format(wall))
end

function TestClientRetry:test_map_parks_at_most_four_items_per_place()
  local judge = mock:judge(nil, { concurrency = 1 })
  local items = {}
  for i = 1, 7 do items[i] = i end
  local out = ev.map(items, function(i)
    return judge:chat { messages = { { role = "user", content = say { faults = { "429" }, retry_after_ms = "600" }
                                       .. " item " .. i } } }.ok
  end, { concurrency = 1 })
  lu.assertEquals(out, { true, true, true, true, true, true, true })
  local seen, asked, early = mock:requests(), {}, {}
  for _, q in ipairs(seen) do
    local i = tonumber(q.body.messages[1].content:match("item (%d+)"))
    if asked[i] then break end -- the first retry
    asked[i], early[#early + 1] = true, i
  end
  -- four parked and one on the place: items 1..5 asked before any retry;
  -- item 6 waits for a place
  lu.assertEquals(early, { 1, 2, 3, 4, 5 })
end

-- The mock's keyed fault plans, which bench/judge relies on: a request meets
-- its plan's faults whatever the timing, and /_mock/faults says what they force.
function TestClientRetry:test_the_mock_serves_each_request_its_own_fault_plan()
  mock:config { fault_rate = 0.5, seed = 11, fault_by = "request" }
  local e = engine { max_retries = 0 }
  -- Sends each request (in `order`) once a round, all at once, until each
  -- got a 200: the statuses each met, and the attempts in all.
  local function pass(order)
    local met, left, attempts = {}, {}, 0
    for _, i in ipairs(order) do met[i], left[#left + 1] = {}, i end
    while #left > 0 do
      local ids, of = {}, {}
      for _, i in ipairs(left) do
        local id = e:submit("/chat/completions", body({}, " plan " .. i))
        ids[#ids + 1], of[id] = id, i
      end
      left = {}
      for id, d in pairs(wait_all(e, ids)) do
        local i = of[id]
        met[i][#met[i] + 1], attempts = d.status, attempts + 1
        if d.status ~= 200 then left[#left + 1] = i end
      end
    end
    return met, attempts
  end
  local forward, reverse = {}, {}
  for i = 1, 12 do forward[i], reverse[13 - i] = i, i end
  local met, attempts = pass(forward)
  local f = mock:control("/_mock/faults")
  lu.assertEquals(#f.plans, 12)
  lu.assertEquals(attempts, f.forced)
  lu.assertTrue(f.forced > 12, "no faults drawn")
  mock:reset()
  local again = pass(reverse)
  lu.assertEquals(again, met) -- each request met the same faults in the other order
  lu.assertEquals(mock:control("/_mock/faults").forced, f.forced)
  e:close()
end

local status = lu.LuaUnit.run()
mock:stop()
os.exit(status, true)
