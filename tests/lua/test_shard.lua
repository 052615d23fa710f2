-- Sharded runs on one machine: which rows a shard takes, the shard taken
-- from each job engine's environment, and evalua merge giving back the
-- one-process reports, history record and gates, or refusing parts that do
-- not belong together.
local lu = require "luaunit"
local cjson = require "cjson"
local h = require "tests.lua.helpers"
local ev = require "evalua"

local SRC = os.getenv("EVALUA_SRC") or os.getenv("PWD")
local DATA = SRC .. "/scripts/data/rag_eval.jsonl"
local CORPUS = SRC .. "/scripts/data/corpus.jsonl"

-- FNV-1a 64 written out here, independently of the C one.
local function fnv1a(s)
  local hash = -3750763034362895579 -- 14695981039346656037 as a signed 64-bit integer
  for i = 1, #s do hash = (hash ~ s:byte(i)) * 1099511628211 end
  return hash
end

-- The hash as an unsigned 64-bit number, mod n: 2 * (x >>> 1) + (x & 1).
local function shard_of(qid, n)
  local x = fnv1a(qid)
  return (2 * ((x >> 1) % n) + (x & 1)) % n + 1
end

local function rag_report(dir, args)
  return h.run(("cd %s && %s run %s/scripts/rag_report.lua --data %s --corpus %s --quiet %s"):format(
    dir, h.bin, SRC, DATA, CORPUS, args or ""))
end

local function merge(dir, args)
  return h.run(("cd %s && %s merge %s"):format(dir, h.bin, args))
end

-- The text of a report with the run's time stamps taken out.
local function untimed(path)
  local s = assert(h.read(path), path)
  return (s:gsub("%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ", "TIME"))
end

TestShard = {}
function TestShard:setUp() self.dir = h.tmpdir() end
function TestShard:tearDown() h.sh("rm -rf " .. self.dir) end

function TestShard:test_parse()
  lu.assertEquals(ev.shard.parse("2/4"), { index = 2, count = 4 })
  lu.assertEquals(ev.shard.parse(" 1 / 1 "), { index = 1, count = 1 })
  for _, bad in ipairs { "0/4", "5/4", "2/0", "2", "a/b", "-1/3", "1.5/3" } do
    local ok, err = pcall(ev.shard.parse, bad)
    lu.assertFalse(ok, bad)
    lu.assertEquals(err, ("shard: expected i/N with 1 <= i <= N, got '%s'"):format(bad))
  end
end

-- --shard auto in a child process, with each engine's variables.
function TestShard:test_auto_from_each_engine()
  local script = self.dir .. "/which.lua"
  h.write(script, 'local s = require("evalua").shard.parse("auto") print(s.index .. "/" .. s.count .. " " .. s.engine)')
  local cases = {
    { "SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_MAX=7", "4/4 slurm" },
    { "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=9 SLURM_ARRAY_TASK_STEP=2", "2/5 slurm" },
    { "JOB_COMPLETION_INDEX=0 EVALUA_SHARDS=3", "1/3 kubernetes" },
    { "BUILDKITE_PARALLEL_JOB=2 BUILDKITE_PARALLEL_JOB_COUNT=3", "3/3 buildkite" },
    { "CI_NODE_INDEX=2 CI_NODE_TOTAL=2", "2/2 gitlab" },
  }
  for _, c in ipairs(cases) do
    local r = h.run(("env -i %s %s run %s"):format(c[1], h.bin, script))
    lu.assertEquals(r.status, 0, r.stderr)
    lu.assertEquals(r.stdout, c[2] .. "\n", c[1])
  end
  local r = h.run(("env -i JOB_COMPLETION_INDEX=1 %s run %s"):format(h.bin, script))
  lu.assertStrContains(r.stderr, "JOB_COMPLETION_INDEX is set but EVALUA_SHARDS (the job's completions) is not")
  r = h.run(("env -i %s run %s"):format(h.bin, script))
  lu.assertStrContains(r.stderr, "--shard auto: no shard in the environment")
  -- a script's --shard goes through the same check: a usage error, status 2
  r = rag_report(self.dir, "--shard 5/4")
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "shard: expected i/N with 1 <= i <= N, got '5/4'")
end

