-- evalua run promptfooconfig.yaml against the mock server: a config of
-- realistic size (tests/data/promptfoo/realistic: 3 prompts x 2 providers x
-- 20 cases, every assertion family of the registry, weights, thresholds, a
-- named metric, an assert-set, transforms, defaultTest, vars expansion and
-- CSV tests) gives, case by case, the verdicts and weighted scores computed
-- by hand below; bad configs get file:line errors and the mock sees no
-- request at all.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local mock = require "tests.mock.mock"
local pf = require "tests.lua.promptfoo_harness"
local cjson = require "cjson"

local DATA = pf.src .. "/tests/data/promptfoo/realistic"

TestPromptfoo = pf.suite()

-- The realistic config copied into a fresh folder with the mock's address;
-- edit(text) may change the config's text first.
local function project(edit)
  local dir = pf.copy(DATA)
  local text = h.read(dir .. "/promptfooconfig.yaml"):gsub("MOCK_ROOT", pf.server.root)
  h.write(dir .. "/promptfooconfig.yaml", edit and edit(text) or text)
  return dir
end

local function run(dir, args)
  return pf.run(dir, "OPENAI_API_KEY=mock-key SVC_TOKEN='Bearer svc-secret'", args or "--no-cache")
end

-- By hand, for each case (in the config's order, the CSV's two last): the
-- verdict and weighted score of the model's answer, then of the service's.
-- Every case also carries defaultTest's max-length 200, which every answer
-- passes (weight 1). P pass, F fail, U unmeasured.
local EXPECTED = {
  { "P", 1, "F", 1 / 3 },         -- equals "4" and lua output == '4': "4" / "four"
  { "P", 1, "F", 3 / 4 },         -- icontains paris, contains Paris, not-is-xml: "paris" lacks "Paris"
  { "P", 1, "P", 2 / 3 },         -- threshold 0.5: "42" fails starts-with, 2/3 >= 0.5
  { "P", 1, "F", 1 / 3 },         -- is-json with a schema, contains-json: "not json"
  { "P", 1, "F", 2 / 3 },         -- contains-all [red, green] fails on "red"; contains-any passes
  { "F", 0.5, "P", 1 },           -- not-icontains cannot
  { "P", 1, "F", 0.4 },           -- weights 1 + 3 (+1), threshold 0.7: "alpha" gets (1 + 0 + 1) / 5
  { "P", 1, "P", 1 },             -- contains "no" of weight 0 fails, but weight 0 never fails a case
  { "P", 1, "F", 0.5 },           -- transform output:upper(): "HELLO" / "BYE"
  { "P", 1, "F", 0.5 },           -- an assertion's transform json.decode(output).answer: x1 / y2
  { "P", 1, "P", 0.75 },          -- assert-set threshold 0.5: "cat" scores 0.5 and passes; (1 + 0.5) / 2
  { "P", 1, "F", 0.5 },           -- equals "{{ expected }}" (blue), metric accuracy
  { "P", 1, "F", 3 / 4 },         -- max-words 3, min-length 10, word-count 2..3: "one two" is 7 characters
  { "P", 1, "P", 1 },             -- latency <= 10000 ms
  { "U", nil, "U", nil },         -- cost: neither provider reports one
  { "P", 1, "F", 0.5 },           -- question list, first: "ok a" / "no"
  { "P", 1, "P", 1 },             -- question list, second: "ok b" / "ok"
  { "P", 1, "F", 0.5 },           -- more.yaml: levenshtein kitten <= 2: "sitting" is 3 edits away
  { "P", 1, "F", 0.5 },           -- CSV __expected "icontains: yes": "nope"
  { "P", 1, "P", 1 },             -- CSV __expected "42" (equals)
}

local CELLS = { "plain", "terse", "chat" }

