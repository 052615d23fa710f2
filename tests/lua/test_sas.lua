-- ev.rag.sas (semantic answer similarity) and judge:similarity: on the mock
-- OpenAI-compatible server's /v1/embeddings (batched, cached, counted) and
-- on the offline judge's embedder (metrics/embed.c, values by hand in
-- tests/c/test_embed.c).
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local embedder = require "evalua._embed"

local mock = mockmod.start()
local say = mockmod.say
local sas = ev.rag.sas

local function judge(opts) return mock:judge({ max_retries = 0 }, opts) end

local ROWS = {
  { qid = "1", answer = "7 days", gold_answers = { "seven days", "7 days" } },
  { qid = "2", answer = "Refunds are valid for a week.", gold_answers = "Refunds stay valid for 7 days." },
  { qid = "3", answer = "连续三个分片失败后中止上传。", gold_answers = { "三个失败分片" } },
  { qid = "4", answer = "no gold" },
}

TestSas = {}
function TestSas:setUp() mock:reset() end

function TestSas:test_offline_the_best_gold_answer_with_idf_from_the_whole_batch()
  local out = sas.batch(ROWS, { judge = ev.judge.open("offline") })
  -- the same texts through the embedder in one call: the IDF of the batch
  local sims = embedder.similarity({ ROWS[1].answer, ROWS[2].answer, ROWS[3].answer },
    { ROWS[1].gold_answers, { ROWS[2].gold_answers }, ROWS[3].gold_answers })
  lu.assertAlmostEquals(out[1].score, 1, 1e-12) -- equal to its second gold answer
  lu.assertEquals(out[1].gold, 2)
  lu.assertEquals(out[1].reason, "cosine 1.000 with gold answer 2 of 2")
  lu.assertEquals(out[2].score, sims[2][1])
  lu.assertEquals(out[3].score, sims[3][1])
  lu.assertTrue(out[3].score > 0.2) -- Chinese shares character n-grams: 三个, 分片, 失败
  lu.assertEquals(out[4], { unmeasured = true, reason = "no 'gold_answers' in the row" })
end

function TestSas:test_threshold_and_evaluate()
  local off = ev.judge.open("offline")
  local m = sas { threshold = 0.99 }
  local out = m.batch(ROWS, { judge = off })
  lu.assertEquals({ out[1].pass, out[2].pass }, { true, false })
  lu.assertErrorMsgContains("unknown option 'treshold'", sas, { treshold = 1 })
  -- ev.evaluate runs it over the whole data set at once: the same scores
  local res = ev.evaluate(ROWS, { metrics = { "sas" }, judge = off })
  local col = res:scores_of("all", "sas")
  lu.assertEquals({ col[1], col[2], col[3] }, { out[1].score, out[2].score, out[3].score })
  lu.assertNil(col[4])
end

-- Cosines computed here from the vectors the server returns.
local function cosine(a, b)
  local d, na, nb = 0, 0, 0
  for i = 1, #a do d, na, nb = d + a[i] * b[i], na + a[i] ^ 2, nb + b[i] ^ 2 end
  if na == 0 or nb == 0 then return 0 end -- a zero vector has no direction
  return d / math.sqrt(na * nb)
end

function TestSas:test_http_distinct_texts_in_batches_cached_and_counted()
  local dir = os.tmpname()
  os.remove(dir)
  local j = judge { cache = dir }
  local base = require "evalua.judge.base"
  local was = base.embed_batch
  base.embed_batch = 2
  local out = sas.batch(ROWS, { judge = j })
  base.embed_batch = was
  -- 6 distinct texts ("7 days" twice): 3 requests of at most 2 inputs
  lu.assertEquals(mock:stats().by_path["/v1/embeddings"], 3)
  local st = j:stats()
  lu.assertEquals({ st.requests, st.cache_hits }, { 3, 0 })
  local e = j:embed { input = { "7 days", "seven days", "Refunds are valid for a week.", "Refunds stay valid for 7 days.",
                                "连续三个分片失败后中止上传。", "三个失败分片" } }
  local v = e.embeddings
  lu.assertAlmostEquals(out[1].score, 1, 1e-12)
  lu.assertEquals(out[1].cosines[1], 0) -- the mock embeds "seven days" as a zero vector
  lu.assertAlmostEquals(out[2].score, cosine(v[3], v[4]), 1e-12)
  lu.assertAlmostEquals(out[3].score, cosine(v[5], v[6]), 1e-12)
  -- the same batches again come from the cache
  mock:reset()
  local again = judge { cache = dir }
  base.embed_batch = 2
  local out2 = sas.batch(ROWS, { judge = again })
  base.embed_batch = was
  lu.assertEquals(out2[2].score, out[2].score)
  lu.assertEquals(mock:stats().requests, 0)
  lu.assertEquals(again:stats().cache_hits, 3)
  os.execute("rm -rf " .. dir)
