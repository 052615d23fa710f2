-- A dead judge never exits 0 (issue 25, point 6). A judge that fails every
-- request (HTTP 500 after the retries, HTTP 404 at once, a closed port)
-- leaves the judged metrics unmeasured; scripts/rag_report.lua,
-- scripts/geval_custom.lua and the eval.lua of `evalua init` then exit 4,
-- say so in one line on stderr, show a banner in the HTML and Markdown
-- reports and a failure in JUnit. The rule's share, by hand, on ev.gate.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local mockmod = require "tests.mock.mock"

local mock = mockmod.start()
local closed = mockmod.start() -- started and stopped: a port nobody listens on
closed:stop()
local work = h.tmpdir()
assert(h.run(("cd %s && %s init proj"):format(work, h.bin)).status == 0)
-- the bundled rows of four questions (12 rows, 3 systems): fewer requests to fail
local DATA = work .. "/rows.jsonl"
h.sh(("head -12 scripts/data/rag_eval.jsonl > %s"):format(DATA))

-- The faults: the server's config, or the URL of a closed port. The 500s
-- come with Retry-After: 0, so their five retries take no backoff time.
local FAULTS = {
  { name = "HTTP 500", config = { fail_status = 500, retry_after = "0" },
    reason = "gave up after 6 attempts: HTTP 500: mock error 500" },
  { name = "HTTP 404", config = { fail_status = 404 }, reason = "HTTP 404: mock error 404" },
  { name = "closed port", url = closed.url, reason = "connection failed: " },
}

-- Runs `evalua run ARGS` in folder `at` (default: here) with the judge of
-- fault f; returns the result and the reports' folder.
local function run_dead(f, args, at)
  mock:config(f.config or {})
  local out = h.tmpdir()
  local env = ("OPENAI_BASE_URL=%s EVALUA_MODEL=mock-judge OPENAI_API_KEY= EVALUA_CACHE_DIR=%s/cache")
    :format(f.url or mock.url, out)
  local r = h.run(("cd %s && %s %s run %s --out %s/reports"):format(at or ".", env, h.bin, args, out))
  mock:config {}
  return r, out .. "/reports"
end

