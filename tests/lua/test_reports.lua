-- Report formats against golden files (tests/golden/report.*), on a small
-- run whose data holds every character a format must escape. To accept a
-- deliberate change: EVALUA_UPDATE_GOLDEN=1 build/evalua run tests/lua/test_reports.lua
-- and review the diff.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

local ROWS = {
  { qid = "q1", variant = "base", query_class = "factoid", query = "What | is <b>this</b>?",
    answer = '<script>alert("x")</script>, with "quotes"', s = 0.9, j = 1 },
  { qid = "q2", variant = "base", query_class = "factoid", query = "分片上传的中止阈值是多少", answer = "三个失败分片", s = 0.4, j = false },
  { qid = "q3", variant = "base", query_class = "how-to", query = "multi\nline & more", answer = "a, b\nc", s = 0.1, j = 0 },
  { qid = "q1", variant = "new", query_class = "factoid", query = "What | is <b>this</b>?", answer = "fine", s = 1.0, j = 1 },
  { qid = "q2", variant = "new", query_class = "factoid", query = "分片上传的中止阈值是多少", answer = "三个", s = 0.8, j = 1 },
  { qid = "q3", variant = "new", query_class = "how-to", query = "multi\nline & more", answer = "steps", s = 0.5, j = 0 },
}

local metrics = {
  { name = "score", description = "a plain score", fn = function(row) return row.s end },
  { name = "judged", judged = true, fn = function(row)
      if row.j == false then return { unmeasured = true, reason = "invalid JSON from the judge" } end
      return { score = row.j, reason = "verdict <" .. row.j .. "> for " .. row.qid }
    end },
}

local function fixture()
  local res = ev.evaluate(ev.dataset.from_rows(ROWS, "fixture.jsonl"), {
    metrics = metrics, system = "variant", slices = { "query_class" }, bottom = 2,
    ci = { resamples = 500, seed = 11 },
    meta = { time = "2026-01-02T03:04:05Z", evalua = "0.0.0-test", label = "v2 & <new>" },
  })
  -- a baseline with known per-item scores, without a history folder
  local before = { base = { q1 = { scores = { score = 0.5, judged = 1 } }, q2 = { scores = { score = 0.5 } },
                            q3 = { scores = { score = 0.5, judged = 1 } } },
                   new = { q1 = { scores = { score = 0.5 } }, q2 = { scores = { score = 0.5 } },
                           q3 = { scores = { score = 0.5 } } } }
  local baseline = { run_id = "20260101T000000Z-abcdef12", label = "v1", time = "2026-01-01T00:00:00Z",
                     aggregates = { base = { all = { all = { score = { mean = 0.5 }, judged = { mean = 1 } } } },
                                    new = { all = { all = { score = { mean = 0.5 } } } } } }
  ev.compare(res, { items = function() return before end }, baseline, { resamples = 500, seed = 2 })
  ev.gate.check(res, { tiers = { by = "query_class", P0 = { "factoid" } },
                       thresholds = { score = { P0 = 0.6, all = 0.3 }, judged = { all = 0.5 } },
                       min_coverage = 0.9, max_regressions = 0 })
  return res
end

local res = fixture()

local function golden(name, text)
  local path = "tests/golden/" .. name
  if os.getenv("EVALUA_UPDATE_GOLDEN") == "1" then h.write(path, text) end
  local want = h.read(path)
  lu.assertNotNil(want, "missing golden file " .. path)
  if text ~= want then
    h.write("/tmp/evalua-golden-" .. name, text)
    lu.fail(("%s differs from %s (got: /tmp/evalua-golden-%s)"):format(name, path, name))
  end
end

function test_terminal() golden("report.txt", ev.report.render(res, "terminal", { color = false })) end
function test_markdown() golden("report.md", ev.report.render(res, "md", { title = "Fixture | report" })) end
function test_json() golden("report.json", ev.report.render(res, "json", { items = "compact" })) end
-- The full form is the compact one with each item's row: the same document
-- but for items_form and the items' layout.
function test_json_full_items() golden("report.full.json", ev.report.render(res, "json", { items = "full" })) end
-- The default form follows where the rows live: these rows were made in
-- memory, so no file holds them and the items keep them; rows read from a
-- file are compact.
function test_json_default_form_follows_where_the_rows_live()
  local cjson = require "cjson"
  lu.assertEquals(cjson.decode(ev.report.render(res, "json")).items_form, "full")
  local loaded = ev.evaluate(ev.dataset.load("scripts/data/rag_eval.jsonl"), { metrics = { "token_f1" } })
  local doc = cjson.decode(ev.report.render(loaded, "json"))
  lu.assertEquals(doc.items_form, "compact")
  lu.assertNil(doc.items[1].row)
end

