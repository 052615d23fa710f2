-- Providers: the offline extractive answerer (hand-checked answers), openai
-- against the project's mock server, http against a small RAG service stub
-- (tests/mock/rag_service.py: its own response shape, a header it needs,
-- a 503 then success, a dead 500), and exec with JSON on stdin and stdout.
-- Each records latency, tokens and cost, caches, and honours dry runs.
local lu = require "luaunit"
local ev = require "evalua"
local cjson = require "cjson"
local sys = require "evalua._sys"
local C = require "evalua._client"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()
local src = os.getenv("EVALUA_SRC") or "."

-- The RAG service stub, on a free port, gone with this process.
local function start_service()
  local dir = h.tmpdir()
  os.execute(("python3 %s/tests/mock/rag_service.py --port-file %s/port --watch-pid %d >%s/log 2>&1 &")
    :format(src, dir, sys.getpid(), dir))
  local deadline, port = sys.monotonic() + 15, nil
  while not port and sys.monotonic() < deadline do
    port = tonumber((h.read(dir .. "/port") or ""):match("%d+"))
    if not port then sys.sleep(0.02) end
  end
  assert(port, "the RAG service stub did not start: " .. tostring(h.read(dir .. "/log")))
  local root = ("http://127.0.0.1:%d"):format(port)
  local eng = C.engine { base_url = root, api_key_env = false, max_retries = 0 }
  local function control(path)
    local id = eng:submit(path, "{}")
    while true do
      for _, d in ipairs(eng:poll(1000)) do
        if d.id == id then return cjson.decode(d.body) end
      end
    end
  end
  return { url = root .. "/answer", stats = function() return control("/stats") end,
           reset = function() return control("/reset") end }
end

local service = start_service()

local CONTEXTS = { "The maximum file size is 5 TiB. Uploads use parts of 8 MiB.", "Retention is 30 days." }
local ROW = { query = "What is the maximum file size?", contexts = CONTEXTS }

TestOffline = {}

function TestOffline:test_best_sentence_by_shared_words()
  local p = ev.provider.offline()
  -- question words what/is/maximum/file/size: the first sentence shares 4,
  -- "Retention is 30 days." 1, the parts sentence 0
  lu.assertEquals(p:call("Answer: {{query}}", ROW), { ok = true, answer = "The maximum file size is 5 TiB.",
    latency_ms = 0, prompt_tokens = 0, completion_tokens = 0, cost = 0, cached = false })
  lu.assertEquals(p:call("Answer in 2 sentences.", ROW).answer, "The maximum file size is 5 TiB. Retention is 30 days.")
  lu.assertEquals(p:call("Use at most 4 words.", ROW).answer, "The maximum file size")
  -- Chinese: characters are words; 。 ends a sentence
  lu.assertEquals(p:call("x", { query = "分片上传的中止阈值是多少", contexts = { "上传失败后会重试。连续三个分片失败后中止上传。" } }).answer,
    "连续三个分片失败后中止上传。")
  lu.assertEquals(p:call("x", { query = "q" }), { ok = false, error = "the row has no contexts to answer from" })
  lu.assertEquals(p:stats(), { requests = 4, failures = 1 })
  lu.assertErrorMsgContains("ev.provider.offline: unknown option 'questoin' (did you mean 'question'?)",
    ev.provider.offline, { questoin = "q" })
end

TestOpenAI = {}
function TestOpenAI:setUp() mock:reset(); mock:config {} end

function TestOpenAI:test_chat_with_tokens_cost_and_cache()
  local dir = h.tmpdir()
  local p = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = dir,
                                 system = "You answer briefly.", price = { prompt = 1, completion = 2 } }
  lu.assertEquals(p.name, "m")
  local r = p:call("Question: how big is a file", {})
  lu.assertEquals({ r.ok, r.answer, r.cached }, { true, "mock answer: Question: how big is a file", false })
  lu.assertTrue(r.latency_ms > 0)
  lu.assertTrue(r.prompt_tokens > 0 and r.completion_tokens > 0)
  lu.assertAlmostEquals(r.cost, (r.prompt_tokens * 1 + r.completion_tokens * 2) / 1e6, 1e-15)
  local sent = mock:requests()[1].body
  lu.assertEquals(sent.messages, { { role = "system", content = "You answer briefly." },
                                   { role = "user", content = "Question: how big is a file" } })
  lu.assertEquals(sent.temperature, 0)
  -- the same prompt again: from the cache, nothing sent, nothing paid in
  -- this run; the answer keeps the latency and cost of when it was asked
  local again = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = dir,
                                     system = "You answer briefly.", price = { prompt = 1, completion = 2 } }
  local c = again:call("Question: how big is a file", {})
  lu.assertEquals({ c.answer, c.cached, c.cost, c.latency_ms }, { r.answer, true, r.cost, r.latency_ms })
  lu.assertEquals(again:stats().cost, nil)
  lu.assertEquals(mock:stats().requests, 1)
  h.sh("rm -rf " .. dir)