end

function TestSas:test_a_failed_embedding_request_leaves_its_rows_unmeasured()
  local rows = { { answer = "good", gold_answers = { "fine" } },
                 { answer = "bad " .. say { faults = { "500" } }, gold_answers = { "x" } } }
  local j = judge()
  local out = sas.batch(rows, { judge = j })
  lu.assertEquals(out[1].unmeasured, true) -- one request for the four texts: all fail together
  lu.assertStrContains(out[2].reason, "embeddings: HTTP 500")
  lu.assertEquals({ j:stats().requests, j:stats().failures }, { 1, 1 }) -- counted like a chat request
end

function TestSas:test_embeddings_of_different_lengths_leave_the_row_unmeasured()
  local rows = { { answer = "short " .. say { embed_dim = 4 }, gold_answers = { "gold" } },
                 { answer = "fine", gold_answers = { "gold" } } }
  local out = sas.batch(rows, { judge = judge() })
  lu.assertEquals(out[1], { unmeasured = true, judge_failed = true,
    reason = "embeddings: the server's embeddings differ in length (4 and 8 numbers)" })
  lu.assertEquals(out[2].unmeasured, nil)
end

function TestSas:test_similarity_checks_its_arguments()
  local j = ev.judge.open("offline")
  lu.assertErrorMsgContains("judge:similarity: expected two lists of the same length", j.similarity, j, { "a" }, {})
  lu.assertErrorMsgContains("judge:similarity: candidates[1][2] must be a string", j.similarity, j, { "a" }, { { "b", 3 } })
  lu.assertErrorMsgContains("judge:similarity: unknown option 'modle'", j.similarity, j, { "a" }, { "b" }, { modle = "m" })
  local sims = j:similarity({ "a cat" }, { { "a cat", "dogs" } })
  lu.assertAlmostEquals(sims[1][1], 1, 1e-12)
  lu.assertEquals(sims[1][2], 0.0)
end

-- Past 256 texts the embedder adds each half on its own thread and merges
-- the two vocabularies: the cosines are those of each pair embedded in one
-- call with the same IDF, and a bad text is named by its place.
function TestSas:test_a_large_batch_on_two_threads_equals_small_calls()
  local q, c = {}, {}
  for i = 1, 400 do
    q[i] = ("answer %d of the upload part %d"):format(i % 37, i % 11)
    c[i] = { ("gold %d upload %d"):format(i % 13, i % 7), "分片上传" .. i % 5 }
  end
  local big = embedder.similarity(q, c)
  -- the same texts in order through embed(): the same IDF, so the same vectors
  local texts = {}
  for i = 1, 400 do texts[#texts + 1] = q[i] end
  for i = 1, 400 do texts[#texts + 1] = c[i][1]; texts[#texts + 1] = c[i][2] end
  local v = embedder.embed(texts, { dimensions = 65536 })
  local function dot(a, b) local d = 0 for k = 1, #a do d = d + a[k] * b[k] end return d end
  for _, i in ipairs { 1, 2, 199, 200, 201, 399, 400 } do
    lu.assertAlmostEquals(big[i][1], dot(v[i], v[400 + 2 * i - 1]), 2e-3)
    lu.assertAlmostEquals(big[i][2], dot(v[i], v[400 + 2 * i]), 2e-3)
  end
  q[300] = "bad \xff"
  lu.assertErrorMsgContains("queries[300] is not valid UTF-8 (byte 5)", embedder.similarity, q, c)
  q[300] = "fine"
  c[350][2] = "x\xc3"
  lu.assertErrorMsgContains("candidates[350][2] is not valid UTF-8 (byte 2)", embedder.similarity, q, c)
  c[350] = "y\xc3"
  lu.assertErrorMsgContains("candidates[350] is not valid UTF-8 (byte 2)", embedder.similarity, q, c)
  lu.assertErrorMsgContains("candidates[351][1] is a number, expected a string", embedder.similarity, q,
    (function() c[351] = { 5 } return c end)())
end

os.exit(lu.LuaUnit.run(), true)
