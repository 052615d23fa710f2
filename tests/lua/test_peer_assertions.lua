-- Peers' own assertion cases, kept as data (tests/data/peers/<peer>/*.jsonl,
-- each line naming the peer file and test it came from): every case runs
-- through ev.assertions and must give the peer's verdict, and its score
-- (exactly, or within score_min..score_max where the peer bounds it).
-- A case whose peer value evalua deliberately does not follow carries
-- "evalua" (the value evalua gives) and "why"; docs/assertions.md explains.
local lu = require "luaunit"
local ev = require "evalua"
local J = require "evalua.experiment.assertions_json"
local A = ev.assertions

local function cases(file)
  local out = {}
  for line in io.lines(file) do
    if line:find("%S") then out[#out + 1] = assert(J.decode(line)) end
  end
  return out
end

local function run_file(file, ctx)
  local n = 0
  for i, c in ipairs(cases(file)) do
    local where = ("%s:%d (%s)"):format(file, i, c.from)
    lu.assertNotNil(c.from, where .. ": a case names the peer file it came from")
    local compiled, why = A.compile(c.assert, "assert", { base = "tests/data/peers/promptfoo" })
    local refused = c.evalua and c.evalua.refused or c.refused
    if refused then
      lu.assertNil(compiled, where)
      lu.assertStrContains(why, refused, false, where)
    else
      lu.assertNotNil(compiled, where .. ": " .. tostring(why))
      local row = c.row or {}
      row.answer = c.output
      local r = A.run(compiled, row, ctx)
      local want = c.evalua or c
      if want.pass == J.null then want.pass = nil end
      lu.assertEquals(r.pass, want.pass, where .. ": " .. tostring(r.reason))
      if want.score then lu.assertAlmostEquals(r.score, want.score, 1e-9, where) end
      if want.score_min then lu.assertTrue(r.score >= want.score_min, where .. ": score " .. tostring(r.score)) end
      if want.score_max then lu.assertTrue(r.score <= want.score_max, where .. ": score " .. tostring(r.score)) end
      if want.reason then lu.assertStrContains(r.reason, want.reason, false, where) end
    end
    n = n + 1
  end
  return n
end

TestPromptfoo = {}
for _, name in ipairs { "text", "overlap", "contains", "json", "html", "output", "script", "sql", "xml", "wordcount", "rouge" } do
  TestPromptfoo["test_" .. name] = function()
    lu.assertTrue(run_file("tests/data/peers/promptfoo/" .. name .. ".jsonl") > 0)
  end
end

-- NLTK's METEOR doctests and evaluate's (tests/data/peers/nltk/README.md)
function test_nltk_meteor()
  lu.assertEquals(run_file("tests/data/peers/nltk/meteor.jsonl"), 7)
end

-- The JSON-Schema-Test-Suite's draft7 cases (port.py wrote them), read
-- with the strict reader so that [] and {} stay apart: every schema is read
-- (or refused where the case says evalua refuses it) and every instance
-- is valid or not as the suite says.
local S = require "evalua.experiment.assertions_schema"

TestJsonSchemaSuite = {}
function TestJsonSchemaSuite:test_draft7()
  local n, refused = 0, 0
  for line in io.lines("tests/data/peers/json-schema-test-suite/draft7.jsonl") do
    local c = assert(J.decode(line))
    local ok, why = S.validate(c.schema, "schema")
    if c.evalua and c.evalua.refused then
      lu.assertNil(ok, c.from)
      lu.assertStrContains(why, c.evalua.refused, false, c.from)
      refused = refused + 1
    else
      lu.assertTrue(ok, c.from .. ": " .. tostring(why))
      local bad = S.check(c.schema, c.data)
      lu.assertEquals(bad == nil, c.valid, c.from .. ": " .. tostring(bad))
    end
    n = n + 1
  end
  lu.assertEquals({ n, refused }, { 904, 4 })
end

-- autoevals' own cases for its deterministic scorers (ev.scorers); where
-- evalua deliberately differs the case holds evalua's score and why.
TestAutoevals = {}
function TestAutoevals:test_scorers()
  local scorers = require "evalua.eval.scorers"
  local n = 0
  for line in io.lines("tests/data/peers/autoevals/scorers.jsonl") do
    local c = assert(J.decode(line))
    local opts = c.opts or (c.number_scorer and { number_scorer = scorers[c.number_scorer] }) or nil
    local out, exp = c.output, c.expected
    if out == J.null then out = nil end
    if exp == J.null then exp = nil end
    local got = scorers[c.scorer](out, exp, opts)
    local want = c.evalua and c.evalua.score or c.score
    if c.abs then lu.assertAlmostEquals(got, want, c.abs, c.from) end
    if c.rel then lu.assertAlmostEquals(got, want, c.rel * math.max(1, math.abs(want)), c.from) end
    if c.score_max_hundredths then lu.assertTrue(math.floor(got * 100 + 0.5) <= c.score_max_hundredths, c.from) end
    n = n + 1
  end
  lu.assertEquals(n, 82)
end

-- ranx's names in the retrieval registry (ev.metrics.measure), on ranx's
-- own test rankings; the values are ranx's formulas, as its tests write them.
TestRanx = {}
function TestRanx:test_names()
  local metrics = require "evalua.eval.metrics"
  local n = 0
  for line in io.lines("tests/data/peers/ranx/metrics.jsonl") do
    local c = assert(J.decode(line))
    local ranking = {} -- ids as text, as the gold map's keys are
    for i, id in ipairs(c.ranking) do ranking[i] = tostring(id) end
    lu.assertAlmostEquals(metrics.measure(c.measure, ranking, c.gold), c.value, 1e-12, c.from)
    n = n + 1
  end
  lu.assertEquals(n, 18)
end

os.exit(lu.LuaUnit.run(), true)
