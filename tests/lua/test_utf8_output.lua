-- Invalid UTF-8 from the data, a judge's answer or a label is never written
-- raw (issue 26, item 12): every report format, the history and its
-- dashboard hold U+FFFD for each invalid sequence, and each file written
-- with replacements says how many on stderr.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local ev = require "evalua"

local FFFD = "\u{FFFD}"

-- The Unicode Standard's own example of U+FFFD substitution of maximal
-- subparts (chapter 3, section 3.9, Table 3-8), then single cases; each
-- count agrees with Python's bytes.decode("utf-8", "replace").
local CASES = {
  { "a\xF1\x80\x80\xE1\x80\xC2b\x80c\x80\xBFd", "a" .. FFFD:rep(3) .. "b" .. FFFD .. "c" .. FFFD:rep(2) .. "d", 6 },
  { "\xE0\x80\x80", FFFD:rep(3), 3 },          -- overlong
  { "\xED\xA0\x80", FFFD:rep(3), 3 },          -- a surrogate
  { "\xF4\x90\x80\x80", FFFD:rep(4), 4 },      -- past U+10FFFF
  { "\xC0\xAF", FFFD:rep(2), 2 },              -- overlong '/'
  { "ok \xF0\x9F\x98", "ok " .. FFFD, 1 },     -- an emoji cut short
  { "\xFF", FFFD, 1 },
  { "é 中文 😀", "é 中文 😀", 0 },
}

function test_json_encode_and_utf8_replace_each_maximal_subpart()
  for _, c in ipairs(CASES) do
    local text, n = ev.json.encode({ c[1] }, { replaced = true })
    lu.assertEquals(text, '["' .. c[2] .. '"]', c[1])
    lu.assertEquals(n, c[3], c[1])
    lu.assertEquals({ ev.json.utf8(c[1]) }, { c[2], c[3] })
  end
  -- a key too; and without replaced = true one value, as before
  lu.assertEquals(select("#", ev.json.encode({ ["k\xFF"] = "v" })), 1)
  lu.assertEquals(ev.json.encode({ ["k\xFF"] = "v" }), '{"k' .. FFFD .. '":"v"}')
end

local SCRIPT = [[
local ev = require "evalua"
local rows = {
  { qid = "q1", query = "caf\xE9?", answer = "ok", query_class = "a" },
  { qid = "q2", query = "fine", answer = "bad \xFF\xFE", query_class = "b" },
}
local res = ev.evaluate(ev.dataset.from_rows(rows, "rows"), { slices = { "query_class" }, metrics = {
  { name = "judged", fn = function(r) return { score = 0.5, reason = "the judge said \xE2\x82" } end },
} })
ev.report.write(res, { dir = "out", name = "r", formats = { "json", "csv" }, items = "full" }) -- the rows too
local hist = ev.history.open("h", { jsonl = true })
hist:append(res, { label = "v\xFF1", git_commit = false })
]]

