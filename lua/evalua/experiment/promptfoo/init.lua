-- evalua run promptfooconfig.yaml: a promptfoo config run through evalua's
-- prompt experiments. The config is read and checked whole before anything
-- is sent: every key evalua does not support, every bad value, unknown
-- assertion type and missing variable is listed with its file and line, and
-- the run stops (exit status 3). Then ev.generate asks every provider for
-- every prompt x test case (evalua's client: its cache, concurrency and
-- retries), each case's assertions are scored as promptfoo scores them
-- (score.lua), a summary is printed in promptfoo's terms, and evalua's
-- reports and side-by-side view are written. Exit status: 0 every case
-- passed, 1 a case failed, 4 none failed but a case could not be decided
-- (a provider failed, an assertion could not tell), 3 a bad config, 2 a
-- usage error. docs/promptfoo.md says what is supported and how evalua differs.
local config = require "evalua.experiment.promptfoo.config"
local nunjucks = require "evalua.experiment.promptfoo.nunjucks"
local prompts_mod = require "evalua.experiment.promptfoo.prompts"
local providers_mod = require "evalua.experiment.promptfoo.providers"
local tests_mod = require "evalua.experiment.promptfoo.tests"
local score = require "evalua.experiment.promptfoo.score"
local caught = require "evalua.core.caught"

local M = {}

local TOP = { description = true, prompts = true, providers = true, targets = true, tests = true, defaultTest = true }
local TOP_HINTS = {
  evaluateOptions = "concurrency, caching and retries are evalua's client's: use --concurrency, --cache and --no-cache",
  outputPath = "evalua writes its reports and the side-by-side view to --out DIR",
  scenarios = "scenarios are not supported; write the combinations as tests",
  derivedMetrics = "derived metrics are not supported",
  nunjucksFilters = "custom filters are JavaScript; evalua's filters are ev.template.filters (docs/templates.md)",
  env = "set the environment before evalua runs",
  sharing = "results are not shared; evalua writes files",
  extensions = "extensions are JavaScript or Python hooks",
  redteam = "red teaming is not supported",
  commandLineOptions = "give evalua's options on its command line",
  tags = "tags are not used", metadata = "config metadata is not used",
  writeLatestResults = "evalua writes its reports to --out DIR",
  tracing = "tracing is not supported",
}

local function usage_spec(config_path)
  return {
    usage = "evalua run " .. config_path .. " [options]",
    description = "Runs a promptfoo config: its prompts x providers x tests, scored by its assertions.",
    { "out", "promptfoo-out", "folder for the reports and the side-by-side view", path = "out" },
    { "format", { "md", "json" }, "report formats to write", list = true,
      choices = function() return require("evalua").report.formats() end },
    { "concurrency", 0, "cells x cases in progress at once (0: twice the providers' places)", integer = true, min = 0 },
    { "cache", "", "cache folder for provider answers (default: the judge's)" },
    { "no-cache", false, "ask every provider again, keep nothing" },
    { "dry-run", false, "count the requests not in the cache; send none" },
    { "quiet", false, "no progress on stderr" },
    { "judge", "none", "the judge of model-graded and similar assertions: none, offline (a heuristic, not a model) or "
      .. "openai (any OpenAI-compatible server: $OPENAI_BASE_URL, $EVALUA_MODEL)", choices = { "none", "offline", "openai" } },
    { "judge-model", "", "with --judge openai: the judge's model (default: $EVALUA_MODEL)" },
    -- declared so that ev.cli does not shard: evalua merge replays Lua scripts, not configs
    { "shard", "", "not supported for a promptfoo config (evalua merge replays Lua scripts)" },
    { "parts", "", "not supported for a promptfoo config" },
  }
end

-- Sharding is refused: a part could not be merged (evalua merge reruns a Lua script).
local function refuse_shards(ev, opt)
  local env = require("evalua._sys").shard_env("EVALUA_SHARD")
  if opt.shard ~= "" or opt.parts ~= "" or (env and env ~= "") then
    ev.cli.usage_error("%s", "a promptfoo config cannot be sharded (--shard, --parts, $EVALUA_SHARD): evalua merge "
      .. "replays Lua scripts; write a script around ev.generate to shard")
  end
end

