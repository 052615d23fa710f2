-- Assertions in whole runs against the project's mock server: a bad
-- assertion in a data row stops ev.generate and ev.evaluate before any
-- request is sent.
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

os.exit(lu.LuaUnit.run(), true)
