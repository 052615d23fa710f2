-- Assertions as metrics: each type passes and fails with its reason, "not-"
-- inverts, a row's own list joins the script's, every assertion that could
-- not decide is refused when it is built (with the field named, and the
-- file and line for a data row), regex is PCRE2 with limits, and a failed
-- output is unmeasured, never a fail.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local A = ev.assertions

local function one(a, row)
  local c = assert(A.compile(a, "a"))
  return A.run(c, row)
end

local function check(a, answer, extra)
  local row = { answer = answer }
  for k, v in pairs(extra or {}) do row[k] = v end
  local r = one(a, row)
  return r.pass, r.reason
end

-- pass, reason and score
local function scored(a, answer, extra)
  local row = { answer = answer }
  for k, v in pairs(extra or {}) do row[k] = v end
  local r = one(a, row)
  return r.pass, r.reason, r.score
end

local function refused(a) return select(2, A.compile(a, "assert[1]")) end

TestTypes = {}

function TestTypes:test_text_matches()
  lu.assertEquals({ check({ type = "equals", value = "5 TiB" }, "5 TiB") }, { true, 'equals "5 TiB"' })
  lu.assertEquals({ check({ type = "equals", value = "5 TiB" }, "5 tib") }, { false, 'differs from "5 TiB"' })
  lu.assertEquals({ check({ type = "equals", value = "" }, "") }, { true, 'equals ""' })
  lu.assertEquals({ check({ type = "contains", value = "TiB" }, "up to 5 TiB") }, { true, 'contains all of "TiB"' })
  lu.assertEquals({ check({ type = "contains", value = "tib" }, "up to 5 TiB") }, { false, 'lacks "tib"' })
  lu.assertEquals({ check({ type = "icontains", value = "tib" }, "up to 5 TiB") }, { true, 'contains all of "tib"' })
  lu.assertEquals({ check({ type = "contains-any", value = { "GiB", "TiB" } }, "5 TiB") }, { true, 'contains "TiB"' })
  lu.assertEquals({ check({ type = "contains-any", value = { "GiB", "PiB" } }, "5 TiB") },
    { false, 'contains none of ["GiB","PiB"]' })
  lu.assertEquals({ check({ type = "contains-all", value = { "5", "TiB" } }, "5 TiB") },
    { true, 'contains all of ["5","TiB"]' })
  lu.assertEquals({ check({ type = "icontains-all", value = { "5", "pib" } }, "5 TiB") }, { false, 'lacks "pib"' })
  lu.assertEquals({ check({ type = "not-contains", value = "sorry" }, "5 TiB") }, { true, 'not: lacks "sorry"' })
  lu.assertEquals({ check({ type = "not-contains", value = "5" }, "5 TiB") }, { false, 'not: contains all of "5"' })
  lu.assertEquals({ check({ type = "starts-with", value = "The" }, "The limit") }, { true, 'starts with "The"' })
  lu.assertEquals({ check({ type = "starts-with", value = "A" }, "The limit") }, { false, 'does not start with "A"' })
  -- Chinese text: bytes compare exactly
  lu.assertEquals({ check({ type = "contains", value = "三个" }, "连续三个分片失败") }, { true, 'contains all of "三个"' })
end