function TestPromptfoo:test_realistic_config_case_by_case()
  local dir = project()
  local r = run(dir)
  lu.assertEquals(r.status, 1, r.stderr) -- a case failed
  local report = cjson.decode(h.read(dir .. "/out/promptfoo.json"))
  local got = {}
  for _, it in ipairs(report.items) do got[it.system .. "#" .. it.id] = it end
  lu.assertEquals(#report.items, 120)
  for _, prompt in ipairs(CELLS) do
    for i, e in ipairs(EXPECTED) do
      for k, provider in ipairs { "model", "svc" } do
        local it = got[("%s/%s#%d"):format(prompt, provider, i)]
        local what = ("%s/%s case %d"):format(prompt, provider, i)
        lu.assertNotNil(it, what)
        local verdict, want = e[2 * k - 1], e[2 * k]
        local pass = it.scores.assertions
        lu.assertEquals(pass == nil and "U" or pass == 1 and "P" or "F", verdict, what)
        if want then lu.assertAlmostEquals(it.scores.score, want, 1e-12, what)
        else lu.assertNil(it.scores.score, what) lu.assertStrContains(it.unmeasured.score, "the output has no cost") end
      end
    end
  end
  -- the named metric: 1 for the model, 0 for the service, on case 12 only
  lu.assertEquals(got["chat/model#12"].scores.accuracy, 1)
  lu.assertEquals(got["chat/svc#12"].scores.accuracy, 0)
  lu.assertNil(got["chat/svc#1"].scores.accuracy)
  -- promptfoo's summary: 3 x (18 + 7) passes, 3 x (1 + 12) failures, 6 unmeasured
  lu.assertStrContains(r.stdout, "promptfooconfig.yaml: 3 prompts x 2 providers x 20 test cases = 120 outputs")
  lu.assertStrContains(r.stdout, "\nSuccesses: 75\nFailures: 39\nErrors: 0\nUnmeasured: 6\nPass Rate: 62.50%\n")
  -- the score column: the mean of the 19 measured weighted scores; the model's (18 + 0.5) / 19, the
  -- service's the sum of the column above (12.65) / 19
  lu.assertStrContains(r.stdout, "\nplain/model                 18     1      0           1     90.00%   0.974\n")
  lu.assertStrContains(r.stdout, "\nchat/svc                     7    12      0           1     35.00%   0.666\n")
  lu.assertStrContains(r.stdout, "metric accuracy: plain/model 1.000, plain/svc 0.000")
  lu.assertNotNil(h.read(dir .. "/out/promptfoo_side_by_side.html"))
  lu.assertNotNil(h.read(dir .. "/out/promptfoo.md"))
  h.sh("rm -rf " .. dir)
end

function TestPromptfoo:test_what_reaches_the_servers()
  local dir = project()
  local r = run(dir)
  lu.assertEquals(r.status, 1, r.stderr)
  local s = pf.server:stats()
  lu.assertEquals(s.by_path["/v1/chat/completions"], 60) -- 3 prompts x 20 cases, no cache
  lu.assertEquals(s.by_path["/generate"], 60)
  local chat, terse, http, http_headers = nil, nil, nil, nil
  for _, q in ipairs(pf.server:requests()) do
    local body = type(q.body) == "table" and q.body or cjson.decode(q.body)
    if q.path == "/v1/chat/completions" and body.messages[1].role == "system" then chat = chat or body end
    if q.path == "/v1/chat/completions" and body.messages[1].content:find("^Answer tersely%. Sum%?") then terse = body end
    if q.path == "/generate" and body.q:find("^Q: What is 2%+2%?") then http, http_headers = body, q.headers end
  end
  -- the chat prompt (prompts/chat.json, the question through | dump) is sent as its two messages
  lu.assertNotNil(chat)
  lu.assertEquals(chat.messages[1].content, "Be brief.")
  lu.assertEquals(chat.messages[2].role, "user")
  lu.assertEquals(chat.max_tokens, 50)
  lu.assertEquals(chat.temperature, 0)
  lu.assertEquals(chat.model, "mock-model")
  -- the text file's prompt, for a CSV case; the http body's templates, with defaultTest's lang
  lu.assertEquals(terse.messages, { { role = "user", content = 'Answer tersely. Sum? <<mock {"answer": "42", "http_answer": "42"}>>' } })
  lu.assertEquals(http, { q = 'Q: What is 2+2? <<mock {"answer": "4", "http_answer": "four"}>>', lang = "en" })
  lu.assertEquals(http_headers["x-team"], "evals")
  lu.assertEquals(http_headers.authorization, "Bearer svc-secret") -- '{{ env.SVC_TOKEN }}': the whole value from the environment
  h.sh("rm -rf " .. dir)
end

-- The answers are cached by evalua's client: a rerun sends nothing and
-- gives the same verdicts.
function TestPromptfoo:test_a_rerun_comes_from_the_cache()
  local dir = project()
  local first = run(dir, "--cache " .. dir .. "/cache")
  lu.assertEquals(pf.server:stats().requests, 120)
  pf.server:reset()
  local again = run(dir, "--cache " .. dir .. "/cache")
  lu.assertEquals(pf.server:stats().requests, 0)
  lu.assertEquals(again.status, 1)
  lu.assertStrContains(again.stdout, "(120 answers from the cache, counted as when they were asked)")
  lu.assertEquals(again.stdout:match("Successes.-Rate: [%d.]+%%"), first.stdout:match("Successes.-Rate: [%d.]+%%"))
  h.sh("rm -rf " .. dir)
end

-- Under --sandbox: the config and its files read under --read, the reports
-- written under run's --out, the servers the operator's; a header from the
-- environment is refused at its line, as the sandbox refuses it to scripts.
function TestPromptfoo:test_under_the_sandbox()
  local dir = project()
  local cmd = ("cd %s && OPENAI_BASE_URL=%s EVALUA_JUDGE_URLS='%s/generate' OPENAI_API_KEY=k %s run --sandbox --read %s "
    .. "--out %s/out promptfooconfig.yaml --no-cache --quiet"):format(dir, pf.server.url, pf.server.root, h.bin, dir, dir)
  local r = h.run(cmd)
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, "promptfooconfig.yaml:20: providers[2]: judge header 'Authorization': values from the "
    .. "environment are not available in --sandbox mode\nevalua: 1 problem in promptfooconfig.yaml; nothing was sent\n")
  lu.assertEquals(pf.server:stats().requests, 0)
  local text = h.read(dir .. "/promptfooconfig.yaml"):gsub('        Authorization: "{{ env.SVC_TOKEN }}"\n', "")
  h.write(dir .. "/promptfooconfig.yaml", text)
  r = h.run(cmd)
  lu.assertEquals(r.status, 1, r.stderr)
  lu.assertStrContains(r.stdout, "\nSuccesses: 75\nFailures: 39\nErrors: 0\nUnmeasured: 6\n")
  lu.assertNotNil(h.read(dir .. "/out/promptfoo_side_by_side.html"))
  h.sh("rm -rf " .. dir)