-- Every row lands in exactly one shard, every variant of a query in the
-- same one, and the shard is FNV-1a-64(qid) mod N + 1.
function TestShard:test_rows_follow_the_qid_hash()
  local ds = ev.dataset.load(DATA)
  for _, n in ipairs { 1, 2, 3, 7 } do
    local seen = 0
    for i = 1, n do
      for _, r in ipairs(ev.shard.rows(ds, "qid", { index = i, count = n })) do
        seen = seen + 1
        lu.assertEquals(shard_of(ds.rows[r].qid, n), i, ds.rows[r].qid)
      end
    end
    lu.assertEquals(seen, ds.n)
  end
  -- the reference hash itself, on a value worked by hand elsewhere
  lu.assertEquals(("%x"):format(fnv1a("a")), "af63dc4c8601ec8c")
end

-- 1, 2 and 4 shards merged: every report byte-equal to the one-process
-- run's apart from time stamps, stdout too.
function TestShard:test_merge_equals_one_process()
  local one = rag_report(self.dir, "--out one")
  lu.assertEquals(one.status, 0, one.stderr)
  for _, n in ipairs { 1, 2, 4 } do
    local parts = ("parts%d"):format(n)
    for i = 1, n do
      local r = rag_report(self.dir, ("--out never --shard %d/%d --parts %s"):format(i, n, parts))
      lu.assertEquals(r.status, 0, r.stderr)
      lu.assertEquals(r.stdout, "")
      lu.assertStrContains(r.stderr, ("evalua: shard %d/%d: "):format(i, n))
    end
    lu.assertNil(h.read(self.dir .. "/never/rag_report.json")) -- a shard writes no report
    local m = merge(self.dir, ("%s/*.json --out merged%d"):format(parts, n))
    lu.assertEquals(m.status, 0, m.stderr)
    lu.assertEquals((m.stdout:gsub("%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ", "TIME")),
                    (one.stdout:gsub("%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ", "TIME")))
    for _, ext in ipairs { "json", "csv", "md", "html", "junit.xml" } do
      lu.assertEquals(untimed(("%s/merged%d/rag_report.%s"):format(self.dir, n, ext)),
                      untimed(("%s/one/rag_report.%s"):format(self.dir, ext)), n .. " shards: " .. ext)
    end
  end
  -- the part: versioned, with hashes, metrics and judge accounting
  local p = cjson.decode(h.read(self.dir .. "/parts2/rag_report.part-1-of-2.json"))
  lu.assertEquals({ p.format, p.version, p.shard.index, p.shard.count }, { "evalua-part", 1, 1, 2 })
  local sec = p.evaluations[1]
  lu.assertEquals(sec.data.hash, "967f5d7e361e1d908bcff1974ed2853be539ad9ff445b1628b98b72843054421")
  lu.assertEquals(sec.metrics[1], "recall@5")
  lu.assertEquals(#sec.scores["mrr"], sec.part.rows)
  lu.assertEquals(sec.judge.model, "offline")
end

-- A shard with no rows succeeds, and its merge is the one-process run.
function TestShard:test_empty_shards()
  h.write(self.dir .. "/one.jsonl", '{"qid": "only", "retrieved": ["d1"], "gold_doc_ids": ["d1"]}\n')
  h.write(self.dir .. "/s.lua", [[
local ev = require "evalua"
local opt = ev.cli.parse(arg, { { "out", "out", "reports" } })
local res = ev.evaluate(ev.dataset.load("one.jsonl"), { metrics = { "mrr" } })
ev.report.write(res, { dir = opt.out, name = "r", formats = { "json" } })
]])
  for i = 1, 4 do
    local r = h.run(("cd %s && %s run s.lua --shard %d/4"):format(self.dir, h.bin, i))
    lu.assertEquals(r.status, 0, r.stderr)
  end
  local m = merge(self.dir, "parts/*.json --out merged")
  lu.assertEquals(m.status, 0, m.stderr)
  local rep = cjson.decode(h.read(self.dir .. "/merged/r.json"))
  lu.assertEquals(rep.aggregates.all.all.all.mrr.mean, 1)
  lu.assertEquals(rep.aggregates.all.all.all.mrr.n, 1)
end

function TestShard:test_merge_refuses_what_does_not_belong_together()
  for i = 1, 2 do lu.assertEquals(rag_report(self.dir, ("--shard %d/2"):format(i)).status, 0) end
  local p1, p2 = "parts/rag_report.part-1-of-2.json", "parts/rag_report.part-2-of-2.json"
  local r = merge(self.dir, p1 .. " " .. p1 .. " " .. p2)
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, ("evalua merge: shard 1/2 is given twice: %s and %s"):format(p1, p1))
  r = merge(self.dir, p1)
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "evalua merge: no part for shard 2/2 (--allow-missing merges without them)")
  -- other data: the same rows with one answer changed
  h.sh(("sed '1s/\"answer\": \"/\"answer\": \"x/' %s > %s/other.jsonl"):format(DATA, self.dir))
  h.sh(("mkdir -p %s/o && cd %s/o && %s run %s/scripts/rag_report.lua --data ../other.jsonl --corpus %s --quiet --shard 2/2 >/dev/null 2>&1")
    :format(self.dir, self.dir, h.bin, SRC, CORPUS))
  r = merge(self.dir, p1 .. " o/" .. p2)
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, ("evalua merge: %s and o/%s differ in script arguments"):format(p1, p2))
  -- a part that is not one
  h.write(self.dir .. "/bogus.json", '{"hello": 1}\n')
  r = merge(self.dir, "bogus.json")
  lu.assertStrContains(r.stderr, "evalua merge: bogus.json: not an evalua part file")
  r = merge(self.dir, "")
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "evalua merge: no PART given")
end

