-- scripts/agent_eval.lua end to end: offline (the scripted bot v1 and v2,
-- the offline judge) and against the mock server (model and judge), with
-- the trajectory view in the HTML report, loaded in headless Chromium.
-- Expected scores follow from the bot's rules (scripts/data/agent_bot.lua)
-- on single conversations, computed by hand in the comments.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local cjson = require "cjson"
local mockmod = require "tests.mock.mock"

local src = os.getenv("EVALUA_SRC") or "."
local script = src .. "/scripts/agent_eval.lua"

local function run(args, env)
  local dir = h.tmpdir()
  local r = h.run(("cd %s && %s %s run %s --out %s/out %s"):format(dir, env or "", h.bin, script, dir, args or ""))
  r.dir = dir
  return r
end

local function score_of(report, qid, system, metric)
  for _, item in ipairs(report.items) do
    if item.id == qid and item.system == system then return item.scores[metric], item end
  end
end

local offline = run("--quiet")

function test_offline_run_scores_the_two_bots_and_writes_the_reports()
  lu.assertEquals(offline.status, 0, offline.stderr)
  local report = cjson.decode(assert(h.read(offline.dir .. "/out/agent_eval.json")))
  lu.assertEquals(report.systems, { "support/v1", "support/v2" })
  -- u03 asks for April and June: v1 looks up April only, v2 both (in one message)
  lu.assertEquals(score_of(report, "u03", "support/v1", "tool_call_f1"), 2 * 1 * 0.5 / 1.5)
  lu.assertEquals(score_of(report, "u03", "support/v1", "tool_correctness"), 0.5)
  lu.assertEquals(score_of(report, "u03", "support/v2", "tool_call_f1"), 1)
  lu.assertEquals(score_of(report, "u03", "support/v2", "trajectory_assertions"), 1)
  -- b04 names a bucket in Chinese: v1 searches the docs instead of get_bucket
  lu.assertEquals(score_of(report, "b04", "support/v1", "tool_correctness"), 0)
  lu.assertEquals(score_of(report, "b04", "support/v2", "tool_correctness"), 1)
  -- t01 is urgent: v1 opens it with priority normal (1 of the 2 argument keys right)
  lu.assertEquals(score_of(report, "t01", "support/v1", "tool_correctness"), 1)
  lu.assertEquals(score_of(report, "t01", "support/v1", "tool_correctness_args"), 0.5)
  lu.assertEquals(score_of(report, "t01", "support/v1", "trajectory_assertions"), 0)
  -- the offline judge: goal accuracy by overlap with the expected outcome; the rest unmeasured, saying why
  lu.assertEquals(score_of(report, "m01", "support/v2", "agent_goal_accuracy"), 1)
  local _, item = score_of(report, "m01", "support/v2", "task_completion")
  lu.assertStrContains(item.unmeasured.task_completion, "the offline judge cannot read the task and outcome")
  -- sliced by scenario and language
  lu.assertNotNil(report.aggregates["support/v1"].scenario.multi_turn)
  lu.assertNotNil(report.aggregates["support/v2"].language.zh)
  lu.assertStrContains(offline.stdout, "support/v1  scenario=usage")
  -- only a metric that scored something is called an offline estimate (argument_correctness measured nothing)
  lu.assertStrContains(offline.stdout, "The scores of agent_goal_accuracy are heuristic estimates")
end

function test_the_html_report_holds_the_trajectories()
  local html = assert(h.read(offline.dir .. "/out/agent_eval.html"))
  lu.assertStrContains(html, "<h2>Trajectories</h2>")
  -- 30 conversations per bot
  local _, n = html:gsub('<div class="conv', "")
  lu.assertEquals(n, 60)
  -- where v1 left the reference on t01: the call's arguments against the expected ones
  lu.assertStrContains(html, "arguments differ from the expected")
  lu.assertStrContains(html, "expected, never called: <b>get_bucket</b>")
end

local HARNESS = [[<!DOCTYPE html><html><head><title>pending</title></head><body>
<iframe id="f" src="agent_eval.html" style="width:1400px;height:900px;border:0"></iframe><script>
document.getElementById("f").onload = function () {
  var d = this.contentDocument, all = d.querySelectorAll("div.conv").length;
  var box = d.getElementById("traj-left"); box.checked = true;
  var shown = 0; d.querySelectorAll("div.conv").forEach(function (c) { if (c.offsetParent !== null) shown++; });
  document.title = "conversations=" + all + " left=" + d.querySelectorAll("div.conv.left").length + " shown=" + shown;
};
</script></body></html>]]

function test_the_trajectory_filter_works_in_chromium()
  if h.run("command -v chromium").status ~= 0 then lu.skip("chromium is not installed") end
  local dir = offline.dir .. "/out"
  h.write(dir .. "/harness.html", HARNESS)
  local r = h.run("chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" .. dir
    .. "/profile --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom file://" .. dir .. "/harness.html")
  lu.assertEquals(r.status, 0, r.stderr)
  local all, left, shown = r.stdout:match("<title>conversations=(%d+) left=(%d+) shown=(%d+)</title>")
  lu.assertEquals(tonumber(all), 60)
  lu.assertTrue(tonumber(left) > 0 and tonumber(left) < 60, r.stdout:match("<title>.-</title>"))
  lu.assertEquals(shown, left) -- the checkbox keeps only those that left the reference
end

function test_against_the_mock_model_and_judge()
  local mock = mockmod.start()
  local r = run(("--provider openai --base-url %s --model m --judge openai --judge-model m --cache %s/cache --quiet")
    :format(mock.url, h.tmpdir()), "OPENAI_API_KEY=x OPENAI_BASE_URL=" .. mock.url)
  lu.assertEquals(r.status, 0, r.stderr)
  local report = cjson.decode(assert(h.read(r.dir .. "/out/agent_eval.json")))
  lu.assertEquals(report.systems, { "support/m" })
  -- the mock's model calls the tool that shares a word with the question, then answers with the tool's text
  local s, item = score_of(report, "b01", "support/m", "tool_correctness")
  lu.assertEquals(s, 1, cjson.encode(item.unmeasured))
  -- every judged metric got answers from the mock judge
  for _, m in ipairs { "argument_correctness", "task_completion", "agent_goal_accuracy", "topic_adherence",
                       "role_adherence", "turn_relevancy" } do
    local measured = 0
    for _, it in ipairs(report.items) do if it.scores[m] ~= nil then measured = measured + 1 end end
    lu.assertTrue(measured > 0, m)
  end
  local stats = mock:stats()
  lu.assertTrue(stats.requests > 60, "requests " .. stats.requests)
end

function test_it_runs_under_the_sandbox()
  local dir = h.tmpdir()
  local r = h.run(("cd %s && %s run --sandbox --read %s/scripts --out %s/out %s --out %s/out --quiet")
    :format(dir, h.bin, src, dir, script, dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertNotNil(h.read(dir .. "/out/agent_eval.json"))
end

function test_options_that_do_nothing_are_refused()
  local r = run("--model gpt-4o")
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "--model applies to --provider openai")
  r = run("--judge-model m")
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "--judge-model applies to --judge openai")
end

os.exit(lu.LuaUnit.run(), true)
