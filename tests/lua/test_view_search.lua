-- The viewer's text search and filters (lua/evalua/view/items.lua over the
-- run's table and full-text index, evalua.view.index) and its cache: what a word finds in
-- the id, query, answer and contexts of three rows, and that a start finds
-- the index built by the one before unless the run's report changed; the
-- index is built at the first search of a word, not at the opening. Each
-- start is a child evalua with its own cache folder (XDG_CACHE_HOME).
-- Also what `evalua view` says of shards' parts, which it opens once merged.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

local ROWS = {
  { qid = "a1", query = "How do I rotate the encryption key?", answer = "Use the rotation API.",
    contexts = { "Keys rotate every 90 days.", "The audit log records each rotation." } },
  { qid = "a2", query = "What is the upload limit?", answer = "5 TiB per object.",
    contexts = { "Multipart uploads abort after 7 days.", "分片上传中止的阈值" } },
  { qid = "a3", query = "Where are replicas kept?", answer = "In a second region.",
    contexts = { "Replication is asynchronous; retention follows the bucket's policy.", "Owner: Zoë Müller." } },
}

-- The viewer opened on the history folder arg[1] in a child evalua: src and the run labelled "nightly".
local OPEN = [[
local source, runs = require "evalua.view.source", require "evalua.view.runs"
local index, items = require "evalua.view.index", require "evalua.view.items"
local src = source.history(arg[1])
local r = runs.find(src, "nightly")
]]