function TestTypes:test_regex_is_pcre2()
  -- the issue's case: a Lua pattern would let this social security number through
  local ssn = "\\d{3}-\\d{2}-\\d{4}"
  lu.assertEquals({ check({ type = "not-regex", value = ssn }, "Your number is 123-45-6789.") },
    { false, 'not: matches /\\d{3}-\\d{2}-\\d{4}/ at "123-45-6789"' })
  lu.assertEquals({ check({ type = "not-regex", value = ssn }, "I cannot share that.") },
    { true, 'not: does not match /\\d{3}-\\d{2}-\\d{4}/' })
  lu.assertEquals({ check({ type = "regex", value = ssn }, "SSN: 123-45-6789") },
    { true, 'matches /\\d{3}-\\d{2}-\\d{4}/ at "123-45-6789"' })
  lu.assertEquals({ check({ type = "regex", value = "^\\d+ (GiB|TiB)$" }, "5 TiB") }, { true, 'matches /^\\d+ (GiB|TiB)$/ at "5 TiB"' })
  lu.assertEquals({ check({ type = "regex", value = "(?i)^the\\b" }, "THE limit") }, { true, 'matches /(?i)^the\\b/ at "THE"' })
  lu.assertEquals({ check({ type = "regex", value = "^\\d" }, "up to 5") }, { false, 'does not match /^\\d/' })
  -- UTF-8 mode: a dot is one code point, so six Chinese characters are six
  lu.assertEquals({ check({ type = "regex", value = "^.{6}$" }, "连续三个分片") }, { true, 'matches /^.{6}$/ at "连续三个分片"' })
  lu.assertEquals({ check({ type = "regex", value = "^.{7}$" }, "连续三个分片") }, { false, 'does not match /^.{7}$/' })
  -- \d is ASCII, as in JavaScript; (*UCP) makes it Unicode
  lu.assertEquals({ check({ type = "regex", value = "\\d" }, "٣") }, { false, 'does not match /\\d/' })
  lu.assertEquals({ check({ type = "regex", value = "(*UCP)\\d" }, "٣") }, { true, 'matches /(*UCP)\\d/ at "٣"' })
end

function TestTypes:test_regex_that_cannot_answer_is_unmeasured()
  -- PCRE2 sees that "b" is required and gives up on 5,000 a's at once: a measured fail
  local many = ("a"):rep(5000)
  lu.assertEquals({ check({ type = "regex", value = "(a+)+b" }, many) }, { false, 'does not match /(a+)+b/' })
  -- with a "b" later it backtracks catastrophically: the match limit stops it
  local reason = 'regex /(a+)+b/: gave up after 1000000 backtracking steps (the match limit): the pattern '
    .. "backtracks catastrophically on this text"
  lu.assertEquals({ check({ type = "regex", value = "(a+)+b" }, many .. "c b") }, { nil, reason })
  -- inverted, it is not a pass either
  lu.assertEquals({ check({ type = "not-regex", value = "(a+)+b" }, many .. "c b") }, { nil, reason })
  -- an answer that is not UTF-8 is named, not matched byte by byte
  lu.assertEquals({ check({ type = "regex", value = "c" }, "ab\xffc") },
    { nil, 'regex /c/: the text is not valid UTF-8 (byte 3: UTF-8 error: illegal byte (0xfe or 0xff))' })
end

function TestTypes:test_bad_regex_is_refused_with_its_position()
  lu.assertEquals(refused { type = "regex", value = "(\\d+" },
    "assert[1].value: bad regular expression: missing closing parenthesis after 4 bytes of the pattern")
  lu.assertEquals(refused { type = "regex", value = "a{2,1}" },
    "assert[1].value: bad regular expression: numbers out of order in {} quantifier after 5 bytes of the pattern")
  lu.assertEquals(refused { type = "regex", value = "\\u00e9" },
    "assert[1].value: bad regular expression: PCRE2 does not support \\F, \\L, \\l, \\N{name}, \\U, or \\u "
    .. "after 2 bytes of the pattern (write \\x{HHHH} for a code point)")
  lu.assertEquals(refused { type = "regex", value = "%d+" }, nil) -- valid PCRE2 too: a literal % then digits
end

function TestTypes:test_lua_patterns_by_their_own_name()
  lu.assertEquals({ check({ type = "lua-pattern", value = "%d+ TiB" }, "up to 5 TiB") },
    { true, 'matches "%d+ TiB" at "5 TiB"' })
  lu.assertEquals({ check({ type = "not-lua-pattern", value = "^%d" }, "up to 5") }, { true, 'not: does not match "^%d"' })
  lu.assertEquals(refused { type = "lua-pattern", value = "[a" },
    "assert[1].value: bad Lua pattern: malformed pattern (missing ']')")
end

