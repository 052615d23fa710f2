-- The side-by-side view: one row per case, one column per cell, outputs,
-- assertions, scores, latency and cost; failing and disagreeing cases
-- marked for the filters; differing words marked; data shown as text; the
-- page loads in headless Chromium with no console error and a screenshot.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

local EVIL = "The limit is <script>document.title='pwned'</script> 5 TiB."
local ROWS = {
  { qid = "q1", query = "What is the limit?", contexts = { EVIL .. " Parts are 8 MiB." } },
  { qid = "q2", query = "How long is retention?", contexts = { "Retention is 30 days. Deleted objects wait." } },
}

local function build()
  local out = ev.generate(ROWS, { prompts = { long = "{{query}}", short = "at most 3 words: {{query}}" },
                                  providers = { ev.provider.offline() }, quiet = true })
  return ev.evaluate(out, { metrics = { ev.assertions.metric { { type = "max-words", value = 4 } }, "token_f1" },
                            system = "system", ci = false })
end

local function count(s, pat)
  return select(2, s:gsub(pat, ""))
end

TestMatrixView = {}

function TestMatrixView:test_cells_side_by_side()
  local html = ev.matrix_view.html(build(), { title = "Matrix <1>" })
  lu.assertStrContains(html, "<title>Matrix &lt;1&gt;</title>")
  lu.assertEquals(count(html, '<tr class="case'), 2)
  lu.assertEquals(count(html, '<td class="cell '), 4)
  lu.assertStrContains(html, "<th>long/offline</th><th>short/offline</th>")
  -- q1: long gives the whole first sentence (6 words: fails max-words 4), short
  -- gives 3 words (passes): the cells disagree and one fails
  lu.assertStrContains(html, '<tr class="case failing disagree"><td class="case"><b>q1</b>')
  -- q2: "Retention is 30 days." (4 words) passes in both: no failing, no disagreement
  lu.assertStrContains(html, '<tr class="case"><td class="case"><b>q2</b>')
  lu.assertStrContains(html, '<li class="fail">max-words 4: 6 words, outside &lt;= 4</li>')
  lu.assertStrContains(html, '<li class="pass">max-words 4: 3 words, within &lt;= 4</li>')
  -- the data is text, never markup; the filters are CSS, there is no script
  lu.assertStrContains(html, "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;")
  lu.assertNotStrContains(html, "<script")
  lu.assertNotStrContains(html, "http://")
  lu.assertNotStrContains(html, "https://")
  lu.assertStrContains(html, "#only-failing:checked~table.matrix tr.case:not(.failing){display:none}")
  lu.assertStrContains(html, '<div class="small">token_f1 –</div>') -- no gold answers: unmeasured
  lu.assertStrContains(html, "0 ms · $0.00000")
  lu.assertErrorMsgContains("ev.matrix_view: the results are not of an ev.generate output",
    ev.matrix_view.html, ev.evaluate({ { qid = "a", answer = "x" } }, { metrics = { "exact_match" } }))
end

function TestMatrixView:test_differing_words_are_marked()
  local out = ev.generate({ { qid = "a", query = "q", contexts = { "Alpha beta gamma. Delta epsilon." } } },
    { prompts = { a = "{{query}}", b = "in 2 sentences {{query}}" }, providers = { ev.provider.offline() }, quiet = true })
  local html = ev.matrix_view.html(ev.evaluate(out, { metrics = { "token_f1" }, system = "system", ci = false }))
  -- the first cell is the reference: nothing marked there
  lu.assertStrContains(html, '<div class="answer">Alpha beta gamma.</div>')
  lu.assertStrContains(html, '<div class="answer">Alpha beta gamma. <mark>Delta</mark> <mark>epsilon.</mark></div>')
end

function TestMatrixView:test_each_column_shows_its_prompt_text()
  local long = "Answer from the contexts only.\n" .. ("Cite the passage.\n"):rep(12) .. "{{query}}"
  local out = ev.generate({ { qid = "a", query = "q", contexts = { "Alpha beta." } } },
    { prompts = { a = "Q: {{query}} <b>", b = long }, providers = { ev.provider.offline() }, quiet = true })
  lu.assertEquals(out.cells[1].template, "Q: {{query}} <b>")
  lu.assertEquals(out.cells[2].template, long)
  local html = ev.matrix_view.html(ev.evaluate(out, { metrics = { "token_f1" }, system = "system", ci = false }))
  -- a short template in full, escaped; a long one (14 lines) folded under its first line, its words
  -- that the first template lacks marked, those it shares ({{query}}) not
  lu.assertStrContains(html, '<tr class="prompts"><th class="prompt">prompt</th>'
    .. '<th class="prompt"><b>a</b><pre>Q: {{query}} &lt;b&gt;</pre></th>'
    .. '<th class="prompt"><b>b</b><details><summary>Answer from the contexts only. … (14 lines)</summary>'
    .. '<pre><mark>Answer</mark> <mark>from</mark> <mark>the</mark> <mark>contexts</mark> <mark>only.</mark>\n'
    .. '<mark>Cite</mark> <mark>the</mark>')
  lu.assertStrContains(html, "\n{{query}}</pre></details></th></tr></thead>")
  lu.assertStrContains(html, "table.matrix{width:100%}")
end

function TestMatrixView:test_loads_in_chromium_with_a_screenshot()
  if h.run("command -v chromium").status ~= 0 then lu.skip("chromium is not installed") end
  local dir = h.tmpdir()
  local path = ev.matrix_view.write(build(), dir .. "/matrix.html")
  local chromium = "chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
    .. "--disable-component-update --disable-sync --enable-logging=stderr --v=0 --user-data-dir=" .. dir .. "/profile "
  local r = h.run(chromium .. "--dump-dom file://" .. path)
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrContains(r.stdout, "<title>Prompt matrix</title>")
  lu.assertEquals(count(r.stdout, '<td class="cell '), 4)
  lu.assertNotStrContains(r.stdout, "<script")
  for line in r.stderr:gmatch("[^\n]+") do
    lu.assertNotStrContains(line, "CONSOLE", false, line)
    lu.assertNotStrContains(line, "Refused to", false, line)
  end
  local shot = h.run(chromium .. "--window-size=1200,800 --screenshot=" .. dir .. "/matrix.png file://" .. path)
  lu.assertEquals(shot.status, 0, shot.stderr)
  local png = h.read(dir .. "/matrix.png")
  lu.assertNotNil(png, "no screenshot")
  lu.assertEquals(png:sub(1, 8), "\137PNG\r\n\26\n")
  lu.assertTrue(#png > 5000) -- a page with text, not a blank image
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
