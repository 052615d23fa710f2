-- ev.generate: every prompt x provider x row as a data set of columns, with
-- a system column per cell, ready for ev.evaluate and its paired tests;
-- prompts from strings, files and folders; errors that name file and line.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()

local ROWS = {
  '{"qid": "a", "query": "What is the maximum file size?", "gold_answers": ["5 TiB"], '
    .. '"contexts": ["The maximum file size is 5 TiB. Uploads use parts of 8 MiB.", "Retention is 30 days."], '
    .. '"answer": "an old answer", "assert": [{"type": "icontains", "value": "tib"}]}',
  '{"qid": "b", "query": "How long is retention?", "gold_answers": ["30 days"], '
    .. '"contexts": ["Retention is 30 days for deleted objects.", "The maximum file size is 5 TiB."]}',
}

local function data(dir, rows)
  h.write(dir .. "/cases.jsonl", table.concat(rows or ROWS, "\n") .. "\n")
  return ev.dataset.load(dir .. "/cases.jsonl")
end

TestGenerate = {}
function TestGenerate:setUp() mock:reset(); mock:config {} end

function TestGenerate:test_every_prompt_provider_and_row()
  local dir = h.tmpdir()
  local ds = data(dir)
  h.write(dir .. "/prompts/short.txt", "Answer in at most 3 words: {{query}}")
  h.write(dir .. "/prompts/full.txt", "Answer in 2 sentences: {{query}}")
  h.write(dir .. "/prompts/notes.md", "not a prompt")
  local mock_p = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = false }
  local out = ev.generate(ds, { prompts = dir .. "/prompts/", providers = { ev.provider.offline(), mock_p },
                                quiet = true })
  lu.assertEquals(out.n, 8)
  lu.assertEquals(out.cells, {
    { system = "full/offline", prompt = "full", provider = "offline", template = "Answer in 2 sentences: {{query}}" },
    { system = "full/m", prompt = "full", provider = "m", template = "Answer in 2 sentences: {{query}}" },
    { system = "short/offline", prompt = "short", provider = "offline", template = "Answer in at most 3 words: {{query}}" },
    { system = "short/m", prompt = "short", provider = "m", template = "Answer in at most 3 words: {{query}}" },
  })
  local r = out.rows[1]
  lu.assertEquals({ r.qid, r.system, r.prompt_name, r.provider, r.answer, r._line },
    { "a", "full/offline", "full", "offline", "The maximum file size is 5 TiB. Retention is 30 days.", 1 })
  lu.assertEquals(out.rows[2].answer, "Retention is 30 days for deleted objects. The maximum file size is 5 TiB.")
  lu.assertEquals(out.rows[3].answer, "mock answer: Answer in 2 sentences: What is the maximum")
  lu.assertEquals(out.rows[5].answer, "The maximum file")
  lu.assertEquals(out.rows[1].assert, { { type = "icontains", value = "tib" } }) -- the row's own fields stay
  lu.assertEquals(out.rows[1].gold_answers, { "5 TiB" })
  lu.assertTrue(out.rows[3].latency_ms > 0 and out.rows[3].prompt_tokens > 0)
  lu.assertEquals(mock:stats().requests, 4)
  -- ready for ev.evaluate: one system per cell, paired on qid
  local res = ev.evaluate(out, { metrics = { "exact_match", ev.assertions.metric() }, system = "system", ci = false })
  lu.assertEquals(res.systems, { "full/offline", "full/m", "short/offline", "short/m" }) -- cell order
  local full = res:agg("full/offline", "assertions")
  lu.assertEquals({ full.n, full.measured, full.mean }, { 2, 1, 1 }) -- row b has no assertions: unmeasured
  local a = res:agg("short/offline", "assertions")
  lu.assertEquals({ a.n, a.measured, a.mean }, { 2, 1, 0 }) -- "The maximum file" has no "tib"
  local cmp = res:compare("full/offline", "short/offline", "assertions")
  lu.assertEquals(cmp.n, 1)
  h.sh("rm -rf " .. dir)
end

