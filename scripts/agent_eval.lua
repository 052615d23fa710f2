-- The agent evaluation: a small tool-using support bot of Nimbus Storage
-- (simulated: scripts/data/agent_bot.lua) answers 30 conversations in
-- English and Chinese (scripts/data/agent_conversations.jsonl) through
-- ev.generate's agent loop, and ev.agent's metrics score the trajectories,
-- sliced by scenario and language, with a trajectory view in the HTML
-- report. Runs offline by default: two rule-based policies of the bot
-- (v1, v2) play the model, and the offline judge estimates what it can.
--
--   evalua run scripts/agent_eval.lua                                  # offline bot, offline judge
--   evalua run scripts/agent_eval.lua --provider openai --judge openai  # $OPENAI_BASE_URL, $EVALUA_MODEL
--
-- Exit status: 0, or 4 when the judge gave no usable answer for too many
-- items (the results are undecided), 2 usage, 3 input error.
local ev = require "evalua"

local here = ev.cli.script_dir(arg)

local opt, given = ev.cli.parse(arg, {
  usage = "evalua run scripts/agent_eval.lua [options]",
  description = "Runs the bundled support bot over the conversations and scores its tool calls and replies.",
  { "data", here .. "/data/agent_conversations.jsonl", "conversations (docs/agents.md)" },
  { "data-format", "evalua", "the format of --data: evalua's rows, a peer's file or folder, or auto (docs/data.md)",
    choices = ev.dataset.formats },
  { "prompt", here .. "/data/agent_prompt.txt", "the bot's system prompt (a template over the row)" },
  { "provider", "offline", "offline (the scripted bot, v1 and v2), or openai for a model", choices = { "offline", "openai" } },
  { "model", "", "openai provider: the model (default: $EVALUA_MODEL)" },
  { "base-url", "", "openai provider: the server (default: $OPENAI_BASE_URL)" },
  { "judge", "offline", "offline, or openai for any OpenAI-compatible server", choices = { "offline", "openai" } },
  { "judge-model", "", "judge model (default: $EVALUA_MODEL)" },
  { "max-steps", 8, "model calls per conversation at most", integer = true, min = 1, max = 1000 },
  { "out", "out", "folder for the reports", path = "out" },
  { "format", { "md", "json", "html" }, "report formats to write", list = true, choices = ev.report.formats },
  { "concurrency", 16, "requests in flight", integer = true, min = 1, max = 1000000 },
  { "cache", "", "cache folder for the model's and the judge's answers (default: the judge's)" },
  { "quiet", false, "no progress on stderr" },
})

if opt.provider == "offline" then
  for _, o in ipairs { "model", "base-url" } do
    if opt[o] ~= "" then ev.cli.usage_error("--%s applies to --provider openai", o) end
  end
end
if opt.judge == "offline" and opt["judge-model"] ~= "" then
  ev.cli.usage_error("--judge-model applies to --judge openai; the offline judge has none")
end
if given.concurrency and opt.provider == "offline" and opt.judge == "offline" then
  ev.cli.usage_error("--concurrency applies to --provider openai or --judge openai; offline, no request is sent")
end

local bot = dofile(here .. "/data/agent_bot.lua")
local tools, account = bot.tools(here .. "/data")
local cache = opt.cache ~= "" and opt.cache or nil

local providers
if opt.provider == "offline" then
  providers = {
    v1 = ev.provider.offline { name = "v1", tools = tools, policy = bot.policy("v1", account.latest_month),
                               max_steps = opt["max-steps"] },
    v2 = ev.provider.offline { name = "v2", tools = tools, policy = bot.policy("v2", account.latest_month),
                               max_steps = opt["max-steps"] },
  }
else
  providers = { ev.cli.try(ev.provider.openai, {
    model = opt.model ~= "" and opt.model or nil, base_url = opt["base-url"] ~= "" and opt["base-url"] or nil,
    tools = tools, max_steps = opt["max-steps"], concurrency = opt.concurrency, cache = cache }) }
end

local judge = ev.cli.try(ev.judge.open, opt.judge == "offline" and "offline" or {
  model = opt["judge-model"] ~= "" and opt["judge-model"] or nil, concurrency = opt.concurrency, cache = cache })

local ds = ev.dataset.load(opt.data, { format = opt["data-format"] })
local out = ev.generate(ds, { prompts = { support = { file = opt.prompt } }, providers = providers,
                              concurrency = opt.concurrency, quiet = opt.quiet })

local A = ev.agent
local res = ev.evaluate(out, {
  metrics = {
    "tool_correctness",
    A.tool_correctness { name = "tool_correctness_args", evaluation_params = { "input_parameters" } },
    "tool_call_accuracy", "tool_call_f1",
    ev.assertions.metric({}, { name = "trajectory_assertions" }), -- each row's own `assert` list
    "argument_correctness", "task_completion", "agent_goal_accuracy", "topic_adherence", "role_adherence",
    "turn_relevancy",
  },
  system = "system",
  slices = { "scenario", "language" },
  judge = judge,
  concurrency = opt.concurrency,
  quiet = opt.quiet,
  ci = false,
})

if ev.shard.skip(res) then return 0 end
A.view.attach(res)
if #res.systems > 1 then ev.compare.systems(res, { baseline = res.systems[1] }) end
local gates = ev.gate.check(res, {})
ev.report.print(res)
local paths = ev.report.write(res, { dir = opt.out, name = "agent_eval", formats = opt.format,
                                     title = "Agent evaluation: " .. opt.data .. " (simulated bot)" })
if #paths > 0 and not opt.quiet then io.stderr:write("wrote ", table.concat(paths, ", "), "\n") end
return ev.gate.exit_code(gates)