-- The same data given under another path is the same data: the hash decides.
function TestShard:test_merge_refuses_other_data_under_the_same_arguments()
  h.sh(("cp %s %s/d.jsonl"):format(DATA, self.dir))
  local function shard(i) return h.run(("cd %s && %s run %s/scripts/rag_report.lua --data d.jsonl --corpus %s --quiet --shard %d/2")
    :format(self.dir, h.bin, SRC, CORPUS, i)) end
  lu.assertEquals(shard(1).status, 0)
  h.sh(("sed -i '1s/\"answer\": \"/\"answer\": \"x/' %s/d.jsonl"):format(self.dir))
  lu.assertEquals(shard(2).status, 0)
  local r = merge(self.dir, "parts/*.json")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "differ in data (sha256) (967f5d7e361e1d908bcff1974ed2853be539ad9ff445b1628b98b72843054421 against ")
end

-- --allow-missing: the missing shard's rows are unmeasured, with the reason,
-- and the report says which shards are missing.
function TestShard:test_allow_missing_reports_coverage()
  for i = 1, 2 do lu.assertEquals(rag_report(self.dir, ("--shard %d/2"):format(i)).status, 0) end
  local p1 = cjson.decode(h.read(self.dir .. "/parts/rag_report.part-1-of-2.json"))
  local r = merge(self.dir, "parts/rag_report.part-1-of-2.json --allow-missing --out half")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stderr, "evalua merge: without shard 2/2: their rows are unmeasured")
  local rep = cjson.decode(h.read(self.dir .. "/half/rag_report.json"))
  lu.assertEquals(rep.meta.shards, { count = 2, missing = { "2/2" }, rows_merged = p1.evaluations[1].part.rows })
  local measured = 0
  for _, system in ipairs(rep.systems) do measured = measured + rep.aggregates[system].all.all.mrr.measured end
  lu.assertEquals(measured, p1.evaluations[1].part.rows)
  lu.assertEquals(rep.aggregates.baseline.all.all.mrr.n, 60)
  local missing_item
  for _, it in ipairs(rep.items) do
    if it.unmeasured and it.unmeasured.mrr then missing_item = it break end
  end
  lu.assertEquals(missing_item.unmeasured.mrr, "its shard's part is missing (2/2)")
end