-- One start of the viewer on the history: "built" or "cached" (and "+index" when the full-text index is
-- there already), then each query's item ids ("(indexed)": this search built the index).
local START = OPEN .. [[
local idx = index.build(src, r)
io.write(idx.built > 0 and "built" or "cached", idx.fts_ready and " +index" or "", "\n")
for i = 2, #arg do
  local ids = {}
  local page = items.page(src, idx, { seq = r.seq, q = arg[i], page = 1, per = 50 })
  for _, row in ipairs(page.rows) do ids[#ids + 1] = row.item end
  table.sort(ids)
  io.write(arg[i], " = ", table.concat(ids, ","), page.indexed and " (indexed)" or "", "\n")
end
]]

local dir

local function start(...)
  local args = { dir .. "/h" }
  for _, q in ipairs({ ... }) do args[#args + 1] = "'" .. q:gsub("'", "'\\''") .. "'" end
  local r = h.run_script(START, "", table.concat(args, " "), "XDG_CACHE_HOME=" .. dir .. "/cache")
  lu.assertEquals(r.status, 0, r.stderr)
  local lines = {}
  for line in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

TestViewSearch = {}

function TestViewSearch:setUp()
  dir = h.tmpdir()
  local res = ev.evaluate(ROWS, { metrics = { { name = "m", fn = function() return 1 end } }, ci = false })
  ev.report.write(res, { dir = dir .. "/h", name = "run", formats = { "json" }, items = "full" })
  local hist = ev.history.open(dir .. "/h")
  hist:append(res, { label = "nightly", report = dir .. "/h/run.json", dashboard = false, git_commit = false })
  hist:close()
end

function TestViewSearch:tearDown() h.sh("rm -rf " .. dir) end

function TestViewSearch:test_a_word_is_the_start_of_a_word_of_the_id_query_answer_or_contexts()
  lu.assertEquals(start("audit", "AUDIT", "rotat", "tation", "upload 5", "key rotation", "key region",
    "bucket's", "a3", "replica", "9", "0", "Ti", "a"), {
    "built",
    "audit = a1 (indexed)", -- in a context only
    "AUDIT = a1",          -- case folded
    "rotat = a1",          -- the start of "rotate" and "rotation"
    "tation = ",           -- the middle of a word is not searched
    "upload 5 = a2 (indexed)", -- "uploads" in a context, "5" in the answer (by the scan, built now): every
                               -- word, anywhere in the row
    "key rotation = a1",
    "key region = ",       -- a1 has "key", a3 "region": no row has both
    "bucket's = a3",       -- a phrase: "bucket" then a word starting with "s"
    "a3 = a3",             -- the id
    "replica = a3",        -- "replicas" (query), "Replication" (context)
    -- one or two letters or digits: the start of a word as well (by the scan)
    "9 = a1",              -- "90 days"
    "0 = ",                -- in "90", not at a word's start
    "Ti = a2",             -- "TiB"; "rotation" holds "ti" inside a word
    "a = a1,a2,a3",        -- "a1" (the id), "abort" and "asynchronous", "a second region"
  })
end

function TestViewSearch:test_a_word_beyond_ascii_or_without_letters_is_a_substring()
  -- Chinese has no spaces: "分片上传中止的阈值" is one word to the index, so the search scans for it
  lu.assertEquals(start("上传", "上传 upload", "上传 rotate", "müller", "ZOË", "oë", "zoe", "MULLER", "?", "传中"),
    { "built", "上传 = a2 (indexed)", "上传 upload = a2 (indexed)", "上传 rotate = ",
      "müller = a3", -- "Müller": the scan folds case and accents, as the index does
      "ZOË = a3",
      "oë = a3",     -- a substring: the middle of "Zoë"
      "zoe = a3",    -- the index: "Zoë" folded
      "MULLER = a3",
      "? = a1,a2,a3", -- no letter nor digit: a substring as well
      "传中 = a2" })  -- across the two words "上传" and "中止"
end

function TestViewSearch:test_the_next_start_reads_the_cache_and_a_changed_report_is_indexed_again()
  lu.assertEquals(start("上传"), { "built", "上传 = a2 (indexed)" }) -- the scan's texts, not the index
  lu.assertEquals(start("audit", "上传"), { "cached", "audit = a1 (indexed)", "上传 = a2" }) -- the scan's file read
  lu.assertEquals(start("audit"), { "cached +index", "audit = a1" })
  local text = h.read(dir .. "/h/run.json")
  local changed, n = text:gsub("The audit log", "The audio log") -- the same size, rewritten within the second
  lu.assertEquals(n, 1)
  h.write(dir .. "/h/run.json", changed)
  lu.assertEquals(start("audit", "audio"), { "built", "audit =  (indexed)", "audio = a1" })
  lu.assertEquals(start("audio"), { "cached +index", "audio = a1" })
  lu.assertEquals(start("中止", "audio"), { "cached +index", "中止 = a2 (indexed)", "audio = a1" }) -- its texts anew
  lu.assertEquals(start("审计"), { "cached +index", "审计 = " })
  -- A damaged file of the scan is not read: the texts are read from the rows again.
  local p = io.popen("ls " .. dir .. "/cache/evalua/view/*.scan")
  local scan = p:read("l")
  p:close()
  lu.assertStrContains(scan, ".scan")
  h.write(scan, h.read(scan):sub(1, 200))
  lu.assertEquals(start("中止"), { "cached +index", "中止 = a2 (indexed)" })
  lu.assertEquals(start("中止"), { "cached +index", "中止 = a2" })
end

-- The texts are read from the report at the places its table recorded: a report rewritten while the
-- viewer runs has its table built again before a row is read (never the old places in the new file).
function TestViewSearch:test_a_report_rewritten_while_serving_is_read_anew()
  local r = h.run_script(OPEN .. [[
local function show(q)
  local page = items.page(src, index.build(src, r), { seq = r.seq, q = q, page = 1, per = 50 })
  local out = {}
  for _, row in ipairs(page.rows) do out[#out + 1] = row.item .. ": " .. row.query end
  return table.concat(out, "; ")
end
io.write(show("encryption"), "\n")
local f = io.open(arg[2], "rb")
local text = f:read("a")
f:close()
f = io.open(arg[2], "wb") -- longer by a word: every later row moves
f:write((text:gsub("How do I rotate the encryption key%?", "How do I rotate the new encryption key?")))
f:close()
io.write(show("encryption"), "\n", show("replicas"), "\n")
]], "", dir .. "/h " .. dir .. "/h/run.json", "XDG_CACHE_HOME=" .. dir .. "/cache")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "a1: How do I rotate the encryption key?\n"
    .. "a1: How do I rotate the new encryption key?\na3: Where are replicas kept?\n")
end

-- The filters over the run's table: "systems disagree" keeps a row whose score and another system's on
-- the same item fall on either side of 0.5, "unmeasured" a row without a score, "below" a score under
-- the value; each against the ids worked out by hand from m's score per item and system below (nil:
-- unmeasured; a pass is >= 0.5).
local SCORED = {
  { qid = "q1", variant = "A", s = 0.7 }, { qid = "q1", variant = "B", s = 0.2 },  -- A passes, B fails
  { qid = "q2", variant = "A", s = 0.6 }, { qid = "q2", variant = "B", s = 0.9 },  -- both pass...
  { qid = "q2", variant = "C", s = 0.4 },                                          -- ...and C fails
  { qid = "q3", variant = "A", s = 0.1 }, { qid = "q3", variant = "B" },          -- B unmeasured
  { qid = "q4", variant = "A", s = 0.3 },                                          -- A alone
  { qid = "q5", variant = "B", s = 0.5 }, { qid = "q5", variant = "C", s = 0.5 },  -- both pass (0.5)
}

local SHOW = OPEN .. [[
local idx = index.build(src, r)
for _, f in ipairs { { disagree = true }, { disagree = true, metric = "m" }, { unmeasured = true },
                     { metric = "m", below = 0.35 } } do
  f.seq, f.page, f.per = r.seq, 1, 50
  local out = {}
  for _, row in ipairs(items.page(src, idx, f).rows) do out[#out + 1] = row.system .. ":" .. row.item end
  io.write(table.concat(out, " "), "\n")
end
]]

function TestViewSearch:test_disagree_unmeasured_and_below_keep_the_rows_worked_out_by_hand()
  local res = ev.evaluate(SCORED, { metrics = { { name = "m", fn = function(r) return r.s end } }, system = "variant",
                                  ci = false })
  ev.report.write(res, { dir = dir .. "/f", name = "run", formats = { "json" }, items = "full" })
  local hist = ev.history.open(dir .. "/f")
  hist:append(res, { label = "nightly", report = dir .. "/f/run.json", dashboard = false, git_commit = false })
  hist:close()
  local r = h.run_script(SHOW, "", dir .. "/f", "XDG_CACHE_HOME=" .. dir .. "/cache")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, table.concat({
    "A:q1 A:q2 B:q1 B:q2 C:q2", -- by system, then id
    "A:q1 A:q2 B:q1 B:q2 C:q2",
    "B:q3",
    "A:q3 A:q4 B:q1",
  }, "\n") .. "\n")
end

-- Shards' parts are not a report: the viewer says to merge them, before writing anything.
function TestViewSearch:test_parts_are_refused_with_the_merge_to_run()
  local src = os.getenv("EVALUA_SRC") or os.getenv("PWD")
  local r = h.run(("cd %s && %s run %s/scripts/rag_report.lua --data %s/scripts/data/rag_eval.jsonl --corpus "
    .. "%s/scripts/data/corpus.jsonl --quiet --shard 1/2 --parts parts"):format(dir, h.bin, src, src, src))
  lu.assertEquals(r.status, 0, r.stderr)
  local part = dir .. "/parts/rag_report.part-1-of-2.json"
  lu.assertNotNil(h.read(part))
  local hint = "merge the parts first (evalua merge PART... --out DIR, docs/scale.md), then view the JSON report "
    .. "or the history that run writes"
  r = h.run(("%s view %s --history %s/vh"):format(h.bin, part, dir))
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, part .. ": a shard's part: " .. hint)
  lu.assertNil(require("evalua._sys").stat(dir .. "/vh"), "the refused part left a history folder behind")
  r = h.run(("%s view %s"):format(h.bin, part)) -- the default history folder: beside the part
  lu.assertEquals(r.status, 3)
  lu.assertNil(require("evalua._sys").stat(dir .. "/parts/view-history"), "the refused part left a folder behind")
  r = h.run(("%s view %s %s"):format(h.bin, part, part:gsub("1%-of", "2-of")))
  lu.assertEquals(r.status, 2)
  lu.assertStrContains(r.stderr, "view takes one HISTORY_DIR or REPORT.json, got 2; if they are shards' parts: " .. hint)
  -- JSON that is no report, and a file that is not JSON at all: refused alike, naming the file, leaving nothing
  for name, text in pairs { ["other.json"] = '{"rows": []}', ["broken.json"] = '{"items": [' } do
    h.write(dir .. "/" .. name, text)
    r = h.run(("%s view %s/%s --history %s/vh"):format(h.bin, dir, name, dir))
    lu.assertEquals(r.status, 3, name)
    lu.assertStrContains(r.stderr, dir .. "/" .. name .. ": not a JSON report of evalua (expected an object with 'items')")
    lu.assertNil(require("evalua._sys").stat(dir .. "/vh"), name .. " left a history folder behind")
  end
