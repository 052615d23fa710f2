-- The judged-metric scripts run end to end on the bundled data: with the
-- offline judge (no network) and against the mock OpenAI-compatible server,
-- in a child evalua (the binary under test).
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local mockmod = require "tests.mock.mock"

-- Each run writes into a folder of its own (--out), not into out/ of the
-- working folder.
local function run(script, args, env)
  local out = h.tmpdir()
  local r = h.run(("%s %s run %s --out %s %s"):format(env or "", h.bin, script, out, args or ""))
  h.sh("rm -rf " .. out)
  return r
end

local function mock_env(mock, dir)
  return ("OPENAI_BASE_URL=%s EVALUA_MODEL=mock-judge EVALUA_CACHE_DIR=%s OPENAI_API_KEY="):format(mock.url, dir)
end

local function lines_matching(text, pattern)
  local out = {}
  for l in text:gmatch("[^\n]+") do
    if l:match(pattern) then out[#out + 1] = l end
  end
  return out
end

TestScripts = {}

function TestScripts:test_geval_custom_offline()
  local r = run("scripts/geval_custom.lua", "--quiet")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "same_language_and_sourced")
  -- one measured mean per system and slice: 3 systems x (all + 3 classes + 2 languages)
  lu.assertEquals(#lines_matching(r.stdout, "^%S+%s+%S+%s+%d+%s+%d%.%d%d%d!?$"), 18)
end

function TestScripts:test_geval_custom_prints_its_steps()
  local r = run("scripts/geval_custom.lua", "--show-steps")
  lu.assertEquals(r.status, 0, r.stderr)
  local steps = lines_matching(r.stdout, "^%d%. ")
  lu.assertEquals(#steps, 3)
  lu.assertEquals(steps[1], "1. Read the Input, Actual Output, Context.")
  lu.assertEquals(steps[3], "3. Score from 1 (not at all) to 5 (fully).")
end

function TestScripts:test_prompt_experiment_offline_variants_agree()
  local r = run("scripts/prompt_experiment.lua", "--quiet --resamples 200")
  lu.assertEquals(r.status, 0, r.stderr)
  -- the offline judge ignores prompts: no item changes, p = 1 everywhere
  local rows = lines_matching(r.stdout, "^%S+%s+%d+%s+%d%.%d%d%d %(%d+/%d+%)")
  lu.assertEquals(#rows, 4) -- all + 3 query classes
  for _, l in ipairs(rows) do lu.assertStrMatches(l, ".*%+0%.000%s+0%s+1%.0000%s+1%.0000") end
  lu.assertStrContains(r.stdout, "note: the offline judge does not read prompts")
end

-- --concurrency with nothing to send does nothing: refused, even at its
-- default value, in every bundled script that takes it.
function TestScripts:test_concurrency_without_requests_is_refused()
  for script, want in pairs {
    ["scripts/rag_report.lua"] = "--concurrency applies to --judge openai; the offline judge sends no requests",
    ["scripts/prompt_matrix.lua"] = "--concurrency applies to --provider openai; the offline provider sends no requests",
    ["scripts/agent_eval.lua"] = "--concurrency applies to --provider openai or --judge openai",
    ["scripts/nightly.lua"] = "--concurrency applies to a model judge ($EVALUA_MODEL)",
  } do
    local r = run(script, "--concurrency 16", "EVALUA_MODEL= ")
    lu.assertEquals(r.status, 2, script .. ": " .. r.stderr)
    lu.assertStrContains(r.stderr, want)
  end
end

function TestScripts:test_prompt_experiment_usage_errors()
  local r = run("scripts/prompt_experiment.lua", "--variant nofile")
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "--variant expects NAME=FILE, got 'nofile'")
  r = run("scripts/prompt_experiment.lua", "--metric bleu")
  lu.assertEquals(r.status, 2)
  r = run("scripts/prompt_experiment.lua", "--metric token_f1")
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "--metric token_f1 compares no judge prompt; use it with --target system")
end

function TestScripts:test_both_scripts_against_the_mock_judge()
  local mock = mockmod.start()
  local dir = h.tmpdir()
  local r = run("scripts/geval_custom.lua", "--judge openai --quiet", mock_env(mock, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "judge: mock-judge")
  lu.assertEquals(#lines_matching(r.stdout, "%(0/%d+%)"), 0, "nothing may be unmeasured:\n" .. r.stdout)
  r = run("scripts/prompt_experiment.lua", "--judge openai --quiet --resamples 200", mock_env(mock, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "all           180  ")
  lu.assertEquals(#lines_matching(r.stdout, "unmeasured"), 0, r.stdout)
  -- the system under test answers through the mock; the offline judge scores the answers
  mock:reset()
  r = run("scripts/prompt_experiment.lua", "--target system --metric faithfulness --quiet --resamples 200",
    mock_env(mock, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "varied: the answering prompt (pipeline hybrid_rerank)")
  lu.assertStrMatches(r.stdout, ".*\nall%s+60  %d%.%d%d%d %(60/60%)%s+%d%.%d%d%d %(60/60%).*")
  lu.assertEquals(mock:stats().requests, 120) -- 60 answers per variant
  mock:stop()
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