-- What every script must show for a dead judge; metrics[name] = n items.
local function assert_undecided(f, r, dir, name, metrics)
  local what = f.name .. ", " .. name
  lu.assertEquals(r.status, 4, what .. ":\n" .. r.stderr)
  local loud = {}
  for l in r.stderr:gmatch("[^\n]+") do
    if l:find("THE JUDGE FAILED", 1, true) then loud[#loud + 1] = l end
  end
  lu.assertEquals(#loud, 1, what .. ": one loud line on stderr:\n" .. r.stderr)
  lu.assertStrContains(loud[1], "evalua: THE JUDGE FAILED: items unmeasured for want of a usable judge answer: ")
  lu.assertStrContains(loud[1], f.reason)
  lu.assertStrContains(loud[1], "these results are undecided (more than 5% failed)")
  local md, html, junit = h.read(dir .. "/" .. name .. ".md"), h.read(dir .. "/" .. name .. ".html"),
    h.read(dir .. "/" .. name .. ".junit.xml")
  lu.assertStrContains(md, "> **The judge failed: these results are undecided.**", false, what)
  lu.assertStrContains(html, '<div class="banner fail" role="alert"><strong>The judge failed: these results are undecided</strong>', false, what)
  local systems = 0
  for metric, n in pairs(metrics) do
    lu.assertStrContains(loud[1], ("%s %d/%d"):format(metric, n, n), false, what)
    lu.assertStrContains(md, ("> - %s: the judge gave no usable answer for %d of %d items (first: "):format(
      (metric:gsub("_", "\\_")), n, n), false, what)
    local cases = select(2, junit:gsub('name="judge ' .. metric .. '"><failure type="judge" message="the judge gave no usable answer', ""))
    lu.assertTrue(cases >= 1, what .. ": a JUnit failure for " .. metric)
    systems = math.max(systems, cases)
  end
  lu.assertStrMatches(junit, '.*<testsuite name="[^"]+" tests="%d+" failures="[1-9]%d*".*')
  return systems
end

TestDeadJudge = {}

function TestDeadJudge:test_rag_report()
  for _, f in ipairs(FAULTS) do
    local r, dir = run_dead(f, "scripts/rag_report.lua --judge openai --quiet --data " .. DATA)
    local suites = assert_undecided(f, r, dir, "rag_report",
      { faithfulness = 12, answer_relevance = 12, context_precision = 12, context_recall = 12 })
    lu.assertEquals(suites, 3) -- a failure per metric in each of the 3 systems' suites
  end
end

function TestDeadJudge:test_geval_custom()
  for _, f in ipairs(FAULTS) do
    local r, dir = run_dead(f, "scripts/geval_custom.lua --judge openai --quiet --data " .. DATA)
    assert_undecided(f, r, dir, "geval", { same_language_and_sourced = 12 })
    -- the shared steps request failed first: every row says so
    lu.assertStrContains(r.stderr, "same_language_and_sourced 12/12 (first: steps: ")
  end
  local r = run_dead(FAULTS[2], "scripts/geval_custom.lua --judge openai --show-steps")
  lu.assertEquals(r.status, 4)
  lu.assertStrContains(r.stderr, "geval_custom: the judge gave no steps: steps: HTTP 404: mock error 404")
end

function TestDeadJudge:test_init_eval_lua()
  for _, f in ipairs(FAULTS) do
    local r, dir = run_dead(f, "eval.lua --judge openai --quiet", work .. "/proj")
    assert_undecided(f, r, dir, "eval", { faithfulness = 3, actionable = 3 })
    -- its own gate still decides what it can: recall@5 passes
    lu.assertStrContains(r.stdout, "gate pass      recall@5[all] >= 0.5")
    lu.assertStrContains(r.stdout, "gate undecided faithfulness: judge failures <= 5%: the judge failed on 3 of 3 items")
  end
end

-- A user's own script that ends without a status: the host makes it 4,
-- unless the script ends 0 on purpose with ev.exit(0), or returns its own.
function TestDeadJudge:test_own_script_ending_normally_exits_4()
  local f = FAULTS[2]
  local script, rows = work .. "/own.lua", work .. "/own.jsonl"
  h.write(rows, '{"qid":"a","query":"When does an upload stop?","answer":"After three failed parts.",'
    .. '"contexts":["An upload stops after three failed parts."]}\n'
    .. '{"qid":"b","query":"What is the part size?","answer":"Eight megabytes.",'
    .. '"contexts":["Parts are eight megabytes."]}\n')
  local function own(ending)
    h.write(script, ([[
local ev = require "evalua"
local ds = ev.dataset.load(%q)
local judge = ev.judge.open { cache = false, max_retries = 0 }
ev.evaluate(ds, { metrics = { "faithfulness" }, judge = judge, quiet = true, ci = false })
%s
]]):format(rows, ending))
    mock:config(f.config)
    local r = h.run(("OPENAI_BASE_URL=%s EVALUA_MODEL=mock-judge OPENAI_API_KEY= %s run %s"):format(
      mock.url, h.bin, script))
    mock:config {}
    return r
  end
  for _, ending in ipairs { "", "return 0" } do
    local r = own(ending)
    lu.assertEquals(r.status, 4, ending .. ":\n" .. r.stderr)
    lu.assertStrContains(r.stderr, "evalua: THE JUDGE FAILED: ")
    lu.assertStrContains(r.stderr, "evalua: exit status 4 (undecided): the script ended normally, but the judge "
      .. "failed (see the line above); ev.exit(0) ends 0 on purpose")
  end
  lu.assertEquals(own("ev.exit(0)").status, 0)
  lu.assertEquals(own("return 1").status, 1)
  -- a healthy judge: the script's 0 stands
  local r = h.run(("OPENAI_BASE_URL=%s EVALUA_MODEL=mock-judge OPENAI_API_KEY= %s run %s"):format(
    mock.url, h.bin, script))
  lu.assertEquals(r.status, 1, r.stderr) -- the last version written returns 1
  h.write(script, (h.read(script):gsub("return 1", "")))
  r = h.run(("OPENAI_BASE_URL=%s EVALUA_MODEL=mock-judge OPENAI_API_KEY= %s run %s"):format(mock.url, h.bin, script))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertNotStrContains(r.stderr, "undecided")
end

-- ---- the rule, by hand -------------------------------------------------------------------

-- A judged metric whose first k of 20 rows the judge failed on.
local function run_failing(k, extra)
  local rows = {}
  for i = 1, 20 do rows[i] = { qid = "q" .. i, variant = i <= 10 and "a" or "b" } end
  local m = { name = "judged", judged = true, fn = function(row)
    local i = tonumber(row.qid:sub(2))
    if i <= k then return { ok = false, error = "HTTP 500: down", unmeasured = true, judge_failed = true } end
    if extra and extra(i) then return extra(i) end
    return { score = 1 }
  end }
  return ev.evaluate(rows, { metrics = { m }, quiet = true, ci = false })
end

function TestDeadJudge:test_more_than_five_percent_is_undecided()
  -- 1 of 20 is 5%: not more than the share
  local res = run_failing(1)
  lu.assertEquals(ev.gate.exit_code(ev.gate.check(res, {})), 0)
  -- 2 of 20 is 10%
  res = run_failing(2)
  local gates = ev.gate.check(res, {})
  lu.assertEquals(ev.gate.exit_code(gates), 4)
  lu.assertEquals(#gates, 1)
  lu.assertEquals({ gates[1].kind, gates[1].status, gates[1].metric, gates[1].failed, gates[1].n },
                  { "judge", "undecided", "judged", 2, 20 })
  lu.assertEquals(gates[1].message, "the judge failed on 2 of 20 items (no usable answer; first: HTTP 500: down)")
  -- the share is a setting of the check, and of ev.gate for everything else
  lu.assertEquals(ev.gate.exit_code(ev.gate.check(res, { max_judge_failures = 0.1 })), 0)
  lu.assertErrorMsgContains("max_judge_failures must be a share from 0 to 1", ev.gate.check, res,
    { max_judge_failures = 2 })
  -- a failed gate still decides the status (1), the judge's gate is there too
  gates = ev.gate.check(res, { thresholds = { judged = { all = 2 } } })
  lu.assertEquals(ev.gate.exit_code(gates), 1)
end

function TestDeadJudge:test_what_does_not_count_as_a_judge_failure()
  -- a row's own lack (no statements) and the offline judge's "cannot estimate"
  local res = run_failing(0, function(i)
    if i <= 10 then return { unmeasured = true, reason = "the answer makes no statements to check" } end
    return { unmeasured = true, offline = true, reason = "the offline judge cannot read the criterion" }
  end)
  lu.assertEquals(ev.gate.exit_code(ev.gate.check(res, {})), 0)
end

function TestDeadJudge:test_reports_show_it_without_a_gate_check()
  local res = run_failing(20)
  lu.assertStrContains(ev.report.render(res, "terminal", { color = false }),
    "*** THE JUDGE FAILED: THESE RESULTS ARE UNDECIDED ***\n  judged: the judge gave no usable answer for 20 of 20 items (first: HTTP 500: down)\n")
  local junit = ev.report.render(res, "junit")
  lu.assertStrContains(junit, '<testsuite name="all" tests="2" failures="1" errors="0">')
  lu.assertStrContains(junit, '<testcase classname="evalua.all" name="judge judged"><failure type="judge" '
    .. 'message="the judge gave no usable answer for 20 of 20 items (first: HTTP 500: down)"/></testcase>')
  local doc = require("evalua.core.json").decode(ev.report.render(res, "json"))
  lu.assertEquals(doc.notices, { { kind = "judge_failed", title = "The judge failed: these results are undecided",
    lines = { "judged: the judge gave no usable answer for 20 of 20 items (first: HTTP 500: down)" } } })
end

local status = lu.LuaUnit.run()
mock:stop()
h.sh("rm -rf " .. work)
os.exit(status, true)