end

-- The types a judge grades or embeds need --judge: without one each is a
-- problem at its line and nothing is sent; with --judge openai the mock
-- embeds (a text and itself: cosine 1); a judge no assertion uses is refused.
function TestPromptfoo:test_judged_types_need_a_judge()
  local dir = h.tmpdir()
  h.write(dir .. "/promptfooconfig.yaml", [[
prompts: ["{{ q }}"]
providers: [echo]
tests:
  - vars: {q: blue sky}
    assert:
      - type: similar
        value: blue sky
        threshold: 0.99
  - vars: {q: green grass}
    assert:
      - type: llm-rubric
        value: mentions a colour
]])
  local r = h.run(("cd %s && %s run promptfooconfig.yaml --quiet --out %s/out"):format(dir, h.bin, dir))
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, table.concat({
    "promptfooconfig.yaml:6: 'similar' is graded by a judge: give --judge openai (any OpenAI-compatible server) or "
      .. "--judge offline (a heuristic)",
    "promptfooconfig.yaml:11: 'llm-rubric' is graded by a judge: give --judge openai (any OpenAI-compatible server) or "
      .. "--judge offline (a heuristic)",
    "evalua: 2 problems in promptfooconfig.yaml; nothing was sent", "" }, "\n"))
  h.write(dir .. "/promptfooconfig.yaml", (h.read(dir .. "/promptfooconfig.yaml"):gsub("  %- vars: {q: green grass}.*$", "")))
  r = h.run(("cd %s && OPENAI_BASE_URL=%s OPENAI_API_KEY=k %s run promptfooconfig.yaml --quiet --no-cache --judge openai "
    .. "--judge-model m --out %s/out"):format(dir, pf.server.url, h.bin, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "\nSuccesses: 1\nFailures: 0\n")
  lu.assertTrue((pf.server:stats().by_path["/v1/embeddings"] or 0) >= 1)
  h.write(dir .. "/promptfooconfig.yaml", "prompts: [hi]\nproviders: [echo]\n")
  r = h.run(("cd %s && %s run promptfooconfig.yaml --quiet --judge offline --out %s/out"):format(dir, h.bin, dir))
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: --judge offline: no assertion of this config is graded by a judge (try --help)\n")
  h.sh("rm -rf " .. dir)
end

-- select-best and max-score compare a case's cells (here two prompts on
-- echo, whose output is the prompt): the winner passes, the others fail
-- with score 0; a case with no other assertion takes the comparison's
-- verdict. By hand (echo's outputs: "Name a colour: C", "Name a colour and
-- a fruit: C F"):
--  1. contains red, icontains APPLE: short 0.5, long 1 -> long wins;
--  2. select-best "blue pear" on the offline judge (the most criterion
--     words): short has 1 of 2, long 2 of 2 -> long;
--  3. weights {contains: 3}: short (3 + 0) / 4 = 0.75, long (0 + 1) / 4 =
--     0.25 -> short, which passes its own threshold 0.5 with 0.5;
--  4. threshold 0.5: both score 0 on contains zzz -> neither passes.
function TestPromptfoo:test_select_best_and_max_score_across_cells()
  local dir = h.tmpdir()
  h.write(dir .. "/promptfooconfig.yaml", [[
prompts:
  - {id: "Name a colour: {{c}}", label: short}
  - {id: "Name a colour and a fruit: {{c}} {{f}}", label: long}
providers: [echo]
tests:
  - vars: {c: red, f: apple}
    assert: [{type: contains, value: red}, {type: icontains, value: APPLE}, {type: max-score}]
  - vars: {c: blue, f: pear}
    assert: [{type: select-best, value: blue pear}]
  - vars: {c: green, f: kiwi}
    threshold: 0.5
    assert:
      - {type: contains, value: "colour:"}
      - {type: icontains, value: kiwi}
      - {type: max-score, value: {weights: {contains: 3}}}
  - vars: {c: x, f: y}
    assert: [{type: contains, value: zzz}, {type: max-score, value: {threshold: 0.5}}]
]])
  local r = h.run(("cd %s && %s run promptfooconfig.yaml --quiet --judge offline --out %s/out"):format(dir, h.bin, dir))
  lu.assertEquals(r.status, 1, r.stderr)
  local got = {}
  for _, it in ipairs(cjson.decode(h.read(dir .. "/out/promptfoo.json")).items) do
    got[#got + 1] = { it.system:match("^%a+") .. it.id, it.scores.assertions, it.scores.score }
  end
  table.sort(got, function(a, b) return a[1] < b[1] end)
  lu.assertEquals(got, { { "long1", 1, 1 }, { "long2", 1, 1 }, { "long3", 0, 0 }, { "long4", 0, 0 },
                         { "short1", 0, 0 }, { "short2", 0, 0 }, { "short3", 1, 0.5 }, { "short4", 0, 0 } })
  lu.assertStrContains(r.stdout, "\nSuccesses: 3\nFailures: 5\nErrors: 0\nUnmeasured: 0\n")
  local report = cjson.decode(h.read(dir .. "/out/promptfoo.json"))
  local reasons = {}
  for _, it in ipairs(report.items) do reasons[it.system:match("^%a+") .. it.id] = it.reasons.assertions end
  lu.assertEquals(reasons.short1, "max-score: score 0.5000: not the highest score (long/echo has 1.0000)")
  lu.assertEquals(reasons.short2, 'select-best "blue pear": not chosen: offline: the most criterion words '
    .. "(2 of 2 question words appear in the text)")
  lu.assertEquals(reasons.long4, 'max-score {"threshold":0.5}: score 0.0000: the highest score, under the threshold 0.5')
  -- a comparison has no place in an assert-set, and weight or metric would do nothing on it
  h.write(dir .. "/promptfooconfig.yaml", [[
prompts: [a, b]
providers: [echo]
tests:
  - assert:
      - {type: max-score, weight: 2}
      - {type: assert-set, assert: [{type: max-score}]}
]])
  r = h.run(("cd %s && %s run promptfooconfig.yaml --quiet --out %s/out"):format(dir, h.bin, dir))
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, table.concat({
    "promptfooconfig.yaml:5: tests[1].assert[1].type: 'max-score' enters no score: weight and metric here would do nothing",
    "promptfooconfig.yaml:6: tests[1].assert[2].assert[1].type: 'max-score' is a verdict over a case's cells, not part "
      .. "of an assert-set",
    "evalua: 2 problems in promptfooconfig.yaml; nothing was sent", "" }, "\n"))
  h.sh("rm -rf " .. dir)
end

-- A provider that answered nothing (the mock answering 500 to every
-- attempt, a port where nothing listens) does not exit 0: every output is
-- an error, the status is 4, and stderr quotes the first error.
function TestPromptfoo:test_a_provider_that_answered_nothing_exits_4()
  local dir = h.tmpdir()
  local faults = mock.say { faults = { "500", "500", "500", "500", "500", "500", "500", "500", "500", "500" } }
  for _, base in ipairs { pf.server.url, "http://127.0.0.1:9/v1" } do
    h.write(dir .. "/promptfooconfig.yaml", ([[
prompts: ["%s {{x}}"]
providers: [{id: "openai:chat:m", config: {apiBaseUrl: "%s"}}]
tests:
  - vars: {x: a}
    assert: [{type: contains, value: a}]
  - vars: {x: b}
]]):format(faults:gsub('"', '\\"'), base))
    local r = run(dir)
    lu.assertEquals(r.status, 4, base .. ": " .. r.stderr)
    lu.assertStrContains(r.stdout, "\nSuccesses: 0\nFailures: 0\nErrors: 2\nUnmeasured: 0\n", base)
    lu.assertStrContains(r.stderr, "evalua: 2 of 2 outputs have no answer from their provider; the first: "
      .. "prompt 1/openai:chat:m case 1: ", base)
  end
  lu.assertTrue(pf.server:stats().requests >= 2 * 6) -- each of the two outputs was tried, with its retries
  h.sh("rm -rf " .. dir)
end

-- A limit passed in a transform ends the run: no verdict stands for it
-- (once, the transform's pcall kept it as the case's reason and a summary
-- with one unmeasured case was printed before the limit fired again).
function TestPromptfoo:test_a_limit_in_a_transform_is_not_a_reason()
  local dir = h.tmpdir()
  h.write(dir .. "/promptfooconfig.yaml", [[
prompts: [hi]
providers: [echo]
tests:
  - options: {transform: "(function() while true do end end)()"}
    assert: [{type: contains, value: hi}]
]])
  local r = h.run(("cd %s && %s run --time-limit 0.5 promptfooconfig.yaml --quiet --out %s/out"):format(dir, h.bin, dir))
  lu.assertEquals(r.status, 3, r.stderr)
  lu.assertStrContains(r.stderr, "time limit of 0.5 s exceeded (--time-limit)")
  lu.assertEquals(r.stdout, "")
  h.sh("rm -rf " .. dir)
end

-- exec: promptfoo's contract (the prompt, the options and the context as the
-- last three arguments; stdout trimmed is the output; a non-zero exit is an
-- error quoting stderr), and echo, which sends nothing.
function TestPromptfoo:test_exec_and_echo_providers()
  local dir = h.tmpdir()
  h.write(dir .. "/reply.sh", [=[
case "$1" in *fail*) echo boom >&2; exit 3;; esac
printf '\033[1margs=%s\033[0m prompt=%s opts=%s ctx=%s\n\n' "$#" "$1" "$2" "$3"
]=])
  h.write(dir .. "/promptfooconfig.yaml", [[
prompts: ["Tell {{ who }}"]
providers:
  - exec: sh ./reply.sh
  - echo
tests:
  - vars: {who: "O'Neil"}
    assert: [{type: starts-with, value: Tell}]
  - vars: file://vars.yaml
]])
  h.write(dir .. "/vars.yaml", "who: fail\n")
  local r = run(dir)
  lu.assertEquals(r.status, 1, r.stderr) -- the script's output does not start with Tell
  local rows = {}
  for _, it in ipairs(cjson.decode(h.read(dir .. "/out/promptfoo.json")).items) do rows[it.system .. "#" .. it.id] = it.row end
  lu.assertEquals(rows["prompt 1/exec:sh ./reply.sh#1"].answer, "args=3 prompt=Tell O'Neil "
    .. 'opts={"config":{},"id":"exec:sh ./reply.sh"} ctx={"prompt":{"raw":"Tell O\'Neil"},"vars":{"who":"O\'Neil"}}')
  lu.assertEquals(rows["prompt 1/exec:sh ./reply.sh#2"].output_error, "'sh ./reply.sh' exited with status 3: boom")
  lu.assertEquals(rows["prompt 1/echo#1"].answer, "Tell O'Neil")
  lu.assertStrContains(r.stdout, "\nSuccesses: 1\nFailures: 1\nErrors: 1\nUnmeasured: 1\n") -- case 2 has no assertions
  lu.assertEquals(pf.server:stats().requests, 0)
  h.sh("rm -rf " .. dir)
