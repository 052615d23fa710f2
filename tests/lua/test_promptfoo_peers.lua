-- promptfoo's own example configs (tests/data/peers/promptfoo/configs, copied
-- unchanged; README.md there names the files and commits) run with evalua run
-- promptfooconfig.yaml against the mock server as they are: the requests
-- each sends (models, rendered prompts: Nunjucks, a --- split prompt file,
-- CSV vars, promptfoo's load filter) and the verdicts, computed by hand from
-- the mock's rule (it answers "mock answer: " and the user message's first
-- eight words, so no translation assertion can pass).
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local pf = require "tests.lua.promptfoo_harness"
local cjson = require "cjson"

local PEERS = pf.src .. "/tests/data/peers/promptfoo/configs"

TestPromptfooPeers = pf.suite()

local function run_example(name)
  local dir = pf.copy(PEERS .. "/" .. name)
  local r = pf.run(dir, "OPENAI_BASE_URL=" .. pf.server.url .. " OPENAI_API_KEY=k", "--no-cache")
  local report = h.read(dir .. "/out/promptfoo.json")
  h.sh("rm -rf " .. dir)
  local rows = {}
  for _, it in ipairs(report and cjson.decode(report).items or {}) do rows[it.system .. "#" .. it.id] = it end
  local asked = {}
  for _, q in ipairs(pf.server:requests()) do
    local body = type(q.body) == "table" and q.body or cjson.decode(q.body)
    asked[#asked + 1] = { model = body.model, content = body.messages[#body.messages].content }
  end
  table.sort(asked, function(a, b) return a.model .. a.content < b.model .. b.content end)
  return r, rows, asked
end

function TestPromptfooPeers:test_getting_started()
  local r, rows, asked = run_example("getting-started")
  lu.assertEquals(r.status, 1, r.stderr)
  lu.assertStrContains(r.stdout, "promptfooconfig.yaml: 2 prompts x 2 providers x 2 test cases = 8 outputs")
  lu.assertStrContains(r.stdout, "\nSuccesses: 0\nFailures: 8\nErrors: 0\nUnmeasured: 0\nPass Rate: 0.00%\n")
  lu.assertEquals(#asked, 8)
  lu.assertEquals(asked[1], { model = "gpt-4.1", content = "Convert this English to French: Hello world" })
  lu.assertEquals(asked[2], { model = "gpt-4.1", content = "Convert this English to Spanish: Where is the library?" })
  lu.assertEquals(asked[8], { model = "o4-mini", content = "Translate to Spanish: Where is the library?" })
  local it = rows["prompt 1/openai:gpt-4.1#1"]
  lu.assertEquals(it.row.answer, "mock answer: Convert this English to French: Hello world")
  lu.assertEquals(it.details.assertions.assertions[1].reason, 'lacks "Bonjour le monde"')
  lu.assertEquals(rows["prompt 2/openai:o4-mini#2"].row.answer, "mock answer: Translate to Spanish: Where is the library?")
end

function TestPromptfooPeers:test_simple_csv()
  local r, rows, asked = run_example("simple-csv")
  lu.assertEquals(r.status, 1, r.stderr)
  lu.assertStrContains(r.stdout, "promptfooconfig.yaml: 2 prompts x 1 provider x 4 test cases = 8 outputs")
  lu.assertStrContains(r.stdout, "\nSuccesses: 0\nFailures: 8\n")
  lu.assertEquals(#asked, 8)
  for _, q in ipairs(asked) do lu.assertEquals(q.model, "gpt-3.5-turbo") end
  -- prompts.txt's first prompt, with (style_config | load).tone from the CSV's JSON cell
  local first = rows["prompts:1/openai:gpt-3.5-turbo#1"]
  lu.assertEquals(first.row.pf_prompt_1, 'You are a skilled translator and language expert. Follow these style requirements:\n'
    .. '- Tone: formal\n- Length: brief\n\nTask: Rephrase the following text in French:\n"Hello world"\n\n'
    .. "Ensure your response matches the specified style.")
  lu.assertEquals(first.row.answer, "mock answer: You are a skilled translator and language expert.")
  lu.assertEquals(first.details.assertions.assertions[1].name, 'icontains "bonjour"')
  lu.assertEquals(rows["prompts:2/openai:gpt-3.5-turbo#4"].row.answer, "mock answer: You are a conversational language assistant. Follow the")
  lu.assertStrContains(rows["prompts:2/openai:gpt-3.5-turbo#4"].row.pf_prompt_2, 'Follow the style configuration: {"tone":"authentic","length":'
    .. '"moderate","formatting":{"bullets":false}}.')
end

os.exit(lu.LuaUnit.run(), true)
