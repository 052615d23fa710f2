-- ev.generate(ds, {prompts = ..., providers = ...}) -> data set
-- Runs every prompt template x provider x row and returns the outputs as a
-- data set: each input row once per cell, with the provider's `answer`
-- (and `contexts`/`retrieved` when it returns them) and `system` naming the
-- cell ("prompt/provider"), ready for ev.evaluate(out, {system = "system"}).
--
--   local out = ev.generate(ds, {
--     prompts = { concise = "Answer in at most 20 words: {{query}}", cited = { file = "prompts/cited.txt" } },
--     providers = { ev.provider.offline{}, ev.provider.openai{ model = "gpt-4o-mini" } },
--     concurrency = 16,
--   })
--
-- Prompts are rendered with the row's fields (ev.template) before anything
-- is sent, so a missing variable stops the run naming file and line. The
-- outputs go straight into C columns; no Lua table per row is kept.
local options = require "evalua.core.options"
local caught = require "evalua.core.caught"
local template = require "evalua.experiment.template"
local provider_mod = require "evalua.experiment.provider"
local dataset = require "evalua.data.dataset"
local json = require "evalua.core.json"
local T = require "evalua._table"
local sys = require "evalua._sys"
local shard = require "evalua.scale.shard"

local KNOWN = options.set { "prompts", "providers", "concurrency", "progress", "quiet" }

-- Fields ev.generate writes; a row's own field of the same name is replaced.
local OUTPUT = { "answer", "system", "prompt_name", "provider", "latency_ms", "prompt_tokens",
                 "completion_tokens", "cost", "cached", "output_error", "steps", "stop_reason", "tool_errors",
                 "input_messages", "finish_reason", "logprobs" }

local function basename(path)
  return (path:match("([^/]+)$"):gsub("%.[^.]*$", ""))
end