function test_json_items_forms_hold_the_same_items()
  local cjson = require "cjson"
  local compact = cjson.decode(ev.report.render(res, "json", { items = "compact" }))
  local full = cjson.decode(ev.report.render(res, "json", { items = "full" }))
  lu.assertEquals({ compact.items_form, full.items_form }, { "compact", "full" })
  for i, it in ipairs(full.items) do
    lu.assertEquals({ it.row.qid, it.row.variant, it.row.s }, { it.id, it.system, it.scores.score })
    lu.assertEquals(compact.items[i].row, nil)
    it.row = nil
  end
  compact.items_form, full.items_form = nil, nil
  lu.assertEquals(compact, full)
  lu.assertErrorMsgContains('ev.report.render: items must be "compact" or "full" (got "rows")',
    ev.report.render, res, "json", { items = "rows" })
  lu.assertErrorMsgContains("ev.report.write: items must be \"compact\" or \"full\" (got boolean)",
    ev.report.write, res, { dir = "/nonexistent/never", formats = { "md", "json" }, items = true })
  lu.assertErrorMsgContains("unknown option 'items'", ev.report.write, res, { dir = "/nonexistent/never",
    formats = { "md" }, items = "full" })
end
function test_csv() golden("report.csv", ev.report.render(res, "csv")) end
function test_html() golden("report.html", ev.report.render(res, "html", { title = "Fixture <report>" })) end
function test_junit() golden("report.junit.xml", ev.report.render(res, "junit")) end

function test_terminal_colour_only_when_asked()
  local plain = ev.report.render(res, "terminal", { color = false })
  lu.assertNotStrContains(plain, "\27[")
  lu.assertStrContains(ev.report.render(res, "terminal", { color = true }), "\27[31m")
end

