-- Errors that used to vanish (issue 13, items 18 and 19): misspelt options
-- are refused at the caller's line, and a broken library module is reported
-- instead of passing for an unknown metric.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local ev = require "evalua"

-- Asserts that the statement raises "case:1: <message>": the error names
-- the caller's line, not a line inside the library.
local function refuses(message, statement)
  local ok, err = pcall(assert(load(statement, "=case", "t", { ev = ev, print = print })))
  lu.assertFalse(ok)
  lu.assertEquals(err, "case:1: " .. message)
end

function test_rag_constructors_refuse_unknown_options()
  refuses("ev.rag.faithfulness: unknown option 'treshold' (did you mean 'threshold'?)",
    "local m = ev.rag.faithfulness { treshold = 0.9 }")
  refuses("ev.rag.relevancy: unknown option 'raise_error' (options: budget, description, fields, mode, name, prompts, samples, temperature, threshold)",
    "local m = ev.rag.relevancy { raise_error = true }")
  refuses("ev.rag.pairwise: unknown option 'threshold' (options: a, b, description, fields, name, prompts, reference, samples, temperature)",
    "local m = ev.rag.pairwise { threshold = 1 }")
  -- a bad value is an error at the caller's line too
  refuses("ev.rag.correctness: samples must be a whole number >= 1", "local m = ev.rag.correctness { samples = 0 }")
  refuses('context_precision: against must be "reference" or "answer"',
    'local m = ev.rag.context_precision { against = "x" }')
  refuses("threshold must be a number", 'local m = ev.rag.correctness { threshold = "x" }')
  lu.assertEquals(ev.rag.faithfulness { threshold = 0.9 }.threshold, 0.9)
end

function test_geval_and_llm_evaluator_refuse_unknown_options()
  refuses("ev.geval: unknown option 'treshold' (did you mean 'threshold'?)",
    "local m = ev.geval { name = \"g\", criteria = \"c\", treshold = 0.5 }")
  refuses("ev.geval: unknown option 'sample' (did you mean 'samples'?)",
    "local g = ev.geval { name = 'g', criteria = 'c' }; local m = g { sample = 3 }")
  refuses("ev.llm_evaluator: unknown option 'instruction' (did you mean 'instructions'?)",
    "local m = ev.llm_evaluator { name = \"e\", instruction = \"x\", inputs = { \"a\" }, outputs = { \"score\" } }")
end

function test_library_option_tables_refuse_unknown_keys()
  refuses("ev.map: unknown option 'concurency' (did you mean 'concurrency'?)",
    "local m = ev.map({}, print, { concurency = 2 })")
  refuses("ev.gate.check: unknown option 'treshold' (did you mean 'thresholds'?)",
    "local m = ev.gate.check({}, { treshold = {} })")
  refuses("ev.gate.check: unknown option 'colour' (options: max_judge_failures, max_regressions, min_coverage, pass_share, percentiles, regression_slices, thresholds, tiers)",
    "local m = ev.gate.check({}, { colour = {} })")
end

function test_retrieval_measures_refuse_unknown_options()
  refuses("ev.metrics: unknown option 'levle' (options: complete, depth, gain, level)",
    "local v = ev.metrics.recall({ 'a' }, { 'a' }, 5, { levle = 2 })")
  refuses("ev.metrics: unknown option 'dept' (did you mean 'depth'?)",
    "local v = ev.metrics.ndcg({ 'a' }, { 'a' }, { dept = 2 })")
  lu.assertEquals(ev.metrics.ndcg({ "a" }, { "a" }, 5, { gain = "exp", level = 1 }), 1.0)
end

function test_cli_specs_refuse_unknown_keys()
  refuses("ev.cli.parse: unknown option 'positonal' (did you mean 'positional'?)",
    "local o = ev.cli.parse({}, { usage = 'u', positonal = true })")
  refuses("ev.cli.parse: option --format: unknown option 'choice' (did you mean 'choices'?)",
    "local o = ev.cli.parse({}, { { 'format', 'md', 'report format', choice = { 'md' } } })")
end

function test_a_broken_rag_module_is_reported_not_hidden()
  local dir = h.tmpdir()
  h.write(dir .. "/lib/evalua/judged/rag.lua", 'error("rag.lua is broken here")\n')
  h.write(dir .. "/s.lua", [[
local ev = require "evalua"
ev.evaluate({ { qid = "q", answer = "a", contexts = { "c" } } }, { metrics = { "faithfulness" } })]])
  local r = h.run(("cd %s && %s run --lua-dir lib s.lua"):format(dir, h.bin))
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "rag.lua is broken here")
  lu.assertNotStrContains(r.stderr, "unknown metric")
end

os.exit(lu.LuaUnit.run(), true)
