-- scripts/rag_report.lua with an OpenAI-compatible judge (the mock server):
-- every judged metric is measured, a rerun is answered from the cache, and
-- a dry run sends nothing.
local lu = require "luaunit"
local cjson = require "cjson"
local h = require "tests.lua.helpers"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()
local dir = h.tmpdir()
local ENV = ("OPENAI_BASE_URL=%s EVALUA_MODEL=mock-judge EVALUA_CACHE_DIR=%s/cache OPENAI_API_KEY=sk-rag-report-key")
  :format(mock.url, dir)

local function report(args)
  return h.run(("%s %s run scripts/rag_report.lua --judge openai --quiet --out %s/out %s"):format(
    ENV, h.bin, dir, args or ""))
end

function test_openai_judge_measures_every_judged_metric_then_the_cache_answers()
  local r = report("--format json,md")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "judge: mock-judge (fp_mock); ")
  local sent = mock:stats().requests
  lu.assertTrue(sent > 180 * 4, "requests: " .. sent)
  local doc = cjson.decode(h.read(dir .. "/out/rag_report.json"))
  for _, m in ipairs { "faithfulness", "answer_relevance", "context_precision", "context_recall" } do
    local a = doc.aggregates.hybrid_rerank.all.all[m]
    lu.assertNotNil(a.mean, m)
    -- refusals make no statements, so faithfulness may leave a few unmeasured
    lu.assertTrue(a.measured >= 55, m .. " measured " .. a.measured)
  end
  lu.assertEquals(doc.meta.judge.requests, sent)
  local asked = sent + doc.meta.judge.cache_hits -- repeats within a run are answered from the cache too
  -- the same report again: every answer from the cache, nothing sent
  r = report("--format json")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(mock:stats().requests, sent)
  doc = cjson.decode(h.read(dir .. "/out/rag_report.json"))
  lu.assertEquals(doc.meta.judge.requests, 0)
  lu.assertEquals(doc.meta.judge.cache_hits, asked)
  -- the key is in no file written
  lu.assertEquals(h.run("grep -rl sk-rag-report-key " .. dir).stdout, "")
end

function test_dry_run_sends_nothing()
  local before = mock:stats().requests
  local r = h.run(("%s EVALUA_CACHE_DIR=%s/empty %s run scripts/rag_report.lua --judge openai --dry-run --quiet")
    :format(ENV, dir, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  -- Issue 12, defect 7: 720 counted identical requests (shared by key in a
  -- real run) once each; the distinct requests up to each item's first
  -- missing answer are 529, a lower bound of what a run sends (above: > 720).
  lu.assertStrMatches(r.stdout, "dry run: at least 529 judge requests, about %d+ prompt and %d+ completion tokens; nothing was sent\n")
  lu.assertEquals(mock:stats().requests, before)
end

-- Offline, the report's header says what the offline judge can and cannot
-- estimate, and answer_relevance is unmeasured with the reason. Every
-- format says that the judged scores come from the offline heuristic
-- (issue 25, point 7): terminal and Markdown lines, an HTML banner, JSON
-- notices, a CSV column, JUnit properties and marks.
function test_offline_header_names_what_it_cannot_estimate()
  local dir = h.tmpdir()
  local r = h.run(("%s run scripts/rag_report.lua --quiet --out %s/out"):format(h.bin, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  local lines = {}
  for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
  lu.assertEquals(lines[3], "judge: offline heuristic (no model, no network)")
  lu.assertStrContains(lines[4], "offline judge: estimates faithfulness, ")
  lu.assertStrContains(lines[4], "; cannot estimate answer_relevance and answer_relevance_direct (no model to read how "
    .. "an answer addresses its question), pairwise without a reference, G-Eval criteria or LLMEvaluator instructions")
  lu.assertEquals(lines[5], "Judged by the offline heuristic, not a model:")
  local estimates = "The scores of faithfulness, context_precision, context_recall are heuristic estimates"
  lu.assertStrContains(lines[6], "  " .. estimates)
  lu.assertStrContains(lines[7], "  answer_relevance: not estimated for 180 of 180 items (questions: the offline judge cannot")
  local md = h.read(dir .. "/out/rag_report.md")
  lu.assertStrContains(md, "> **Judged by the offline heuristic, not a model.**\n>\n> - The scores of faithfulness, "
    .. "context\\_precision, context\\_recall are heuristic estimates")
  lu.assertStrContains(h.read(dir .. "/out/rag_report.html"),
    '<div class="banner offline" role="alert"><strong>Judged by the offline heuristic, not a model</strong><ul><li>'
      .. estimates)
  local doc = cjson.decode(h.read(dir .. "/out/rag_report.json"))
  lu.assertEquals(doc.meta.judge.kind, "offline")
  lu.assertEquals(doc.notices[1].kind, "offline")
  lu.assertStrContains(doc.notices[1].lines[1], estimates)
  local csv = h.read(dir .. "/out/rag_report.csv")
  lu.assertStrContains(csv, "id,system,query_class,language,judge,recall@5,")
  lu.assertStrContains(csv, "\nq01,baseline,factoid,en,offline heuristic,")
  local junit = h.read(dir .. "/out/rag_report.junit.xml")
  lu.assertStrContains(junit, '<property name="judge" value="Judged by the offline heuristic, not a model: ' .. estimates)
  lu.assertStrMatches(junit, '.*faithfulness = 0%.%d%d%d %(%d+/60 measured%) %(offline heuristic%)\n.*')
  lu.assertNotStrContains(junit, "token_f1 = 0.482 (offline heuristic)") -- not judged: not marked
  h.sh("rm -rf " .. dir)
end

-- A row's own language field names its slice (German rows are "de", not
-- the script's guess "en"); only rows without one are guessed, and say so.
-- recall@5 of the two German rows by hand: d1 at rank 1, d2 at rank 2: 1.
function test_a_rows_language_field_names_its_slice()
  local dir = h.tmpdir()
  local r = h.run(("%s run scripts/rag_report.lua --quiet --out %s/out --format json"
    .. " --data tests/data/rows_language.jsonl --corpus tests/data/corpus_small.jsonl"):format(h.bin, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  local agg = cjson.decode(h.read(dir .. "/out/rag_report.json")).aggregates
  local _, by = next(agg)
  local n = {}
  for value, metrics in pairs(by.language) do n[value] = metrics["recall@5"].n end
  lu.assertEquals(n, { de = 2, en = 1, ["cjk (guessed)"] = 1, ["other (guessed)"] = 1 })
  lu.assertEquals(by.language.de["recall@5"].mean, 1)
  lu.assertEquals(by.language.en["recall@5"].mean, 0)
  h.sh("rm -rf " .. dir)
end

local status = lu.LuaUnit.run()
mock:stop()
h.sh("rm -rf " .. dir)
os.exit(status, true)