-- Every part of the config, checked; problems stop the run before any request.
local function read_all(path, opt)
  local cfg, doc = config.load(path)
  local problems = config.problems()
  config.check_keys(problems, doc, cfg, "", TOP, TOP_HINTS)
  if cfg.providers ~= nil and cfg.targets ~= nil then
    problems:add(doc.file, doc:line(cfg, "targets"), "targets: give providers or targets, not both")
  end
  if cfg.description ~= nil and type(cfg.description) ~= "string" then
    problems:add(doc.file, doc:line(cfg, "description"), "description: expected a string")
  end
  local cache = opt.cache ~= "" and opt.cache or nil
  if opt["no-cache"] then cache = false end
  local prompts = prompts_mod.read(problems, doc, cfg)
  local providers = providers_mod.read(problems, doc, cfg, { cache = cache })
  for _, e in ipairs(providers) do
    if type(e.transform) == "string" then
      local fn, why = score.compile_transform(e.transform, e.where .. ".transform")
      if not fn then problems:add(doc.file, e.transform_line, "%s.%s", e.where, why) end
      e.transform_fn = fn
    elseif e.transform ~= nil then
      problems:add(doc.file, e.transform_line, "%s.transform: expected a Lua expression", e.where)
    end
  end
  local cases = tests_mod.read(problems, doc, cfg)
  return { cfg = cfg, doc = doc, problems = problems, prompts = prompts, providers = providers, cases = cases }
end

-- Each case's assertions compiled with its vars, its transform compiled
-- and every prompt rendered for it; problems name the case's line.
local function prepare_cases(all)
  local problems = all.problems
  for _, c in ipairs(all.cases) do
    c.items, c.across = score.split(score.prepare_list(problems, c.asserts, c.vars) or {})
    if c.options.transform then
      local fn, why = score.compile_transform(c.options.transform, c.where .. ".options.transform")
      if not fn then problems:add(c.file, c.options.transform_line, "%s.options.%s", c.where, why) end
      c.transform = fn
    end
    c.texts = {}
    local vars = setmetatable({}, { __index = c.vars })
    for k, p in ipairs(all.prompts) do
      if p.template then
        local s, why = nunjucks.render(p.template, vars)
        if not s then
          problems:add(c.file, c.line, "%s%s: prompt '%s' (%s:%d): %s", c.where,
            c.description and (" (" .. c.description .. ")") or "", p.label, p.file, p.line, why)
        else
          c.texts[k] = (c.options.prefix or "") .. s .. (c.options.suffix or "")
        end
      end
    end
  end
end

-- The rows ev.generate runs: one per case, its rendered prompts as fields.
local function rows_of(all)
  local rows = {}
  for i, c in ipairs(all.cases) do
    -- promptfoo's RAG graders read vars.query and vars.context; the row gives them as evalua's fields
    local q, ctxs = c.vars.query, c.vars.context
    if type(ctxs) == "string" then ctxs = { ctxs } end
    if type(ctxs) == "table" then
      for _, x in ipairs(ctxs) do if type(x) ~= "string" then ctxs = nil break end end
    end
    local r = { qid = c.id, query = type(q) == "string" and q or nil, contexts = type(ctxs) == "table" and ctxs or nil,
                vars = c.vars }
    if c.description then r.description = c.description end
    if c.metadata ~= nil then r.metadata = c.metadata end -- shown with the case in the JSON report
    for k in ipairs(all.prompts) do r["pf_prompt_" .. k] = c.texts[k] end
    rows[i] = r
  end
  return rows
end

-- ---- scoring and the summary -------------------------------------------------------

-- The metrics of ev.evaluate: "assertions" (promptfoo's pass, 1 or 0, with
-- each assertion's result for the side-by-side view), "score" (the weighted
-- score) and one per named metric. Verdicts are computed once per output.
-- --judge against the config: a judged type without a judge is a problem at
-- its line; a judge no assertion uses is a usage error (it would do nothing).
local function check_judge(ev, all, opt)
  local uses = all.problems.judged or {}
  if opt["judge-model"] ~= "" and opt.judge ~= "openai" then ev.cli.usage_error("--judge-model applies to --judge openai") end
  if opt.judge == "none" then
    for _, u in ipairs(uses) do
      all.problems:add(u.file, u.line, "'%s' is graded by a judge: give --judge openai (any OpenAI-compatible server) "
        .. "or --judge offline (a heuristic)", u.type)
    end
  elseif #uses == 0 then
    ev.cli.usage_error("--judge %s: no assertion of this config is graded by a judge", opt.judge)
  end
end

local function open_judge(ev, opt)
  if opt.judge == "none" then return nil end
  if opt.judge == "offline" then return ev.judge.open("offline") end
  local cache = opt.cache ~= "" and opt.cache or nil
  if opt["no-cache"] then cache = false end
  return ev.cli.try(ev.judge.open, { model = opt["judge-model"] ~= "" and opt["judge-model"] or nil, cache = cache })
end

