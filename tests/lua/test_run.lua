-- evalua.core.run: what one run changes (its metrics, the dry-run switch, its
-- judges' accounts, the scheduler's files) stays in that run; a fresh run
-- starts from the built-ins and sees none of it.
local lu = require "luaunit"
local ev = require "evalua"
local run = require "evalua.core.run"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()

local ROWS = { { qid = "q1", answer = "Paris", gold_answers = { "Paris" } },
               { qid = "q2", answer = "Rome", gold_answers = { "Oslo" } } }

-- The mean of metric over the run's one system.
local function mean(res, metric) return res:agg(res.systems[1], metric).mean end

local function user(text) return { { role = "user", content = text } } end

TestRun = {}
function TestRun:setUp()
  mock:reset()
  self.outer = run.use(run.new())
end
function TestRun:tearDown() run.use(self.outer) end

function TestRun:test_a_metric_registered_in_one_run_is_unknown_in_another()
  ev.register("shouts", function(row) return row.answer:upper() == row.answer end)
  local res = ev.evaluate(ROWS, { metrics = { "shouts", "exact_match" }, ci = false })
  lu.assertEquals(mean(res, "shouts"), 0)
  lu.assertEquals(mean(res, "exact_match"), 0.5)
  local first = run.use(run.new())
  lu.assertErrorMsgContains("unknown metric 'shouts'", ev.evaluate, ROWS, { metrics = { "shouts" } })
  -- the built-in and judged names are there in every run
  lu.assertEquals(mean(ev.evaluate(ROWS, { metrics = { "exact_match" }, ci = false }), "exact_match"), 0.5)
  lu.assertNotNil(require("evalua.core.registry").resolve("faithfulness"))
  run.use(first)
  lu.assertEquals(mean(ev.evaluate(ROWS, { metrics = { "shouts" }, ci = false }), "shouts"), 0)
end

function TestRun:test_a_script_metric_named_like_a_judged_one_is_kept()
  ev.register("faithfulness", function() return 1 end)
  lu.assertEquals(mean(ev.evaluate(ROWS, { metrics = { "faithfulness" }, ci = false }), "faithfulness"), 1)
end

function TestRun:test_dry_run_is_the_runs_switch()
  ev.judge.dry_run(true)
  local dry = mock:judge()
  lu.assertEquals(dry:chat { messages = user("not sent") }.error, "dry run: request not sent")
  local first = run.use(run.new())
  local live = mock:judge()
  lu.assertEquals(live:chat { messages = user("sent") }.ok, true)
  lu.assertEquals(mock:stats().requests, 1)
  run.use(first)
  lu.assertEquals(mock:judge():chat { messages = user("not sent either") }.dry_run, true)
  lu.assertEquals(mock:stats().requests, 1)
end

function TestRun:test_judge_accounts_belong_to_the_run_that_opened_the_judge()
  local j = mock:judge()
  j:chat { messages = user("counted here") }
  lu.assertEquals(#ev.judge.stats().judges, 1)
  lu.assertEquals(ev.judge.stats().requests, 1)
  local first = run.use(run.new())
  lu.assertEquals(#ev.judge.stats().judges, 0)
  lu.assertEquals(ev.judge.stats().requests, 0)
  run.use(first)
  lu.assertEquals(ev.judge.stats().requests, 1)
end

function TestRun:test_ev_map_files_answers_in_its_own_run()
  local j = mock:judge()
  local out = ev.map({ 1, 2, 3 }, function(i) return j:chat { messages = user("item " .. i) }.ok end)
  lu.assertEquals(out, { true, true, true })
  local r = run.current()
  for _, box in pairs(r.ready) do lu.assertEquals(next(box), nil) end -- every answer was taken
  lu.assertEquals(next(run.new().ready), nil)
end

function TestRun:test_a_judge_operation_registered_in_one_run_is_unknown_in_another()
  ev.judge.register_op("shout", { prompt = { system = "s", user = "{{text}}" },
                                  parse = function(a) return a.value, "" end,
                                  offline = function(p) return #p.text, "length" end })
  local j = ev.judge.open { kind = "offline" }
  lu.assertEquals(j:ask("shout", { text = "abc" }).value, 3)
  local first = run.use(run.new())
  lu.assertErrorMsgContains("unknown operation 'shout'", j.ask, j, "shout", { text = "abc" })
  run.use(first)
end

-- run.new() + run.use() as docs/internals.md documents them: the judged
-- metrics' operations are built in, so a fresh run measures them (they were
-- filed in the run that first loaded ev.rag, and every row of a later run
-- was unmeasured: "unknown operation 'rag_statements'").
function TestRun:test_a_fresh_run_sees_every_builtin_judge_operation()
  local rows = { { qid = "q1", query = "What is the capital of France?", answer = "Paris is the capital of France.",
                   contexts = { "Paris is the capital of France." }, gold_answers = { "Paris" } } }
  -- the offline judge reads no instructions or criteria: these score by their own offline functions,
  -- still asked through the built-in operations llm_evaluator and geval_score
  local polite = ev.llm_evaluator { name = "polite", instructions = "Is it polite?", inputs = { "answer" },
    outputs = { "score" }, offline = function() return { score = 1 } end }
  local criterion = ev.geval { name = "clear", criteria = "The answer is clear.", steps = { "Read it." },
    offline = function() return 4, "short" end }
  ev.evaluate(rows, { metrics = { "faithfulness" }, judge = ev.judge.open("offline"), ci = false, quiet = true })
  for _ = 1, 2 do
    local outer = run.use(run.new())
    local res = ev.evaluate(rows, { metrics = { "faithfulness", "context_recall", polite, criterion },
                                    judge = ev.judge.open("offline"), ci = false, quiet = true })
    for _, m in ipairs { "faithfulness", "context_recall", "polite", "clear" } do
      local a = res:agg(res.systems[1], m)
      lu.assertEquals(a.measured, 1, m)
    end
    lu.assertEquals(mean(res, "faithfulness"), 1)
    run.use(outer)
  end
end

function TestRun:test_use_refuses_what_is_not_a_run()
  lu.assertErrorMsgContains("run.use: expected a run from run.new()", run.use, {})
end

os.exit(lu.LuaUnit.run())