function TestGenerate:test_failures_become_output_errors_not_stale_answers()
  local dir = h.tmpdir()
  local ds = data(dir)
  local p = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = false,
                                 max_retries = 0 }
  local out = ev.generate(ds, { prompts = { p1 = "{{query}} " .. mockmod.say { faults = { "500" } } },
                                providers = { dead = p }, quiet = true })
  lu.assertEquals(out.n, 2)
  lu.assertNil(out.rows[1].answer) -- the data's old answer is not kept as if it were the output
  lu.assertStrContains(out.rows[1].output_error, "HTTP 500")
  local res = ev.evaluate(out, { metrics = { "token_f1", ev.assertions.metric() }, system = "system", ci = false })
  local _, reason = res.scores:get(1, 2)
  lu.assertStrContains(reason, "no output: HTTP 500")
  h.sh("rm -rf " .. dir)
end

function TestGenerate:test_every_provider_keeps_its_places_busy_by_default()
  -- 40 rows x 2 providers of 12 places each, 150 ms a request: the default
  -- workers (twice 24) keep both full; 16 workers could not
  local rows = {}
  for i = 1, 40 do rows[i] = { qid = "q" .. i, query = "question " .. i } end
  mock:latency(150)
  local function p(model)
    return ev.provider.openai { base_url = mock.url, model = model, api_key_env = false, cache = false,
                                concurrency = 12 }
  end
  local out = ev.generate(rows, { prompts = { only = "{{query}}" }, providers = { p("m1"), p("m2") }, quiet = true })
  lu.assertEquals(out.n, 80)
  lu.assertEquals(mock:stats().peak_in_flight, 24)
  mock:reset()
  ev.generate(rows, { prompts = { again = "again {{query}}" }, providers = { p("m1"), p("m2") }, concurrency = 16,
                      quiet = true })
  lu.assertEquals(mock:stats().peak_in_flight, 16)
  mock:latency(0)
end

function TestGenerate:test_errors_name_file_line_and_field()
  local dir = h.tmpdir()
  local ds = data(dir)
  local ok, err = pcall(ev.generate, ds, { prompts = { p = "{{query}} {{persona}}" },
                                           providers = { ev.provider.offline() }, quiet = true })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), dir .. "/cases.jsonl:1: prompt 'p': template 'p' line 1: missing variable 'persona'")
  ds = data(dir, { '{"qid": "a", "query": "q", "contexts": ["c."], "assert": [{"type": "max-words", "value": "ten"}]}' })
  ok, err = pcall(ev.generate, ds, { prompts = { p = "{{query}}" }, providers = { ev.provider.offline() } })
  lu.assertStrContains(tostring(err), dir .. "/cases.jsonl:1: field 'assert[1].value': expected a number")
  lu.assertErrorMsgContains("ev.generate: unknown option 'prompt'", ev.generate, ds, { prompt = {} })
  lu.assertErrorMsgContains("ev.generate: two providers are named 'offline'", ev.generate, ds,
    { prompts = { p = "x" }, providers = { ev.provider.offline(), ev.provider.offline() } })
  lu.assertErrorMsgContains("ev.generate: provider x is not an ev.provider", ev.generate, ds,
    { prompts = { p = "x" }, providers = { x = {} } })
  lu.assertEquals(mock:stats().requests, 0)
  h.sh("rm -rf " .. dir)
end

function TestGenerate:test_rows_in_memory_and_a_changed_prompt_resends_only_its_cell()
  local dir = h.tmpdir()
  local rows = { { qid = "a", query = "one" }, { qid = "b", query = "two" } }
  local function run(prompts)
    local p = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = dir .. "/cache" }
    return ev.generate(rows, { prompts = prompts, providers = { p }, quiet = true })
  end
  run { a = "A: {{query}}", b = "B: {{query}}" }
  lu.assertEquals(mock:stats().requests, 4)
  local out = run { a = "A: {{query}}", b = "B, changed: {{query}}" }
  lu.assertEquals(mock:stats().requests, 6)
  lu.assertEquals({ out.rows[1].cached, out.rows[3].cached }, { true, false })
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
