-- The judge calls behind a score (judge/trace.lua) and what the viewer's
-- item page reads of them from the judge cache (view/judge_calls.lua): each
-- request's cache key kept in the score's detail, also from an ev.map the
-- metric starts; the prompt and raw answer read back from the entry; a call
-- the cache cannot give (the offline judge, no cache, an entry removed)
-- says why. A real mock server process and real cache files.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"
local judge_calls = require "evalua.view.judge_calls"

local mock = mockmod.start()

local ROWS = {
  { qid = "q1", query = "How long are uploads kept?", answer = "7 days", contexts = { "Uploads are kept 7 days." } },
  { qid = "q2", query = "Who pays?", answer = "the owner", contexts = { "The bucket owner pays." } },
}

-- Two judge calls per row, in items of an ev.map the metric starts; a number back.
local function asks_twice(judge)
  return { name = "asks", fn = function(row)
    local out = ev.map({ "first", "second" }, function(which)
      return judge:chat { messages = { { role = "user", content = ('%s of %s <<mock {"answer": "%s answer %s"}>>')
        :format(which, row.qid, which, row.qid) } } }
    end)
    return out[1].ok and out[2].ok and 1 or 0
  end }
end

local function files(dir)
  local set = {}
  for path in h.run("find " .. dir .. " -name '*.json' -path '*/??/*'").stdout:gmatch("[^\n]+") do
    set[path:match("([%x]+)%.json$")] = path
  end
  return set
end

local function scores_of(res, k)
  local out = {}
  for j, m in ipairs(res.metrics) do
    out[#out + 1] = { metric = m.name, detail = res.details[m.name] and res.details[m.name][k], value = res.scores:get(k, j) }
  end
  return out
end

TestJudgeCalls = {}

function TestJudgeCalls:test_each_call_kept_and_read_back_from_the_cache()
  local dir = h.tmpdir()
  local judge = ev.judge.open { base_url = mock.url, model = "m", cache = dir .. "/cache", api_key_env = false }
  local res = ev.evaluate(ROWS, { metrics = { asks_twice(judge), "token_f1" }, judge = judge, quiet = true })
  lu.assertEquals(res.meta.judge.cache_dir, dir .. "/cache")
  local on_disk, kept = files(dir .. "/cache"), 0
  for k = 1, 2 do
    local calls = res.details.asks[k].judge_calls
    lu.assertEquals(#calls, 2)
    for _, c in ipairs(calls) do
      lu.assertNotNil(on_disk[c.key], "the key names an entry of the cache: " .. c.key)
      kept = kept + 1
    end
    -- a metric that asked nothing keeps nothing
    lu.assertNil(res.details.token_f1 and res.details.token_f1[k])
  end
  lu.assertEquals(kept, 4)
  local n = 0
  for _ in pairs(on_disk) do n = n + 1 end
  lu.assertEquals(n, 4) -- four requests, four entries, each one a row's

  local got = judge_calls.of(scores_of(res, 2), res.meta.judge)
  lu.assertEquals(#got, 1)
  lu.assertEquals(got[1].metric, "asks")
  local c = got[1].calls
  lu.assertEquals({ c[1].status, c[2].status }, { "cached", "cached" })
  lu.assertEquals(c[1].messages, { { role = "user", content = 'first of q2 <<mock {"answer": "first answer q2"}>>' } })
  lu.assertEquals(c[1].answer, "first answer q2")
  lu.assertEquals(c[2].answer, "second answer q2")
  lu.assertEquals(c[1].model, "m")

  -- an entry evicted: that call says so, the other is still read
  os.remove(on_disk[res.details.asks[2].judge_calls[2].key])
  c = judge_calls.of(scores_of(res, 2), res.meta.judge)[1].calls
  lu.assertEquals({ c[1].status, c[2].status }, { "cached", "missing" })
  lu.assertStrContains(c[2].why, "no entry " .. res.details.asks[2].judge_calls[2].key:sub(1, 12) .. " in " .. dir
    .. "/cache: evicted")
  h.sh("rm -rf " .. dir)
end

function TestJudgeCalls:test_a_judge_without_a_cache_says_so()
  local judge = ev.judge.open { base_url = mock.url, model = "m", cache = false, api_key_env = false }
  local res = ev.evaluate(ROWS, { metrics = { asks_twice(judge) }, judge = judge, quiet = true })
  lu.assertEquals(#res.details.asks[1].judge_calls, 2)
  local c = judge_calls.of(scores_of(res, 1), res.meta.judge)[1].calls[1]
  lu.assertEquals(c.status, "missing")
  lu.assertEquals(c.why, "the run's judge had no cache (cache = false or cache_mode = \"off\")")
end

function TestJudgeCalls:test_the_offline_judge_says_it_sent_no_prompt()
  local res = ev.evaluate(ROWS, { metrics = { "faithfulness" }, judge = ev.judge.open("offline"), quiet = true })
  local calls = res.details.faithfulness[1].judge_calls
  lu.assertTrue(#calls >= 1)
  lu.assertTrue(calls[1].offline)
  local c = judge_calls.of(scores_of(res, 1), res.meta.judge)[1].calls[1]
  lu.assertEquals(c.status, "offline")
  lu.assertStrContains(c.why, "the offline judge answered with its heuristic: no prompt was sent")
end

function TestJudgeCalls:test_a_run_without_judge_accounts_says_so()
  local c = judge_calls.of({ { metric = "m", detail = { judge_calls = { { key = ("a"):rep(64) } } } } }, nil)[1].calls[1]
  lu.assertEquals(c.why, "the run recorded no judge accounts, so where its cache was is not known")
end

-- How the judge records its cache folder: canonical (links and .. resolved), and under
-- --sandbox only a path the sandbox allows.
function TestJudgeCalls:test_realpath()
  local dir = h.tmpdir()
  h.sh(("mkdir -p %s/a/b && ln -s %s/a %s/link"):format(dir, dir, dir))
  lu.assertEquals(ev.sys.realpath(dir .. "/link/b/../b"), dir .. "/a/b")
  lu.assertEquals({ ev.sys.realpath(dir .. "/missing") }, { nil, dir .. "/missing: No such file or directory" })
  local r = h.run_script(('local ev = require "evalua"; print(ev.sys.realpath("out")); ev.sys.realpath("%s")'):format(dir),
    "--sandbox --out out")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stdout, "/out\n")
  lu.assertStrContains(r.stderr, ("sandbox: read access to '%s' is not allowed"):format(dir))
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