end

function TestOpenAI:test_failures_and_dry_runs_are_results()
  local p = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = false,
                                 max_retries = 1, backoff_ms = 1, max_backoff_ms = 2 }
  local r = p:call("x " .. mockmod.say { faults = { "500", "500", "500" } }, {})
  lu.assertEquals(r.ok, false)
  lu.assertStrContains(r.error, "gave up after 2 attempts: HTTP 500")
  local dry = ev.provider.openai { base_url = mock.url, model = "m", api_key_env = false, cache = false,
                                   dry_run = true }
  lu.assertEquals(dry:call("y", {}), { ok = false, error = "dry run: request not sent", dry_run = true })
  lu.assertEquals(mock:stats().requests, 2)
  lu.assertErrorMsgContains("ev.provider.openai: unknown option 'temprature' (did you mean 'temperature'?)",
    ev.provider.openai, { model = "m", temprature = 0 })
end

TestHTTP = {}
function TestHTTP:setUp() service.reset() end

local function extract(resp)
  local docs = resp.result.docs
  local contexts, retrieved = {}, {}
  for i, d in ipairs(docs) do contexts[i], retrieved[i] = d.text, d.id end
  return { answer = resp.result.text, contexts = contexts, retrieved = retrieved }
end

local function service_provider(opts)
  local o = { url = service.url, headers = { ["X-Team"] = "search" }, cache = false, extract = extract,
              body = function(row, prompt) return { question = row.query, prompt = prompt } end,
              backoff_ms = 1, max_backoff_ms = 2 }
  for k, v in pairs(opts or {}) do o[k] = v end
  return ev.provider.http(o)
end

function TestHTTP:test_answer_contexts_and_retrieved_from_the_service()
  local p = service_provider()
  local r = p:call("the prompt", { query = "how big can a file be" })
  lu.assertEquals({ r.ok, r.answer, r.contexts, r.retrieved, r.cached },
    { true, "service answer: how big can a file be", { "about how big can a file be" }, { "d6" }, false })
  lu.assertTrue(r.latency_ms > 0)
  local seen = service.stats()
  lu.assertEquals(seen.requests, 1)
  lu.assertEquals(cjson.decode(seen.bodies[1]), { question = "how big can a file be", prompt = "the prompt" })
end

function TestHTTP:test_template_body_retries_and_failures()
  local p = service_provider { body = '{"question": {{query | json}}, "prompt": {{prompt | json}}}' }
  local r = p:call("P", { query = "a flaky question" }) -- 503 first, then an answer
  lu.assertEquals({ r.ok, r.answer }, { true, "service answer: a flaky question" })
  lu.assertEquals(service.stats().requests, 2)
  local bad = p:call("P", { query = "a broken question" })
  lu.assertEquals(bad.ok, false)
  lu.assertStrContains(bad.error, "HTTP 500")
  -- without the header the service refuses: the status is the error
  local nohdr = service_provider { headers = {} }:call("P", { query = "q" })
  lu.assertStrContains(nohdr.error, "HTTP 401")
  -- an extract that finds no answer says so
  local odd = service_provider { extract = function(resp) return { text = resp.result.text } end }
  lu.assertEquals(odd:call("P", { query = "q" }), { ok = false, error = "extract gave no answer string" })
end

function TestHTTP:test_cache_and_dry_run()
  local dir = h.tmpdir()
  local r1 = service_provider { cache = dir }:call("P", { query = "cache me" })
  local r2 = service_provider { cache = dir }:call("P", { query = "cache me" })
  lu.assertEquals({ r2.answer, r2.cached, r2.contexts }, { r1.answer, true, r1.contexts })
  -- the latency of when it was asked, not 0
  lu.assertTrue(r1.latency_ms > 0)
  lu.assertEquals(r2.latency_ms, r1.latency_ms)
  lu.assertEquals(service.stats().requests, 1)
  local dry = service_provider { cache = dir, dry_run = true }
  lu.assertEquals(dry:call("P", { query = "cache me" }).cached, true) -- a cached answer costs nothing to give
  lu.assertEquals(dry:call("P", { query = "not cached" }), { ok = false, error = "dry run: request not sent",
                                                             dry_run = true })
  lu.assertEquals(dry:stats().dry_run, 1)
  lu.assertEquals(service.stats().requests, 1)
  h.sh("rm -rf " .. dir)
