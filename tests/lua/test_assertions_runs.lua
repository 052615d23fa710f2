-- Assertions in whole runs against the project's mock server: a bad
-- assertion in a data row stops ev.generate and ev.evaluate before any
-- request is sent, and a latency assertion that failed on a live answer
-- still fails on the rerun from the cache, with the latency and cost of
-- when the answer was asked, which the side-by-side view shows as such.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()

local function cases(dir, lines)
  h.write(dir .. "/cases.jsonl", table.concat(lines, "\n") .. "\n")
  return ev.dataset.load(dir .. "/cases.jsonl"), dir .. "/cases.jsonl"
end

local function provider(dir)
  return ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = dir,
                              price = { prompt = 1, completion = 2 } }
end

TestBeforeAnyRequest = {}
function TestBeforeAnyRequest:setUp() mock:reset(); mock:config {} end

function TestBeforeAnyRequest:test_generate_refuses_a_row_that_cannot_decide()
  local dir = h.tmpdir()
  local ds, path = cases(dir, {
    '{"qid": "a", "query": "q1", "assert": [{"type": "icontains", "value": "tib"}]}',
    '{"qid": "b", "query": "q2", "assert": [{"type": "max-words", "value": 60}, {"type": "icontains"}]}',
  })
  local ok, err = pcall(ev.generate, ds, { prompts = { p = "{{query}}" }, providers = { provider(false) }, quiet = true })
  lu.assertFalse(ok)
  lu.assertEquals(tostring(err), path .. ":2: field 'assert[2].value': 'icontains' needs a value (or a field of "
    .. "the row to take it from)")
  lu.assertEquals(mock:stats().requests, 0)
  h.sh("rm -rf " .. dir)
end

function TestBeforeAnyRequest:test_evaluate_refuses_before_the_judge_is_asked()
  local dir = h.tmpdir()
  local ds, path = cases(dir, {
    '{"qid": "a", "query": "q", "answer": "5 TiB.", "contexts": ["The limit is 5 TiB."]}',
    '{"qid": "b", "query": "q", "answer": "5 TiB.", "contexts": ["The limit is 5 TiB."], '
      .. '"assert": [{"type": "latency", "threshold": -5}]}',
  })
  local ok, err = pcall(ev.evaluate, ds, { metrics = { "faithfulness", ev.assertions.metric {} },
                                           judge = mock:judge(), ci = false, quiet = true })
  lu.assertFalse(ok)
  lu.assertEquals(tostring(err), path .. ":2: field 'assert[1].threshold': expected a number of milliseconds >= 0, "
    .. "got -5")
  lu.assertEquals(mock:stats().requests, 0)
  h.sh("rm -rf " .. dir)
end

TestCachedLatency = {}
function TestCachedLatency:setUp() mock:reset(); mock:config {} end
function TestCachedLatency:tearDown() mock:latency(0) end

local function run_once(cache, ds)
  local out = ev.generate(ds, { prompts = { p = "Answer: {{query}}" }, providers = { provider(cache) }, quiet = true })
  local res = ev.evaluate(out, { metrics = { ev.assertions.metric { { type = "latency", threshold = 40 } } },
                                 system = "system", ci = false, quiet = true })
  return out, res
end

function TestCachedLatency:test_a_slow_answer_stays_slow_from_the_cache()
  local dir = h.tmpdir()
  local ds = cases(dir, { '{"qid": "a", "query": "how big can a file be"}' })
  mock:latency(60)
  local out1, res1 = run_once(dir .. "/cache", ds)
  local live = out1.rows[1]
  lu.assertEquals(live.cached, false)
  lu.assertTrue(live.latency_ms >= 60, live.latency_ms)
  lu.assertTrue(live.cost > 0)
  local score, reason = res1.scores:get(1, 1)
  lu.assertEquals({ score, reason }, { 0, ("1 of 1 failed: latency 40: latency_ms = %g ms, above <= 40")
    :format(live.latency_ms) })
  -- the rerun: nothing sent, the same latency and cost, the same verdict
  mock:latency(0)
  local out2, res2 = run_once(dir .. "/cache", ds)
  local again = out2.rows[1]
  lu.assertEquals(mock:stats().requests, 1)
  lu.assertEquals({ again.cached, again.latency_ms, again.cost, again.answer },
    { true, live.latency_ms, live.cost, live.answer })
  score, reason = res2.scores:get(1, 1)
  lu.assertEquals({ score, reason }, { 0, ("1 of 1 failed: latency 40: latency_ms = %g ms when asked (cached), "
    .. "above <= 40"):format(live.latency_ms) })
  -- the side-by-side view says where the figures come from
  lu.assertStrContains(ev.matrix_view.html(res1), ('<div class="small">%.0f ms · $%.5f</div>')
    :format(live.latency_ms, live.cost))
  lu.assertStrContains(ev.matrix_view.html(res2), ('<div class="small">cached, %.0f ms · $%.5f when asked</div>')
    :format(live.latency_ms, live.cost))
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
