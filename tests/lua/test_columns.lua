-- The columnar data plane: rows read straight into C columns and checked as
-- they are read, row views, score columns, grouped statistics, bottom-k and
-- the C writers of the JSON and CSV reports.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local json = require "evalua.core.json"
local cjson = require "cjson"

local dir = h.tmpdir()

local function load_text(text, opts)
  local path = dir .. "/rows.jsonl"
  h.write(path, text)
  return pcall(ev.dataset.load, path, opts)
end

local function load_error(line)
  local ok, err = load_text(line .. "\n")
  lu.assertFalse(ok)
  return (tostring(err):gsub("^.-rows%.jsonl:", ""))
end

-- ---- reading -----------------------------------------------------------------

function test_bad_rows_name_line_and_field()
  lu.assertEquals(load_error('{"qid":"q","retrieved":[{"id":"a","score":1},{"id":"b"}]}'),
    "1: field 'retrieved[2]': lacks a score while retrieved[1] has one")
  lu.assertEquals(load_error('{"qid":"q","retrieved":["a",{"id":"b","score":2}]}'),
    "1: field 'retrieved[2]': has a score while retrieved[1] does not")
  lu.assertEquals(load_error('{"qid":"q","gold_doc_ids":["a","b"],"graded_relevance":{"a":1}}'),
    "1: field 'gold_doc_ids[2]': 'b' has no grade in graded_relevance")
  lu.assertEquals(load_error('{"qid":"q","retrieved":[{"id":"a","score":1e400}]}'),
    "1: field 'retrieved[1].score': number out of range")
  lu.assertEquals(load_error('{"qid":"q","latency":-1e999}'), "1: field 'latency': number out of range")
  lu.assertEquals(load_error('{"qid":"q","graded_relevance":{"d1":"high"}}'),
    "1: field 'graded_relevance.d1': expected number, got string")
  lu.assertEquals(load_error('{"qid":"q","x":NaN}'), "1: invalid JSON at column 16: expected a value, found 'N'")
  lu.assertEquals(load_error('{"qid":"q","x":Infinity}'), "1: invalid JSON at column 16: expected a value, found 'I'")
  lu.assertEquals(load_error('{"qid":"q","x":0x10}'), "1: invalid JSON at column 17: expected ',' or '}', found 'x'")
  lu.assertEquals(load_error('{"qid":"q","x":012}'), "1: invalid JSON at column 17: a number with a leading zero, found '1'")
  lu.assertEquals(load_error('{"qid":"q","answer":"\255"}'), "1: invalid JSON at column 22: invalid UTF-8 in a string")
  lu.assertEquals(load_error('{"qid":"q","retrieved":[],"retrieved":[]}'), "1: field 'retrieved': given twice")
  lu.assertEquals(load_error('{"qid":1.5}'), "1: field 'qid': expected id, got number")
  lu.assertEquals(load_error('[1,2]'), "1: expected a JSON object, got list")
  lu.assertEquals(load_error('{"qid":"q","a":"\\'), "1: invalid JSON: unterminated string at the end of the line")
  -- keys that differ after a NUL are different columns (found by fuzz_rows)
  local ok, ds = load_text('{"qid":"q","a":1,"a\\u0000b":2}\n')
  lu.assertTrue(ok, ds)
  lu.assertEquals({ ds.rows[1].a, ds.rows[1]["a\0b"] }, { 1, 2 })
  lu.assertEquals(load_error('{"qid":"q"} x'), "1: invalid JSON at column 13: text after the object, found 'x'")
end

function test_long_strings_are_refused_and_cut_in_digests()
  lu.assertEquals(load_error('{"qid":"q","answer":"' .. ("x"):rep(16 * 2 ^ 20 + 1) .. '"}'),
    "1: field 'answer': a string longer than 16 MB")
  local long = ("é"):rep(1500) -- 3,000 bytes
  local ok, ds = load_text(('{"qid":"q","answer":"%s","gold_answers":["a"]}\n'):format(long))
  lu.assertTrue(ok, ds)
  local res = ev.evaluate(ds, { metrics = { "token_f1" }, ci = false })
  lu.assertEquals(res.bottom.all.token_f1[1].answer, ("é"):rep(500) .. "…") -- 1,000 bytes, at a character
  lu.assertEquals(res.items[1].row.answer, long)
end