end

function TestHTTP:test_bad_options()
  lu.assertErrorMsgContains("ev.provider.http: method must be \"POST\"", ev.provider.http,
    { url = service.url, method = "GET" })
  lu.assertErrorMsgContains("ev.provider.http: url must be http://host[:port]/path, got 'ftp://x'",
    ev.provider.http, { url = "ftp://x" })
  lu.assertErrorMsgContains("ev.provider.http: unknown option 'extarct'", ev.provider.http,
    { url = service.url, extarct = extract })
end

TestExec = {}

local ECHO = [==[python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"answer": r["prompt"].upper(), "contexts": [r["vars"]["query"]]}))']==]

-- A cached answer keeps the latency and cost of when it was asked; an
-- entry of an older version (the body alone) is still used, its latency
-- unknown.
function TestExec:test_cache_keeps_latency_and_cost()
  local dir = h.tmpdir()
  local cmd = [==[python3 -c 'import json,sys; json.load(sys.stdin); print(json.dumps({"answer": "a", "cost": 0.25}))']==]
  local r1 = ev.provider.exec { cmd = cmd, cache = dir }:call("p", { query = "q" })
  local r2 = ev.provider.exec { cmd = cmd, cache = dir }:call("p", { query = "q" })
  lu.assertEquals({ r1.cached, r2.cached, r2.answer, r1.cost, r2.cost }, { false, true, "a", 0.25, 0.25 })
  lu.assertTrue(r1.latency_ms > 0)
  lu.assertEquals(r2.latency_ms, r1.latency_ms)
  local sender = require "evalua.experiment.provider_http"
  local input = require("evalua.core.json").encode { prompt = "old", vars = { query = "q" } }
  local cache = require "evalua.client.cache"
  cache.writer(cache.open(dir, true), error)(sender.key("exec", cmd, input), '{"answer": "from before"}')
  require("evalua.client.cache").collect(true)
  local old = ev.provider.exec { cmd = cmd, cache = dir }:call("old", { query = "q" })
  lu.assertEquals({ old.answer, old.cached, old.latency_ms }, { "from before", true, nil })
  h.sh("rm -rf " .. dir)
end

function TestExec:test_json_on_stdin_and_stdout()
  local p = ev.provider.exec { cmd = ECHO, cache = false }
  local r = p:call("short answer", { query = "q1" })
  lu.assertEquals({ r.ok, r.answer, r.contexts, r.cached }, { true, "SHORT ANSWER", { "q1" }, false })
  local bad = ev.provider.exec { cmd = "echo oops >&2; exit 3", cache = false }:call("x", {})
  lu.assertEquals(bad, { ok = false, error = "'echo oops >&2; exit 3' exited with status 3: oops" })
  local notjson = ev.provider.exec { cmd = "echo hello", cache = false }:call("x", {})
  lu.assertEquals(notjson, { ok = false, error = "the response is not JSON" })
end

-- A cache that cannot be written (every entry folder is a file): the
-- answers still come, each failed write is counted in stats(), the first
-- kept and said once on stderr.
function TestExec:test_cache_write_failures_are_counted_and_said_once()
  local dir = h.tmpdir()
  h.sh(("mkdir -p %s/c && cd %s/c && for a in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do "
    .. "for b in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do : > $a$b; done; done"):format(dir, dir))
  local r = h.run_script(([[
local ev = require "evalua"
local p = ev.provider.exec { cmd = %q, cache = %q }
for i = 1, 3 do assert(p:call("p" .. i, { query = "q" }).ok) end
local s = p:stats()
print(s.cache_errors, s.requests, s.cache_error)
]]):format(ECHO, dir .. "/c"))
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, "3\t3\tcannot write judge cache entry in '[^']+/c': Not a directory\n")
  local _, said = r.stderr:gsub("evalua: provider cache: cannot write judge cache entry in '[^']+': Not a directory "
    .. "%(the run goes on; later cache errors are counted in provider:stats%(%)%)\n", "")
  lu.assertEquals(said, 1, r.stderr)
end

function TestExec:test_refused_under_sandbox()
  local r = h.run_script('local ev = require "evalua"\nev.provider.exec{ cmd = "true" }\n', "--sandbox")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "script.lua:2: ev.provider.exec: running commands is not available in --sandbox mode")
end

os.exit(lu.LuaUnit.run(), true)
