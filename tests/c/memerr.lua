-- The representative run of host_memerr.c: every C structure a script can
-- make (data sets, group codes, score columns, TREC data, the retrieval,
-- text and embedding scratch, the JSON and report writers, a compiled
-- regular expression), through the C modules directly so that a run is a
-- few hundred allocations. DIR holds
-- the files host_memerr.c wrote. Any allocation may fail; the run must then
-- end in an error that says so, and give every byte back.
local T = require "evalua._table"
local R = require "evalua._retrieval"
local X = require "evalua._text"
local E = require "evalua._embed"
local J = require "evalua._json"
local P = require "evalua._report"
local S = require "evalua._stats"

local t = assert(T.load(DIR .. "/rows.jsonl", { lenient = true, fields = { { name = "qid", type = "string" } } }))
local c = assert(T.load_csv(DIR .. "/rows.csv", { lenient = true }))
assert(t:append('{"qid": "q4", "answer": "x", "gold_answers": ["x"], "retrieved": ["d1"], "gold_doc_ids": ["d1"]}', 9))
local sub = t:subset { 1, 3, 1, 2 }
sub:attach_contexts({ d1 = "text one", d2 = "text two" }, 2)
local codes, values = t:codes("qid", "(none)")
codes:remap { 4, 3, 2, 1 }
local sys = T.codes_of { "a", "b", "a", "b" }
local s = T.scores(#t, 3)
s:set(1, 3, 0.5, "a reason")
s:set(2, 3, nil, "unmeasured here")
s:eval(t, { { j = 1, name = "recip_rank", kind = "retrieval" }, { j = 2, name = "token_f1", kind = "answer" } })
s:aggregate(sys, { "a", "b" }, { "mrr", "f1", "x" }, codes, values, { resamples = 20 })
s:bottom(1, sys, 2, false)
s:histograms(1, sys, 4, 1)
s:unmeasured(3)
-- the one JSON cell's value (lua-cjson's decoder leaks its buffer when Lua
-- runs out of memory mid-decode: a fault of that library, kept out of here)
local function decode() return { k = { 1, 2 } } end
local spec = { table = t, scores = s, sys_codes = sys, systems = { "a", "b" }, metrics = { "mrr", "f1", "x" },
               dims = { "qid" }, dim_codes = { codes }, dim_values = { values }, decode = decode, id_field = "qid" }
local MARK = {}
P.json(spec, { meta = { run = "x" }, items = MARK }, MARK)
P.csv(spec, { 2 })
R.score({ "d1", "d2" }, { d1 = 2, d3 = 1 }, { "ndcg", "P.2" })
R.evaluate({ { qid = "1", retrieved = { "a", "b" }, gold_doc_ids = { "b" } } }, { "map", "recip_rank" })
local trec = assert(R.load_trec(DIR .. "/qrels", DIR .. "/run"))
R.evaluate(trec, { "map", "ndcg_cut.2" })
trec:rows()
X.rouge_l_batch({ "a b c", "c d" }, { "a c", { "d", "c d e" } })
X.edit_similarity("kitten", "sitting")
E.similarity({ "first text", "second" }, { "first", { "text", "second text" } })
E.embed({ "one", "two three" }, { dimensions = 8 })
J.encode({ a = { 1, 2, "three" }, b = { c = true } }, "  ")
S.bootstrap_ci({ 1, 2, 3, 4 }, { resamples = 50 })
local re = assert(require("evalua._regex").compile("c[a-z]+t"))
assert(re:find("the cat") == 5)
re:close()
local yv = assert(require("evalua._yaml").decode("a: &x [1, {b: 2.5}]\nc: *x\nd: {<<: {e: 3}, f: ~}\n", "m.yaml"))
assert(yv.c[2].b == 2.5 and yv.d.e == 3)
return "done"
