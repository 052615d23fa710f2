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

-- Nine metrics with long names over three systems and two slice
-- dimensions, as the bundled RAG report has; one query in Chinese.
local function write_wide_report(dir)
  local names = { "recall@5", "mrr", "ndcg@5", "exact_match_norm", "token_f1", "faithfulness",
                  "answer_relevance", "context_precision", "context_recall" }
  local metrics = {}
  for k, name in ipairs(names) do
    metrics[k] = { name = name, fn = function(r) return ((r.i * 7 + k * 3) % 11) / 10 end }
  end
  local rows = {}
  for i = 1, 60 do
    rows[i] = { qid = "q" .. (i % 20), i = i, variant = ({ "baseline", "hybrid", "hybrid_rerank" })[i % 3 + 1],
                query_class = ({ "factoid", "how-to", "comparison" })[i // 3 % 3 + 1], lang = i % 2 == 0 and "cjk" or "en",
                query = i % 2 == 0 and "分片上传的中止阈值是多少" or "How big can a file be?", answer = "a" }
  end
  local res = ev.evaluate(rows, { metrics = metrics, system = "variant", slices = { "query_class", "lang" },
                                  ci = { resamples = 200 } })
  return ev.report.write(res, { dir = dir, name = "wide", formats = { "html" } })[1]
end

-- A page with a script (the report itself has none) loads the report in
-- one frame per width (one Chromium start for all) and writes what it
-- measured in each into its title, once every frame has loaded.
local HARNESS = [[<!DOCTYPE html><html><head><title>pending</title></head><body style="margin:0"><script>
var widths = [%s], seen = {}, left = widths.length;
widths.forEach(function (w) {
  var f = document.createElement("iframe");
  f.style.cssText = "display:block;width:" + w + "px;height:900px;border:0";
  f.onload = function () {
    var d = f.contentDocument, t = d.querySelector("table.results"), box = t.parentElement;
    seen[w] = w + "px: table-overflow=" + (box.scrollWidth - box.clientWidth) + " page-overflow=" +
      (d.documentElement.scrollWidth - d.documentElement.clientWidth) + " ci-in-cells=" +
      d.querySelectorAll("table.results td .ci").length + " folded=" + d.querySelectorAll("details.metric:not([open])").length;
    if (--left === 0) document.title = widths.map(function (x) { return seen[x]; }).join("; ");
  };
  f.src = "wide.html";
  document.body.appendChild(f);
});
</script></body></html>]]

function test_results_table_fits_1280_to_1920_px_with_intervals_in_the_cells()
  if not have_chromium() then lu.skip("chromium is not installed") end
  local dir = h.tmpdir()
  write_wide_report(dir)
  local widths = { 1280, 1400, 1920 }
  h.write(dir .. "/harness.html", HARNESS:format(table.concat(widths, ",")))
  local r = h.run(CHROMIUM .. "--user-data-dir=" .. dir .. "/profile --allow-file-access-from-files "
    .. "--virtual-time-budget=5000 --dump-dom file://" .. dir .. "/harness.html")
  lu.assertEquals(r.status, 0, r.stderr)
  -- 3 systems x (all + 3 classes + 2 languages) lines x 9 metrics, every cell with its interval;
  -- nothing scrolls sideways; the nine metrics' detail is folded
  local want = {}
  for k, w in ipairs(widths) do want[k] = w .. "px: table-overflow=0 page-overflow=0 ci-in-cells=162 folded=9" end
  lu.assertStrContains(r.stdout, "<title>" .. table.concat(want, "; ") .. "</title>")
  h.sh("rm -rf " .. dir)
end

local function pdf_pages(dir, html_path)
  local pdf = dir .. "/print.pdf"
  os.remove(pdf)
  local r = h.run(CHROMIUM .. "--user-data-dir=" .. dir .. "/profile --no-pdf-header-footer --print-to-pdf=" .. pdf
    .. " file://" .. html_path)
  lu.assertEquals(r.status, 0, r.stderr)
  local _, pages = assert(h.read(pdf)):gsub("/Type%s*/Page[^s]", "")
  return pages
end

-- Printed, the folded per-metric sections are open: the page has the
-- charts and lowest items of every metric, not only the summary that a
-- copy without the print rule shows.
function test_print_shows_the_folded_detail()
  if not have_chromium() then lu.skip("chromium is not installed") end
  local dir = h.tmpdir()
  local path = write_wide_report(dir)
  local html = h.read(path)
  local rule = "details::details-content{content-visibility:visible;display:block}"
  lu.assertStrContains(html, rule)
  h.write(dir .. "/folded.html", (html:gsub(rule:gsub("%p", "%%%0"), "")))
  local open, folded = pdf_pages(dir, path), pdf_pages(dir, dir .. "/folded.html")
  lu.assertTrue(open >= folded + 3, ("printed pages: %d with the detail, %d folded"):format(open, folded))
  h.sh("rm -rf " .. dir)
end

-- CJK text needs a CJK font: the page names Noto Sans CJK (installed by
-- install-deps.sh) in its font stack, and fontconfig has one to give.
function test_cjk_text_has_a_font()
  local dir = h.tmpdir()
  local html = h.read(write_wide_report(dir))
  lu.assertStrContains(html, '"Noto Sans CJK SC"')
  h.sh("rm -rf " .. dir)
  if not have_chromium() then lu.skip("chromium is not installed") end
  local r = h.run("fc-list :lang=zh family")
  lu.assertStrContains(r.stdout or "", "Noto Sans CJK SC", "no CJK font: run install-deps.sh (fonts-noto-cjk)")
end

-- Three runs on the same data in a history: the judge model changes before
-- the third, the gate stays at 0.5; each run links its report.
local function write_history(dir)
  local hist = ev.history.open(dir .. "/history")
  local rows = {}
  for i = 1, 12 do rows[i] = { qid = "q" .. i, i = i, query_class = i % 2 == 0 and "even" or "odd" } end
  for run, judge in ipairs { "judge-a", "judge-a", "judge-b" } do
    local metric = { name = "s", fn = function(r) return ((r.i * run) % 7) / 6 end }
    local res = ev.evaluate(ev.dataset.from_rows(rows, "rows.jsonl"), { metrics = { metric }, slices = { "query_class" },
                                                                        ci = { resamples = 100 } })
    res.meta.judge = { model = judge }
    ev.gate.check(res, { thresholds = { s = { all = 0.5 } } })
    hist:append(res, { label = "run <" .. run .. ">", git_commit = false,
                       report = dir .. "/reports/r" .. run .. "/report.html" })
  end
  return dir .. "/history/index.html"
end

function test_history_dashboard_draws_trends_gates_changes_and_links()
  if not have_chromium() then lu.skip("chromium is not installed") end
  local dir = h.tmpdir()
  local path = write_history(dir)
  local r = h.run(CHROMIUM .. "--user-data-dir=" .. dir .. "/profile --dump-dom file://" .. path)
  lu.assertEquals(r.status, 0, r.stderr)
  local dom = r.stdout
  -- one chart for the whole run and one per slice value (folded), each with its band
  local _, charts = dom:gsub('<svg class="chart trend"', "")
  local _, bands = dom:gsub('<polygon class="band"', "")
  lu.assertEquals(charts, 3)
  lu.assertEquals(bands, 3)
  lu.assertStrContains(dom, "<title>s across runs</title>")
  lu.assertStrContains(dom, "<title>s [query_class=even] across runs</title>")
  -- the gate on the whole run, and the judge change marked before the third run only
  lu.assertStrContains(dom, "gate ≥ 0.50</text>")
  local _, changes = dom:gsub('<g class="change"><title>changed before run &lt;3&gt;: judge judge%-a %-&gt; judge%-b</title>', "")
  lu.assertEquals(changes, 3)
  lu.assertNotStrContains(dom, "changed before run &lt;2&gt;")
  -- every run links its report, relative to the history folder; labels are text
  for run = 1, 3 do lu.assertStrContains(dom, ('<a href="../reports/r%d/report.html">'):format(run)) end
  lu.assertStrContains(dom, "<td>run &lt;3&gt;</td>")
  lu.assertNotStrContains(dom, "<script")
  for line in r.stderr:gmatch("[^\n]+") do
    lu.assertNotStrContains(line, "CONSOLE", false, line)
    lu.assertNotStrContains(line, "Refused to", false, line)
  end
  h.sh("rm -rf " .. dir)
end

-- A dead judge (issue 25, point 6): the banner is on the first screen, above
-- the tables, red, not a grey line; the offline heuristic's is amber.
local BANNERS = [[<!DOCTYPE html><html><head><title>pending</title></head><body style="margin:0">
<iframe id="f" src="dead.html" style="width:1280px;height:900px;border:0"></iframe><script>
document.getElementById("f").onload = function () {
  var d = this.contentDocument, out = [];
  d.querySelectorAll("div.banner").forEach(function (b) {
    var st = getComputedStyle(b), before = b.compareDocumentPosition(d.querySelector("table.results"));
    out.push(b.className + " top<900=" + (b.getBoundingClientRect().top < 900) + " border=" + st.borderTopColor +
      " above-table=" + ((before & Node.DOCUMENT_POSITION_FOLLOWING) != 0));
  });
  document.title = out.join("; ");
};
</script></body></html>]]

function test_a_failed_judge_and_the_offline_heuristic_have_banners_on_the_first_screen()
  if not have_chromium() then lu.skip("chromium is not installed") end
  local dir = h.tmpdir()
  local rows = {}
  for i = 1, 30 do rows[i] = { qid = "q" .. i, query_class = ({ "a", "b", "c" })[i % 3 + 1], answer = "x" } end
  local dead = { name = "judged", judged = true, fn = function()
    return { ok = false, error = "HTTP 500: down", unmeasured = true, judge_failed = true } end }
  local res = ev.evaluate(rows, { metrics = { dead, ev.rag.faithfulness }, slices = { "query_class" },
                                  judge = ev.judge.open("offline"), quiet = true })
  ev.report.write(res, { dir = dir, name = "dead", formats = { "html" } })
  h.write(dir .. "/harness.html", BANNERS)
  local r = h.run(CHROMIUM .. "--user-data-dir=" .. dir .. "/profile --allow-file-access-from-files "
    .. "--virtual-time-budget=5000 --dump-dom file://" .. dir .. "/harness.html")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "<title>banner fail top&lt;900=true border=rgb(176, 0, 32) above-table=true; "
    .. "banner offline top&lt;900=true border=rgb(199, 119, 0) above-table=true</title>")
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
