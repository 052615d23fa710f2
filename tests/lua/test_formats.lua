-- The peers' data formats (lua/evalua/data/formats/, docs/data.md): each
-- sample file in tests/data/formats/ is written in the documented shape of
-- its tool and loads unchanged; promptfoo's own CSV cases
-- (tests/data/peers/promptfoo/csv_rows.jsonl) give the same test cases; bad
-- input is a FILE:LINE: field ... error.
local lu = require "luaunit"
local ev = require "evalua"
local json = require "evalua.core.json"
local promptfoo = require "evalua.data.formats.promptfoo"

local D = "tests/data/formats/"

local function load(name, fmt, extra)
  local opts = { format = fmt or "auto" }
  for k, v in pairs(extra or {}) do opts[k] = v end
  return ev.dataset.load(D .. name, opts)
end

local function err_of(fn, ...)
  local ok, e = pcall(fn, ...)
  lu.assertFalse(ok)
  return tostring(e)
end

function test_ragas_single_turn_jsonl_maps_to_rows()
  local ds = load("ragas_single.jsonl", "ragas")
  lu.assertEquals(ds.n, 2)
  lu.assertEquals(ds.format, "ragas")
  local r = ds.rows[1]
  lu.assertEquals(r.qid, 1)
  lu.assertEquals(r.query, "When was the first Super Bowl?")
  lu.assertEquals(r.answer, "The first Super Bowl was held on January 15, 1967.")
  lu.assertEquals(r.gold_answers, { "The first Super Bowl was held on January 15, 1967." })
  lu.assertEquals(r.contexts, { "The First AFL-NFL World Championship Game was played on January 15, 1967." })
  lu.assertEquals(r.rubrics, { score1_description = "wrong date", score5_description = "correct date" })
  lu.assertEquals(ds.rows[2].reference_contexts, { "Pride and Prejudice is an 1813 novel by Jane Austen." })
  lu.assertEquals(ds.rows[2].persona_name, "student") -- a key that maps to nothing is kept
  lu.assertEquals(ds.rows[2]._line, 2)
end

function test_ragas_csv_reads_python_lists_as_to_csv_writes_them()
  local ds = load("ragas_single.csv")
  lu.assertEquals(ds.format, "ragas")
  lu.assertEquals(ds.rows[2].contexts, { "Pride and Prejudice is an 1813 novel by Jane Austen.", "Austen's sixth novel was Persuasion." })
  lu.assertEquals(ds.rows[2]._line, 3)
  local json_ds = load("ragas_samples.json")
  lu.assertEquals({ json_ds.n, json_ds.rows[2]._line, json_ds.rows[2].answer }, { 2, 8, "4" })
end

-- RAGAS's own samples (tests/data/peers/ragas/samples.jsonl, each naming
-- the RAGAS test or code it comes from), one record to a file.
function test_ragas_samples_of_its_own_tests()
  local n = 0
  for line in io.lines("tests/data/peers/ragas/samples.jsonl") do
    local case = json.decode(line)
    n = n + 1
    local path = os.tmpname() .. ".jsonl"
    local f = assert(io.open(path, "wb"))
    f:write(json.encode(case.record), "\n")
    f:close()
    local ok, ds = pcall(ev.dataset.load, path, { format = "ragas" })
    if case.error then
      lu.assertFalse(ok, case.source)
      lu.assertStrContains(tostring(ds), path .. ":1: " .. case.error, false, case.source)
    else
      lu.assertTrue(ok, case.source .. ": " .. tostring(ds))
      ev.agent.check(ds)
      lu.assertEquals(ds.rows[1]:table(), setmetatable(case.expected, nil), case.source)
    end
    os.remove(path)
  end
  lu.assertEquals(n, 7)
end

