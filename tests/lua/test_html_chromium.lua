-- The HTML report in headless Chromium (Debian's chromium; skipped when it
-- is not installed): the page loads without console errors or network
-- requests, the charts are there, and a model answer containing <script>
-- shows as text instead of running.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

local CHROMIUM = "chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
  .. "--disable-background-networking --disable-component-update --disable-sync "
  .. "--enable-logging=stderr --v=0 "

local function have_chromium()
  return h.run("command -v chromium").status == 0
end

local EVIL = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'

local function write_report(dir)
  local rows = {
    { qid = "q1", variant = "a", query_class = "x", query = "q <one>", answer = EVIL, s = 0.2 },
    { qid = "q2", variant = "a", query_class = "y", query = "q & two", answer = "fine", s = 0.8 },
    { qid = "q1", variant = "b", query_class = "x", query = "q <one>", answer = "ok", s = 0.6 },
    { qid = "q2", variant = "b", query_class = "y", query = "q & two", answer = "ok", s = 0.9 },
  }
  local res = ev.evaluate(rows, { metrics = { { name = "s", fn = function(r) return { score = r.s, reason = r.answer } end } },
                                  system = "variant", slices = { "query_class" } })
  return ev.report.write(res, { dir = dir, name = "r", formats = { "html" }, title = "Report <title>" })[1]
end

function test_report_loads_shows_charts_and_never_runs_data()
  if not have_chromium() then lu.skip("chromium is not installed") end
  local dir = h.tmpdir()
  local path = write_report(dir)
  local r = h.run(CHROMIUM .. "--user-data-dir=" .. dir .. "/profile --dump-dom file://" .. path)
  lu.assertEquals(r.status, 0, r.stderr)
  local dom = r.stdout
  -- it rendered: the title is ours, not the injected one
  lu.assertStrContains(dom, "<title>Report &lt;title&gt;</title>")
  -- the charts are present: one bar chart and one histogram per system for the metric
  local _, bars = dom:gsub('<svg class="chart bars"', "")
  local _, hists = dom:gsub('<svg class="chart hist"', "")
  lu.assertEquals(bars, 1)
  lu.assertEquals(hists, 2)
  lu.assertStrContains(dom, '<path class="whisker"')
  -- the answer is text in the DOM, never an element
  lu.assertStrContains(dom, "&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;&lt;img src=x")
  lu.assertNotStrContains(dom, "<script")
  lu.assertNotStrContains(dom, "<img")
  -- no console errors (a CSP violation or a failed load would be one)
  for line in r.stderr:gmatch("[^\n]+") do
    lu.assertNotStrContains(line, "CONSOLE", false, line)
    lu.assertNotStrContains(line, "Refused to", false, line)
  end
  h.sh("rm -rf " .. dir)
end

function test_report_has_no_external_references()
  local dir = h.tmpdir()
  local html = h.read(write_report(dir))
  lu.assertNotStrContains(html, "http://")
  lu.assertNotStrContains(html, "https://")
  lu.assertNotStrContains(html, "<script")
  lu.assertStrContains(html, "default-src 'none'")
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