-- nightly: gates (exit status), history record and report as one process.
function TestShard:test_nightly_merge_keeps_gates_and_history()
  local function nightly(dir, args)
    return h.run(("cd %s && %s run scripts/nightly.lua --dir %s --quiet --variant baseline %s"):format(
      SRC, h.bin, dir, args or ""))
  end
  local one = nightly(self.dir .. "/a")
  lu.assertEquals(one.status, 1, one.stderr) -- the baseline variant fails the recall gate
  for i = 1, 3 do
    local r = nightly(self.dir .. "/b", ("--shard %d/3 --parts %s/parts"):format(i, self.dir))
    lu.assertEquals(r.status, 0, r.stderr)
  end
  lu.assertEquals(#ev.history.open(self.dir .. "/b/history"):records(), 0) -- shards append nothing
  local m = h.run(("cd %s && %s merge %s/parts/*.json"):format(SRC, h.bin, self.dir))
  lu.assertEquals(m.status, 1, m.stderr)
  local function record(dir)
    local rec = ev.history.open(dir .. "/history"):latest()
    rec.run_id, rec.time, rec.report = nil, nil, nil
    return ev.json.encode(rec)
  end
  lu.assertEquals(record(self.dir .. "/b"), record(self.dir .. "/a"))
  lu.assertEquals((m.stdout:gsub("%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ", "TIME")),
                  (one.stdout:gsub("%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ", "TIME")))
end

-- Two shards sharing one judge cache against the mock, one killed with
-- SIGKILL midway and rerun: the rerun sends only what is not cached, the
-- merge sends nothing, and a one-process run from the same cache sends
-- nothing either and reports the same.
function TestShard:test_shards_share_the_judge_cache()
  local mock = require("tests.mock.mock").start("--latency-ms 10")
  local sys = require "evalua._sys"
  local cache = self.dir .. "/cache"
  local env = ("OPENAI_BASE_URL=%s EVALUA_MODEL=judge-1 OPENAI_API_KEY=sk-test-shard"):format(mock.url)
  local function cmd(args)
    return ("cd %s && %s %s run %s/scripts/rag_report.lua --data %s --corpus %s --quiet --judge openai --cache %s --concurrency 16 %s")
      :format(self.dir, env, h.bin, SRC, DATA, CORPUS, cache, args)
  end
  local function cached() return tonumber(io.popen(("find %s -name '*.json' | wc -l"):format(cache)):read("l")) end
  lu.assertEquals(h.run(cmd("--shard 2/2")).status, 0)
  local second_shard = mock:stats().requests
  local p = io.popen(cmd("--shard 1/2") .. " >/dev/null 2>&1 & echo $!")
  local pid = p:read("l")
  p:close()
  local before_kill = cached()
  local deadline = sys.monotonic() + 60
  repeat sys.sleep(0.05) until cached() >= before_kill + 40 or sys.monotonic() > deadline
  h.sh("kill -9 " .. pid)
  -- A request the killed run wrote just before its end can reach the mock
  -- after the kill: count only once the mock's tally has settled.
  local sent, settle = mock:stats().requests, sys.monotonic() + 10
  repeat
    sys.sleep(0.3)
    local now = mock:stats().requests
    local settled = now == sent
    sent = now
  until settled or sys.monotonic() > settle
  local paid = cached()
  lu.assertNil(h.read(self.dir .. "/parts/rag_report.part-1-of-2.json"), "a killed shard writes no part")
  local r = h.run(cmd("--shard 1/2"))
  lu.assertEquals(r.status, 0, r.stderr)
  local total = cached()
  -- Only what was not on disk is asked again: each question the rerun asks
  -- makes one new file, and the answers the killed run had journaled but not
  -- yet written (at most the sent - paid in flight) come from its journal
  -- with no request. A retry on a loaded machine counts once.
  local seen, repeats, asked_again = {}, 0, {}
  for i, req in ipairs(mock:requests()) do
    if seen[req.body] then repeats = repeats + 1 end
    seen[req.body] = true
    if i > sent then asked_again[req.body] = true end
  end
  local distinct = 0
  for _ in pairs(asked_again) do distinct = distinct + 1 end
  local new_files = total - paid
  lu.assertTrue(distinct <= new_files and new_files <= distinct + (sent - paid),
    ("asked %d, new files %d, in flight at the kill %d"):format(distinct, new_files, sent - paid))
  lu.assertTrue(repeats <= sent - paid, ("repeats %d, in flight at the kill %d"):format(repeats, sent - paid))
  local asked = mock:stats().requests
  -- the merge runs the script again, so it has the shards' environment
  local m = h.run(("cd %s && %s %s merge parts/*.json --out merged"):format(self.dir, env, h.bin))
  lu.assertEquals(m.status, 0, m.stderr)
  local one = h.run(cmd("--out one"))
  lu.assertEquals(one.status, 0, one.stderr)
  lu.assertEquals(mock:stats().requests, asked) -- neither the merge nor the cached run asked again
  -- the merge adds up the parts' accounting (the killed run wrote none)
  local merged = cjson.decode(h.read(self.dir .. "/merged/rag_report.json"))
  lu.assertEquals(merged.meta.judge.requests, second_shard + asked - sent)
  -- the same scores; only the accounting differs (requests there, cache hits here)
  lu.assertEquals(untimed(self.dir .. "/merged/rag_report.csv"), untimed(self.dir .. "/one/rag_report.csv"))
  local one_json = cjson.decode(h.read(self.dir .. "/one/rag_report.json"))
  lu.assertEquals(merged.aggregates, one_json.aggregates)
  lu.assertEquals(merged.items, one_json.items)
  mock:stop()
end

-- Shards under --sandbox: the part says so, and its merge must be sandboxed
-- too, as the merge runs the script again.
function TestShard:test_sandboxed_shards_merge_only_sandboxed()
  local function sandboxed(args)
    return h.run(("cd %s && %s run --sandbox --read %s/scripts --out %s %s/scripts/rag_report.lua --data %s --corpus %s --quiet %s")
      :format(SRC, h.bin, SRC, self.dir, SRC, DATA, CORPUS, args))
  end
  for i = 1, 2 do
    local r = sandboxed(("--shard %d/2 --parts %s/parts"):format(i, self.dir))
    lu.assertEquals(r.status, 0, r.stderr)
  end
  local one = sandboxed("--out " .. self.dir .. "/one")
  lu.assertEquals(one.status, 0, one.stderr)
  local parts = self.dir .. "/parts/*.json"
  local r = h.run(("cd %s && %s merge %s --out %s/m"):format(SRC, h.bin, parts, self.dir))
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "rag_report.part-1-of-2.json comes from a --sandbox run: merge it under --sandbox too")
  r = h.run(("cd %s && %s merge --sandbox --read %s/scripts --out %s -- %s --out %s/m"):format(
    SRC, h.bin, SRC, self.dir, parts, self.dir))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(untimed(self.dir .. "/m/rag_report.json"), untimed(self.dir .. "/one/rag_report.json"))
