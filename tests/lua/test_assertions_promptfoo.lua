-- promptfoo's assertion types and value forms in ev.assertions, with
-- values computed by hand: numbers read as text, comma-separated lists,
-- file:// values, JSON-aware equals, word and character counts,
-- contains-json, the output's finish reason and log-probabilities, lua
-- scripts, weights, assert-sets, a case's threshold and max-score across cells.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local A = ev.assertions

local function run(a, row, ctx)
  if type(row) == "string" then row = { answer = row } end
  local c = assert(A.compile(a, "a"))
  local r = A.run(c, row, ctx)
  return r.pass, r.reason, r.score
end

local function refused(a) return select(2, A.compile(a, "assert[1]")) end

TestValues = {}

function TestValues:test_numbers_are_read_as_text()
  lu.assertEquals({ run({ type = "contains", value = 42 }, "the answer is 42") }, { true, 'contains all of "42"', 1 })
  lu.assertEquals({ run({ type = "equals", value = 5 }, "5") }, { true, 'equals "5"', 1 })
  lu.assertEquals({ run({ type = "equals", value = 2.5 }, "2.5") }, { true, 'equals "2.5"', 1 })
  lu.assertEquals({ run({ type = "starts-with", value = 3 }, "3 parts") }, { true, 'starts with "3"', 1 })
end

function TestValues:test_comma_separated_values()
  lu.assertEquals(A.split_commas('a, b ,"c, d"'), { "a", "b", "c, d" })
  lu.assertEquals({ run({ type = "contains-any", value = "GiB, TiB" }, "5 TiB") }, { true, 'contains "TiB"', 1 })
  lu.assertEquals({ run({ type = "icontains-all", value = "five, tib" }, "Five TiB") },
    { true, 'contains all of ["five","tib"]', 1 })
  lu.assertEquals({ run({ type = "contains-all", value = "5,PiB" }, "5 TiB") }, { false, 'lacks "PiB"', 0 })
  -- contains takes its string whole, as promptfoo does
  lu.assertEquals({ run({ type = "contains", value = "5, TiB" }, "5 TiB") }, { false, 'lacks "5, TiB"', 0 })
end

function TestValues:test_file_values()
  local dir = h.tmpdir()
  h.write(dir .. "/want.json", '{"a": [1, 2]}')
  h.write(dir .. "/want.txt", "5 TiB\n")
  local c = assert(A.compile({ type = "equals", value = "file://want.json" }, "a", { base = dir }))
  lu.assertTrue(A.run(c, { answer = '{"a":[1,2.0]}' }).pass)
  c = assert(A.compile({ type = "contains-any", value = { "file://want.txt", "GiB" } }, "a", { base = dir }))
  lu.assertEquals(A.run(c, { answer = "up to 5 TiB" }).reason, 'contains "5 TiB"')
  local _, why = A.compile({ type = "equals", value = "file://none.json" }, "a", { base = dir })
  lu.assertStrContains(why, "a.value: cannot read file://none.json: ")
  _, why = A.compile({ type = "equals", value = "file://expected.py:get" }, "a", { base = dir })
  lu.assertEquals(why, "a.value: file://expected.py:get: a script that computes the value is promptfoo's form; "
    .. "write a lua assertion")
  h.sh("rm -rf " .. dir)
end

TestTypes = {}

function TestTypes:test_equals_is_json_aware()
  lu.assertEquals({ run({ type = "equals", value = { a = 1, b = { "x" } } }, '{"b": ["x"], "a": 1.0}') },
    { true, 'equals {"a":1,"b":["x"]} as JSON', 1 })
  lu.assertEquals({ run({ type = "equals", value = { 1, 2 } }, "[2, 1]") }, { false, "differs from [1,2] as JSON", 0 })
end