-- The invalid bytes: a query (1), an answer (2: FF and FE), a reason (1 per
-- row) and a label (1).
function test_reports_history_and_dashboard_hold_no_invalid_utf8()
  local dir = h.tmpdir()
  h.write(dir .. "/s.lua", SCRIPT)
  local r = h.run(("cd %s && %s run s.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  local files = { "out/r.json", "out/r.csv", "h/history.jsonl", "h/index.html", "h/runs" }
  for _, f in ipairs(files) do
    local text = f == "h/runs" and h.read(dir .. "/h/runs/" .. io.popen("ls " .. dir .. "/h/runs"):read("l"))
      or h.read(dir .. "/" .. f)
    lu.assertNotNil(utf8.len(text), f .. " is valid UTF-8")
  end
  local doc = ev.json.decode(h.read(dir .. "/out/r.json"))
  local q2
  for _, it in ipairs(doc.items) do if it.id == "q2" then q2 = it end end
  lu.assertEquals(q2.row.answer, "bad " .. FFFD .. FFFD)
  lu.assertEquals(q2.reasons.judged, "the judge said " .. FFFD)
  lu.assertStrContains(h.read(dir .. "/out/r.csv"), "q2,all,b,0.5,the judge said " .. FFFD .. ",fine,bad "
    .. FFFD .. FFFD .. "\r\n")
  lu.assertEquals(ev.json.decode(h.read(dir .. "/h/history.jsonl")).label, "v" .. FFFD .. "1")
  -- each file says how many it replaced
  local said = {}
  for path, n in r.stderr:gmatch("evalua: warning: ([^:]+): (%d+) invalid UTF%-8 sequences? %(from the data, a judge's "
    .. "answer or a label%) written as U%+FFFD\n") do
    said[path] = tonumber(n)
  end
  lu.assertEquals(said["out/r.csv"], 5) -- one line per item: query 1, answer 2, a reason each
  lu.assertEquals(said["h/history.jsonl"], 1) -- the label
  lu.assertEquals(said["h/history.db"], 3) -- the label, and the reason of each item
  local db = require("evalua._sqlite").open(dir .. "/h/history.db", { readonly = true })
  for _, row in ipairs(db:rows("SELECT label AS text FROM runs UNION ALL SELECT record FROM runs "
    .. "UNION ALL SELECT reason FROM scores UNION ALL SELECT slices FROM items")) do
    lu.assertNotNil(utf8.len(row.text), "the store holds valid UTF-8: " .. row.text)
  end
  lu.assertEquals(db:rows("SELECT reason FROM scores WHERE item = 'q2'")[1].reason, "the judge said " .. FFFD)
  db:close()
  lu.assertNil(said["h/index.html"]) -- the record it draws was written whole
  -- the JSON report writes some texts more than once (a reason in the item
  -- and in the lowest items): its count is the U+FFFD it wrote
  local _, written = h.read(dir .. "/out/r.json"):gsub(FFFD, "")
  lu.assertTrue(written > 5)
  lu.assertEquals(said["out/r.json"], written)
  h.sh("rm -rf " .. dir)
end

-- A history written by hand or by an older evalua: the import into the
-- store replaces invalid UTF-8 and says how many; the dashboard shows U+FFFD.
function test_dashboard_of_an_old_record()
  local dir = h.tmpdir()
  h.write(dir .. "/h/history.jsonl", '{"run_id":"r1","time":"t","label":"v\xFF","systems":[],"metrics":[],"aggregates":{}}\n')
  h.write(dir .. "/d.lua", 'require("evalua").history.open("h"):dashboard()')
  local r = h.run(("cd %s && %s run d.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stderr, "evalua: warning: h/history.db: 1 invalid UTF-8 sequence (from the data, a judge's answer or "
    .. "a label) written as U+FFFD\n")
  lu.assertStrContains(h.read(dir .. "/h/index.html"), "<td>v" .. FFFD .. "</td>")
  h.sh("rm -rf " .. dir)
end

-- The Markdown, HTML and JUnit reports too: the lowest item's query, answer
-- and reason hold invalid bytes; each file is valid UTF-8 and says how many
-- U+FFFD it wrote.
function test_markdown_html_and_junit_hold_no_invalid_utf8()
  local dir = h.tmpdir()
  h.write(dir .. "/s.lua", [=[
local ev = require "evalua"
local bad = "caf\xe9 \xff"
local rows = { { qid = "q1", query = bad, answer = bad, gold_answers = { "x" } },
               { qid = "q2", query = "ok", answer = "x", gold_answers = { "x" } } }
local res = ev.evaluate(ev.dataset.from_rows(rows, "mem"),
  { metrics = { "token_f1", { name = "m", fn = function() return { score = 0, reason = bad } end } } })
ev.report.write(res, { dir = "out", name = "r", formats = { "md", "html", "junit" } })]=])
  local r = h.run(("cd %s && %s run s.lua"):format(dir, h.bin))
  lu.assertEquals(r.status, 0, r.stderr)
  for _, f in ipairs { "md", "html", "junit.xml" } do
    local text = h.read(dir .. "/out/r." .. f)
    lu.assertNotNil(utf8.len(text), f .. " is valid UTF-8")
    local _, n = text:gsub(FFFD, "")
    local said = r.stderr:match("out/r%." .. f:gsub("%.", "%%.") .. ": (%d+) invalid UTF%-8")
    if f == "junit.xml" then lu.assertNil(said, f) else
      lu.assertTrue(n > 0, f)
      lu.assertEquals(tonumber(said), n, f)
    end
  end
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