-- A folder name: its *.txt files, sorted; each named by its base name.
local function from_folder(dir)
  local names, err = sys.listdir(dir)
  if not names then error("ev.generate: prompts: " .. tostring(err), 0) end
  local out = {}
  table.sort(names)
  for _, n in ipairs(names) do
    if n:match("%.txt$") then out[#out + 1] = { name = basename(n), t = template.file(dir .. "/" .. n, n) } end
  end
  if #out == 0 then error(("ev.generate: no *.txt prompt files in '%s'"):format(dir), 0) end
  return out
end

-- prompts: a folder, a list of file names, or {name = text | {file=} | template}.
local function prompt_list(spec)
  if type(spec) == "string" then return from_folder(spec:gsub("/+$", "")) end
  if type(spec) ~= "table" or next(spec) == nil then
    error("ev.generate: prompts must be a folder, a list of files or a table {name = template}", 0)
  end
  local out = {}
  if spec[1] ~= nil then
    for i, path in ipairs(spec) do
      if type(path) ~= "string" then error(("ev.generate: prompts[%d] must be a file name"):format(i), 0) end
      out[i] = { name = basename(path), t = template.file(path) }
    end
  else
    for name, v in pairs(spec) do out[#out + 1] = { name = name, t = template.load(v, name) } end
    table.sort(out, function(a, b) return a.name < b.name end)
  end
  return out
end

-- providers: a list (named by provider.name) or {name = provider}.
local function provider_list(spec)
  if type(spec) ~= "table" or next(spec) == nil then
    error("ev.generate: providers must be a list or a table {name = provider}", 0)
  end
  local out, seen = {}, {}
  if spec[1] ~= nil then
    for i, p in ipairs(spec) do out[i] = { name = provider_mod.is_provider(p) and p.name, p = p } end
  else
    for name, p in pairs(spec) do out[#out + 1] = { name = name, p = p } end
    table.sort(out, function(a, b) return a.name < b.name end)
  end
  for i, e in ipairs(out) do
    if not provider_mod.is_provider(e.p) then
      error(("ev.generate: provider %s is not an ev.provider"):format(tostring(e.name or i)), 0)
    end
    if seen[e.name] then error(("ev.generate: two providers are named '%s' (give them name = ...)"):format(e.name), 0) end
    seen[e.name] = true
  end
  return out
end

local function row_copy(row)
  if type(row.table) == "function" then return row:table() end
  local c = {}
  for k, v in pairs(row) do c[k] = v end
  return c
end

-- Every prompt rendered for every row, before any request is sent.
local function render_all(ds, prompts)
  local texts = {}
  for pi, p in ipairs(prompts) do
    texts[pi] = {}
    for i = 1, ds.n do
      local row = ds.rows[i]
      local ok, s = pcall(p.t.render, p.t, row)
      if not ok then
        sys.input_error(("%s:%s: prompt '%s': %s"):format(ds.path or "(rows)", tostring(row._line or i), p.name,
          caught.pass_on(s)))
      end
      texts[pi][i] = s
    end
  end
  return texts
end

-- The output row's JSON: the input row, the provider's fields over it.
local function output_json(row, cell, out)
  local r = row_copy(row)
  for _, k in ipairs(OUTPUT) do r[k] = nil end
  r.system, r.prompt_name, r.provider = cell.system, cell.prompt, cell.provider
  if out.messages then -- an agent's trajectory (docs/agents.md); the row's own messages are kept beside it
    if r.messages ~= nil then r.input_messages = r.messages end
    r.messages, r.steps, r.stop_reason, r.tool_errors = out.messages, out.steps, out.stop_reason, out.tool_errors
  end
  if out.ok then
    r.answer = out.answer
    if out.contexts then r.contexts = out.contexts end
    if out.retrieved then r.retrieved = out.retrieved end
    r.latency_ms, r.cached = out.latency_ms, out.cached
    r.prompt_tokens, r.completion_tokens, r.cost = out.prompt_tokens, out.completion_tokens, out.cost
    r.finish_reason, r.logprobs = out.finish_reason, out.logprobs -- the finish-reason and perplexity assertions
  else
    r.output_error = out.error or "the provider failed"
  end
  return r
end

-- Appends one output, given as its JSON text when it was encoded already;
-- a provider field the columns refuse (a malformed retrieved list, say)
-- turns into the row's output_error.
local function append(tbl, row, cell, out, text, line)
  local ok, err = tbl:append(text or json.encode(output_json(row, cell, out)), line)
  if ok then return end
  local r = output_json(row, cell, out)
  r.contexts, r.retrieved, r.answer = nil, nil, nil
  r.output_error = "the provider's output was refused: " .. tostring(err)
  assert(tbl:append(json.encode(r), line))
end

-- Under a shard (--shard, $EVALUA_SHARD) only the shard's rows are sent, by
-- the hash of their qid as ev.evaluate picks them; the others are outputs
-- marked as another shard's, which that shard's ev.evaluate never reads.
-- Nil when every row is this process's (no shard, or evalua merge).
local function shard_rows(ds)
  if shard.merging() then return nil end
  local s = shard.of_spec({})
  if not s then return nil end
  local set = {}
  for _, i in ipairs(shard.rows(ds, "qid", s)) do set[i] = true end
  return set
end

-- The hash of what was asked (the input rows, each rendered prompt, the
-- cells), not of the answers, which vary between runs: shards and their
-- merge agree on it, and a history names the same test set each night.
local function input_hash(ds, prompts, texts, cells)
  local parts = { ds.hash or "" }
  for pi, p in ipairs(prompts) do parts[#parts + 1] = p.name .. "\0" .. table.concat(texts[pi], "\0") end
  for _, cell in ipairs(cells) do parts[#parts + 1] = cell.system end
  return sys.sha256(table.concat(parts, "\1"))
end

return function(ds, spec)
  options.check(spec, KNOWN, "ev.generate", 2)
  if type(spec) ~= "table" then error("ev.generate: expected a table {prompts =, providers =}", 2) end
  if getmetatable(ds) ~= dataset.Dataset then
    if type(ds) ~= "table" then error("ev.generate: expected a data set or a list of rows", 2) end
    ds = dataset.from_rows(ds)
  end
  local ok, prompts = pcall(prompt_list, spec.prompts)
  if not ok then error(prompts, 2) end
  local providers
  ok, providers = pcall(provider_list, spec.providers)
  if not ok then error(providers, 2) end
  local texts = render_all(ds, prompts)
  require("evalua.experiment.assertions").check_rows(ds) -- a bad assert list stops the run before anything is sent
  for _, v in ipairs(providers) do
    if v.p.agent then require("evalua.agent.data").check(ds) break end -- the conversations to replay, checked up front
  end
  local cells = {}
  for pi, p in ipairs(prompts) do
    for _, v in ipairs(providers) do
      cells[#cells + 1] = { system = p.name .. "/" .. v.name, prompt = p.name, provider = v.name, p = v.p, pi = pi }
    end
  end
  -- Tasks row by row across the cells, so every provider has requests in
  -- flight at once; task (i, c) is number (i - 1) * #cells + c.
  local tasks = {}
  for i = 1, ds.n do
    for _, cell in ipairs(cells) do tasks[#tasks + 1] = { cell = cell, i = i } end
  end
  -- By default twice the requests the providers may have in flight, so
  -- that each has the next ones waiting when a place frees, however the
  -- cells in progress happen to fall between them.
  local workers = spec.concurrency
  if workers == nil then
    workers = 0
    for _, v in ipairs(providers) do workers = workers + 2 * v.p.concurrency end
  end
  local mine = shard_rows(ds)
  -- Each output is encoded by its worker, while other requests are in
  -- flight, rather than all of them after the last answer.
  local outs, run = require("evalua.client.map")(tasks, function(task)
    local row, out = ds.rows[task.i], nil
    if mine and not mine[task.i] then out = { ok = false, error = "another shard's row: not generated here" }
    else out = task.cell.p:call(texts[task.cell.pi][task.i], row) end
    return { out = out, text = json.encode(output_json(row, task.cell, out)) }
  end, { concurrency = workers, progress = spec.progress, quiet = spec.quiet, label = "generating" })
  local tbl = T.new { rag = true, fields = { { name = "qid", type = "any" } } }
  for c, cell in ipairs(cells) do
    for i = 1, ds.n do
      local row, v = ds.rows[i], outs[(i - 1) * #cells + c]
      -- without text: an item that raised, given as ev.map's failure
      append(tbl, row, cell, v.text and v.out or v, v.text, row._line or i)
    end
  end
  local summary = {}
  for c, cell in ipairs(cells) do
    summary[c] = { system = cell.system, prompt = cell.prompt, provider = cell.provider,
                   template = prompts[cell.pi].t.source } -- the prompt's text, shown above its column
  end
  return dataset.from_table(tbl, { path = ds.path, hash = input_hash(ds, prompts, texts, cells), skipped = {},
                                   format = "generated", cells = summary, seconds = run.seconds })
end
