-- ev.dataset and ev.schema: JSONL and CSV loading, errors naming file, line
-- and field, lenient mode, content hashes, stratified sampling.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

local BAD = "tests/data/bad_rows.jsonl"

function test_strict_mode_stops_at_the_first_bad_row_with_file_line_and_field()
  local ok, err = pcall(ev.dataset.load, BAD)
  lu.assertFalse(ok)
  lu.assertEquals(err, "tests/data/bad_rows.jsonl:3: field 'retrieved[2].score': expected number, got string")
end

-- The JSON reader's messages, line by line: each line of
-- tests/data/json_reader_errors.jsonl alone in a file, and the message
-- (after "FILE:1: ") in the same line of json_reader_errors.txt, "ok" for
-- a row that loads. The messages are those of the reader before its
-- structural pass and single number scan (kept byte-identical); the long
-- strings put a control byte, a bad UTF-8 byte or an escape past 16 and 32
-- bytes, where the 16-byte scan hands over.
function test_json_reader_messages_name_the_field_and_column()
  local cases, wants = {}, {}
  for l in io.lines("tests/data/json_reader_errors.jsonl") do cases[#cases + 1] = l end
  for l in io.lines("tests/data/json_reader_errors.txt") do wants[#wants + 1] = l end
  lu.assertEquals(#cases, #wants)
  local path = os.tmpname()
  for i, line in ipairs(cases) do
    h.write(path, line .. "\n")
    local ok, err = pcall(ev.dataset.load, path)
    lu.assertEquals(ok and "ok" or tostring(err):gsub("^.-:1: ", ""), wants[i], "case " .. i .. ": " .. line)
  end
  os.remove(path)
end

function test_lenient_mode_skips_and_lists_bad_rows()
  local ds = ev.dataset.load(BAD, { mode = "lenient" })
  local ids = {}
  for i, r in ipairs(ds.rows) do ids[i] = r.qid end
  lu.assertEquals(ids, { "q1", "q3" })
  lu.assertEquals(ds.skipped, {
    { line = 3, error = "field 'retrieved[2].score': expected number, got string" },
    { line = 5, error = "invalid JSON at column 1: expected a JSON object, found 'n'" },
    { line = 6, error = "field 'qid': missing (expected id)" },
    { line = 7, error = "field 'contexts[2]': expected string, got null" },
  })
  lu.assertEquals(ds.rows[2]._line, 4)
  lu.assertEquals(ds.rows[2].gold_answers, "a single string")
end

function test_hash_is_the_sha256_of_the_file_bytes()
  local ds = ev.dataset.load(BAD, { mode = "lenient" })
  local p = io.popen("sha256sum " .. BAD)
  local want = p:read("a"):match("^(%x+)")
  p:close()
  lu.assertEquals(ds.hash, want)
end

function test_csv_quoted_fields_lists_and_numbers()
  local ds = ev.dataset.load("tests/data/rows.csv", { schema = { score = "number" } })
  lu.assertEquals(#ds.rows, 2)
  local a, b = ds.rows[1], ds.rows[2]
  lu.assertEquals(a.query, "What is the limit, in GB?")
  lu.assertEquals(a.retrieved, { "d1", "d2", "d3" })
  lu.assertEquals(a.gold_answers, { "5 GB", "5 GiB" })
  lu.assertEquals(a.answer, 'The limit is "5 GB".')
  lu.assertEquals(a.score, 0.5)
  lu.assertEquals(b.query, "多行\n问题")
  lu.assertEquals(b.retrieved, { "d2", "d1" })
  lu.assertEquals(b.gold_answers, "三个")
  lu.assertEquals(b._line, 3)
end

function test_csv_errors_name_line_and_field()
  local dir = h.tmpdir()
  h.write(dir .. "/x.csv", "qid,score\nq1,1\nq2,high\n")
  local ok, err = pcall(ev.dataset.load, dir .. "/x.csv", { schema = { score = "number" } })
  lu.assertEquals(err, dir .. "/x.csv:3: field 'score': expected number, got 'high'")
  h.write(dir .. "/y.csv", 'qid,query\nq1,"unterminated\n')
  ok, err = pcall(ev.dataset.load, dir .. "/y.csv")
  lu.assertEquals(err, dir .. "/y.csv:2: unterminated quoted field")
  h.sh("rm -rf " .. dir)
end

-- A spreadsheet's list cells: "kb01, kb07, kb03" is three ids, not one.
-- recall@5 by hand (tests/data/spreadsheet_lists.csv): q1 3/3, q2 2/2,
-- q3 3/4 (kb13 is 6th), q4 2/2, q5 3/4 (kb43 is 6th): 4.5 / 5 = 0.9.
local function recall5(ds)
  local res = ev.evaluate(ds, { metrics = { "recall@5" }, ci = false, quiet = true })
  return res:agg(res.systems[1], "recall@5").mean
end

function test_csv_list_cells_split_at_commas_or_bars_and_keep_json()
  local ds = ev.dataset.load("tests/data/spreadsheet_lists.csv", { schema = { citations = "id[]" } })
  lu.assertEquals(ds.rows[1].gold_doc_ids, { "kb01", "kb07", "kb03" })
  lu.assertEquals(ds.rows[1].retrieved, { "kb01", "kb02", "kb07", "kb03", "kb09" })
  lu.assertEquals(ds.rows[4].retrieved, { "kb31", "kb30" })
  lu.assertEquals(ds.rows[5].gold_doc_ids, { "kb40", "kb41", "kb42", "kb43" })
  -- texts split at '|' only: a comma belongs to the answer
  lu.assertEquals(ds.rows[1].gold_answers, { "5 TiB, per object", "5 TiB" })
  lu.assertEquals(ds.rows[2].gold_answers, "eu-west and us-east")
  -- a user's id[] field is split by the same rule
  lu.assertEquals(ds.rows[1].citations, { "kb01", "kb07" })
  lu.assertEquals(ds.rows[2].citations, { "kb05" })
  lu.assertNil(ds.rows[3].citations)
  lu.assertAlmostEquals(recall5(ds), 0.9, 1e-12)
end

function test_semicolon_csv_is_recognised_with_decimal_commas()
  local ds = ev.dataset.load("tests/data/spreadsheet_lists_semicolon.csv",
                             { schema = { citations = "id[]", weight = "number" } })
  lu.assertEquals(ds.n, 5)
  lu.assertEquals(ds.rows[3].gold_doc_ids, { "kb10", "kb11", "kb12", "kb13" })
  lu.assertEquals(ds.rows[1].weight, 0.5)
  lu.assertEquals(ds.rows[5].weight, 1.5)
  lu.assertAlmostEquals(recall5(ds), 0.9, 1e-12)
  local dir = h.tmpdir()
  h.write(dir .. "/sep.csv", "sep=;\r\nqid;gold_doc_ids;retrieved\r\nq1;a, b;b\r\n")
  ds = ev.dataset.load(dir .. "/sep.csv")
  lu.assertEquals(ds.rows[1].gold_doc_ids, { "a", "b" })
  lu.assertEquals(ds.rows[1]._line, 3)
  h.write(dir .. "/both.csv", "qid,gold;ids\nq1,a\n")
  local ok, err = pcall(ev.dataset.load, dir .. "/both.csv")
  lu.assertEquals(err, dir .. "/both.csv:1: the header holds both ',' and ';' outside quotes, so which one "
    .. "separates fields is unclear; write 'sep=,' or 'sep=;' as the first line")
  h.write(dir .. "/comma.csv", 'qid,weight\nq1,"0,5"\n')
  ok, err = pcall(ev.dataset.load, dir .. "/comma.csv", { schema = { weight = "number" } })
  lu.assertEquals(err, dir .. "/comma.csv:2: field 'weight': expected number, got '0,5' (write decimals with '.')")
  h.sh("rm -rf " .. dir)
end

function test_csv_list_cells_that_fit_no_rule_are_refused_naming_it()
  local dir = h.tmpdir()
  local ids = "; a list cell holds a JSON array, or ids separated by '|' or by ','"
  local cases = {
    { 'q1,"kb01 kb07 kb03"', "field 'gold_doc_ids': the item 'kb01 kb07 kb03' holds white space" .. ids },
    { 'q1,kb01;kb07', "field 'gold_doc_ids': the item 'kb01;kb07' holds ';'" .. ids },
    { 'q1,"kb01|kb02, kb03"', "field 'gold_doc_ids': 'kb01|kb02, kb03' mixes '|' and ','" .. ids },
    { 'q1,"kb01,,kb02"', "field 'gold_doc_ids': an empty item in 'kb01,,kb02'" .. ids },
    { "q1,\"['kb01', 'kb02']\"", "field 'gold_doc_ids[1]': expected id, got invalid JSON"
      .. " (a cell that starts with '[' is read as JSON)" },
  }
  for _, c in ipairs(cases) do
    h.write(dir .. "/x.csv", "qid,gold_doc_ids\n" .. c[1] .. "\n")
    local ok, err = pcall(ev.dataset.load, dir .. "/x.csv")
    lu.assertEquals(err, dir .. "/x.csv:2: " .. c[2])
  end
  h.write(dir .. "/x.csv", 'qid,contexts\nq1,"first|"\n')
  local ok, err = pcall(ev.dataset.load, dir .. "/x.csv")
  lu.assertEquals(err, dir .. "/x.csv:2: field 'contexts': an empty item in 'first|'; a list cell of texts holds"
    .. " a JSON array, or texts separated by '|'")
  h.write(dir .. "/x.csv", 'qid,graded_relevance\nq1,d1:3\n')
  ok, err = pcall(ev.dataset.load, dir .. "/x.csv")
  lu.assertEquals(err, dir .. "/x.csv:2: field 'graded_relevance': expected a JSON object id -> grade, got 'd1:3'")
  h.sh("rm -rf " .. dir)
end

function test_missing_file_is_a_clear_error()
  local ok, err = pcall(ev.dataset.load, "no/such.jsonl")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "cannot read data set: no/such.jsonl: No such file or directory")
end

local function rows_with_classes(counts)
  local rows = {}
  for class, n in pairs(counts) do
    for i = 1, n do
      for _, v in ipairs { "a", "b" } do
        rows[#rows + 1] = { qid = class .. i, query_class = class, variant = v }
      end
    end
  end
  return ev.dataset.from_rows(rows)
end

function test_stratified_sample_is_proportional_deterministic_and_keeps_variants_together()
  local ds = rows_with_classes { factoid = 50, comparison = 30, howto = 20 }
  local s = ds:sample { n = 20, by = "query_class", seed = 7 }
  local per, ids = {}, {}
  for _, r in ipairs(s.rows) do
    per[r.query_class] = (per[r.query_class] or 0) + 1
    ids[r.qid] = (ids[r.qid] or 0) + 1
  end
  -- 20 of 100 queries: 10 / 6 / 4, two variant rows each
  lu.assertEquals(per, { factoid = 20, comparison = 12, howto = 8 })
  for _, c in pairs(ids) do lu.assertEquals(c, 2) end
  local again = ds:sample { n = 20, by = "query_class", seed = 7 }
  lu.assertEquals(#again.rows, #s.rows)
  for i, r in ipairs(again.rows) do lu.assertEquals(r.qid, s.rows[i].qid) end
  local other = ds:sample { n = 20, by = "query_class", seed = 8 }
  lu.assertNotEquals(other.hash, s.hash)
end

function test_small_strata_get_one_item_and_tiers_cap_at_the_data_size()
  local ds = rows_with_classes { big = 97, rare = 3 }
  local s = ds:sample { n = 10, by = "query_class" }
  local per = {}
  for _, r in ipairs(s.rows) do per[r.query_class] = (per[r.query_class] or 0) + 1 end
  lu.assertEquals(per, { big = 18, rare = 2 })
  lu.assertEquals(#ds:sample({ tier = "regression" }).rows, 200)
end

function test_corpus_and_attach_contexts()
  local dir = h.tmpdir()
  h.write(dir .. "/c.jsonl", '{"id":"d1","title":"A","text":"alpha"}\n{"id":"d2","title":"B","text":"beta"}\n')
  local docs = ev.dataset.corpus(dir .. "/c.jsonl")
  local ds = ev.dataset.from_rows { { qid = "q", retrieved = { { id = "d2", score = 2 }, { id = "d1", score = 1 }, { id = "d9", score = 0 } } } }
  ds:attach_contexts(docs, 2)
  lu.assertEquals(ds.rows[1].contexts, { "beta", "alpha" })
  h.write(dir .. "/dup.jsonl", '{"id":"d1","text":"a"}\n{"id":"d1","text":"b"}\n')
  local ok, err = pcall(ev.dataset.corpus, dir .. "/dup.jsonl")
  lu.assertEquals(err, dir .. "/dup.jsonl:2: document 'd1' appears twice")
  h.sh("rm -rf " .. dir)
end

function test_trec_files_load_into_the_same_rows_as_jsonl()
  local dir = h.tmpdir()
  h.write(dir .. "/qrels", "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d9 1\n")
  h.write(dir .. "/run", "q1 Q0 d2 1 9.5 sys\nq1 Q0 d1 2 7.25 sys\n")
  local ds = ev.dataset.trec(dir .. "/qrels", dir .. "/run")
  lu.assertEquals(#ds.rows, 1) -- q2 has no ranking: left out unless complete = true
  local r = ds.rows[1]
  lu.assertEquals(r.qid, "q1")
  lu.assertEquals(r.retrieved, { { id = "d2", score = 9.5 }, { id = "d1", score = 7.25 } })
  lu.assertEquals(r.graded_relevance, { d1 = 2, d2 = 0, d3 = 1 })
  lu.assertEquals(#ev.dataset.trec(dir .. "/qrels", dir .. "/run", { complete = true }).rows, 2)
  local res = ev.evaluate(ds, { metrics = { "recall@2", "mrr" }, ci = false })
  -- relevant: d1, d3 (grade >= 1); d1 retrieved at rank 2
  lu.assertEquals(res:agg("all", "recall@2").mean, 0.5)
  lu.assertEquals(res:agg("all", "mrr").mean, 0.5)
  lu.assertEquals(#ds.hash, 64)
  h.write(dir .. "/bad", "q1 Q0 d2 1 high sys\n")
  local ok, err = pcall(ev.dataset.trec, dir .. "/qrels", dir .. "/bad")
  lu.assertFalse(ok)
  lu.assertStrContains(err, dir .. "/bad:1:")
  h.sh("rm -rf " .. dir)
end

function test_a_metric_can_combine_others()
  ev.register("grounded_f1", function(row, ctx)
    local f = ev.rag.faithfulness.fn(row, ctx)
    if f.unmeasured then return f end
    return 0.5 * f.score + 0.5 * ev.text.token_f1(row.answer, row.gold_answers)
  end)
  local rows = {
    -- one supported sentence of two; token F1 with "seven days": 2 of 7 answer tokens match,
    -- P = 2/7, R = 1, F1 = 2PR / (P + R) = 4/9
    { qid = "a", answer = "Uploads expire after seven days. Pigs fly.", gold_answers = { "seven days" },
      contexts = { "Incomplete uploads expire after seven days." } },
    { qid = "b", answer = "I couldn't find this in the provided documentation.", gold_answers = { "x" },
      contexts = { "anything" } },
  }
  local res = ev.evaluate(rows, { metrics = { "grounded_f1" }, judge = ev.judge.open("offline"), ci = false })
  lu.assertAlmostEquals(res.items[1].scores.grounded_f1, 0.5 * 0.5 + 0.5 * 4 / 9, 1e-12)
  lu.assertNil(res.items[2].scores.grounded_f1)
  lu.assertEquals(res.items[2].unmeasured.grounded_f1, "the answer makes no statements to check")
end


-- Ranking entries as writers put them are read by a quick path; spaces,
-- other key orders, escapes and long or exponent numbers by the general
-- one: both give the same values, and a bad entry the same message.
function test_ranking_entries_in_every_layout_read_the_same()
  local dir = h.tmpdir()
  h.write(dir .. "/r.jsonl", table.concat({
    '{"qid":"q1","retrieved":[{"id":"a","score":1},{"id":"b","score":-0.5},{"id":"c\\u0041","score":2.5e0},'
      .. '{ "id" : "d" , "score" : 3 },{"score":4,"id":"e"},{"id":"f","score":4.25,"x":[1]},'
      .. '{"id":"g","score":12345678901234567},{"id":"h","score":0.1},{"id":"\u{4e2d}","score":-0}]}',
    '{"qid":"q2","retrieved":[{"id":"a","score":1},{"id":"b","score":1e999}]}',
    '{"qid":"q3","retrieved":[{"id":"a","score":1},{"id":"b","score":"x"}]}',
    '{"qid":"q4","retrieved":[{"id":"a","score":1},{"id":"b","score":01}]}',
    '{"qid":"q5","retrieved":[{"id":"a","score":1},{"id":"b"}]}',
    '{"qid":"q6","retrieved":[{"id":"a","score":1},{"id":"b","score":2]}',
  }, "\n") .. "\n")
  local ds = ev.dataset.load(dir .. "/r.jsonl", { mode = "lenient" })
  lu.assertEquals(#ds.rows, 1)
  lu.assertEquals(ds.rows[1].retrieved, {
    { id = "a", score = 1 }, { id = "b", score = -0.5 }, { id = "cA", score = 2.5 }, { id = "d", score = 3 },
    { id = "e", score = 4 }, { id = "f", score = 4.25 }, { id = "g", score = 12345678901234568 },
    { id = "h", score = 0.1 }, { id = "\u{4e2d}", score = 0 },
  })
  local why = {}
  for _, s in ipairs(ds.skipped) do why[s.line] = s.error end
  lu.assertEquals(why, {
    [2] = "field 'retrieved[2].score': number out of range",
    [3] = "field 'retrieved[2].score': expected number, got string",
    [4] = "field 'retrieved[2].score': invalid JSON at column 66: a number with a leading zero, found '1'",
    [5] = "field 'retrieved[2]': lacks a score while retrieved[1] has one",
    [6] = "invalid JSON at column 66: expected ',' or '}', found ']'",
  })
end

os.exit(lu.LuaUnit.run(), true)