function TestTypes:test_json_and_schema()
  lu.assertEquals({ check({ type = "is-json" }, '{"a": 1}') }, { true, "valid JSON" })
  local pass, reason = check({ type = "is-json" }, "{a: 1}")
  lu.assertFalse(pass)
  lu.assertStrContains(reason, "not JSON: ")
  local schema = { type = "object", required = { "answer", "source" },
                   properties = { answer = { type = "string" }, source = { type = "integer", enum = { 1, 2, 3 } } } }
  lu.assertEquals({ check({ type = "json-schema", value = schema }, '{"answer": "x", "source": 2}') },
    { true, "valid JSON matching the schema" })
  lu.assertEquals({ check({ type = "json-schema", value = schema }, '{"answer": "x"}') },
    { false, "$: required key 'source' is missing" })
  lu.assertEquals({ check({ type = "json-schema", value = schema }, '{"answer": 3, "source": 2}') },
    { false, "$.answer: expected string, got integer" })
  lu.assertEquals({ check({ type = "json-schema", value = schema }, '{"answer": "x", "source": 7}') },
    { false, "$.source: 7 is not one of [1,2,3]" })
  lu.assertEquals({ check({ type = "is-json", value = { type = "array", items = { type = "number" } } }, '[1, "a"]') },
    { false, "$[1]: expected number, got string" })
  local c, why = A.compile({ type = "json-schema", value = { type = "object", minProperty = 1 } }, "a")
  lu.assertNil(c)
  lu.assertEquals(why, "a.value: schema keyword 'minProperty' is not a JSON Schema draft-07 keyword "
    .. "(did you mean 'minProperties'?)")
  -- the keywords of function schemas: additionalProperties and bounds
  local fn = { type = "object", properties = { n = { type = "integer", minimum = 1, maximum = 3 },
               tags = { type = "array", maxItems = 1 }, s = { type = "string", minLength = 2 } },
               additionalProperties = false }
  lu.assertEquals({ check({ type = "json-schema", value = fn }, '{"n": 2, "tags": ["a"], "s": "ab"}') },
    { true, "valid JSON matching the schema" })
  lu.assertEquals({ check({ type = "json-schema", value = fn }, '{"n": 4}') }, { false, "$.n: 4 is over the maximum 3" })
  lu.assertEquals({ check({ type = "json-schema", value = fn }, '{"n": 0}') }, { false, "$.n: 0 is under the minimum 1" })
  lu.assertEquals({ check({ type = "json-schema", value = fn }, '{"tags": ["a", "b"]}') },
    { false, "$.tags: 2 items, more than maxItems 1" })
  lu.assertEquals({ check({ type = "json-schema", value = fn }, '{"s": "\u{4e2d}"}') },
    { false, "$.s: 1 character, fewer than minLength 2" })
  lu.assertEquals({ check({ type = "json-schema", value = fn }, '{"x": 1}') },
    { false, "$: key 'x' is not allowed (additionalProperties is false)" })
  lu.assertEquals({ check({ type = "json-schema", value = { type = "object", additionalProperties = { type = "number" } } },
    '{"x": "1"}') }, { false, "$.x: expected number, got string" })
  _, why = A.compile({ type = "json-schema", value = { type = "string", minLength = -1 } }, "a")
  lu.assertEquals(why, "a.value.minLength: expected a whole number >= 0")
end

function TestTypes:test_limits()
  lu.assertEquals({ check({ type = "max-words", value = 3 }, "one two three four") },
    { false, "4 words, outside <= 3" })
  lu.assertEquals({ check({ type = "min-words", value = 3 }, "one two three") }, { true, "3 words, within >= 3" })
  -- characters are code points: 6 Chinese characters are 6, not 18 bytes
  lu.assertEquals({ check({ type = "max-length", value = 6 }, "连续三个分片") }, { true, "6 characters, within <= 6" })
  lu.assertEquals({ check({ type = "min-length", value = 7 }, "连续三个分片") }, { false, "6 characters, outside >= 7" })
  lu.assertEquals({ check({ type = "max-words", value = 3.0 }, "a b c") }, { true, "3 words, within <= 3" })
end