end

-- A report's run before the store's import (pending): ids 7, "7" and "7.0" in one system are three items,
-- as the store keeps them, each with its own unmeasured reason in the run page's causes (7 and "7.0" were
-- one key there: a float 7 printed as "7.0").
function TestViewSearch:test_ids_of_a_pending_run_that_print_alike_are_distinct_items()
  local rows = { { qid = 7, query = "x" }, { qid = "7", query = "y" }, { qid = "7.0", query = "z" } }
  local res = ev.evaluate(rows, { metrics = { { name = "m", fn = function(row)
    return { unmeasured = true, reason = "why " .. row.query } end } }, ci = false })
  ev.report.write(res, { dir = dir .. "/p", name = "run", formats = { "json" }, items = "full" })
  local r = h.run_script([[
local source, runs = require "evalua.view.source", require "evalua.view.runs"
local src = source.report(arg[1], arg[2])
local function causes()
  local r = runs.find(src)
  local out = {}
  for _, u in ipairs(runs.summary(src, r).unmeasured) do out[#out + 1] = ("%s %d"):format(u.reason, u.n) end
  table.sort(out)
  return (r.pending and "pending: " or "stored: ") .. table.concat(out, ", ")
end
print(causes())
source.finish(src)
for _, x in ipairs(src.db:rows("SELECT typeof(item) AS t, reason FROM scores ORDER BY reason")) do
  print(x.t, x.reason)
end
]], "", dir .. "/p/run.json " .. dir .. "/vh", "XDG_CACHE_HOME=" .. dir .. "/cache")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "pending: why x 1, why y 1, why z 1\nreal\twhy x\ntext\twhy y\ntext\twhy z\n")
end

os.exit(lu.LuaUnit.run())