function TestTypes:test_overlap_scores_by_hand()
  -- BLEU: "the cat sat" against itself: every precision 1 but the 4-gram's (no 4-grams: 0, smoothed to
  -- 1e-7), brevity 1: exp(0.25 ln 1e-7)
  local _, _, s = run({ type = "bleu", value = "the cat sat", threshold = 0 }, "the cat sat")
  lu.assertAlmostEquals(s, math.exp(0.25 * math.log(1e-7)), 1e-12)
  lu.assertEquals({ run({ type = "bleu", value = "x" }, "   ") },
    { nil, "BLEU: the output or the reference has no words to score" })
  -- GLEU: "a b c" against "a b d": 1-grams 2 of 3, 2-grams 1 of 2, 3-grams 0 of 1: min(3/6, 3/6)
  _, _, s = run({ type = "gleu", value = "a b d", threshold = 0 }, "a b c")
  lu.assertAlmostEquals(s, 0.5, 1e-12)
  -- ROUGE-N: "a b c d" against "a b": P = 2/4, R = 1, F1 = 2/3
  _, _, s = run({ type = "rouge-n", value = "a b", threshold = 0 }, "a b c d")
  lu.assertAlmostEquals(s, 2 / 3, 1e-12)
end

function TestTypes:test_counts()
  lu.assertEquals({ run({ type = "word-count", value = 3 }, "  one two\tthree ") }, { true, "3 words, within exactly 3", 1 })
  lu.assertEquals({ run({ type = "word-count", value = { min = 4 } }, "one two three") },
    { false, "3 words, expected at least 4", 0 })
  lu.assertEquals({ run({ type = "not-word-count", value = { min = 1, max = 2 } }, "one two three") },
    { true, "not: 3 words, expected 1 to 2", 1 })
  -- code points: an emoji is one character (promptfoo's Array.from), six Chinese characters six
  lu.assertEquals({ run({ type = "character-count", value = 7 }, "连续三个分片😀") }, { true, "7 characters, within exactly 7", 1 })
  lu.assertEquals(refused { type = "word-count", value = { min = 5, max = 2 } }, "assert[1].value: min 5 is above max 2")
  lu.assertEquals(refused { type = "word-count", value = { least = 2 } }, "assert[1].value.least: not a key here (min, max)")
  lu.assertEquals({ run({ type = "ends-with", value = "TiB." }, "5 TiB.") }, { true, 'ends with "TiB."', 1 })
end

function TestTypes:test_contains_json()
  local schema = { type = "object", required = { "n" }, properties = { n = { type = "integer" } } }
  lu.assertEquals({ run({ type = "contains-json" }, 'Here: {"n": 1} done') }, { true, "contains a JSON object", 1 })
  lu.assertEquals({ run({ type = "contains-json", value = schema }, 'a {"m": 1} then {"n": 2}') },
    { true, "contains a JSON object matching the schema", 1 })
  lu.assertEquals({ run({ type = "contains-json", value = schema }, 'a {"m": 1}') },
    { false, "1 JSON object, none matching the schema: $: required key 'n' is missing", 0 })
  lu.assertEquals({ run({ type = "contains-json" }, "no braces [1, 2]") }, { false, "no JSON object in the output", 0 })
  -- a schema as JSON text, as promptfoo accepts it
  lu.assertTrue((run({ type = "is-json", value = '{"type": "array"}' }, "[1]")))
end

function TestTypes:test_output_fields()
  -- perplexity: exp(-(ln 0.5 + ln 0.25) / 2) = exp(ln(8) / 2) = 2.828427...
  local row = { answer = "x", logprobs = { math.log(0.5), math.log(0.25) } }
  local p, reason = run({ type = "perplexity", threshold = 3 }, row)
  lu.assertEquals({ p, reason }, { true, "perplexity 2.8284 <= 3" })
  local _, _, s = run({ type = "perplexity-score", threshold = 0.25 }, row)
  lu.assertAlmostEquals(s, 1 / (1 + math.sqrt(8)), 1e-12)
  lu.assertEquals({ run({ type = "perplexity" }, "x") },
    { nil, "the output has no logprobs (ask the provider for them: logprobs = true)" })
  lu.assertEquals({ run({ type = "finish-reason", value = "STOP" }, { answer = "x", finish_reason = "stop" }) },
    { true, 'finish reason "stop"', 1 })
  lu.assertEquals({ run({ type = "finish-reason", value = "stop" }, { answer = "x", finish_reason = "length" }) },
    { false, 'finish reason "length", not "stop"', 0 })
  lu.assertEquals({ run({ type = "finish-reason", value = "stop" }, "x") }, { false, "the provider gave no finish reason", 0 })
end

function TestTypes:test_function_call()
  local fns = { { name = "weather", parameters = { type = "object", required = { "city" },
                  properties = { city = { type = "string" } } } } }
  lu.assertEquals({ run({ type = "is-valid-openai-function-call", value = fns }, '{"name": "weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}') },
    { true, "calls weather with arguments fitting its schema", 1 })
  lu.assertEquals({ run({ type = "is-valid-openai-function-call", value = fns }, '{"name": "weather", "arguments": "{}"}') },
    { false, "weather: arguments: required key 'city' is missing", 0 })
  lu.assertEquals({ run({ type = "is-valid-openai-function-call" }, { answer = '{"name": "time", "arguments": {}}', functions = fns }) },
    { false, "calls time, which is not an offered function", 0 })
end

function TestTypes:test_lua_scripts()
  lu.assertEquals({ run({ type = "lua", value = "#output > 3" }, "12345") }, { true, "the script returned true", 1 })
  lu.assertEquals({ run({ type = "lua", value = "output:find(context.vars.city) ~= nil" }, { answer = "Oslo", city = "Oslo" }) },
    { true, "the script returned true", 1 })
  lu.assertEquals({ run({ type = "lua", value = "return 0.4", threshold = 0.5 }, "x") },
    { false, "the script scored 0.4 (threshold 0.5)", 0.4 })
  lu.assertEquals({ run({ type = "lua", value = "local n = #output\nreturn { pass = n == 1, score = 1, reason = 'one' }" }, "x") },
    { true, "one", 1 })
  lu.assertEquals({ run({ type = "lua", value = function(out) return out == "y" end }, "x") },
    { false, "the script returned false", 0 })
  lu.assertEquals({ run({ type = "lua", value = "error('boom')" }, "x") }, { nil, "the script raised: a.value:2: boom" })
  lu.assertStrContains(refused { type = "lua", value = "return (" }, "assert[1].value: bad Lua: ")
  -- code from a row sees no files, processes or modules
  lu.assertEquals({ run({ type = "lua", value = "io.open('/etc/passwd')" }, "x") },
    { nil, "the script raised: a.value:2: attempt to index a nil value (global 'io')" })
  lu.assertEquals({ run({ type = "lua", value = "json.decode(output).n == 2" }, '{"n": 2}') },
    { true, "the script returned true", 1 })
  -- a loop that never ends is stopped
  local S = require "evalua.experiment.assertions_script"
  local was = S.max_instructions
  S.max_instructions = 100000
  lu.assertEquals({ run({ type = "lua", value = "while true do end" }, "x") },
    { nil, "the script raised: the script ran over 100000 instructions" })
  S.max_instructions = was
  lu.assertEquals(refused { type = "webhook", value = "ftp://x" }, "assert[1].value: expected an http:// or https:// URL")
end

TestScores = {}

function TestScores:test_weights_threshold_and_sets()
  -- scores 1 (weight 2), 0 (weight 1), 0.5 (weight 1): (2 + 0 + 0.5) / 4 = 0.625
  local list = { { type = "contains", value = "TiB", weight = 2 }, { type = "contains", value = "GiB" },
                 { type = "lua", value = "return 0.5", threshold = 0.4 } }
  local m = A.metric(list, { score = "weighted" })
  local r = m.fn { answer = "5 TiB" }
  lu.assertEquals({ r.score, r.pass }, { 0.625, false })
  -- a case threshold decides instead of every assertion passing
  r = m.fn { answer = "5 TiB", threshold = 0.6 }
  lu.assertEquals({ r.score, r.pass, r.reason:sub(1, 43) }, { 0.625, true, "aggregate score 0.6250 >= threshold 0.6; fa" })
  r = A.metric(list, { threshold = 0.7 }).fn { answer = "5 TiB" }
  lu.assertEquals({ r.score, r.weighted_score }, { 0, 0.625 })
  -- named scores: per metric name, the weighted mean of its assertions' scores
  r = A.metric { { type = "contains", value = "TiB", metric = "facts", weight = 3 },
                 { type = "contains", value = "GiB", metric = "facts" },
                 { type = "max-words", value = 1, metric = "style" } }.fn { answer = "5 TiB" }
  lu.assertEquals(r.named_scores, { facts = 0.75, style = 0 })
  -- weight 0: reported, never failing, and out of the score
  r = A.metric { { type = "contains", value = "TiB" }, { type = "contains", value = "GiB", weight = 0 } }.fn { answer = "5 TiB" }
  lu.assertEquals({ r.score, r.weighted_score }, { 1, 1 })
  -- an assert-set is one assertion of the list: its score the mean of its own, its threshold its own
  local set = { type = "assert-set", threshold = 0.5, weight = 3,
                assert = { { type = "contains", value = "TiB" }, { type = "contains", value = "PiB" } } }
  r = A.metric({ set, { type = "contains", value = "GiB" } }, { score = "weighted" }).fn { answer = "5 TiB" }
  -- the set: 0.5 >= 0.5 passes, score 0.5 weighing 3; contains GiB fails: (1.5 + 0) / 4
  lu.assertEquals({ r.score, r.pass, #r.assertions[1].assertions }, { 0.375, false, 2 })
  lu.assertEquals(refused { type = "assert-set", assert = { { type = "assert-set", assert = {} } } },
    "assert[1].assert[1]: an assert-set cannot hold another")
  lu.assertEquals(refused { type = "assert-set", assert = {}, threshold = 2 }, "assert[1].assert: expected a non-empty list of assertions")
end

function TestScores:test_max_score_across_cells()
  local rows = {
    { qid = "q1", system = "a", answer = "5 TiB per object" },
    { qid = "q1", system = "b", answer = "5 TiB" },
    { qid = "q2", system = "a", answer = "no idea" },
    { qid = "q2", system = "b", answer = "maybe 5 GiB" },
  }
  local m = A.metric { { type = "contains", value = "5" }, { type = "contains", value = "TiB" },
                       { type = "max-score" } }
  local out = m.batch(rows, {})
  -- q1: a and b both score 1: the first highest wins; q2: a 0, b 0.5
  lu.assertEquals({ out[1].score, out[2].score, out[3].score, out[4].score }, { 1, 0, 0, 0 })
  lu.assertEquals(out[2].assertions[3].reason, "score 1.0000: not the highest score (a has 1.0000)")
  lu.assertEquals(out[4].assertions[3].reason, "score 0.5000: the highest score")
  lu.assertEquals(refused { type = "not-max-score" }, "assert[1].type: 'not-max-score' has no not- form (it ranks the cells)")
  lu.assertEquals(refused { type = "not-assert-set", assert = { { type = "contains", value = "x" } } },
    "assert[1].type: 'not-assert-set' has no not- form (negate the assertions inside it)")
  local res = ev.evaluate(rows, { metrics = { m }, system = "system", ci = false })
  lu.assertEquals(res:agg("a", "assertions").mean, 0.5)
end

function TestTypes:test_json_is_read_as_javascript_reads_it()
  -- cjson would take these; JSON.parse (and so promptfoo) does not
  for _, text in ipairs { "NaN", "Infinity", "0x10", "01", "[1,]", "{'a': 1}" } do
    local pass, reason = run({ type = "is-json" }, text)
    lu.assertEquals(pass, false, text)
    lu.assertStrContains(reason, "not JSON: ", false, text)
  end
  -- [] and {} stay apart
  lu.assertEquals({ run({ type = "is-json", value = '{"type": "array"}' }, "{}") },
    { false, "$: expected array, got object", 0 })
  lu.assertEquals({ run({ type = "equals", value = '[]' }, "[]") }, { true, 'equals "[]"', 1 })
end

function TestTypes:test_draft7_keywords_users_write()
  local s = {
    definitions = { price = { type = "number", exclusiveMinimum = 0 } },
    type = "object", required = { "id", "when", "price" },
    properties = {
      id = { type = "string", pattern = "^[A-Z]{2}\\d{3}$" },
      when = { type = "string", format = "date-time" },
      price = { ["$ref"] = "#/definitions/price" },
      kind = { const = "order" },
      tags = { type = "array", uniqueItems = true, items = { enum = { "a", "b" } } },
      contact = { oneOf = { { type = "string", format = "email" }, { type = "null" } } },
    },
    additionalProperties = false,
  }
  local good = '{"id": "AB123", "when": "2024-02-29T10:00:00Z", "price": 2.5, "kind": "order", "tags": ["a"], '
    .. '"contact": "x@example.com"}'
  lu.assertEquals({ run({ type = "is-json", value = s }, good) }, { true, "valid JSON matching the schema", 1 })
  local function why(text) return select(2, run({ type = "is-json", value = s }, text)) end
  lu.assertEquals(why('{"id": "AB12", "when": "2024-02-29T10:00:00Z", "price": 1}'),
    '$.id: "AB12" does not match the pattern /^[A-Z]{2}\\d{3}$/')
  lu.assertEquals(why('{"id": "AB123", "when": "2023-02-29T10:00:00Z", "price": 1}'),
    '$.when: "2023-02-29T10:00:00Z" is not a valid date-time')
  lu.assertEquals(why('{"id": "AB123", "when": "2024-02-29T10:00:00Z", "price": 0}'),
    "$.price: 0 is not above the exclusiveMinimum 0")
  lu.assertEquals(why('{"id": "AB123", "when": "2024-02-29T10:00:00Z", "price": 1, "tags": ["a", "a"]}'),
    "$.tags: items 0 and 1 are equal (uniqueItems)")
  lu.assertEquals(why('{"id": "AB123", "when": "2024-02-29T10:00:00Z", "price": 1, "contact": 5}'),
    "$.contact: matches 0 of oneOf, not exactly 1")
  lu.assertEquals(why('{"id": "AB123", "when": "2024-02-29T10:00:00Z", "price": 1, "kind": "refund"}'),
    '$.kind: "refund" is not the const "order"')
  lu.assertEquals(refused { type = "is-json", value = { type = "string", format = "phone" } },
    "assert[1].value.format: 'phone' is not a format evalua checks (date, date-time, email, hostname, idn-email, "
    .. "idn-hostname, ipv4, ipv6, iri, iri-reference, json-pointer, regex, relative-json-pointer, time, uri, "
    .. "uri-reference, uri-template, uuid)")
  lu.assertEquals(refused { type = "is-json", value = { ["$ref"] = "#/definitions/none" } },
    "assert[1].value.$ref: '#/definitions/none' names nothing in this schema (references to other documents are not read)")
end

-- METEOR by hand: the NLTK example without a synonym that its stems reach
-- gives 13 matches; the same words with a WordNet synonym pair gain one.
function TestTypes:test_meteor()
  local meteor = require "evalua.experiment.assertions_meteor"
  lu.assertNotNil(meteor.wordnet_dir(), "WordNet 3.0 (Debian's wordnet-base, install-deps.sh) is not installed")
  -- 6 words, 5 exact matches in one chunk: P = R = 5/6, Fmean = 5/6, penalty 0.5 (1/5)^3
  local _, _, s = run({ type = "meteor", value = "the cat sat on the mat" }, "the cat sat on the rug")
  lu.assertAlmostEquals(s, (1 - 0.5 * (1 / 5) ^ 3) * 5 / 6, 1e-12)
  -- sofa and couch share a WordNet synset: 6 matches in one chunk
  _, _, s = run({ type = "meteor", value = "the cat sat on the couch" }, "the cat sat on the sofa")
  lu.assertAlmostEquals(s, 1 - 0.5 * (1 / 6) ^ 3, 1e-12)
  -- Porter stems: "sitting" and "sits" both stem to "sit"
  _, _, s = run({ type = "meteor", value = "the cat sits" }, "the cat sitting")
  lu.assertAlmostEquals(s, 1 - 0.5 * (1 / 3) ^ 3, 1e-12)
  -- alpha, beta and gamma as promptfoo's keys: 2 of 3 words in two chunks, P = R = 2/3
  _, _, s = run({ type = "meteor", value = "a b c", alpha = 0.5, beta = 1, gamma = 0.5, threshold = 0 }, "a x c")
  lu.assertAlmostEquals(s, (1 - 0.5 * (2 / 2)) * (2 / 3), 1e-12)
  lu.assertEquals(refused { type = "meteor", value = "x", alpha = 2 }, "assert[1].alpha: expected a number from 0 to 1")
  local stem = require("evalua.experiment.porter").stem
  -- Porter's own examples (1980 paper)
  for word, want in pairs { caresses = "caress", ponies = "poni", relational = "relat", conditional = "condit",
                            hopping = "hop", filing = "file", generalization = "gener", electrical = "electr",
                            adjustable = "adjust", controll = "control", roll = "roll" } do
    lu.assertEquals(stem(word), want, word)
  end
end

-- docs/assertions.md names every type of the registry (or sends the reader
-- to agents.md for the trajectory ones).
function TestTypes:test_every_type_is_documented()
  local f = assert(io.open((os.getenv("EVALUA_SRC") or ".") .. "/docs/assertions.md"))
  local doc = f:read("a")
  f:close()
  for _, name in ipairs(A.type_names()) do
    if not name:find("^trajectory:") and name ~= "tool-call-f1" then
      lu.assertStrContains(doc, "`" .. name .. "`", false, name .. " is not in docs/assertions.md")
    end
  end
  lu.assertStrContains(doc, "agents.md#assertions")
end

TestMarkup = {}

function TestMarkup:test_xml()
  lu.assertEquals({ run({ type = "is-xml" }, "<root><a>1</a></root>") }, { true, "well-formed XML", 1 })
  local pass, reason = run({ type = "is-xml" }, "<root><a>1</root>")
  lu.assertEquals(pass, false)
  lu.assertStrContains(reason, "not well-formed XML (line 1): ")
  lu.assertEquals({ run({ type = "is-xml", value = "root.a, root.b" }, "<root><a>1</a></root>") },
    { false, "XML lacks the elements root.b", 0 })
  lu.assertEquals({ run({ type = "contains-xml", value = { requiredElements = { "note.to" } } },
    "Here: <note><to>Tove</to></note> bye") }, { true, "contains well-formed XML with note.to", 1 })
  lu.assertEquals({ run({ type = "contains-xml" }, "a < b and c > d") }, { false, "no XML in the output", 0 })
  -- an external entity is neither fetched nor read: the document stays well-formed, &e; unexpanded
  lu.assertTrue((run({ type = "is-xml" }, '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>')))
end

function TestMarkup:test_html()
  lu.assertEquals({ run({ type = "is-html" }, "<div><p>Hello</p></div>") }, { true, "HTML with 2 elements", 1 })
  lu.assertEquals({ run({ type = "is-html" }, "Hello <b>world</b>") }, { false, "text stands outside the HTML elements", 0 })
  lu.assertEquals({ run({ type = "is-html" }, "<foo>bar</foo>") },
    { false, "no HTML element in the output (<foo> is not HTML)", 0 })
  lu.assertEquals({ run({ type = "is-html" }, "<!DOCTYPE html><html><body>Hi</body></html>") },
    { true, "HTML with 2 elements", 1 })
  lu.assertEquals({ run({ type = "is-html" }, "<my-widget>x</my-widget>") }, { true, "HTML with 1 element", 1 })
end

function TestMarkup:test_sql()
  lu.assertEquals({ run({ type = "is-sql" }, "SELECT id, name FROM users WHERE age > 18;") },
    { true, "valid SQL (SQLite), 1 statement", 1 })
  lu.assertEquals({ run({ type = "is-sql" }, "SELECT * FORM users") },
    { false, 'not valid SQL (SQLite): near "FORM": syntax error', 0 })
  lu.assertEquals({ run({ type = "is-sql" }, "SELECT a FROM t; DELETE FROM u WHERE x = 1") },
    { true, "valid SQL (SQLite), 2 statements", 1 })
  lu.assertEquals({ run({ type = "is-sql" }, "SELECT count(*) FROM orders GROUP BY") },
    { false, "not valid SQL (SQLite): incomplete input", 0 })
  lu.assertEquals({ run({ type = "contains-sql" }, "Here:\n```sql\nSELECT 1;\n```\n") },
    { true, "contains valid SQL (SQLite), 1 statement", 1 })
  lu.assertEquals({ run({ type = "is-sql", value = { databaseType = "sqlite" } }, "SELECT 1") },
    { true, "valid SQL (SQLite), 1 statement", 1 })
  lu.assertEquals(refused { type = "is-sql", value = { databaseType = "MySQL" } },
    "assert[1].value.databaseType: evalua checks SQLite's dialect only, not \"MySQL\"")
  lu.assertEquals(refused { type = "is-sql", value = { allowedTables = { "users" } } },
    "assert[1].value.allowedTables: not supported: evalua checks syntax, not which tables a query reads")
end

os.exit(lu.LuaUnit.run(), true)
