-- The prompt matrix: every prompt template (scripts/prompts/*.txt) x provider x
-- question, scored with assertions and answer metrics, summarised per cell
-- (prompt x provider) and written as reports, with a side-by-side HTML view. Runs offline by default: the
-- offline provider is an extractive heuristic over the retrieved passages.
--
--   evalua run scripts/prompt_matrix.lua                              # prompts/*.txt x offline
--   evalua run scripts/prompt_matrix.lua --provider offline --provider openai   # $OPENAI_BASE_URL, $EVALUA_MODEL
--   evalua run scripts/prompt_matrix.lua --prompts my_prompts/ --min-pass 0.9   # exit 1 below 90% passing
--   evalua run scripts/prompt_matrix.lua --watch                      # rerun on every saved prompt
local ev = require "evalua"

local here = ev.cli.script_dir(arg) -- default data and prompts sit beside the script

local opt, given = ev.cli.parse(arg, {
  usage = "evalua run scripts/prompt_matrix.lua [options]",
  description = "Runs prompt templates x providers over the data, checks assertions and prints a matrix summary.",
  { "data", here .. "/data/rag_eval.jsonl", "rows (JSONL or CSV); a row's `assert` list is checked too" },
  { "data-format", "evalua", "the format of --data: evalua's rows, a peer's file or folder, or auto (docs/data.md)",
    choices = ev.dataset.formats },
  { "corpus", here .. "/data/corpus.jsonl", "documents {id, title, text} that supply contexts" },
  { "pipeline", "hybrid_rerank", "the variant whose retrieval gives the contexts (\"\" for every row)" },
  { "k", 3, "retrieved documents in the contexts", integer = true, min = 0 },
  { "prompts", here .. "/prompts", "folder of prompt templates (*.txt), each a cell's prompt", path = "folder" },
  { "provider", { "offline" }, "offline, or openai for any OpenAI-compatible server", list = true,
    choices = { "offline", "openai" } },
  { "model", "", "openai: the model (default: $EVALUA_MODEL)" },
  { "base-url", "", "openai: the server (default: $OPENAI_BASE_URL)" },
  { "max-words", 60, "assertion: an answer has at most this many words", integer = true, min = 1 },
  { "min-pass", 0, "gate: the share of cases each cell must pass (0: no gate)", min = 0, max = 1 },
  { "out", "out", "folder for the reports", path = "out" },
  { "format", { "md", "json" }, "report formats to write", list = true, choices = ev.report.formats },
  { "concurrency", 16, "requests in flight", integer = true, min = 1, max = 1000000 },
  { "cache", "", "cache folder for provider answers (default: the judge's)" },
  { "dry-run", false, "count the requests without sending any" },
  { "watch", false, "run again whenever a prompt file, the data or the corpus changes; print which cells changed" },
  { "watch-count", 0, "with --watch: stop after this many reruns (0: until interrupted)", integer = true, min = 0 },
  { "quiet", false, "no progress on stderr" },
})

-- Options that would do nothing are refused before anything is loaded.
local openai = false
for _, name in ipairs(opt.provider) do openai = openai or name == "openai" end
for _, o in ipairs { "model", "base-url", "cache" } do
  if opt[o] ~= "" and not openai then ev.cli.usage_error("--%s applies to --provider openai", o) end
end
if given.concurrency and not openai then
  ev.cli.usage_error("--concurrency applies to --provider openai; the offline provider sends no requests")
end
if opt["watch-count"] > 0 and not opt.watch then ev.cli.usage_error("--watch-count applies to --watch") end

if opt["dry-run"] then ev.provider.dry_run(true) end

local providers = {}
for _, name in ipairs(opt.provider) do
  providers[#providers + 1] = name == "offline" and ev.provider.offline() or ev.cli.try(ev.provider.openai, {
    model = opt.model ~= "" and opt.model or nil, base_url = opt["base-url"] ~= "" and opt["base-url"] or nil,
    concurrency = opt.concurrency, cache = opt.cache ~= "" and opt.cache or nil,
  })
end

-- Assertions: a gold answer appears (from the data's gold_answers), the
-- answer stays short and does not give up; rows may add their own.
local checks = {
  { name = "mentions a gold answer", type = "icontains-any", field = "gold_answers" },
  { name = "at most " .. opt["max-words"] .. " words", type = "max-words", value = opt["max-words"] },
  { name = "does not give up", type = "not-icontains-any", value = { "couldn't find", "do not contain", "not contain" } },
}

local function load_data()
  local ds = ev.dataset.load(opt.data, { format = opt["data-format"] })
  if opt.pipeline ~= "" then ds = ds:filter(function(row) return row.variant == opt.pipeline end) end
  if ds.n == 0 then ev.input_error(("%s: no rows of pipeline '%s'"):format(opt.data, opt.pipeline)) end
  ds:attach_contexts(ev.dataset.corpus(opt.corpus), opt.k)
  return ds
end

-- The matrix summary: one line per cell. Latency and cost are the answers'
-- own, for cached ones those of when they were asked.
local function print_summary(out, res)
  print(("%-22s %5s %8s %8s %8s %9s %10s %7s"):format("cell (prompt/provider)", "n", "pass", "f1", "f1 p10",
    "latency", "cost", "failed"))
  for _, cell in ipairs(out.cells) do
    local s = cell.system
    local a, f = res:agg(s, "assertions"), res:agg(s, "token_f1")
    local passed, lat, nlat, cost, failed = 0, 0, 0, 0, 0
    for _, x in ipairs(res:scores_of(s, "assertions")) do if x >= 1 then passed = passed + 1 end end
    for i = 1, out.n do
      local r = out.rows[i]
      if r.system == s then
        if r.output_error then failed = failed + 1 end
        if type(r.latency_ms) == "number" then lat, nlat = lat + r.latency_ms, nlat + 1 end
        if type(r.cost) == "number" then cost = cost + r.cost end
      end
    end
    local p10 = f.measured > 0 and ev.stats.percentile(res:scores_of(s, "token_f1"), 10) or nil
    print(("%-22s %5d %8s %8s %8s %9s %10s %7d"):format(s, a.n, ("%d/%d"):format(passed, a.n),
      f.mean and ("%.3f"):format(f.mean) or "-", p10 and ("%.3f"):format(p10) or "-",
      nlat > 0 and ("%.0f ms"):format(lat / nlat) or "-", ("$%.4f"):format(cost), failed))
  end
  local cached = 0
  for i = 1, out.n do if out.rows[i].cached == true then cached = cached + 1 end end
  if cached > 0 then
    print(("%d of %d answers came from the cache: their latency and cost are those of when they were asked")
      :format(cached, out.n))
  end
end

-- A fingerprint of each cell's outputs, to tell which cells a rerun changed.
local function fingerprints(out)
  local parts = {}
  for i = 1, out.n do
    local r = out.rows[i]
    local p = parts[r.system] or {}
    parts[r.system] = p
    p[#p + 1] = r.answer or ("error: " .. tostring(r.output_error))
  end
  local fp = {}
  for system, p in pairs(parts) do fp[system] = ev.sys.sha256(table.concat(p, "\0")) end
  return fp
end

-- One run of the matrix: outputs, scores, summary and reports; the exit status.
local function run()
  local ds = load_data()
  local out = ev.generate(ds, { prompts = opt.prompts, providers = providers, concurrency = opt.concurrency,
                                quiet = opt.quiet })
  local res = ev.evaluate(out, {
    metrics = { ev.assertions.metric(checks), "token_f1", "exact_match_norm" },
    system = "system", slices = { "query_class" }, ci = false, quiet = opt.quiet,
  })
  if opt["dry-run"] then
    local n = 0
    for _, p in ipairs(providers) do n = n + (p:stats().dry_run or 0) end
    print(("dry run: %d cells x %d rows, %d requests not in the cache; nothing was sent"):format(#out.cells, ds.n, n))
    return 0, out
  end
  if ev.shard.skip(res) then return 0, out end -- a shard's part: evalua merge prints and writes
  print_summary(out, res)
  local paths = ev.report.write(res, { dir = opt.out, name = "prompt_matrix", formats = opt.format,
                                       title = "Prompt matrix: " .. opt.data })
  paths[#paths + 1] = ev.matrix_view.write(res, opt.out .. "/prompt_matrix_side_by_side.html",
                                           { title = "Prompt matrix: " .. opt.data })
  if not opt.quiet then io.stderr:write("wrote ", table.concat(paths, ", "), "\n") end
  if opt["min-pass"] == 0 then return 0, out end
  local gates = ev.gate.check(res, { pass_share = { assertions = opt["min-pass"] } })
  for _, g in ipairs(gates) do print(("gate %s %s: %s"):format(g.system, g.status, g.message)) end
  return ev.gate.exit_code(gates), out
end

local function changed_cells(before, after)
  local names, seen = {}, {}
  for system, fp in pairs(after) do
    if before[system] ~= fp then names[#names + 1] = system .. (before[system] and "" or " (new)") end
    seen[system] = true
  end
  for system in pairs(before) do
    if not seen[system] then names[#names + 1] = system .. " (gone)" end
  end
  table.sort(names)
  return names
end

-- --watch: rerun after each change; an error in a rerun (a template being
-- edited) is printed and the watch goes on.
local function watch(status, out)
  if ev.sys.sandboxed() then ev.cli.usage_error("--watch is not available with --sandbox") end
  local w = require("evalua._watch").open { opt.prompts, opt.data, opt.corpus }
  local before, runs = fingerprints(out), 0
  while opt["watch-count"] == 0 or runs < opt["watch-count"] do
    print(("watching %s, %s and %s (Ctrl-C to stop)"):format(opt.prompts, opt.data, opt.corpus))
    io.stdout:flush()
    local files = w:wait(-1)
    table.sort(files)
    runs = runs + 1
    print("changed: " .. table.concat(files, ", "))
    local ok, s, o = pcall(run)
    if ok then
      status = s
      local cells = changed_cells(before, fingerprints(o))
      print("cells changed: " .. (#cells > 0 and table.concat(cells, ", ") or "none"))
      before = fingerprints(o)
    elseif type(s) == "table" and s.evalua_exit then
      error(s, 0)
    else
      print("error: " .. tostring(s))
    end
    io.stdout:flush()
  end
  return status
end

local status, out = run()
if opt.watch then return watch(status, out) end
return status
