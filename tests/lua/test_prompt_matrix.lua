-- scripts/prompt_matrix.lua end to end: the bundled prompts x the offline
-- provider and the OpenAI-compatible mock, the matrix summary, reports, the
-- pass-share gate's exit status, and a rerun answered from the cache.
local lu = require "luaunit"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()
local src = os.getenv("EVALUA_SRC") or "."

-- A provider cache only where an openai provider answers (the offline one has none).
local function run(dir, args)
  local cache = (args or ""):find("openai", 1, true) and ("--cache " .. dir .. "/cache") or ""
  return h.run(("cd %s && %s run scripts/prompt_matrix.lua --quiet --out %s %s %s")
    :format(src, h.bin, dir, cache, args or ""))
end

local function cell_line(stdout, cell)
  return stdout:match("\n(" .. cell:gsub("%p", "%%%0") .. " [^\n]*)")
end

TestPromptMatrix = {}
function TestPromptMatrix:setUp() mock:reset() end

function TestPromptMatrix:test_offline_and_mock_cells()
  local dir = h.tmpdir()
  local alone = run(dir)
  lu.assertEquals(alone.status, 0, alone.stderr)
  lu.assertStrContains(alone.stdout, "cell (prompt/provider)     n     pass       f1   f1 p10   latency       cost  failed")
  local both = run(dir, "--provider offline --provider openai --model m --base-url " .. mock.url)
  lu.assertEquals(both.status, 0, both.stderr)
  -- the offline cells do not change when another provider joins the matrix
  for _, cell in ipairs { "concise/offline", "detailed/offline" } do
    lu.assertNotNil(cell_line(alone.stdout, cell))
    lu.assertEquals(cell_line(both.stdout, cell), cell_line(alone.stdout, cell))
  end
  -- 2 prompts x 60 questions of one pipeline reached the mock, none failed
  lu.assertEquals(mock:stats().requests, 120)
  lu.assertStrContains(cell_line(both.stdout, "concise/m"), "   60 ")
  lu.assertStrMatches(cell_line(both.stdout, "concise/m"), ".* 0$")
  local json = h.read(dir .. "/prompt_matrix.json")
  lu.assertStrContains(json, '"detailed/m"')
  local view = h.read(dir .. "/prompt_matrix_side_by_side.html")
  lu.assertStrContains(view, "<th>concise/offline</th><th>concise/m</th><th>detailed/offline</th><th>detailed/m</th>")
  lu.assertEquals(select(2, view:gsub('<tr class="case', "")), 60)
  -- a rerun is answered from the cache: nothing new is sent
  local again = run(dir, "--provider openai --model m --base-url " .. mock.url)
  lu.assertEquals(again.status, 0, again.stderr)
  lu.assertEquals(mock:stats().requests, 120)
  -- the latency and cost columns are the answers' own, as when they were asked
  lu.assertEquals(cell_line(again.stdout, "concise/m"), cell_line(both.stdout, "concise/m"))
  lu.assertStrContains(again.stdout, "\n120 of 120 answers came from the cache: their latency and cost are those "
    .. "of when they were asked\n")
  lu.assertNotStrContains(both.stdout, "came from the cache")
  h.sh("rm -rf " .. dir)
end

function TestPromptMatrix:test_gate_and_dry_run()
  local dir = h.tmpdir()
  local strict = run(dir, "--min-pass 1")
  lu.assertEquals(strict.status, 1)
  lu.assertStrMatches(strict.stdout, ".*gate concise/offline fail: %d+ of 60 cases pass.*")
  local dry = run(dir, "--dry-run --provider openai --model m --base-url " .. mock.url)
  lu.assertEquals(dry.status, 0, dry.stderr)
  lu.assertStrContains(dry.stdout, "dry run: 2 cells x 60 rows, 120 requests not in the cache; nothing was sent")
  h.sh("rm -rf " .. dir)
end

function TestPromptMatrix:test_shards_split_the_requests_and_merge()
  local dir = h.tmpdir()
  local whole = run(dir)
  local args = "--provider offline --provider openai --model m --base-url " .. mock.url .. " --parts " .. dir .. "/parts"
  local sent = {}
  for i = 1, 2 do
    local r = run(dir, args .. " --shard " .. i .. "/2")
    lu.assertEquals(r.status, 0, r.stderr)
    lu.assertEquals(r.stdout, "") -- a part: the summary and reports come from the merge
    sent[i] = mock:stats().requests
  end
  -- each shard sent its own rows' requests only: together the 120 of one run
  lu.assertTrue(sent[1] > 0 and sent[1] < 120, tostring(sent[1]))
  lu.assertEquals(sent[2], 120)
  local merged = h.run(("cd %s && %s merge %s/parts/*.json --out %s/merged"):format(src, h.bin, dir, dir))
  lu.assertEquals(merged.status, 0, merged.stderr)
  lu.assertEquals(mock:stats().requests, 120) -- the merge's outputs come from the shared cache
  for _, cell in ipairs { "concise/offline", "detailed/offline" } do
    lu.assertEquals(cell_line(merged.stdout, cell), cell_line(whole.stdout, cell))
  end
  lu.assertStrContains(cell_line(merged.stdout, "concise/m"), "   60 ")
  lu.assertEquals(select(2, h.read(dir .. "/merged/prompt_matrix_side_by_side.html"):gsub('<tr class="case', "")), 60)
  h.sh("rm -rf " .. dir)
end

-- Polls path until it holds text (or 60 s pass); returns its content.
local function wait_for(path, text)
  local sys = require "evalua._sys"
  local deadline = sys.monotonic() + 60
  while sys.monotonic() < deadline do
    local s = h.read(path) or ""
    if s:find(text, 1, true) then return s end
    sys.sleep(0.05)
  end
  error(("'%s' never appeared in %s: %s"):format(text, path, h.read(path) or ""))
end

function TestPromptMatrix:test_watch_reruns_and_names_the_changed_cells()
  local dir = h.tmpdir()
  h.sh(("mkdir -p %s/prompts && cp %s/scripts/prompts/*.txt %s/prompts/"):format(dir, src, dir))
  local pid = h.run(("cd %s && (%s run scripts/prompt_matrix.lua --quiet --out %s/out --prompts %s/prompts --watch "
    .. "--watch-count 2 > %s/stdout 2> %s/stderr; echo $? > %s/status) & echo $!")
    :format(src, h.bin, dir, dir, dir, dir, dir)).stdout
  lu.assertNotNil(pid)
  wait_for(dir .. "/stdout", "watching")
  -- an editor's save: a new file renamed over the old one
  h.write(dir .. "/concise.new", "In at most 5 words: {{query}}")
  h.sh(("mv %s/concise.new %s/prompts/concise.txt"):format(dir, dir))
  local s = wait_for(dir .. "/stdout", "cells changed:")
  lu.assertStrContains(s, "\nchanged: " .. dir .. "/prompts/concise.txt\n")
  lu.assertStrContains(s, "\ncells changed: concise/offline\n") -- detailed/offline is the same
  h.write(dir .. "/prompts/terse.txt", "In at most 3 words: {{query}}")
  s = wait_for(dir .. "/status", "\n")
  lu.assertEquals(s, "0\n", h.read(dir .. "/stderr"))
  s = h.read(dir .. "/stdout")
  lu.assertStrContains(s, "\ncells changed: terse/offline (new)\n")
  lu.assertStrContains(s, "\nterse/offline ")
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
