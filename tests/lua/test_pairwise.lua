-- Pairwise comparison: both orders are always judged, and the verdicts are
-- reconciled into agreement, a tie or an inconsistent verdict. Each answer
-- carries a mock directive; the judge's request answers with the directive
-- of whichever answer it shows first, so answer A's directive scripts the
-- verdict of the A-first order and answer B's that of the B-first order
-- (in the labels the judge saw: "A" is the answer shown first).
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()
local say = mockmod.say
local rag = ev.rag

local function judge() return mock:judge { max_retries = 0 } end

local function says(better) return say { answer = ('{"reason": "%s wins", "better": "%s"}'):format(better, better) } end

-- A-first verdict v1, B-first verdict v2 (labels as the judge saw them).
local function run(v1, v2)
  local row = { query = "Which is right?", answer = "answer one " .. says(v1), answer_b = "answer two " .. says(v2) }
  return rag.pairwise:score(row, judge())
end

TestPairwise = {}
function TestPairwise:setUp() mock:reset() end

function TestPairwise:test_both_orders_prefer_a()
  -- A first: "A" (answer one); B first: "B" = the second shown = answer one again
  local r = run("A", "B")
  lu.assertEquals({ r.score, r.verdict, r.agreement }, { 1, "A", true })
  lu.assertEquals(r.orders, { "A", "A" })
  lu.assertEquals(r.reason, "A is better (A shown first: A is better; B shown first: A is better)")
  local seen = mock:requests()
  lu.assertEquals(#seen, 2)
  lu.assertStrContains(seen[1].body.messages[2].content, "<answer_A>\nanswer one")
  lu.assertStrContains(seen[2].body.messages[2].content, "<answer_A>\nanswer two")
end

function TestPairwise:test_both_orders_prefer_b()
  local r = run("B", "A")
  lu.assertEquals({ r.score, r.verdict, r.agreement }, { 0, "B", true })
end

function TestPairwise:test_first_position_always_wins_is_inconsistent()
  local r = run("A", "A")
  lu.assertEquals({ r.score, r.verdict, r.agreement }, { 0.5, "inconsistent", false })
  lu.assertEquals(r.orders, { "A", "B" })
end

function TestPairwise:test_second_position_always_wins_is_inconsistent()
  local r = run("B", "B")
  lu.assertEquals({ r.score, r.verdict, r.agreement }, { 0.5, "inconsistent", false })
  lu.assertEquals(r.reason, "inconsistent (A shown first: B is better; B shown first: A is better): "
    .. "the second position won both times")
  lu.assertEquals(r.position_bias, "second")
end

function TestPairwise:test_position_bias_rate_over_a_run()
  local function row(id, v1, v2) return { qid = id, query = "q", answer = "one " .. says(v1), answer_b = "two " .. says(v2) } end
  local rows = { row("1", "A", "B"),      -- answer one both times: no position preference
                 row("2", "A", "A"),      -- the first shown both times
                 row("3", "B", "B"),      -- the second shown both times
                 row("4", "tie", "tie") } -- a tie prefers no position
  local res = ev.evaluate(rows, { metrics = { rag.pairwise }, judge = judge() })
  lu.assertEquals(rag.position_bias(res), { n = 4, first = 1, second = 1, rate = 0.5 })
  lu.assertEquals(rag.position_bias(res, "nosuch"), { n = 0, first = 0, second = 0 })
end

-- Three samples per order: each order's verdict is the majority of its
-- samples (the mock answers attempts 1, 2, 3 of the same request in turn).
function TestPairwise:test_samples_vote_per_order()
  local function votes(list) return say { answers = list } end
  local function reply(b) return ('{"reason": "r", "better": "%s"}'):format(b) end
  local row = { query = "q", answer = "one " .. votes { reply("A"), reply("B"), reply("A") },
                answer_b = "two " .. votes { reply("B"), reply("B"), reply("tie") } }
  local r = rag.pairwise { samples = 3 }:score(row, judge())
  lu.assertEquals(r.orders, { "A", "A" }) -- A first: A, B, A -> A; B first: B, B, tie -> B, i.e. answer one
  lu.assertEquals({ r.verdict, r.samples }, { "A", 3 })
  lu.assertEquals(mock:stats().requests, 6)
end

function TestPairwise:test_ties()
  lu.assertEquals({ run("tie", "tie").verdict, run("tie", "tie").score }, { "tie", 0.5 })
  -- one order ties, the other prefers A: A, at half strength
  local r = run("A", "tie")
  lu.assertEquals({ r.score, r.verdict, r.agreement }, { 0.75, "A", false })
end

function TestPairwise:test_reconcile_table()
  local R = rag.reconcile
  lu.assertEquals(R("A", "B").verdict, "A")
  lu.assertEquals(R("B", "A").verdict, "B")
  lu.assertEquals(R("A", "A").verdict, "inconsistent")
  lu.assertEquals(R("B", "B").verdict, "inconsistent")
  lu.assertEquals(R("tie", "A").score, 0.25)
  lu.assertEquals(R("tie", "A").verdict, "B")
end

function TestPairwise:test_a_failed_order_is_unmeasured()
  local row = { query = "q", answer = "one " .. says("A"), answer_b = "two " .. say { faults = { "500" } } }
  local r = rag.pairwise:score(row, judge())
  lu.assertEquals(r.unmeasured, true)
  lu.assertStrContains(r.reason, "B shown first: ")
  lu.assertStrContains(r.reason, "HTTP 500")
  row.answer_b = "two " .. say { answer = '{"better": "C"}' }
  lu.assertEquals(rag.pairwise:score(row, judge()).reason,
    "B shown first: invalid judge answer for 'rag_pairwise': expected {\"better\": \"A\", \"B\" or \"tie\"}")
end

function TestPairwise:test_fields_reference_and_missing_answers()
  local m = rag.pairwise { a = "new", b = "old" }
  local row = { query = "q", new = "n " .. says("A"), old = "o " .. says("B"), gold_answers = { "the ref" } }
  lu.assertEquals(m:score(row, judge()).verdict, "A")
  local sent = mock:requests()[1].body.messages
  lu.assertStrContains(sent[2].content, "<reference>\nthe ref\n</reference>")
  lu.assertStrContains(sent[1].content, "Use the reference answer")
  lu.assertEquals(m:score({ query = "q", new = "n" }, judge()), { unmeasured = true, reason = "no 'old' in the row" })
end

function TestPairwise:test_offline_judge_has_no_position_bias()
  local off = ev.judge.open("offline")
  local row = { query = "How big can a file be?", answer = "A file can be 5 TiB.", answer_b = "Billing is monthly.",
                gold_answers = { "5 TiB" } }
  local r = rag.pairwise:score(row, off)
  lu.assertEquals({ r.verdict, r.agreement, r.score }, { "A", true, 1 })
  row.answer_b = row.answer
  lu.assertEquals(rag.pairwise:score(row, off).verdict, "tie")
end

os.exit(lu.LuaUnit.run(), true)