end

-- Parts of a small run of two shards, written by a script of the test's
-- own; edit(name, fn) rewrites a part after fn changed it, keeping its rows
-- hash right unless fn broke it on purpose.
local function small_run(dir)
  local rows = {}
  for i = 1, 12 do rows[i] = ('{"qid": "q%d", "retrieved": ["d%d"], "gold_doc_ids": ["d1"]}'):format(i, i % 3) end
  h.write(dir .. "/d.jsonl", table.concat(rows, "\n") .. "\n")
  h.write(dir .. "/s.lua", [[
local ev = require "evalua"
local opt = ev.cli.parse(arg, { { "out", "out", "reports" } })
local res = ev.evaluate(ev.dataset.load("d.jsonl"), { metrics = { "mrr" } })
ev.report.write(res, { dir = opt.out, name = "r", formats = { "json" } })
]])
  for i = 1, 2 do
    local r = h.run(("cd %s && %s run s.lua --shard %d/2"):format(dir, h.bin, i))
    assert(r.status == 0, r.stderr)
  end
  local function edit(name, fn, keep_hash)
    local path = dir .. "/parts/" .. name
    local p = cjson.decode(h.read(path))
    fn(p)
    if not keep_hash then
      for _, sec in ipairs(p.evaluations) do
        if type(sec) == "table" and type(sec.rows) == "table" then
          local ints = {}
          for i, row in ipairs(sec.rows) do ints[i] = math.tointeger(row) or row end
          sec.part.hash = ev.sys.sha256(table.concat(ints, ","))
        end
      end
    end
    h.write(path, ev.json.encode(p))
  end
  return "parts/s.part-1-of-2.json", "parts/s.part-2-of-2.json", edit
end