-- Every output's verdict, computed concurrently (judged assertions overlap),
-- then each case's comparisons across its cells joined in.
local function all_verdicts(all, view, ctx, verdicts, opt)
  local rows, by_id, transform_of = {}, {}, {}
  for i, row in ipairs(view) do rows[i] = row end
  for _, c in ipairs(all.cases) do by_id[c.id] = c end
  for _, e in ipairs(all.providers) do transform_of[e.name] = e.transform_fn end
  local out = require("evalua").map(rows, function(row)
    return score.verdict(by_id[tostring(row.qid)], row, transform_of[row.provider], ctx)
  end, { concurrency = opt.concurrency > 0 and opt.concurrency or 16, quiet = opt.quiet, label = "scoring" })
  local entries, list = {}, {}
  for i, row in ipairs(rows) do
    local v = out[i]
    if v.ok == false then
      v = { reason = "an assertion raised: " .. tostring(caught.pass_on(v.error)), results = {}, named = {} }
    end
    verdicts[tostring(row.system) .. "\0" .. tostring(row.qid)], list[i] = v, v
    local id = tostring(row.qid)
    entries[id] = entries[id] or {}
    table.insert(entries[id], { row = row, v = v })
  end
  for id, e in pairs(entries) do
    if #by_id[id].across > 0 then score.compare(by_id[id], e, ctx) end
  end
  return list
end

