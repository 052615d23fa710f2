-- evalua: the scripting library. ev.<name> is one of the public modules
-- below, loaded on first use, so a script pays only for what it touches.
-- Every other module of the library is internal: the library and the
-- tests reach it by its full name (require "evalua.core.run"), never through ev.
local sys = require "evalua._sys"

-- The public surface: ev name -> module path. The one place that maps the
-- two (a module that moves changes its path here, never its ev name); each
-- name is documented in the README's reference or docs/ (docs/internals.md,
-- "The public surface"). Under --sandbox a script can require these paths,
-- "evalua" and the standard libraries, and nothing else.
local PUBLIC = {
  agent = "evalua.agent",                 -- docs/agents.md
  assertions = "evalua.experiment.assertions",       -- docs/prompts.md
  cli = "evalua.core.cli",                     -- docs/cli.md
  compare = "evalua.eval.compare",             -- docs/history.md
  dataset = "evalua.data.dataset",             -- docs/evaluate.md
  evaluate = "evalua.eval.evaluate",           -- docs/evaluate.md
  gate = "evalua.eval.gate",                   -- docs/history.md
  generate = "evalua.experiment.generate",           -- docs/prompts.md
  geval = "evalua.judged.geval",                 -- docs/judged_metrics.md
  history = "evalua.history",             -- docs/history.md
  json = "evalua.core.json",                   -- docs/evaluate.md
  judge = "evalua.judge",                 -- docs/judge.md
  llm_evaluator = "evalua.judged.llm_evaluator", -- docs/judged_metrics.md
  map = "evalua.client.map",                     -- docs/judge.md
  matrix_view = "evalua.experiment.matrix_view",     -- docs/prompts.md
  metrics = "evalua.eval.metrics",             -- docs/retrieval.md
  notify = "evalua.report.notify",               -- docs/history.md
  provider = "evalua.experiment.provider",           -- docs/prompts.md
  rag = "evalua.judged.rag",                     -- docs/judged_metrics.md
  report = "evalua.report",               -- docs/evaluate.md
  scorers = "evalua.eval.scorers",             -- docs/assertions.md
  shard = "evalua.scale.shard",                 -- docs/scale.md
  stats = "evalua.eval.stats",                 -- docs/stats.md
  template = "evalua.experiment.template",           -- docs/templates.md
  text = "evalua.eval.text",                   -- docs/text.md
  vector = "evalua.eval.vector",               -- docs/vector.md
}

-- Internal modules that ev reached before the list existed: for one
-- release they still load through ev, with a warning, outside --sandbox.
local FORMER = {
  assertions_schema = "evalua.experiment.assertions_schema", diff = "evalua.history.diff", gate_cases = "evalua.eval.gate_cases",
  merge = "evalua.scale.merge", options = "evalua.core.options", provider_http = "evalua.experiment.provider_http",
  provider_offline = "evalua.experiment.provider_offline", registry = "evalua.core.registry", results = "evalua.eval.results",
  run = "evalua.core.run", sandbox = "evalua.core.sandbox", scaffold = "evalua.core.scaffold", schema = "evalua.core.schema",
  shape = "evalua.core.shape",
}

local ev = {
  version = sys.version,
  sys = sys,
}

-- Registers a metric by name (see evalua.core.registry): ev.register(name, fn [, opts])
-- or ev.register{name=, fn=|batch=, ...}. Then "name" works wherever a metric does.
function ev.register(...)
  return require("evalua.core.registry").register(...)
end

-- Raises a bad-input message ("data.jsonl:12: field 'x': ..."): exit status 3,
-- printed without a traceback, since the input is at fault, not the script.
ev.input_error = sys.input_error

-- Exit with a status from anywhere in a script (0 ok, 1 gate failed, 4 undecided).
-- A pcall around it (a metric's, ev.map's) cannot keep the run going: the
-- request is raised again at the next instruction (host/runtime/state.c).
function ev.exit(code)
  sys.exit(math.tointeger(code) or 3)
end

local function sorted_names()
  local names = {}
  for name in pairs(PUBLIC) do names[#names + 1] = name end
  table.sort(names)
  return names
end

local warned = {}

local function former(name)
  if not warned[name] then
    warned[name] = true
    io.stderr:write(("evalua: warning: ev.%s is internal and leaves ev in the next release; "
      .. "use require \"%s\" (public modules: %s)\n"):format(name, FORMER[name], table.concat(sorted_names(), ", ")))
  end
  return require(FORMER[name])
end

-- Modules are kept here, not in ev itself, so that ev has no field a
-- script could overwrite, and evalua.core.sandbox's view of it can call this in
-- a tail call (an error then names the script's line).
local loaded = {}

return setmetatable(ev, {
  __index = function(_, name)
    local mod = loaded[name]
    if mod ~= nil then return mod end
    local path = PUBLIC[name]
    if path then
      mod = require(path)
    elseif FORMER[name] and not sys.sandboxed() then
      mod = former(name)
    else
      error(("ev.%s: no such module (public: %s)"):format(tostring(name), table.concat(sorted_names(), ", ")), 2)
    end
    loaded[name] = mod
    return mod
  end,
  -- for evalua.core.sandbox, which lets a sandboxed script require these paths only
  __public = PUBLIC,
})