-- Every part is checked alike, the first one too; overlapping rows,
-- impossible shard counts and indices, and fields of the wrong type are
-- refused naming the file and field, never with a Lua traceback, and a
-- shard count of 10^12 is refused as fast as one of 2.
function TestShard:test_merge_checks_every_part_by_field()
  local p1, p2, edit = small_run(self.dir)
  local pristine = { [p1] = h.read(self.dir .. "/" .. p1), [p2] = h.read(self.dir .. "/" .. p2) }
  local function reset()
    for name, text in pairs(pristine) do h.write(self.dir .. "/" .. name, text) end
  end
  local function refused(args, message)
    local r = merge(self.dir, args)
    reset()
    lu.assertEquals(r.status, 3, args .. ": " .. r.stderr)
    lu.assertEquals(r.stderr, message .. "\n")
  end
  lu.assertEquals(merge(self.dir, p1 .. " " .. p2 .. " --out ok").status, 0)
  -- a damaged first part: its rows no longer match their hash
  edit("s.part-1-of-2.json", function(p) p.evaluations[1].part.hash = ("0"):rep(64) end, true)
  refused(p1 .. " " .. p2, ("evalua merge: %s: its rows do not match their hash: damaged"):format(p1))
  -- a row of part 2 added to part 1
  local second = cjson.decode(pristine[p2]).evaluations[1].rows
  edit("s.part-1-of-2.json", function(p)
    local sec = p.evaluations[1]
    local rows = sec.rows
    rows[#rows + 1] = second[#second]
    table.sort(rows)
    sec.part.rows = #rows
    for i = 1, #rows do sec.scores.mrr[i] = 1 end
  end)
  refused(p1 .. " " .. p2, ("evalua merge: %s and %s overlap: both hold row %d of evaluation 1"):format(p1, p2, second[#second]))
  -- a row dropped from a part: with every shard there, the rows must all be covered
  edit("s.part-2-of-2.json", function(p)
    local sec = p.evaluations[1]
    table.remove(sec.rows)
    table.remove(sec.scores.mrr)
    sec.part.rows = #sec.rows
  end)
  refused(p1 .. " " .. p2, ("evalua merge: the parts hold 11 of the 12 rows of evaluation 1; every shard is there, "
    .. "so some part lost rows (%s ...)"):format(p1))
  -- impossible counts and indices
  for _, case in ipairs {
    { function(p) p.shard.count = 0 end, "field 'shard.count': 0 is not a number of shards (1 or more)" },
    { function(p) p.shard.count = 2.5 end, "field 'shard.count': expected an integer, got a number" },
    { function(p) p.shard.index = 3 end, "field 'shard.index': 3 is outside 1..2" },
    { function(p) p.shard = "1/2" end, "field 'shard': expected an object, got a string" },
    { function(p) p.evaluations[1].scores.mrr = "high" end, "field 'evaluations[1].scores.mrr': expected a list, got a string" },
    { function(p) p.evaluations[1].scores.mrr[2] = "x" end, "field 'evaluations[1].scores.mrr[2]': expected a finite number or null, got a string" },
    { function(p) table.remove(p.evaluations[1].scores.mrr) end, "field 'evaluations[1].scores.mrr': 4 scores for 5 rows" },
    { function(p) p.evaluations[1].rows[1] = 13 ; table.sort(p.evaluations[1].rows) end,
      "field 'evaluations[1].rows[5]': row 13 is outside the data set's 1..12" },
    { function(p) p.evaluations[1].reasons.mrr = { ["9"] = "why" } end, "field 'evaluations[1].reasons.mrr.9': not a position in the part's 5 rows" },
    { function(p) p.evaluations = { 1 } end, "field 'evaluations[1]': expected an object, got a number" },
  } do
    edit("s.part-1-of-2.json", case[1])
    refused(p1 .. " " .. p2, ("evalua merge: %s: %s"):format(p1, case[2]))
  end
  -- 10^12 shards: refused at once, the missing ones counted, not listed
  for _, name in ipairs { "s.part-1-of-2.json", "s.part-2-of-2.json" } do
    edit(name, function(p) p.shard.count = 1e12 end)
  end
  local r = merge(self.dir, p1 .. " " .. p2)
  lu.assertEquals(r.status, 3)
  lu.assertEquals(r.stderr, "evalua merge: no part for shards 3/1000000000000, 4/1000000000000, 5/1000000000000, "
    .. "6/1000000000000, 7/1000000000000, 8/1000000000000, 9/1000000000000, 10/1000000000000, 11/1000000000000, "
    .. "12/1000000000000 ... (999999999998 in all) (--allow-missing merges without them)\n")
  -- with --allow-missing the rows each part holds must be its shard's
  r = merge(self.dir, p1 .. " " .. p2 .. " --allow-missing")
  reset()
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, ("evalua merge: %s: field 'evaluations[1].rows': not the rows of shard 1/1000000000000\n"):format(p1))
  lu.assertNotStrContains(r.stderr, "traceback")
end

-- A merge's --out wins over the shards' --dir (nightly's older spelling of --out).
function TestShard:test_merge_out_wins_over_the_shards_dir()
  for i = 1, 2 do
    local r = h.run(("cd %s && %s run scripts/nightly.lua --dir %s/shards --quiet --shard %d/2 --parts %s/parts")
      :format(SRC, h.bin, self.dir, i, self.dir))
    lu.assertEquals(r.status, 0, r.stderr)
  end
  local m = h.run(("cd %s && %s merge %s/parts/*.json --out %s/merged"):format(SRC, h.bin, self.dir, self.dir))
  lu.assertEquals(m.status, 0, m.stderr)
  lu.assertEquals(#ev.history.open(self.dir .. "/merged/history"):records(), 1)
  lu.assertEquals(#ev.history.open(self.dir .. "/shards/history"):records(), 0)
  lu.assertStrContains(m.stderr, "nightly: reports in " .. self.dir .. "/merged/reports/")
end

os.exit(lu.LuaUnit.run(), true)
