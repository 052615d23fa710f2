-- The same-family warning: a judge grading answers of its own model family
-- (data key `model` or `provider`) is said on stderr and kept in the
-- judge's stats, which reports carry.
local lu = require "luaunit"
local ev = require "evalua"
local family = require "evalua.judge.family"

local function judge(model)
  return ev.judge.open { base_url = "http://127.0.0.1:9/v1", model = model, cache = false, api_key_env = false }
end

TestFamily = {}

function TestFamily:test_families_of_names()
  lu.assertEquals(family.of("gpt-4o-mini"), "OpenAI GPT")
  lu.assertEquals(family.of("openai/o3-mini"), "OpenAI GPT")
  lu.assertEquals(family.of("claude-3-5-sonnet-latest"), "Anthropic Claude")
  lu.assertEquals(family.of("meta-llama/Llama-3.1-8B-Instruct"), "Meta Llama")
  lu.assertEquals(family.of("qwen2.5:7b"), "Alibaba Qwen")
  lu.assertNil(family.of("offline"))
  lu.assertNil(family.of("photo-model"))
end

function TestFamily:test_evaluate_warns_once_and_keeps_it_in_the_stats()
  local rows = { { qid = "1", answer = "a", gold_answers = { "a" }, model = "gpt-4o" },
                 { qid = "2", answer = "b", gold_answers = { "b" }, model = "claude-3-haiku" },
                 { qid = "3", answer = "c", gold_answers = { "c" }, provider = "openai" } }
  local j = judge("gpt-4o-mini")
  local res = ev.evaluate(rows, { metrics = { "token_f1" }, judge = j })
  local want = "the judge (gpt-4o-mini) is of the same family (OpenAI GPT) as the system under test "
    .. "(gpt-4o, openai): judges tend to prefer answers of their own family; a judge of another family checks this"
  lu.assertEquals(j:stats().warnings, { want })
  lu.assertEquals(res.meta.judge.warnings, { want })
  ev.evaluate(rows, { metrics = { "token_f1" }, judge = j })
  lu.assertEquals(#j:stats().warnings, 1) -- said once
  -- another family, no system names, or the offline judge: no warning
  local other = judge("qwen2.5:7b")
  ev.evaluate(rows, { metrics = { "token_f1" }, judge = other })
  lu.assertNil(other:stats().warnings)
  local off = ev.judge.open("offline")
  ev.evaluate(rows, { metrics = { "token_f1" }, judge = off })
  lu.assertNil(off:stats().warnings)
  lu.assertNil(judge("gpt-4o"):check_family(ev.dataset.from_rows { { qid = "1", answer = "x" } }))
end

os.exit(lu.LuaUnit.run(), true)