function TestTypes:test_levenshtein_is_a_distance_bound()
  -- kitten -> sitting: distance 3 (promptfoo's default bound is 5)
  lu.assertEquals({ scored({ type = "levenshtein", value = "sitting" }, "kitten") }, { true, "edit distance 3 <= 5", 1 })
  lu.assertEquals({ scored({ type = "levenshtein", value = "sitting", threshold = 2 }, "kitten") },
    { false, "edit distance above 2", 0 })
  lu.assertEquals({ scored({ type = "not-levenshtein", value = "sitting", threshold = 2 }, "kitten") },
    { true, "not: edit distance above 2", 1 })
  -- code points, not bytes: one Chinese character for another is one edit
  lu.assertEquals({ scored({ type = "levenshtein", value = "三个", threshold = 1 }, "两个") }, { true, "edit distance 1 <= 1", 1 })
  -- a bound past any integer is no bound, not an error
  lu.assertEquals({ scored({ type = "levenshtein", value = "sitting", threshold = 1e300 }, "kitten") },
                  { true, "edit distance 3 <= 1e+300", 1 })
end

-- similar is promptfoo's: the cosine of embeddings, here the offline judge's
-- embedder: the best cosine of the list, against the threshold (0.75 by default).
function TestTypes:test_similar_is_an_embedding_cosine()
  local judge = ev.judge.open("offline")
  local row = { answer = "The object size limit is 5 TiB." }
  local c = assert(A.compile({ type = "similar", value = { "Objects can be up to 5 TiB.", "Buckets have no limit." } }, "a"))
  local r = A.run(c, row, { judge = judge })
  local sims = judge:similarity({ row.answer }, { { "Objects can be up to 5 TiB.", "Buckets have no limit." } })
  local want = math.max(sims[1][1], sims[1][2])
  lu.assertTrue(sims[1][1] > sims[1][2])
  lu.assertEquals(r.pass, want >= 0.75)
  lu.assertStrContains(r.reason, ("cosine %.4f"):format(want))
  lu.assertAlmostEquals(r.score, want, 1e-12)
  lu.assertEquals(A.run(c, row).reason, "similar needs a judge to embed with (judge = ..., or --judge)")
  local same = assert(A.compile({ type = "similar", value = row.answer, threshold = 0.99 }, "a"))
  lu.assertTrue(A.run(same, row, { judge = judge }).pass)
end

function TestTypes:test_latency_and_cost_read_the_output()
  lu.assertEquals({ check({ type = "latency", threshold = 500 }, "a", { latency_ms = 120 }) },
    { true, "latency_ms = 120 ms, within <= 500" })
  lu.assertEquals({ check({ type = "cost", threshold = 0.001 }, "a", { cost = 0.002 }) },
    { false, "cost = 0.002 USD, above <= 0.001" })
  -- a cached answer is judged by what it took when it was asked
  lu.assertEquals({ check({ type = "latency", threshold = 300 }, "a", { latency_ms = 320, cached = true }) },
    { false, "latency_ms = 320 ms when asked (cached), above <= 300" })
  -- no latency recorded: unmeasured, not a pass or a fail
  lu.assertEquals({ check({ type = "latency", threshold = 500 }, "a") }, { nil, "the output has no latency_ms" })
  lu.assertEquals({ check({ type = "latency", threshold = 500 }, "a", { cached = true }) },
    { nil, "the output has no latency_ms (cached before evalua kept it)" })
end

function TestTypes:test_value_from_the_row()
  local a = { type = "icontains-any", field = "gold_answers" }
  lu.assertEquals({ check(a, "It is 5 tib.", { gold_answers = { "5 TiB", "five" } }) }, { true, 'contains "5 TiB"' })
  lu.assertEquals({ check(a, "It is 5 tib.", { gold_answers = true }) },
    { nil, "field 'gold_answers': expected a list of strings or \"a, b\"" })
  lu.assertEquals({ check(a, "It is 5 tib.") }, { nil, "field 'gold_answers': expected a list of strings or \"a, b\"" })
  lu.assertEquals({ check({ type = "regex", field = "pattern" }, "id 42", { pattern = "\\d+" }) },
    { true, 'matches /\\d+/ at "42"' })
  lu.assertEquals({ check({ type = "regex", field = "pattern" }, "id 42", { pattern = "(" }) },
    { nil, "field 'pattern': bad regular expression: missing closing parenthesis after 1 byte of the pattern" })
end

-- Each assertion that cannot decide, as a user writes it, and the error it gets.
function TestTypes:test_assertions_that_cannot_decide_are_refused()
  local needs = "assert[1].value: '%s' needs a value (or a field of the row to take it from)"
  for _, t in ipairs { "contains", "icontains", "contains-all", "not-contains", "contains-any", "icontains-any",
                       "icontains-all", "equals", "starts-with", "regex", "not-regex", "lua-pattern", "json-schema",
                       "max-words", "min-length" } do
    lu.assertEquals(refused { type = t }, needs:format(t))
  end
  lu.assertEquals(refused { type = "similar", threshold = 0.5 }, needs:format("similar"))
  -- a list where one string is meant
  lu.assertEquals(refused { type = "starts-with", value = { "The", "A" } }, "assert[1].value: expected one string, not a list")
  lu.assertEquals(refused { type = "regex", value = { "a", "b" } }, "assert[1].value: expected one string, not a list")
  -- strings that every answer contains
  lu.assertEquals(refused { type = "contains", value = "" },
    "assert[1].value: an empty string is in every answer, so the check cannot tell answers apart")
  lu.assertEquals(refused { type = "contains-any", value = { "x", "" } },
    "assert[1].value[2]: an empty string is in every answer, so the check cannot tell answers apart")
  lu.assertEquals(refused { type = "contains-all", value = {} },
    "assert[1].value: expected a string or a non-empty list of strings")
  lu.assertEquals(refused { type = "contains", value = true }, "assert[1].value: expected a string or a list of strings")
  lu.assertEquals(refused { type = "contains-any", value = { "a", true } }, "assert[1].value[2]: expected a string")
  -- bounds
  lu.assertEquals(refused { type = "max-length", value = -1 }, "assert[1].value: expected a number >= 0, got -1")
  lu.assertEquals(refused { type = "max-length", value = math.huge }, "assert[1].value: expected a finite number")
  lu.assertEquals(refused { type = "min-words", value = 0 / 0 }, "assert[1].value: expected a finite number")
  lu.assertEquals(refused { type = "min-words", value = 2.5 }, "assert[1].value: expected a whole number, got 2.5")
  lu.assertEquals(refused { type = "max-words", value = "ten" }, "assert[1].value: expected a number")
  lu.assertEquals(refused { type = "similar", value = "x", threshold = 1.5 },
    "assert[1].threshold: expected a number from 0 to 1, got 1.5")
  lu.assertEquals(refused { type = "similar", value = "x" }, nil) -- promptfoo's default threshold, 0.75
  lu.assertEquals(refused { type = "latency", threshold = -1 },
    "assert[1].threshold: expected a number of milliseconds >= 0, got -1")
  lu.assertEquals(refused { type = "cost", threshold = math.huge }, "assert[1].threshold: expected an amount in USD >= 0, got inf")
  lu.assertEquals(refused { type = "latency" }, "assert[1].threshold: 'latency' needs a threshold, a number of milliseconds >= 0")
  -- keys the type does not use would be ignored: refused
  lu.assertEquals(refused { type = "latency", value = 300, threshold = 500 },
    "assert[1].value: 'latency' takes no value, only threshold")
  lu.assertEquals(refused { type = "cost", field = "budget", threshold = 1 },
    "assert[1].field: 'cost' takes no field, only threshold")
  lu.assertEquals(refused { type = "contains", value = "x", threshold = 0.5 },
    "assert[1].threshold: 'contains' takes no threshold, only value or field")
  lu.assertEquals(refused { type = "contains", value = "x", field = "gold_answers" },
    "assert[1]: give value or field, not both")
  lu.assertEquals(refused { type = "contains", value = "x", name = 3 }, "assert[1].name: expected a string")
  lu.assertEquals(refused { "contains", "x" }, "assert[1]: an assertion is a table {type =, value =}")
  lu.assertEquals(refused {}, "assert[1].type: expected a string")
end

function TestTypes:test_bad_assertions_name_the_key()
  lu.assertEquals(select(2, A.compile({ type = "contians", value = "x" }, "assert[2]")),
    "assert[2].type: unknown assertion type 'contians' (did you mean 'contains'?)")
  lu.assertEquals(select(2, A.compile({ type = "not-regx", value = "x" }, "assert[2]")),
    "assert[2].type: unknown assertion type 'not-regx' (did you mean 'regex'?)")
  lu.assertEquals(select(2, A.compile({ type = "moderation", value = "x" }, "assert[2]")),
    "assert[2].type: unknown assertion type 'moderation'")
  lu.assertEquals(select(2, A.compile({ type = "contains", vlaue = "x" }, "assert[1]")),
    "assert[1]: unknown key 'vlaue' (options: type, value, field, threshold, name, weight, metric)")
  lu.assertEquals(select(2, A.compile({ type = "contains", value = "x", wieght = 2 }, "assert[1]")),
    "assert[1]: unknown key 'wieght' (options: type, value, field, threshold, name, weight, metric)")
  lu.assertEquals(select(2, A.compile({ type = "contains", value = "x", weight = -2 }, "assert[1]")),
    "assert[1].weight: expected a number >= 0, got -2")
  lu.assertEquals(select(2, A.compile({ value = "x" }, "assert[1]")), "assert[1].type: expected a string")
end

TestMetric = {}

function TestMetric:test_script_and_row_assertions_combine()
  local m = A.metric({ { type = "max-words", value = 5 } })
  local ok = m.fn { answer = "5 TiB per object", assert = { { type = "contains", value = "TiB" } } }
  lu.assertEquals({ ok.score, ok.reason }, { 1, "all 2 passed" })
  local bad = m.fn { answer = "5 TiB per object", assert = { { type = "contains", value = "GiB" } } }
  lu.assertEquals({ bad.score, bad.reason }, { 0, '1 of 2 failed: contains "GiB": lacks "GiB"' })
  lu.assertEquals(#bad.assertions, 2)
  -- a failed output is unmeasured with the provider's error, not a fail
  local none = m.fn { output_error = "HTTP 500", assert = {} }
  lu.assertEquals(none, { unmeasured = true, reason = "max-words 5: no output: HTTP 500",
                          assertions = { { name = "max-words 5", reason = "no output: HTTP 500", type = "max-words",
                                           weight = 1 } } })
  lu.assertEquals(m.fn { answer = "x", assert = { { type = "nope" } } },
    { unmeasured = true, reason = "field 'assert[1].type': unknown assertion type 'nope'" })
  lu.assertErrorMsgContains("ev.assertions.metric: assertions[1].type: unknown assertion type 'x'", A.metric,
    { { type = "x" } })
  lu.assertErrorMsgContains("ev.assertions.metric: unknown option 'feild'", A.metric, {}, { feild = "a" })
end

function TestMetric:test_evaluate_reports_pass_share_and_reasons()
  local rows = {
    { qid = "a", answer = "5 TiB", system = "s" },
    { qid = "b", answer = "sorry, no idea", system = "s" },
    { qid = "c", answer = "3 parts", system = "s", assert = { { type = "regex", value = "^\\d" } } },
  }
  local res = ev.evaluate(rows, { metrics = { A.metric { { type = "not-icontains", value = "sorry" } } },
                                  system = "system", ci = false })
  local agg = res:agg("s", "assertions")
  lu.assertEquals({ agg.n, agg.measured }, { 3, 3 })
  lu.assertAlmostEquals(agg.mean, 2 / 3, 1e-12)
  local score, reason = res.scores:get(2, 1)
  lu.assertEquals({ score, reason }, { 0, '1 of 1 failed: not-icontains "sorry": not: contains all of "sorry"' })
  lu.assertEquals({ res.scores:get(3, 1) }, { 1, "all 2 passed" })
  local per = A.metrics { { type = "contains", value = "5" }, { name = "short", type = "max-words", value = 2 } }
  lu.assertEquals({ per[1].name, per[2].name }, { 'contains "5"', "short" })
  res = ev.evaluate(rows, { metrics = per, system = "system", ci = false })
  lu.assertAlmostEquals(res:agg("s", "short").mean, 2 / 3, 1e-12)
  lu.assertAlmostEquals(res:agg("s", 'contains "5"').mean, 1 / 3, 1e-12)
end

local function cases_file(lines)
  local dir = h.tmpdir()
  h.write(dir .. "/cases.jsonl", table.concat(lines, "\n") .. "\n")
  return dir, dir .. "/cases.jsonl"
end

function TestMetric:test_check_rows_names_file_line_and_field()
  local dir, path = cases_file {
    '{"qid": "a", "assert": [{"type": "contains", "value": "x"}]}',
    '{"qid": "b", "assert": [{"type": "equals", "value": "y"}, {"type": "max-words", "value": -3}]}',
  }
  local ds = ev.dataset.load(path)
  local ok, err = pcall(A.check_rows, ds)
  lu.assertFalse(ok)
  lu.assertEquals(tostring(err), path .. ":2: field 'assert[2].value': expected a number >= 0, got -3")
  h.sh("rm -rf " .. dir)
end

-- ev.evaluate checks every row's own list before any metric runs, so a
-- mistake on line 3 stops the run there, not as an unmeasured item.
function TestMetric:test_evaluate_refuses_a_bad_row_list_up_front()
  local dir, path = cases_file {
    '{"qid": "a", "answer": "5 TiB", "assert": [{"type": "contains", "value": "TiB"}]}',
    '{"qid": "b", "answer": "5 TiB", "assert": [{"type": "regex", "value": "\\\\d+"}]}',
    '{"qid": "c", "answer": "5 TiB", "assert": [{"type": "starts-with", "value": ["5", "6"]}]}',
  }
  local ran = 0
  local counting = { name = "counting", fn = function() ran = ran + 1; return 1 end }
  local ok, err = pcall(ev.evaluate, ev.dataset.load(path),
    { metrics = { counting, A.metric {} }, ci = false, quiet = true })
  lu.assertFalse(ok)
  lu.assertEquals(tostring(err), path .. ":3: field 'assert[1].value': expected one string, not a list")
  lu.assertEquals(ran, 0)
  h.sh("rm -rf " .. dir)
end

-- A catastrophic pattern in a data row: that item is unmeasured with the
-- reason, the others are measured, and the run ends.
function TestMetric:test_catastrophic_row_pattern_leaves_its_item_unmeasured()
  local many = ("a"):rep(5000)
  local dir, path = cases_file {
    ('{"qid": "a", "answer": "%s c b", "assert": [{"type": "not-regex", "value": "(a+)+b"}]}'):format(many),
    ('{"qid": "b", "answer": "%s", "assert": [{"type": "not-regex", "value": "(a+)+b"}]}'):format(many),
    '{"qid": "c", "answer": "ab", "assert": [{"type": "not-regex", "value": "(a+)+b"}]}',
  }
  local res = ev.evaluate(ev.dataset.load(path), { metrics = { A.metric {} }, ci = false, quiet = true })
  lu.assertEquals({ res.scores:get(1, 1) }, { nil, 'not-regex /(a+)+b/: regex /(a+)+b/: gave up after 1000000 '
    .. "backtracking steps (the match limit): the pattern backtracks catastrophically on this text" })
  lu.assertEquals({ res.scores:get(2, 1) }, { 1, "all 1 passed" })
  lu.assertEquals({ res.scores:get(3, 1) }, { 0, '1 of 1 failed: not-regex /(a+)+b/: not: matches /(a+)+b/ at "ab"' })
  local agg = res:agg("all", "assertions")
  lu.assertEquals({ agg.n, agg.measured }, { 3, 2 })
  h.sh("rm -rf " .. dir)
end

-- From a script: an input error at the script's line, exit status 3, no traceback.
function TestMetric:test_script_mistake_is_an_input_error()
  local r = h.run_script([[
local ev = require "evalua"
local m = ev.assertions.metric {
  { type = "contains", value = "TiB" },
  { type = "contains" },
}
print("not reached")
]])
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stdout, "")
  lu.assertEquals(r.stderr, "script.lua:2: ev.assertions.metric: assertions[2].value: 'contains' needs a "
    .. "value (or a field of the row to take it from)\n")
  r = h.run_script('local ev = require "evalua"\nev.assertions.metrics { { type = "max-words", value = -1 } }\n')
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, "script.lua:2: ev.assertions.metrics: assertions[1].value: expected a number "
    .. ">= 0, got -1\n")
end

os.exit(lu.LuaUnit.run(), true)