end

-- A bad config is refused whole, with each problem's file and line, and
-- nothing reaches the server.
local function refused(edit, files)
  local dir = project(edit)
  for name, text in pairs(files or {}) do h.write(dir .. "/" .. name, text) end
  local r = run(dir)
  lu.assertEquals(pf.server:stats().requests, 0)
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 3, r.stderr)
  return r.stderr
end

function TestPromptfoo:test_unsupported_keys_are_listed_before_any_request()
  local err = refused(function(text)
    return text:gsub("defaultTest:", "evaluateOptions:\n  maxConcurrency: 2\ndefaultTest:", 1)
      :gsub("      max_tokens: 50\n", "      max_tokens: 50\n      frequency_penalty: 0.5\n", 1)
      :gsub("  %- description: equals\n", "  - description: equals\n    provider: openai:gpt-4o\n", 1)
  end)
  lu.assertEquals(err, table.concat({
    "promptfooconfig.yaml:20: providers[1].config.frequency_penalty: not supported: evalua's openai provider sends "
      .. "temperature, top_p, max_tokens, seed and stop",
    "promptfooconfig.yaml:34: evaluateOptions: not supported: concurrency, caching and retries are evalua's client's: "
      .. "use --concurrency, --cache and --no-cache",
    "promptfooconfig.yaml:44: tests[1].provider: not supported: a per-test provider is not supported; every case "
      .. "runs on every provider",
    "evalua: 3 problems in promptfooconfig.yaml; nothing was sent", "" }, "\n"))