function test_json_round_trips_scores_and_keeps_unmeasured_out()
  local doc = require("cjson").decode(ev.report.render(res, "json"))
  lu.assertEquals(#doc.items, 6)
  lu.assertEquals(doc.items[2].unmeasured.judged, "invalid JSON from the judge")
  lu.assertNil(doc.items[2].scores.judged)
  lu.assertEquals(doc.aggregates.base.all.all.judged.measured, 2)
  lu.assertEquals(doc.aggregates.base.all.all.judged.n, 3)
  lu.assertEquals(doc.meta.label, "v2 & <new>")
end

function test_write_and_a_user_defined_format()
  local dir = h.tmpdir()
  ev.report.register("oneline", function(r) return ("%d items\n"):format(#r.items) end, "txt")
  local paths = ev.report.write(res, { dir = dir, name = "r", formats = { "md", "oneline" } })
  lu.assertEquals(paths, { dir .. "/r.md", dir .. "/r.txt" })
  lu.assertEquals(h.read(dir .. "/r.txt"), "6 items\n")
  lu.assertErrorMsgContains("unknown report format 'pdf'", ev.report.write, res, { dir = dir, formats = { "pdf" } })
  h.sh("rm -rf " .. dir)
end

-- A misspelt option is an error naming it, as everywhere in the library
-- (format for formats silently wrote Markdown and JSON).
function test_misspelt_report_options_are_errors()
  local dir = h.tmpdir()
  lu.assertErrorMsgContains("ev.report.write: unknown option 'format' (did you mean 'formats'?)",
    ev.report.write, res, { dir = dir, format = { "html" } })
  lu.assertErrorMsgContains("ev.report.write: formats must be a list of names, such as {\"md\"} (got string)",
    ev.report.write, res, { dir = dir, formats = "html" })
  lu.assertErrorMsgContains("ev.report.render: unknown option 'colour' (did you mean 'color'?)",
    ev.report.render, res, "terminal", { colour = true })
  lu.assertErrorMsgContains("ev.report.print: unknown option 'titel'", ev.report.print, res, { titel = "x" })
  lu.assertErrorMsgContains("unknown report format 'pdf' (formats: csv, html, json, junit, markdown, md",
    ev.report.render, res, "pdf")
  lu.assertNil(h.read(dir .. "/report.md")) -- nothing was written
  -- a format of one's own declares the options it reads
  ev.report.register("stamp", function(_, o) return o.stamp .. "\n" end, "stamp", { options = { "stamp" } })
  lu.assertEquals(ev.report.render(res, "stamp", { stamp = "ok" }), "ok\n")
  lu.assertErrorMsgContains("unknown option 'stamp'", ev.report.render, res, "md", { stamp = "ok" })
  h.sh("rm -rf " .. dir)
end

-- A format of one's own that writes .md is refused beside the built-in
-- Markdown (one of the two files was silently lost); alone it is written.
function test_two_formats_of_one_file_name_are_refused()
  local dir = h.tmpdir()
  ev.report.register("mymd", function() return "mine\n" end, "md")
  lu.assertErrorMsgContains("ev.report.write: formats 'md' and 'mymd' would both write r.md; register one with"
    .. " another extension", ev.report.write, res, { dir = dir, name = "r", formats = { "md", "mymd" } })
  lu.assertNil(h.read(dir .. "/r.md"))
  lu.assertEquals(ev.report.write(res, { dir = dir, name = "r", formats = { "mymd", "mymd" } }), { dir .. "/r.md" })
  lu.assertEquals(h.read(dir .. "/r.md"), "mine\n")
  h.sh("rm -rf " .. dir)
end

-- opts.width fits the terminal report: metric columns that do not fit move
-- to a further table that repeats system, slice and n; text wraps at spaces.
function test_terminal_fits_a_width()
  local wide = ev.report.render(res, "terminal", { color = false })
  local narrow = ev.report.render(res, "terminal", { color = false, width = 45 })
  local longest = 0
  for l in narrow:gmatch("[^\n]*") do longest = math.max(longest, utf8.len(l)) end
  lu.assertTrue(longest <= 45, "a line of " .. longest)
  lu.assertStrContains(narrow, "\nsystem  slice                n   score\n")
  lu.assertStrContains(narrow, "\nsystem  slice                n       judged\n")
  lu.assertStrContains(narrow, "\nbase    query_class=how-to   1  0.100!\n")
  lu.assertStrContains(narrow, "\njudged: 1 of 6 items unmeasured (invalid JSON\n  from the judge)\n")
  lu.assertStrContains(wide, "\nsystem  slice                n   score       judged\n")
  lu.assertErrorMsgContains("width must be a positive whole number", ev.report.render, res, "terminal", { width = 0 })
end

-- A count of unmeasured items is not shown as if one cause covered all of
-- them: the most common reason comes with its own count.
function test_terminal_says_when_unmeasured_items_have_several_reasons()
  local rows = {}
  for i = 1, 5 do rows[i] = { qid = "q" .. i, answer = "a" } end
  local two = { name = "two", fn = function(row)
    local i = tonumber(row.qid:sub(2))
    if i <= 3 then return { unmeasured = true, reason = "no gold" } end
    if i == 4 then return { unmeasured = true, reason = "empty answer" } end
    return 1
  end }
  local one = { name = "one", fn = function() return { unmeasured = true, reason = "no gold" } end }
  local out = ev.report.render(ev.evaluate(ev.dataset.from_rows(rows, "two.jsonl"), { metrics = { two, one } }),
                               "terminal", { color = false })
  lu.assertStrContains(out, "\ntwo: 4 of 5 items unmeasured (3: no gold; 1 for 1 other reason)\n")
  lu.assertStrContains(out, "\none: 5 of 5 items unmeasured (no gold)\n")
end

-- A boolean id is written true/false in the CSV report whether the rows
-- are Lua tables or read from a file, as the JSON report writes it (the
-- Lua rows' cell was empty).
function test_csv_writes_boolean_ids_from_lua_rows_and_from_files()
  local rows = { { qid = "q1", ok = true, answer = "yes" }, { qid = "q2", ok = false, answer = "no" } }
  local spec = { id = "ok", metrics = { { name = "m", fn = function() return 1 end } } }
  local want = "id,system,m,query,answer\r\ntrue,all,1,,yes\r\nfalse,all,1,,no\r\n"
  local from_rows = ev.evaluate(ev.dataset.from_rows(rows, "bool.jsonl"), spec)
  lu.assertEquals(ev.report.render(from_rows, "csv"), want)
  lu.assertStrContains(ev.report.render(from_rows, "json"), '"id": false,')
  local dir = h.tmpdir()
  h.write(dir .. "/bool.jsonl", '{"qid": "q1", "ok": true, "answer": "yes"}\n{"qid": "q2", "ok": false, "answer": "no"}\n')
  local from_file = ev.evaluate(ev.dataset.load(dir .. "/bool.jsonl"), spec)
  h.sh("rm -rf " .. dir)
  lu.assertEquals(ev.report.render(from_file, "csv"), want)
end

-- Rows given as Lua tables with invalid UTF-8 in the id, answer, another
-- field and a judge's details: each report says how many sequences it
-- wrote as U+FFFD, and that is how many its text holds (the data has none).
function test_each_report_counts_the_invalid_utf8_it_replaced()
  local rows = { { qid = "q\xff1", answer = "a\xfe\xfdb", note = "n\xc3" }, { qid = "q2", answer = "ok" } }
  local judged = { name = "m", fn = function(row) return { score = 1, reason = "r", detail = row.qid .. "\xe2\x82" } end }
  local res = ev.evaluate(ev.dataset.from_rows(rows, "utf8.jsonl"), { metrics = { judged }, ci = false })
  local dir = h.tmpdir()
  local function fffd(path) return select(2, h.read(path):gsub("\xEF\xBF\xBD", "")) end
  local got = {}
  for _, f in ipairs { { "json", "compact" }, { "json", "full" }, { "csv" } } do
    local path = dir .. "/r." .. f[1]
    local n = require("evalua.report." .. f[1]).write(res, { items = f[2] }, path)
    got[#got + 1] = { n, fffd(path) }
  end
  h.sh("rm -rf " .. dir)
  lu.assertEquals(got[3], { 3, 3 }) -- the CSV: "q\xff1" one, "a\xfe\xfdb" two
  for _, g in ipairs(got) do lu.assertEquals(g[1], g[2]) end
end

os.exit(lu.LuaUnit.run(), true)