local function metrics_of(all, verdicts, opt)
  local function verdict(row) return verdicts[tostring(row.system) .. "\0" .. tostring(row.qid)] end
  local list = {
    { name = "assertions", higher_is_better = true,
      description = "1 when the case passes as promptfoo decides (no assertion fails, or the score reaches the threshold)",
      -- a batch: it runs before the metrics below, which read the verdicts it leaves
      batch = function(rows, ctx)
        local out = {}
        for i, v in ipairs(all_verdicts(all, rows, ctx, verdicts, opt)) do
          if v.pass == nil then out[i] = { unmeasured = true, reason = v.reason, assertions = v.results }
          else out[i] = { score = v.pass and 1 or 0, reason = v.reason, assertions = v.results } end
        end
        return out
      end },
    { name = "score", higher_is_better = true, description = "the weighted mean of the case's assertion scores",
      fn = function(row)
        local v = verdict(row)
        if v.weighted == nil then return { unmeasured = true, reason = v.reason } end
        return { score = v.weighted, reason = v.reason }
      end },
  }
  local names, seen = {}, {}
  local function walk(items)
    for _, it in ipairs(items) do
      if it.metric and not seen[it.metric] then seen[it.metric], names[#names + 1] = true, it.metric end
      if it.set then walk(it.set) end
    end
  end
  for _, c in ipairs(all.cases) do walk(c.items) end
  for _, name in ipairs(names) do
    local shown = (name == "assertions" or name == "score") and ("metric " .. name) or name
    list[#list + 1] = { name = shown, higher_is_better = true, description = "promptfoo's named metric " .. name,
      fn = function(row)
        local n = verdict(row).named[name]
        if not n then return { unmeasured = true, reason = "no assertion of this metric in the case" } end
        if not n.score then return { unmeasured = true, reason = n.reason } end
        return { score = n.score }
      end }
  end
  return list, names
end

local function pct(a, b) return b > 0 and ("%.2f%%"):format(100 * a / b) or "-" end

-- promptfoo's kind of summary: a line per cell, then the totals.
local function summarize(all, out, res, verdicts, named)
  local cells, totals = {}, { pass = 0, fail = 0, error = 0, open = 0, n = 0, prompt = 0, completion = 0, cached = 0 }
  local order = {} -- the config's order: prompts x providers (ev.generate sorts prompts by label)
  for _, p in ipairs(all.prompts) do
    for _, e in ipairs(all.providers) do
      order[#order + 1] = p.label .. "/" .. e.name
      cells[order[#order]] = { pass = 0, fail = 0, error = 0, open = 0, n = 0 }
    end
  end
  for i = 1, out.n do
    local r = out.rows[i]
    local v = verdicts[tostring(r.system) .. "\0" .. tostring(r.qid)]
    local s = cells[r.system]
    local kind = r.output_error ~= nil and "error" or v == nil and "open" or v.pass == true and "pass"
      or v.pass == false and "fail" or "open"
    if kind == "error" then totals.first_error = totals.first_error or ("%s case %s: %s"):format(r.system, r.qid,
      tostring(r.output_error)) end
    s[kind], s.n = s[kind] + 1, s.n + 1
    totals[kind], totals.n = totals[kind] + 1, totals.n + 1
    totals.prompt = totals.prompt + (tonumber(r.prompt_tokens) or 0)
    totals.completion = totals.completion + (tonumber(r.completion_tokens) or 0)
    if r.cached == true then totals.cached = totals.cached + 1 end
  end
  print(("%s: %d prompt%s x %d provider%s x %d test case%s = %d outputs"):format(all.doc.file, #all.prompts,
    #all.prompts == 1 and "" or "s", #all.providers, #all.providers == 1 and "" or "s", #all.cases,
    #all.cases == 1 and "" or "s", totals.n))
  local w = 24
  for _, s in ipairs(order) do w = math.max(w, #s) end
  print(("%-" .. w .. "s %5s %5s %6s %11s %10s %7s"):format("cell (prompt/provider)", "pass", "fail", "error",
    "unmeasured", "pass rate", "score"))
  for _, name in ipairs(order) do
    local s, a = cells[name], res:agg(name, "score")
    print(("%-" .. w .. "s %5d %5d %6d %11d %10s %7s"):format(name, s.pass, s.fail, s.error, s.open,
      pct(s.pass, s.n), a.mean and ("%.3f"):format(a.mean) or "-"))
  end
  for _, m in ipairs(named) do
    local shown = (m == "assertions" or m == "score") and ("metric " .. m) or m
    local parts = {}
    for _, name in ipairs(order) do
      local a = res:agg(name, shown)
      parts[#parts + 1] = ("%s %s"):format(name, a.mean and ("%.3f"):format(a.mean) or "-")
    end
    print(("metric %s: %s"):format(m, table.concat(parts, ", ")))
  end
  print()
  print(("Successes: %d"):format(totals.pass))
  print(("Failures: %d"):format(totals.fail))
  print(("Errors: %d"):format(totals.error))
  print(("Unmeasured: %d"):format(totals.open))
  print(("Pass Rate: %s"):format(pct(totals.pass, totals.n)))
  print(("Token usage: prompt %d, completion %d%s"):format(totals.prompt, totals.completion,
    totals.cached > 0 and (" (%d answers from the cache, counted as when they were asked)"):format(totals.cached) or ""))
  return totals
end

local function exit_status(totals, verdicts)
  if totals.error > 0 then -- on stderr too: a run whose provider answered nothing says so where errors go
    io.stderr:write(("evalua: %d of %d outputs have no answer from their provider; the first: %s\n")
      :format(totals.error, totals.n, totals.first_error))
  end
  if totals.fail > 0 then return 1 end
  if totals.error > 0 then return 4 end
  for _, v in pairs(verdicts) do
    if v.pass == nil and v.reason ~= "no assertions" then return 4 end
  end
  return 0
end

-- main(arg): the command; arg as a script's (arg[0] the config, arg[1..]
-- its options, the words before it at negative indices). host/cli/main.c
-- dispatches a SCRIPT named *.yaml or *.yml here.
function M.main(argv)
  local ev = require "evalua"
  local path = argv[0]
  local opt = ev.cli.parse(argv, usage_spec(path))
  if opt["no-cache"] and opt.cache ~= "" then ev.cli.usage_error("give --cache or --no-cache, not both") end
  refuse_shards(ev, opt)
  nunjucks.install()
  local all = read_all(path, opt)
  prepare_cases(all)
  check_judge(ev, all, opt)
  all.problems:stop_if_any(path)
  local judge = open_judge(ev, opt)
  if opt["dry-run"] then ev.provider.dry_run(true) end
  local ds = ev.dataset.from_rows(rows_of(all), path)
  local prompt_set, providers = {}, {}
  for k, p in ipairs(all.prompts) do prompt_set[p.label] = ev.template("{{pf_prompt_" .. k .. "}}", p.label) end
  for _, e in ipairs(all.providers) do providers[#providers + 1] = e.p end
  local out = ev.generate(ds, { prompts = prompt_set, providers = providers, quiet = opt.quiet,
                                concurrency = opt.concurrency > 0 and opt.concurrency or nil })
  local verdicts = {}
  local metrics, named = metrics_of(all, verdicts, opt)
  local res = ev.evaluate(out, { metrics = metrics, system = "system", ci = false, quiet = opt.quiet, shard = false,
                                 judge = judge })
  if opt["dry-run"] then
    local n = 0
    for _, p in ipairs(providers) do n = n + (p:stats().dry_run or 0) end
    print(("dry run: %d outputs, %d requests not in the cache; nothing was sent"):format(out.n, n))
    return 0
  end
  local totals = summarize(all, out, res, verdicts, named)
  local title = "promptfoo: " .. (type(all.cfg.description) == "string" and all.cfg.description or path)
  local has_json = false
  for _, f in ipairs(opt.format) do has_json = has_json or f == "json" end
  -- the full form: each item with its row (the outputs, prompts and vars), which no file holds otherwise
  local paths = ev.report.write(res, { dir = opt.out, name = "promptfoo", formats = opt.format, title = title,
                                       items = has_json and "full" or nil })
  paths[#paths + 1] = ev.matrix_view.write(res, opt.out .. "/promptfoo_side_by_side.html", { title = title })
  if not opt.quiet then io.stderr:write("wrote ", table.concat(paths, ", "), "\n") end
  return exit_status(totals, verdicts)
end

return M