function test_ragas_multi_turn_samples_become_conversations()
  local ds = load("ragas_multi.jsonl")
  ev.agent.check(ds)
  local r = ds.rows[1]
  lu.assertEquals(#r.messages, 8)
  lu.assertEquals(r.messages[2].tool_calls[1]["function"].name, "weather_check")
  lu.assertEquals(r.messages[3], { role = "tool", tool_call_id = "call_1", content = "75°F, partly cloudy" })
  lu.assertEquals(r.messages[7].tool_call_id, "call_2")
  lu.assertEquals(r.expected_tool_calls[2], { name = "temperature_conversion", arguments = { temperature_fahrenheit = 75 } })
  lu.assertEquals(r.expected_outcome, "The user learns the temperature in New York in Celsius.")
  lu.assertEquals(r.reference_topics, { "weather" })
  -- the agent metrics read it: both reference calls made with equal arguments
  lu.assertEquals(ev.agent.tool_call_f1(r, r).score, 1)
  local csv = load("ragas_multi.csv")
  lu.assertEquals(csv.rows[1].expected_tool_calls, { { name = "book_table", arguments = { people = 2, time = "19:00" } } })
  lu.assertEquals(csv.rows[1].messages[3], { role = "tool", tool_call_id = "call_1", content = "booked" })
end

function test_deepeval_goldens_json_jsonl_and_csv()
  local ds = load("deepeval_goldens.json")
  lu.assertEquals(ds.format, "deepeval")
  local r = ds.rows[1]
  lu.assertEquals({ r.query, r.answer }, { "What if these shoes don't fit?", "We offer a 30-day full refund at no extra cost." })
  lu.assertEquals(r.gold_answers, { "You are eligible for a 30 day full refund at no extra cost." })
  lu.assertEquals(r.contexts, { "All customers are eligible for a 30 day full refund at no extra cost." })
  lu.assertEquals(r.context, { "Refunds: 30 days, no extra cost." })
  lu.assertEquals(r.expected_tool_calls, { { name = "lookup_policy", arguments = { topic = "refund" } } })
  lu.assertEquals(r.messages[3], { role = "tool", tool_call_id = "call_1", content = "30 day full refund" })
  lu.assertEquals(r.additional_metadata, { team = "support" })
  lu.assertEquals(ev.agent.tool_correctness(r, r).score, 1)
  lu.assertNil(ds.rows[2].comments) -- null is absent
  -- save_as's JSONL and CSV join contexts with '|'
  lu.assertEquals(load("deepeval_goldens.jsonl").rows[1].contexts,
    { "All customers are eligible for a 30 day full refund.", "Refunds take 5 days." })
  local c = load("deepeval_goldens.csv").rows[1]
  lu.assertEquals(c.contexts, { "All customers are eligible for a 30 day full refund.", "Refunds take 5 days." })
  lu.assertEquals(c.expected_tool_calls, { { name = "lookup_policy", arguments = { topic = "refund" } } })
  lu.assertEquals(c.additional_metadata, { team = "support" })
end

-- DeepEval's own files and the assertions of its test_dataset.py
-- (tests/data/peers/deepeval/README.md).
function test_deepeval_loads_its_own_test_datasets()
  local P = "tests/data/peers/deepeval/"
  for _, f in ipairs { "goldens.json", "goldens.csv" } do
    local ds = ev.dataset.load(P .. f, { format = "auto" })
    lu.assertEquals({ ds.format, ds.n }, { "deepeval", 15 }, f)
    for _, r in ds:rows() do
      lu.assertIsString(r.query, f)
      if f == "goldens.json" then lu.assertIsString(r.name, f) else lu.assertIsString(r.comments, f) end
    end
  end
  local first = ev.dataset.load(P .. "goldens.csv", { format = "deepeval" }).rows[1]
  lu.assertEquals(first.contexts, { "Mountain heights list", "Moutain list" })
  lu.assertEquals(first.expected_tool_calls, { { name = "mountain_lookup", arguments = { query = "tallest mountain" } } })
  for _, f in ipairs { "convo_goldens.json", "convo_goldens.csv" } do
    local ds = ev.dataset.load(P .. f, { format = "auto" })
    lu.assertEquals({ ds.format, ds.n }, { "deepeval", 15 }, f)
    ev.agent.check(ds)
    for _, r in ds:rows() do
      lu.assertIsString(r.scenario, f)
      if f == "convo_goldens.json" then lu.assertIsString(r.name, f) else lu.assertIsString(r.comments, f) end
    end
    lu.assertEquals(ds.rows[1].messages[2], { role = "assistant", content = "It's expected to be rainy with temperatures around 18°C." })
  end
end

function test_deepeval_conversational_goldens_become_conversations()
  local ds = load("deepeval_conversations.json")
  ev.agent.check(ds)
  local r = ds.rows[1]
  lu.assertEquals(r.scenario, "A customer wants a refund for shoes that do not fit.")
  lu.assertEquals(r.chatbot_role, "a polite shoe-shop assistant")
  lu.assertEquals(r.expected_outcome, "The assistant starts a refund.")
  lu.assertEquals(#r.messages, 6)
  lu.assertEquals(r.messages[2].tool_calls[1]["function"].arguments, '{"order_id":"A17"}')
  lu.assertEquals(r.messages[4], { role = "assistant", content = "I have started a refund for order A17." })
  lu.assertEquals(r.turns[2].retrieval_context, { "Refunds within 30 days." }) -- kept as written
  lu.assertEquals(ds:turns().n, 2)
end

function test_promptfoo_csv_and_json_tests()
  local ds = load("promptfoo_tests.csv")
  lu.assertEquals(ds.format, "promptfoo")
  local r = ds.rows[1]
  lu.assertEquals({ r.qid, r.question, r.language, r.description, r.threshold },
    { 1, "What is the capital of France?", "en", "capital of France", 0.5 })
  lu.assertEquals(r.assert, { { type = "icontains", value = "paris", metric = "geography" },
    { type = "not-contains-any", value = { "London", "Berlin" }, metric = "geography" } })
  lu.assertEquals(ds.rows[2].assert[2], { type = "similar", value = "Berlin ist die Hauptstadt", threshold = 0.9, metric = "geography" })
  lu.assertEquals(ds.rows[3].assert[2], { type = "javascript", value = "output.length < 100" })
  local j = load("promptfoo_tests.json")
  lu.assertEquals(j.rows[2].answer, "Refunds are accepted within 30 days at no fee.")
  lu.assertEquals(j.rows[2].context, { "Refunds within 30 days.", "No fee." })
  lu.assertEquals(j.rows[2].metadata, { owner = "support" })
end

-- promptfoo's own cases for testCaseFromCsvRow and assertionFromString.
function test_promptfoo_csv_rows_agree_with_promptfoos_tests()
  local n = 0
  for line in io.lines("tests/data/peers/promptfoo/csv_rows.jsonl") do
    local case = json.decode(line)
    n = n + 1
    local ok, got = pcall(promptfoo.test_from_csv_row, case.row, n)
    if case.error then
      lu.assertFalse(ok, case.source)
      lu.assertEquals(("field '%s': %s"):format(got.field, got.msg), case.error, case.source)
    else
      lu.assertTrue(ok, case.source)
      if case.expected then
        lu.assertEquals(json.decode(json.encode(got)), case.expected, case.source)
      else
        lu.assertEquals(got.assert[1], case.expected_assert_1, case.source)
      end
    end
  end
  lu.assertEquals(n, 17)
end

-- promptfoo's own cases for assertionFromString (test/csv.test.ts).
function test_promptfoo_assertion_strings_agree_with_promptfoos_tests()
  local n = 0
  for line in io.lines("tests/data/peers/promptfoo/assertion_strings.jsonl") do
    local case = json.decode(line)
    n = n + 1
    local ok, got = pcall(promptfoo.assertion, case.input, "__expected")
    if case.error then
      lu.assertFalse(ok, case.source)
      lu.assertStrContains(("field '%s': %s"):format(got.field, got.msg), case.error, false, case.source)
    else
      lu.assertTrue(ok, case.source)
      lu.assertEquals(json.decode(json.encode(got)), case.expected, case.source)
    end
  end
  lu.assertEquals(n, 87)
end

-- The value after "TYPE:" is trimmed as promptfoo's assertionFromString trims
-- it (src/csv.ts, value?.trim()), but a JSON schema's text is kept as written;
-- evalua run CONFIG.yaml reads CSV tests through this same reader.
function test_promptfoo_assertion_values_are_trimmed()
  lu.assertEquals(promptfoo.assertion("icontains: yes "), { type = "icontains", value = "yes" })
  lu.assertEquals(promptfoo.assertion("starts-with: Tell"), { type = "starts-with", value = "Tell", threshold = 0.75 })
  lu.assertEquals(promptfoo.assertion('is-json: {"type": "object"}'), { type = "is-json", value = ' {"type": "object"}' })
end

function test_beir_folder_loads_as_rows_and_corpus()
  local ds = load("beir_small")
  lu.assertEquals(ds.format, "beir")
  lu.assertEquals(ds.n, 2) -- q3 is judged nowhere: BEIR keeps only the queries of the qrels
  local r = ds.rows[1]
  lu.assertEquals({ r.qid, r.query }, { "q1", "capital of France" })
  lu.assertEquals(r.graded_relevance, { d1 = 2, d3 = 0 })
  lu.assertEquals(r.gold_doc_ids, { "d1" })
  lu.assertEquals(r.metadata, { kind = "factoid" })
  lu.assertEquals(ds.rows[2].gold_doc_ids, { "d2", "d3" })
  lu.assertEquals(ds.corpus.d1, { id = "d1", title = "Paris", text = "Paris is the capital of France.", metadata = { source = "wiki" } })
  lu.assertEquals(load("beir_small", "beir", { split = "dev" }).n, 1)
  lu.assertNil(load("beir_small", "beir", { corpus = false }).corpus)
  lu.assertStrContains(err_of(load, "beir_small", "beir", { split = "train" }),
    "beir_small: no qrels/train.tsv (split 'train'; this folder has dev, test)")
end

-- BEIR's EvaluateRetrieval.evaluate on its own folder and run, through
-- ev.evaluate: tests/data/peers/beir/README.md works the values by hand.
function test_beir_evaluation_through_ev_evaluate()
  local B = "tests/data/peers/beir"
  local measures = { "P.1", "P.3", "recall.1", "recall.3", "ndcg_cut.1", "ndcg_cut.3", "map_cut.1", "map_cut.3" }
  local want = {
    [false] = { 1, 0.5, 0.75, 1, 1, (1.5 / (1 + 1 / math.log(3, 2)) + 1) / 2, 0.75, (5 / 6 + 1) / 2 },
    [true] = { 0.5, 1 / 3, 0.25, 0.5, 0.5, 1.5 / (1 + 1 / math.log(3, 2)) / 2, 0.25, 5 / 12 },
  }
  for _, drop in ipairs { false, true } do
    local ds = ev.dataset.load(B, { format = "beir", run = B .. "/run.trec", ignore_identical_ids = drop or nil })
    lu.assertEquals(ds.n, 3) -- q1, q2, q3: the judged queries
    lu.assertNil(ds.rows[3].retrieved) -- q3 has no results: unmeasured, not counted
    lu.assertEquals(#ds.rows[2].retrieved, drop and 0 or 1)
    local res = ev.evaluate(ds, { metrics = measures, quiet = true })
    for i, m in ipairs(measures) do
      local a = res.aggregates.all.all.all[m] -- slice all, value all, the one system
      lu.assertAlmostEquals(a.mean, want[drop][i], 1e-12, m)
      lu.assertEquals({ a.measured, a.n }, { 2, 3 }, m) -- q3 unmeasured: BEIR counts q1 and q2
    end
  end
  -- MS MARCO's own run format: QID<TAB>DOCNO<TAB>RANK
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write("1048585\t1\t2\n1048585\t0\t1\n2\t9\t1\n")
  f:close()
  local ms = ev.dataset.load(D .. "msmarco_small", { format = "msmarco", run = path })
  lu.assertEquals(ms.rows[1].retrieved, { "0", "1" })
  lu.assertEquals(ms.rows[2].retrieved, { "9" })
  os.remove(path)
end

function test_trec_rows_from_beirs_qrels()
  local B = "tests/data/peers/beir"
  local ds = ev.dataset.trec(B .. "/qrels/test.tsv", B .. "/run.trec")
  lu.assertEquals(ds.n, 2) -- q1 and q2: judged and retrieved
  lu.assertEquals(ds.rows[1].gold_doc_ids, { "d1", "d2" })
  lu.assertEquals(ds.rows[1].retrieved[1], { id = "d1", score = 3 })
end

function test_msmarco_folder_loads_as_rows_and_corpus()
  local ds = load("msmarco_small")
  lu.assertEquals(ds.format, "msmarco")
  lu.assertEquals({ ds.rows[1].qid, ds.rows[1].query }, { "1048585", "what is the manhattan project" })
  lu.assertEquals(ds.rows[1].gold_doc_ids, { "0", "1" })
  lu.assertEquals(ds.corpus["2"].text, "Paris is in France.")
end

function test_a_peer_file_without_format_gets_a_hint()
  local e = err_of(ev.dataset.load, D .. "ragas_single.jsonl")
  lu.assertStrContains(e, "ragas_single.jsonl:1: field 'qid': missing (expected id) (this looks like a RAGAS "
    .. "EvaluationDataset: load it with {format = \"ragas\"}, or --data-format ragas in the bundled scripts; docs/data.md)")
  lu.assertStrContains(err_of(ev.dataset.load, D .. "deepeval_goldens.jsonl"), "{format = \"deepeval\"}")
  lu.assertStrContains(err_of(ev.dataset.load, D .. "promptfoo_tests.csv", { mode = "lenient" }), "{format = \"promptfoo\"}")
end

local function bad_file(name, text)
  local path = os.tmpname() .. name
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

function test_bad_peer_input_names_file_line_and_field()
  local cases = {
    { "ragas", "x.jsonl", '{"user_input": "q", "retrieved_contexts": "one text"}\n',
      ":1: field 'retrieved_contexts': expected a list of strings, got a string" },
    { "ragas", "x.jsonl", '{"user_input": "q"}\n{"user_input": [{"content": "hi", "type": "robot"}]}\n',
      ":2: field 'user_input[1].type': expected \"human\", \"ai\" or \"tool\" (RAGAS's HumanMessage, AIMessage, ToolMessage), got 'robot'" },
    { "ragas", "x.jsonl", '{"user_input": [{"content": "hi", "type": "human"}, {"content": "42", "type": "tool"}]}\n',
      ":1: field 'user_input[2]': a ToolMessage that answers no tool call of an AI message before it" },
    { "ragas", "x.csv", 'user_input,retrieved_contexts\nq,"[\'a\', "\n',
      ":2: field 'retrieved_contexts': not a list: unexpected end at character 6: ['a'," },
    { "ragas", "x.jsonl", '{"user_input": "q", "response": "a", "answer": "b"}\n',
      ":1: field 'answer': the record has this key and 'response' too, and both give answer; keep one" },
    { "deepeval", "x.json", '[\n  {"input": "q"},\n  {"actual_output": "a"}\n]\n',
      ":3: field 'input': missing (a DeepEval test case has input; a conversation has turns)" },
    { "deepeval", "x.json", '{"goldens": [{"input": "q", "expected_tools": [{"input_parameters": {}}]}]}',
      ":1: field 'expected_tools[1]': expected a ToolCall {name =, input_parameters =}" },
    { "deepeval", "x.jsonl", '{"turns": [{"role": "system", "content": "x"}]}\n',
      ":1: field 'turns[1].role': expected \"user\" or \"assistant\", got 'system'" },
    { "promptfoo", "x.json", '[{"vars": {"assert": "x"}}]',
      ":1: field 'vars.assert': a variable named 'assert' would take the place of the test's own 'assert'; rename it" },
    { "promptfoo", "x.json", '[{"vars": {}, "asert": []}]',
      ":1: field 'asert': not a key of a promptfoo test case" },
    { "promptfoo", "x.csv", 'q,__threshold\nhi,high\n', ":2: field '__threshold': expected a number, got 'high'" },
    { "promptfoo", "x.json", '[{"vars": {}, "providerOutput": {"text": "hi"}}]',
      ":1: field 'answer' (read from 'providerOutput'): expected string, got object" },
    { "ragas", "x.jsonl", '{"user_input": "q", "retrieved_context_ids": [true]}\n',
      ":1: field 'retrieved_context_ids[1]': expected an id (a non-empty string), got a boolean" },
    { "ragas", "x.jsonl", '{"user_input": "q", "retrieved_contexts": [1]}\n',
      ":1: field 'retrieved_contexts[1]': expected a string, got a number" },
  }
  for _, c in ipairs(cases) do
    local path = bad_file(c[2], c[3])
    local ok, e = pcall(ev.dataset.load, path, { format = c[1] })
    lu.assertFalse(ok, c[4])
    e = tostring(e)
    lu.assertStrContains(e, path .. c[4])
    os.remove(path)
  end
end

function test_edges_of_the_peer_shapes()
  -- DeepEval's RetrievedContextData markers: the text is the context, the source kept
  local p = bad_file("x.json", '[{"input": "q", "retrieval_context": ["deepeval_source=kb/a.md,deepeval_context=Refunds within 30 days.", "plain"]}]')
  local r = ev.dataset.load(p, { format = "deepeval" }).rows[1]
  lu.assertEquals(r.contexts, { "Refunds within 30 days.", "plain" })
  lu.assertEquals(r.retrieval_context_sources, { "kb/a.md", json.null })
  os.remove(p)
  -- a RAGAS CSV question that starts with "[" is a question, not a conversation
  p = bad_file("x.csv", "user_input,response\n[Draft] what is it?,x\n")
  lu.assertEquals(ev.dataset.load(p, { format = "ragas" }).rows[1].query, "[Draft] what is it?")
  os.remove(p)
  -- a peer's JSON list loaded as evalua rows gets the hint too
  lu.assertStrContains(err_of(ev.dataset.load, D .. "deepeval_goldens.json"),
    "(this looks like DeepEval test cases: load it with {format = \"deepeval\"}")
  -- a BEIR folder loaded as evalua rows says what it is
  lu.assertStrContains(err_of(ev.dataset.load, D .. "beir_small"), "(this looks like a BEIR folder: load it with {format = \"beir\"}")
  -- an Excel sep= line before the header
  p = bad_file("x.csv", "sep=;\nuser_input;response\nq;a\n")
  lu.assertEquals(ev.dataset.load(p, { format = "auto" }).rows[1].answer, "a")
  os.remove(p)
  -- a key kept as written: an empty list stays a list
  p = bad_file("x.jsonl", '{"user_input": "q", "tags": []}\n')
  lu.assertEquals(ev.dataset.load(p, { format = "ragas" }).table:get(1, "tags"), "[]")
  os.remove(p)
end

function test_lenient_skips_a_bad_peer_row_and_lists_it()
  local path = bad_file("x.jsonl", '{"user_input": "q"}\n{"user_input": 5}\n{"user_input": "r"}\n')
  local ds = ev.dataset.load(path, { format = "ragas", mode = "lenient" })
  lu.assertEquals(ds.n, 2)
  lu.assertEquals(ds.skipped, { { line = 2, error = "field 'user_input': expected a string, got a number" } })
  os.remove(path)
end

function test_options_that_do_nothing_are_refused()
  lu.assertStrContains(err_of(ev.dataset.load, D .. "ragas_single.jsonl", { format = "ragas", split = "x" }),
    "split applies to format \"beir\" and \"msmarco\", not \"ragas\"")
  lu.assertStrContains(err_of(ev.dataset.load, D .. "beir_small", { format = "beir", ignore_identical_ids = true }),
    "ignore_identical_ids applies to the rankings of a run: give run = FILE")
  lu.assertStrContains(err_of(ev.dataset.load, D .. "ragas_single.jsonl", { format = "rags" }), "format must be one of evalua")
  lu.assertStrContains(err_of(ev.dataset.load, D .. "beir_small", { format = "ragas" }), "a folder; format \"ragas\" reads a file")
end

function test_promptfoo_yaml_tests()
  local ds = load("promptfoo_tests.yaml")
  lu.assertEquals(ds.format, "promptfoo")
  lu.assertEquals(ds.n, 2)
  lu.assertEquals({ ds.rows[1].question, ds.rows[1]._line, ds.rows[2]._line }, { "What is the capital of France?", 1, 7 })
  lu.assertEquals(ds.rows[1].assert, { { type = "icontains", value = "paris" }, { type = "not-contains", value = "London" } })
  lu.assertEquals(ds.rows[2].context, { "Refunds within 30 days.", "No fee." })
  local path = bad_file("x.yaml", "- vars: {q: hi}\n- vars: [1\n")
  lu.assertStrContains(err_of(ev.dataset.load, path, { format = "promptfoo" }), path .. ":")
  os.remove(path)
  path = bad_file("x.yaml", "- vars: {q: hi}\n- asert: []\n")
  lu.assertStrContains(err_of(ev.dataset.load, path, { format = "promptfoo" }), path .. ":2: field 'asert': not a key of a promptfoo test case")
  os.remove(path)
end

function test_auto_detection_by_keys()
  lu.assertEquals(ev.dataset.load("tests/data/rows.csv", { format = "auto" }).format, "csv")
  lu.assertEquals(ev.dataset.load("scripts/data/rag_eval.jsonl", { format = "auto" }).format, "jsonl")
  local path = bad_file("x.jsonl", '{"foo": 1}\n')
  lu.assertStrContains(err_of(ev.dataset.load, path, { format = "auto" }), "its keys (foo) are those of no format evalua reads")
  os.remove(path)
end

os.exit(lu.LuaUnit.run(), true)