end

function TestPromptfoo:test_a_missing_config_is_a_usage_error()
  local r = h.run(("cd %s && %s run nothere.yaml"):format(h.tmpdir(), h.bin))
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: cannot open config 'nothere.yaml' (no such file)\n")
end

function TestPromptfoo:test_sharding_is_refused()
  local dir = project()
  local r = run(dir, "--no-cache --shard 1/2")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: a promptfoo config cannot be sharded (--shard, --parts, $EVALUA_SHARD): evalua "
    .. "merge replays Lua scripts; write a script around ev.generate to shard (try --help)\n")
  lu.assertEquals(pf.server:stats().requests, 0)
  h.sh("rm -rf " .. dir)
end

function TestPromptfoo:test_malformed_yaml_names_line_and_column()
  local err = refused(function(text) return text:gsub("    vars: {question: 'What is 2%+2%?", "    vars: {question: What is [2+2?", 1) end)
  -- by hand: "[" (line 41, column 30) opens a list inside the flow mapping that began at column 11
  lu.assertEquals(err, "promptfooconfig.yaml:41:30: did not find expected ',' or '}' (while parsing a flow mapping on line 41)\n")
  err = refused(nil, { ["tests.csv"] = "question,__expected,__config:__expected:weight\nq,x,y\n" })
  lu.assertStrContains(err, "tests.csv:2: field '__config:__expected:weight': 'weight' is not a config key (threshold)\n")
end

function TestPromptfoo:test_unknown_assertion_type_and_missing_variable()
  local err = refused(function(text)
    return text:gsub("      %- type: equals\n        value: \"4\"", "      - type: contians\n        value: \"4\"", 1)
      :gsub('value: "{{ expected }}"', 'value: "{{ expectd }}"', 1)
  end, { ["prompts/terse.txt"] = "Answer tersely. {{ questoin }}\n" })
  lu.assertStrContains(err, "promptfooconfig.yaml:43: tests[1].assert[1].type: unknown assertion type 'contians' "
    .. "(did you mean 'contains'?)\n")
  lu.assertStrContains(err, "promptfooconfig.yaml:40: tests[1] (equals): prompt 'terse' (prompts/terse.txt:1): "
    .. "missing variable 'questoin'\n")
  lu.assertStrContains(err, "promptfooconfig.yaml:131: tests[12].assert[1].value: missing variable 'expectd'\n")
  lu.assertStrContains(err, "tests.csv:2: test (from the CSV: icontains): prompt 'terse' (prompts/terse.txt:1): "
    .. "missing variable 'questoin'\n")
  lu.assertStrContains(err, "nothing was sent\n")
end

os.exit(lu.LuaUnit.run(), true)