function test_sandboxed_loads_must_fit_the_memory_cap()
  local big = dir .. "/sandbox/big.jsonl"
  h.write(big, ('{"qid":"q","answer":"%s"}\n'):format(("x"):rep(1000)):rep(20000)) -- 20 MB
  local r = h.run_script(('require("evalua").dataset.load(%q)'):format(big),
    "--sandbox --read " .. dir .. "/sandbox --mem-limit 32")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, big .. ": the data set needs about 40 MB, more than the ")
  lu.assertStrContains(r.stderr, " MB --mem-limit leaves")
  r = h.run_script(('print(require("evalua").dataset.load(%q).n)'):format(big),
    "--sandbox --read " .. dir .. "/sandbox --mem-limit 128")
  lu.assertEquals({ r.status, r.stdout }, { 0, "20000\n" })
end

function test_integer_ids_a_bom_and_crlf_are_read()
  local ok, ds = load_text('\239\187\191{"qid":17,"retrieved":[3,"d4"],"gold_doc_ids":[3]}\r\n')
  lu.assertTrue(ok, ds)
  lu.assertEquals(ds.rows[1].qid, 17)
  lu.assertEquals(ds.rows[1].retrieved, { "3", "d4" })
  lu.assertEquals(ds.rows[1].gold_doc_ids, { "3" })
  local res = ev.evaluate(ds, { metrics = { "mrr" }, ci = false })
  lu.assertEquals(res:agg("all", "mrr").mean, 1)
end

function test_lenient_keeps_good_rows_in_order()
  local ok, ds = load_text('{"qid":"a"}\n{"qid":"b","x":1e999}\n\n{"qid":"c"}\n', { mode = "lenient" })
  lu.assertTrue(ok, ds)
  lu.assertEquals(ds.n, 2)
  lu.assertEquals({ ds.rows[1].qid, ds.rows[2].qid, ds.rows[2]._line }, { "a", "c", 4 })
  lu.assertEquals(ds.skipped, { { line = 2, error = "field 'x': number out of range" } })
end

function test_unknown_load_option_is_refused()
  local ok, err = pcall(ev.dataset.load, dir .. "/rows.jsonl", { mdoe = "lenient" })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "ev.dataset.load: unknown option 'mdoe' (options: corpus, format, ignore_identical_ids, mode, run, schema, split)")
end

function test_csv_reads_into_the_same_columns_as_jsonl()
  local csv = dir .. "/rows.csv"
  h.write(csv, '\239\187\191qid,retrieved,graded_relevance,gold_answers,answer,ok,n\r\n'
    .. 'q1,d1|d2,"{""d1"":2}","one|two"" x",one,true,3\r\n'
    .. 'q2,"[{""id"":""d3"",""score"":1.5}]",,single,,0,2.5\r\n')
  local ds = ev.dataset.load(csv, { schema = { ok = "boolean", n = "number" } })
  lu.assertEquals(ds.n, 2)
  lu.assertEquals(ds.rows[1]:table(), { qid = "q1", retrieved = { "d1", "d2" }, graded_relevance = { d1 = 2 },
    gold_answers = { "one", 'two" x' }, answer = "one", ok = true, n = 3 })
  lu.assertEquals(ds.rows[2]:table(), { qid = "q2", retrieved = { { id = "d3", score = 1.5 } },
    gold_answers = "single", ok = false, n = 2.5 })
  local ok, jds = load_text('{"qid":"q1","retrieved":["d1","d2"],"graded_relevance":{"d1":2},'
    .. '"gold_answers":["one","two\\" x"],"answer":"one","ok":true,"n":3}\n')
  lu.assertTrue(ok, jds)
  lu.assertEquals(jds.rows[1]:table(), ds.rows[1]:table())
end

function test_csv_errors_and_lenient_rows()
  local csv = dir .. "/bad.csv"
  h.write(csv, 'qid,n,qid\nq1,1,x\n')
  local ok, err = pcall(ev.dataset.load, csv)
  lu.assertStrContains(tostring(err), "bad.csv:1: field 'qid' is named twice in the header")
  h.write(csv, 'qid,n\nq1,1\nq2\nq3,x\n,4\n')
  ok, err = pcall(ev.dataset.load, csv, { schema = { n = "integer" } })
  lu.assertStrContains(tostring(err), "bad.csv:3: expected 2 fields as in the header, got 1")
  local ds = ev.dataset.load(csv, { schema = { n = "integer" }, mode = "lenient" })
  lu.assertEquals(ds.n, 1)
  lu.assertEquals(ds.skipped, {
    { line = 3, error = "expected 2 fields as in the header, got 1" },
    { line = 4, error = "field 'n': expected integer, got 'x'" },
    { line = 5, error = "field 'qid': missing (expected id)" },
  })
  h.write(csv, 'qid,n\nq1,1\nq5,"5\n')
  ok, err = pcall(ev.dataset.load, csv, { mode = "lenient" })
  lu.assertStrContains(tostring(err), "bad.csv:3: unterminated quoted field")
