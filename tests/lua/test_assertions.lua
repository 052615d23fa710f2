-- Assertions as metrics: each type passes and fails with its reason, "not-"
-- inverts, a row's own list joins the script's, bad lists are refused with
-- the field named, and a failed output is unmeasured, never a fail.
local lu = require "luaunit"
local ev = require "evalua"
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

TestTypes = {}

function TestTypes:test_text_matches()
  lu.assertEquals({ check({ type = "equals", value = "5 TiB" }, "5 TiB") }, { true, 'equals "5 TiB"' })
  lu.assertEquals({ check({ type = "equals", value = "5 TiB" }, "5 tib") }, { false, 'differs from "5 TiB"' })
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

function TestTypes:test_regex_is_a_lua_pattern()
  lu.assertEquals({ check({ type = "regex", value = "%d+ TiB" }, "up to 5 TiB") }, { true, 'matches "%d+ TiB" at "5 TiB"' })
  lu.assertEquals({ check({ type = "regex", value = "^%d" }, "up to 5") }, { false, 'does not match "^%d"' })
  local c, why = A.compile({ type = "regex", value = "[a" }, "assert[1]")
  lu.assertNil(c)
  lu.assertStrContains(why, "assert[1].value: bad Lua pattern: malformed pattern")
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
  local c, why = A.compile({ type = "json-schema", value = { type = "object", minProperties = 1 } }, "a")
  lu.assertNil(c)
  lu.assertEquals(why, "a.value: schema keyword 'minProperties' is not supported (type, required, properties, items, enum)")
end

function TestTypes:test_limits()
  lu.assertEquals({ check({ type = "max-words", value = 3 }, "one two three four") },
    { false, "4 words, outside <= 3" })
  lu.assertEquals({ check({ type = "min-words", value = 3 }, "one two three") }, { true, "3 words, within >= 3" })
  -- characters are code points: 6 Chinese characters are 6, not 18 bytes
  lu.assertEquals({ check({ type = "max-length", value = 6 }, "连续三个分片") }, { true, "6 characters, within <= 6" })
  lu.assertEquals({ check({ type = "min-length", value = 7 }, "连续三个分片") }, { false, "6 characters, outside >= 7" })
end

function TestTypes:test_edit_similarity_threshold()
  -- kitten -> sitting: distance 3 over 7 code points, similarity 4/7
  lu.assertEquals({ check({ type = "similar", value = "sitting", threshold = 0.5 }, "kitten") },
    { true, "edit similarity 0.5714 >= 0.5" })
  lu.assertEquals({ check({ type = "similar", value = "sitting", threshold = 0.6 }, "kitten") },
    { false, "edit similarity 0.5714 < 0.6" })
  lu.assertNil(A.compile({ type = "similar", value = "x" }, "a"))
end

function TestTypes:test_latency_and_cost_read_the_output()
  lu.assertEquals({ check({ type = "latency", threshold = 500 }, "a", { latency_ms = 120 }) },
    { true, "latency_ms = 120 ms, within <= 500" })
  lu.assertEquals({ check({ type = "cost", threshold = 0.001 }, "a", { cost = 0.002 }) },
    { false, "cost = 0.002 USD, above <= 0.001" })
  -- no latency recorded: unmeasured, not a pass or a fail
  lu.assertEquals({ check({ type = "latency", threshold = 500 }, "a") }, { nil, "the output has no latency_ms" })
end

function TestTypes:test_value_from_the_row()
  local a = { type = "icontains-any", field = "gold_answers" }
  lu.assertEquals({ check(a, "It is 5 tib.", { gold_answers = { "5 TiB", "five" } }) }, { true, 'contains "5 TiB"' })
  lu.assertEquals({ check(a, "It is 5 tib.", { gold_answers = 3 }) },
    { nil, "field 'gold_answers': expected a string or a list of strings" })
end

function TestTypes:test_bad_assertions_name_the_key()
  lu.assertEquals(select(2, A.compile({ type = "contians", value = "x" }, "assert[2]")),
    "assert[2].type: unknown assertion type 'contians'")
  lu.assertEquals(select(2, A.compile({ type = "contains", vlaue = "x" }, "assert[1]")),
    "assert[1]: unknown key 'vlaue' (type, value, field, threshold, name)")
  lu.assertEquals(select(2, A.compile({ type = "max-words", value = "ten" }, "assert[1]")),
    "assert[1].value: expected a number")
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
                          assertions = { { name = "max-words 5", reason = "no output: HTTP 500" } } })
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
    { qid = "c", answer = "3 parts", system = "s", assert = { { type = "regex", value = "^%d" } } },
  }
  local res = ev.evaluate(rows, { metrics = { A.metric { { type = "not-icontains", value = "sorry" } } },
                                  system = "system", ci = false })
  local agg = res:agg("s", "assertions")
  lu.assertEquals({ agg.n, agg.measured }, { 3, 3 })
  lu.assertAlmostEquals(agg.mean, 2 / 3, 1e-12)
  local score, reason = res.scores:get(2, 1)
  lu.assertEquals({ score, reason }, { 0, '1 of 1 failed: not-icontains "sorry": not: contains all of "sorry"' })
  local per = A.metrics { { type = "contains", value = "5" }, { name = "short", type = "max-words", value = 2 } }
  lu.assertEquals({ per[1].name, per[2].name }, { 'contains "5"', "short" })
  res = ev.evaluate(rows, { metrics = per, system = "system", ci = false })
  lu.assertAlmostEquals(res:agg("s", "short").mean, 2 / 3, 1e-12)
  lu.assertAlmostEquals(res:agg("s", 'contains "5"').mean, 1 / 3, 1e-12)
end

function TestMetric:test_check_rows_names_file_line_and_field()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local path = dir .. "/cases.jsonl"
  local f = assert(io.open(path, "w"))
  f:write('{"qid": "a", "assert": [{"type": "contains", "value": "x"}]}\n')
  f:write('{"qid": "b", "assert": [{"type": "equals", "value": "y"}, {"type": "max-words"}]}\n')
  f:close()
  local ds = ev.dataset.load(path)
  local ok, err = pcall(A.check_rows, ds)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), path .. ":2: field 'assert[2].value': expected a number")
  os.execute("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