end

-- ---- views ---------------------------------------------------------------------

function test_views_read_fields_from_the_columns()
  local ok, ds = load_text('{"qid":"q1","meta":{"k":[1,2],"n":null},"flag":true,"score":0.25,'
    .. '"retrieved":[{"id":"d1","score":2.5}],"graded_relevance":{"d1":2},"gold_answers":"one"}\n')
  lu.assertTrue(ok, ds)
  local row = ds.rows[1]
  lu.assertEquals(row.meta, { k = { 1, 2 } })
  lu.assertEquals({ row.flag, row.score, row.gold_answers }, { true, 0.25, "one" })
  lu.assertEquals(row.retrieved, { { id = "d1", score = 2.5 } })
  lu.assertEquals(row.graded_relevance, { d1 = 2 })
  local keys = {}
  for k in pairs(row) do keys[#keys + 1] = k end
  table.sort(keys)
  lu.assertEquals(keys, { "flag", "gold_answers", "graded_relevance", "meta", "qid", "retrieved", "score" })
  local copy = row:table()
  lu.assertNil(getmetatable(copy))
  lu.assertEquals(copy.qid, "q1")
  row.note = "kept"
  lu.assertEquals(ds.rows[1].note, "kept")
  lu.assertIs(ds.rows[1], row)
  lu.assertIs(ds[1], row)
  lu.assertEquals(#ds, 1)
  local seen = {}
  for i, r in ds:rows() do seen[i] = r.qid end
  lu.assertEquals(seen, { "q1" })
end

-- ---- scores and statistics -----------------------------------------------------

local function rows_of(values)
  local rows = {}
  for i, v in ipairs(values) do rows[i] = { qid = "q" .. i, v = v, class = i % 2 == 0 and "even" or "odd" } end
  return rows
end

local value_metric = { name = "v", fn = function(row) return row.v end }

function test_non_finite_metric_values_are_unmeasured()
  local odd = { name = "v", fn = function(row)
    if row.v == 2 then return 0 / 0 elseif row.v == 3 then return { score = math.huge } end
    return row.v
  end }
  local res = ev.evaluate(rows_of { 1, 2, 3, 0.5 }, { metrics = { odd }, ci = false })
  local a = res:agg("all", "v")
  lu.assertEquals({ a.n, a.measured, a.mean }, { 4, 2, 0.75 })
  lu.assertEquals(res.items[2].unmeasured.v, "the metric returned NaN")
  lu.assertEquals(res.items[3].unmeasured.v, "the metric's table has no finite numeric score")
end

function test_intervals_equal_the_stats_module_for_a_measured_group()
  math.randomseed(3)
  local values, scaled = {}, {}
  for i = 1, 300 do values[i] = math.random(); scaled[i] = values[i] * 10 end
  -- scores in [0, 1]: analytic; beyond: the seeded studentized bootstrap
  for _, case in ipairs { { values, "korn_graubard" }, { scaled, "bootstrap_t" } } do
    local res = ev.evaluate(rows_of(case[1]), { metrics = { value_metric }, ci = { resamples = 400, seed = 9 } })
    local want = ev.stats.mean_ci(case[1], { resamples = 400, seed = 9 })
    local a = res:agg("all", "v")
    lu.assertEquals({ a.lo, a.hi, a.ci_method }, { want.lo, want.hi, case[2] })
  end
end

function test_groups_past_the_bootstrap_limit_use_student_t()
  local values = { 1, 4, 4, 9, 10, 2, 7, 3, 1, 4, 4, 9, 10, 2, 7, 3 }
  local res = ev.evaluate(rows_of(values), { metrics = { value_metric }, slices = { "class" },
    ci = { bootstrap_max = 10 } })
  local a = res:agg("all", "v")
  lu.assertEquals(a.ci_method, "student_t")
  -- mean 5, sample sd sqrt(152 / 15); t(0.975, 15 df) = 2.131449545559777, the root of the t
  -- distribution function with its density integrated numerically (tests/c/test_stats.c, [ref])
  local half = 2.131449545559777 * math.sqrt(152 / 15) / math.sqrt(16)
  lu.assertAlmostEquals(a.lo, 5 - half, 1e-12)
  lu.assertAlmostEquals(a.hi, 5 + half, 1e-12)
  lu.assertEquals(res:agg("all", "v", "class", "odd").ci_method, "bootstrap_t") -- 8 rows: bootstrapped
end

function test_a_draw_budget_bootstraps_the_smallest_groups_first()
  local values = {}
  for i = 1, 17 do values[i] = i end
  local res = ev.evaluate(rows_of(values), { metrics = { value_metric }, slices = { "class" },
    ci = { resamples = 10, draw_budget = 100 } })
  lu.assertEquals(res:agg("all", "v", "class", "even").ci_method, "bootstrap_t") -- 8 rows x 10 = 80 draws
  lu.assertEquals(res:agg("all", "v", "class", "odd").ci_method, "student_t")    -- 9 more: 170 > 100
  lu.assertEquals(res:agg("all", "v").ci_method, "student_t")                    -- 17 rows: 170 > 100
end

function test_fewer_than_eight_values_beyond_the_unit_range_get_student_t()
  -- 1, 2, 4: mean 7/3, sd sqrt(7/3); t(0.975, 2 df) = 0.95 / sqrt(2 * 0.975 * 0.025) in closed form
  local res = ev.evaluate(rows_of { 1, 2, 4 }, { metrics = { value_metric } })
  local a = res:agg("all", "v")
  lu.assertEquals(a.ci_method, "student_t")
  local half = 0.95 / math.sqrt(2 * 0.975 * 0.025) * math.sqrt(7 / 3) / math.sqrt(3)
  lu.assertAlmostEquals(a.hi, 7 / 3 + half, 1e-12)
end

function test_ci_false_gives_no_interval()
  local res = ev.evaluate(rows_of { 0.2, 0.4 }, { metrics = { value_metric }, ci = false })
  local a = res:agg("all", "v")
  lu.assertEquals({ a.lo, a.hi, a.ci_method, res.ci }, { nil, nil, nil, false })
  lu.assertAlmostEquals(a.mean, 0.3, 1e-15)
end

function test_bottom_k_is_a_sort_with_ties_in_row_order()
  math.randomseed(11)
  local values = {}
  for i = 1, 500 do values[i] = math.random(0, 20) / 20 end
  local res = ev.evaluate(rows_of(values), { metrics = { value_metric }, bottom = 7, ci = false })
  local order = {}
  for i = 1, #values do order[i] = i end
  table.sort(order, function(a, b)
    if values[a] ~= values[b] then return values[a] < values[b] end
    return a < b
  end)
  local got = {}
  for i, it in ipairs(res.bottom.all.v) do got[i] = it.id end
  local want = {}
  for i = 1, 7 do want[i] = "q" .. order[i] end
  lu.assertEquals(got, want)
end

function test_only_a_strictly_worst_slice_is_marked()
  local res = ev.evaluate(rows_of { 1, 1, 1, 1 }, { metrics = { value_metric }, slices = { "class" }, ci = false })
  lu.assertNil(res.worst.all.v)
  res = ev.evaluate(rows_of { 1, 0.5, 1, 0.5 }, { metrics = { value_metric }, slices = { "class" }, ci = false })
  lu.assertEquals(res.worst.all.v, { dim = "class", value = "even", mean = 0.5, measured = 2 })
end

function test_a_slice_function_that_raises_is_recorded()
  local res = ev.evaluate(rows_of { 1, 2 }, { metrics = { value_metric }, ci = false,
    slices = { bad = function(row) if row.v == 2 then error("no slice for 2", 0) end return "ok" end } })
  lu.assertEquals(res.slice_values.bad, { "(error)", "ok" })
  lu.assertEquals(res.slice_errors.bad, { rows = 1, error = "no slice for 2" })
end

function test_unknown_evaluate_option_is_refused()
  local ok, err = pcall(ev.evaluate, rows_of { 1 }, { metrics = { value_metric }, slice = { "class" } })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "ev.evaluate: unknown option 'slice' (did you mean 'slices'?)")
end

-- ---- the C report writers -----------------------------------------------------

-- An item as json.lua writes it inside the report (keys at depth 3), with
-- its row on one line.
-- An item as the compact form writes it: json.lua's text of the item
-- without its row, on one line.
local function compact_item_text(res, i)
  local it = res.items[i]
  return json.encode({ id = it.id, system = it.system, slices = it.slices, scores = it.scores,
    reasons = it.reasons, unmeasured = it.unmeasured, details = it.details })
end

local function item_text(res, ds, i)
  local it = res.items[i]
  local text = json.encode({ id = it.id, system = it.system, slices = it.slices, scores = it.scores,
    reasons = it.reasons, unmeasured = it.unmeasured, details = it.details, row = "\0row\0" },
    { indent = "  ", depth = 2 })
  local a, b = text:find(json.encode("\0row\0"), 1, true)
  return text:sub(1, a - 1) .. json.encode(ds.rows[i]:table()) .. text:sub(b + 1)
end

function test_numbers_are_written_as_json_number_writes_them()
  math.randomseed(5)
  local values = {}
  for i = 1, 20000 do
    local r = math.random()
    local kinds = { r, r * 10 ^ math.random(-6, 16), 1 / math.random(1, 1000), math.random(1, 999) / 1000,
                    -r * 10 ^ math.random(-5, 14), math.floor(r * 1e6) / 1e6, 2 ^ math.random(-20, 60) * r }
    values[i] = kinds[math.random(#kinds)]
  end
  local res = ev.evaluate(rows_of(values), { metrics = { value_metric }, ci = false })
  local i, bad = 0, 0
  for line in ev.report.render(res, "csv"):gmatch("[^\r\n]+") do
    if i > 0 then
      local cell = line:match("^[^,]*,[^,]*,([^,]*),")
      if cell ~= json.number(values[i]) then bad = bad + 1 end
    end
    i = i + 1
  end
  lu.assertEquals({ i - 1, bad }, { #values, 0 })
end

function test_json_report_rows_equal_the_loaded_rows()
  local ok, ds = load_text('{"qid":"q1","answer":"a \\"b\\"\\n","gold_answers":["a"],"deep":{"z":1,"a":[true,null]},'
    .. '"retrieved":[{"id":"d2","score":0.5},{"id":"d1","score":0.25}],"graded_relevance":{"d2":1,"d1":0},'
    .. '"gold_doc_ids":["d2","d1"],"n":3,"x":1.5}\n{"qid":"q2","contexts":["c\\u0001"],"answer":"z"}\n')
  lu.assertTrue(ok, ds)
  local res = ev.evaluate(ds, { metrics = { "token_f1", "mrr" }, ci = false })
  local text = ev.report.render(res, "json", { items = "full" })
  local doc = cjson.decode(text)
  for i = 1, 2 do lu.assertEquals(json.encode(doc.items[i].row), json.encode(ds.rows[i]:table())) end
  lu.assertEquals(doc.items[1].row.deep.a[2], cjson.null) -- a null in a list stays
  -- the same text as json.lua gives for the item, the row on one line
  lu.assertTrue(text:find(item_text(res, ds, 1), 1, true) ~= nil)
  lu.assertTrue(text:find(item_text(res, ds, 2), 1, true) ~= nil)
end

-- Random JSON text: repeated keys, nulls, empty lists and objects,
-- escapes (surrogate pairs, control bytes, "\/"), numbers of every kind and
-- whitespace between tokens.
local function random_json(depth)
  local r = math.random(depth > 3 and 6 or 8)
  local sp = ({ "", " ", " \t", "" })[math.random(4)]
  if r == 1 then return ({ "null", "true", "false" })[math.random(3)] end
  if r == 2 then
    return ({ "0", "-0", "1", "-12", "0.1", "1e20", "1E-7", "2.5e+3", "12345678901234567890", "0.30000000000000004",
              "123456789012345.6", "1.5e300", "-4.9e-324" })[math.random(13)]
  end
  if r <= 5 then
    local parts = { '"' }
    for _ = 1, math.random(0, 4) do
      parts[#parts + 1] = ({ "a", "\\\"", "\\\\", "\\/", "\\n", "\\u00e9", "\\ud83d\\ude00", "\\u0001", "é", "\\t", "x y" })[math.random(11)]
    end
    return table.concat(parts) .. '"'
  end
  local items = {}
  for i = 1, math.random(0, 4) do
    local v = random_json(depth + 1)
    items[i] = r == 6 and v or ('"%s"%s:%s%s'):format(({ "k", "b", "a", "k", "\\u006b", "" })[math.random(6)], sp, sp, v)
  end
  local open, close = r == 6 and "[" or "{", r == 6 and "]" or "}"
  return open .. sp .. table.concat(items, "," .. sp) .. sp .. close
end

-- A JSON-valued field in a report: what lua-cjson decodes from it, nulls
-- stripped, as json.lua encodes it (the Lua route the C writer replaced),
-- on one line in the row and indented when it is a full item's id.
function test_json_valued_fields_are_written_as_json_lua_writes_them_decoded()
  math.randomseed(7)
  local raw, lines = {}, {}
  for i = 1, 400 do
    local v = random_json(0)
    while not v:find("^[%[{]") do v = random_json(0) end
    raw[i] = v
    lines[i] = ('{"qid":"q%d","answer":"a","deep":%s}'):format(i, v)
  end
  local ok, ds = load_text(table.concat(lines, "\n") .. "\n")
  lu.assertTrue(ok, ds)
  local strip = require("evalua.data.dataset").strip_nulls
  local res = ev.evaluate(ds, { metrics = { "token_f1" }, ci = false, id = "deep" })
  local text = ev.report.render(res, "json", { items = "full" })
  local bad = {}
  for i = 1, #raw do
    local want = strip(cjson.decode(raw[i]))
    local row = ('"deep":%s,"qid":"q%d"'):format(json.encode(want), i)
    local id = '\n      "id": ' .. json.encode(want, { indent = "  ", depth = 3 }) .. ',\n'
    if not text:find(row, 1, true) or not text:find(id, 1, true) then bad[#bad + 1] = raw[i] end
  end
  lu.assertEquals(bad, {})
end

-- A field nested deeper than the encoder goes (64 levels under the
-- document) loads, but its full report is refused with the encoder's
-- words, on one thread or two; the compact report does not hold the row.
function test_a_field_nested_too_deep_for_the_report_is_an_error()
  local deep = ('{"qid":"q%%d","answer":"a","deep":%s1%s}'):format(("["):rep(64), ("]"):rep(64))
  for n, at in pairs { [1] = 1, [20000] = 12000 } do -- 12000: in the second thread's block
    local lines = {}
    for i = 1, n do lines[i] = i == at and deep:format(i) or ('{"qid":"q%d","answer":"a"}'):format(i) end
    local ok, ds = load_text(table.concat(lines, "\n") .. "\n")
    lu.assertTrue(ok, ds)
    local res = ev.evaluate(ds, { metrics = { "token_f1" }, ci = false })
    local ok2, err = pcall(ev.report.render, res, "json", { items = "full" })
    lu.assertEquals({ ok2, err }, { false, "json: nesting deeper than 64 (a cycle?)" })
    lu.assertEquals(#cjson.decode(ev.report.render(res, "json")).items, n)
  end
end

function test_a_large_json_report_has_every_item_in_order()
  local lines = {}
  for i = 1, 20000 do
    lines[i] = ('{"qid":"q%d","answer":"a%d b","gold_answers":["a%d"],"variant":"v%d","retrieved":["d%d"],"gold_doc_ids":["d1"]}')
      :format(i, i % 7, i % 5, i % 3, i % 11)
  end
  local ok, ds = load_text(table.concat(lines, "\n") .. "\n")
  lu.assertTrue(ok, ds)
  local res = ev.evaluate(ds, { metrics = { "token_f1", "mrr" }, slices = { "variant" }, ci = false })
  -- past 16,384 items two threads write blocks of 8,192 each: the seams
  for _, form in ipairs { "full", "compact" } do
    local text = ev.report.render(res, "json", { items = form })
    local doc = cjson.decode(text)
    lu.assertEquals(#doc.items, 20000)
    for _, i in ipairs { 1, 8192, 8193, 16384, 16385, 16386, 20000 } do
      local want = form == "full" and item_text(res, ds, i) or "\n    " .. compact_item_text(res, i) .. (i < 20000 and ",\n" or "\n")
      lu.assertTrue(text:find(want, 1, true) ~= nil, form .. " item " .. i)
      lu.assertEquals(doc.items[i].id, "q" .. i)
    end
    local lines = select(2, text:gsub("\n", "\n"))
    if form == "compact" then lu.assertTrue(lines < 20000 + 500, lines) end -- an item a line
  end
end

-- Rows with a JSON-valued field (re-encoded in C, on either thread) first
-- and last in blocks of 8,192, in two blocks one after the other and in the
-- last one: every item in its place, the same text as json.lua's.
function test_json_valued_fields_in_a_large_full_report_keep_every_item_in_order()
  local deep = { [8193] = true, [24576] = true, [24577] = true, [33000] = true }
  local lines = {}
  for i = 1, 33000 do
    lines[i] = ('{"qid":"q%d","answer":"a%d"%s}'):format(i, i % 7, deep[i] and (',"deep":{"z":%d,"a":[true,{"y":1,"b":null}]}'):format(i) or "")
  end
  local ok, ds = load_text(table.concat(lines, "\n") .. "\n")
  lu.assertTrue(ok, ds)
  local res = ev.evaluate(ds, { metrics = { "token_f1" }, ci = false })
  local text = ev.report.render(res, "json", { items = "full" })
  local doc = cjson.decode(text)
  lu.assertEquals(#doc.items, 33000)
  for _, i in ipairs { 1, 8192, 8193, 8194, 16384, 16385, 24575, 24576, 24577, 24578, 32768, 32769, 32999, 33000 } do
    lu.assertTrue(text:find(item_text(res, ds, i), 1, true) ~= nil, "item " .. i)
    lu.assertEquals(doc.items[i].id, "q" .. i)
  end
  lu.assertEquals(doc.items[24577].row.deep, { z = 24577, a = { true, { y = 1 } } })
end

-- A comparison's baseline scores in a CSV report past 16,384 rows (two
-- threads since they are a score column): the baseline's score of each
-- row's item under its system, empty where the baseline has none.
function test_a_large_csv_report_has_each_rows_baseline_score()
  local lines = {}
  for i = 1, 20000 do lines[i] = ('{"qid":"q%d","answer":"a","gold_answers":["a"],"variant":"v%d"}'):format(i % 10000, i % 2) end
  local ok, ds = load_text(table.concat(lines, "\n") .. "\n")
  lu.assertTrue(ok, ds)
  local res = ev.evaluate(ds, { metrics = { "exact_match" }, system = "variant", ci = false })
  local before = { v0 = {}, v1 = {} }
  for k = 0, 9999 do
    if k % 3 ~= 0 then before["v" .. k % 2]["q" .. k] = { scores = { exact_match = k / 10000 } } end
  end
  ev.compare(res, { items = function() return before end }, { run_id = "r", aggregates = {} }, { resamples = 10 })
  local got = {}
  for line in ev.report.render(res, "csv"):gmatch("([^\r\n]*)\r\n") do got[#got + 1] = line end
  lu.assertEquals({ got[1], #got }, { "id,system,exact_match,exact_match.baseline,query,answer", 20001 })
  local bad = 0
  for i = 1, 20000 do
    local k = i % 10000
    local want = ("q%d,v%d,1,%s,,a"):format(k, i % 2, k % 3 ~= 0 and json.number(k / 10000) or "")
    if got[i + 1] ~= want then bad = bad + 1 end
  end
  lu.assertEquals(bad, 0)
end

-- Rows given as Lua tables with a judge's details, past 16,384 items:
-- written on two threads from the texts made before the report, every
-- item in its place as json.lua writes it, in both forms.
function test_a_large_report_of_lua_rows_with_details_has_every_item_in_order()
  local rows = {}
  for i = 1, 20000 do rows[i] = { qid = "q" .. i, answer = "a" .. i % 7, extra = { n = i, tags = { "t" } } } end
  local judged = { name = "j", fn = function(row) return { score = 1, reason = "r", seen = { row.qid } } end }
  local ds = ev.dataset.from_rows(rows, "lua rows")
  local res = ev.evaluate(ds, { metrics = { judged, "token_f1" }, ci = false })
  for _, form in ipairs { "full", "compact" } do
    local text = ev.report.render(res, "json", { items = form })
    for _, i in ipairs { 1, 8192, 8193, 16384, 16385, 20000 } do
      local it = res.items[i]
      local item = { id = it.id, system = it.system, slices = it.slices, scores = it.scores, reasons = it.reasons,
                     unmeasured = it.unmeasured, details = it.details, row = form == "full" and "\0row\0" or nil }
      local want = form == "full" and json.encode(item, { indent = "  ", depth = 2 }) or json.encode(item)
      if form == "full" then
        local a, b = want:find(json.encode("\0row\0"), 1, true)
        want = want:sub(1, a - 1) .. json.encode(rows[i]) .. want:sub(b + 1)
      end
      lu.assertTrue(text:find("\n    " .. want, 1, true) ~= nil, form .. " item " .. i)
    end
  end
end

-- The CSV report past 16,384 rows is written by two threads too: every
-- line equals the one built here from the items.
function test_a_large_csv_report_has_every_line_in_order()
  local lines = {}
  for i = 1, 20000 do
    lines[i] = ('{"qid":"q%d","query":"how, %d","answer":"a%d b","gold_answers":["a%d"],"variant":"v%d","retrieved":["d%d"],"gold_doc_ids":["d1"]}')
      :format(i, i, i % 7, i % 5, i % 3, i % 11)
  end
  local ok, ds = load_text(table.concat(lines, "\n") .. "\n")
  lu.assertTrue(ok, ds)
  local res = ev.evaluate(ds, { metrics = { "token_f1", "mrr" }, system = "variant", slices = { "variant" }, ci = false })
  local got = {}
  for line in ev.report.render(res, "csv"):gmatch("([^\r\n]*)\r\n") do got[#got + 1] = line end
  lu.assertEquals(got[1], "id,system,variant,token_f1,mrr,query,answer")
  lu.assertEquals(#got, 20001)
  local bad = 0
  for i = 1, 20000 do
    local it = res.items[i]
    local want = table.concat({ it.id, it.system, it.slices.variant, json.number(it.scores.token_f1),
      json.number(it.scores.mrr), '"' .. it.row.query .. '"', it.row.answer }, ",")
    if got[i + 1] ~= want then bad = bad + 1 end
  end
  lu.assertEquals(bad, 0)
end

-- A row field holding JSON is written as json.lua writes its decoding (keys
-- sorted, nulls stripped) by either thread, as one thread writes it.
function test_a_json_valued_field_in_a_large_full_report()
  local lines = {}
  for i = 1, 17000 do
    lines[i] = ('{"qid":"q%d","answer":"a","gold_answers":["a"],"meta":%s}'):format(i,
      i == 9000 and '{"z":[1,{"b":2,"a":1}],"a":null}' or '"m' .. i .. '"')
  end
  local ok, ds = load_text(table.concat(lines, "\n") .. "\n")
  lu.assertTrue(ok, ds)
  local res = ev.evaluate(ds, { metrics = { "exact_match" }, ci = false })
  local text = ev.report.render(res, "json", { items = "full" })
  lu.assertTrue(text:find(item_text(res, ds, 9000), 1, true) ~= nil)
  lu.assertTrue(text:find('"meta":{"z":[1,{"a":1,"b":2}]}', 1, true) ~= nil)
  lu.assertEquals(#cjson.decode(text).items, 17000)
end

function test_csv_cells_never_start_a_formula()
  local res = ev.evaluate({ { qid = "=HYPERLINK(\"http://x\")", query = "+cmd", answer = "@sum, x", v = -1 } },
    { metrics = { value_metric }, ci = false })
  local csv = ev.report.render(res, "csv")
  lu.assertStrContains(csv, "'=HYPERLINK(\"\"http://x\"\")")
  lu.assertStrContains(csv, ",-1,")
  lu.assertStrContains(csv, ",'+cmd,\"'@sum, x\"\r\n")
end

function test_reports_stream_to_files_atomically()
  local res = ev.evaluate(rows_of { 0.5, 1 }, { metrics = { value_metric }, ci = false })
  local out = dir .. "/out"
  local paths = ev.report.write(res, { dir = out, name = "r", formats = { "json", "csv" } })
  lu.assertEquals(#paths, 2)
  lu.assertEquals(h.read(out .. "/r.json"), ev.report.render(res, "json"))
  lu.assertEquals(h.read(out .. "/r.csv"), ev.report.render(res, "csv"))
  local _, _, code = h.sh("ls " .. out .. " | grep -q tmp")
  lu.assertEquals(code, 1) -- no temporary file left behind
end

function test_filter_sample_and_contexts_keep_columns()
  local ok, ds = load_text('{"qid":"a","variant":"x","retrieved":["d1","d2"]}\n{"qid":"b","variant":"y","retrieved":["d2"]}\n')
  lu.assertTrue(ok, ds)
  local only = ds:filter(function(r) return r.variant == "y" end)
  lu.assertEquals({ only.n, only.rows[1].qid, only.table:size() }, { 1, "b", 1 })
  ds:attach_contexts({ d1 = { text = "one" }, d2 = { text = "two" } }, 1)
  lu.assertEquals(ds.rows[1].contexts, { "one" })
  local doc = cjson.decode(ev.report.render(ev.evaluate(ds, { metrics = { value_metric }, ci = false }), "json",
    { items = "full" }))
  lu.assertEquals(doc.items[2].row.contexts, { "two" })
end

function test_cleanup() h.sh("rm -rf " .. dir) end

os.exit(lu.LuaUnit.run())
