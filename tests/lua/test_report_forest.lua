-- "What changed" at the top of the HTML report (report/forest.lua): the
-- paired deltas of ev.compare.systems drawn with their intervals, outside
-- any folded section; with nothing to compare, the means with theirs.
local lu = require "luaunit"
local ev = require "evalua"
local forest = require "evalua.report.forest"
local HTML = require "evalua.report.html"

-- Six queries; "new" is lower than "old" on q1..q5 (by 0.4 0.3 0.3 0.3 0.4).
local OLD = { q1 = 0.9, q2 = 0.8, q3 = 0.7, q4 = 0.6, q5 = 0.5 }
local NEW = { q1 = 0.5, q2 = 0.5, q3 = 0.4, q4 = 0.3, q5 = 0.1 }

local function run(systems)
  local rows = {}
  for _, v in ipairs(systems) do
    for _, qid in ipairs { "q1", "q2", "q3", "q4", "q5" } do rows[#rows + 1] = { qid = qid, variant = v } end
  end
  local m = { name = "m", fn = function(r) return (r.variant == "old" and OLD or NEW)[r.qid] end }
  return ev.evaluate(rows, { metrics = { m }, system = "variant" })
end

-- The <g> of the row labelled label, and its attributes.
local function row_of(html, label)
  for attrs, body in html:gmatch('<g class="row[^"]*" ([^>]*)>(.-)</g>') do
    if body:find(">" .. label .. "<", 1, true) then return attrs, body end
  end
end

local function num(attrs, name) return tonumber(attrs:match(name:gsub("%-", "%%-") .. '="([^"]+)"')) end

function test_deltas_of_two_systems_with_their_intervals_unfolded_at_the_top()
  local res = run { "old", "new" }
  ev.compare.systems(res, { baseline = "old" })
  local groups, note = forest.groups(res)
  lu.assertNil(note)
  lu.assertEquals(#groups, 1)
  lu.assertEquals(groups[1].title, "Each system minus old")
  local r = groups[1].rows[1]
  -- the reference: ev.stats.paired_ci of the five pairs; the mean difference by hand, (-0.4-0.3-0.3-0.3-0.4)/5
  local ci = ev.stats.paired_ci({ 0.9, 0.8, 0.7, 0.6, 0.5 }, { 0.5, 0.5, 0.4, 0.3, 0.1 })
  lu.assertEquals(r.label, "new · m")
  lu.assertAlmostEquals(r.point, -0.34, 1e-12)
  lu.assertEquals({ r.lo, r.hi, r.n }, { ci.lo, ci.hi, 5 })
  lu.assertTrue(r.hi < 0) -- every pair went down: the interval is below zero

  local html = HTML(res, {})
  local top = html:find('<section id="what-changed">', 1, true)
  lu.assertNotNil(top)
  lu.assertTrue(top < html:find("<h2>Results</h2>", 1, true), "the forest plot comes before the results table")
  lu.assertTrue(top < html:find("<details", 1, true))
  lu.assertNil(html:sub(1, top):find("<details", 1, true))
  local attrs, body = row_of(html, "new · m")
  lu.assertEquals({ num(attrs, "data-lo"), num(attrs, "data-hi") }, { ci.lo, ci.hi })
  -- the whisker's ends on the axis: x = 300 + (v + m) / 2m * 560 with m the largest |end|, here |lo|
  local m = -ci.lo
  local x1, x2 = body:match('class="whisker ci" d="M([%d.]+) [%d.]+H([%d.]+)')
  lu.assertAlmostEquals(tonumber(x1), 300, 0.01)
  lu.assertAlmostEquals(tonumber(x2), 300 + (ci.hi + m) / (2 * m) * 560, 0.01)
  lu.assertStrContains(body, ("-0.340 [%.3f, %.3f]"):format(ci.lo, ci.hi))
end

function test_one_system_shows_its_means_and_says_there_is_nothing_to_compare()
  local res = run { "old" }
  local groups, note = forest.groups(res)
  lu.assertStrContains(note, "Nothing to compare with")
  lu.assertEquals(groups[1].kind, "mean")
  local a = res:agg("old", "m")
  local r = groups[1].rows[1]
  lu.assertEquals(r.label, "m")
  lu.assertAlmostEquals(r.point, 0.7, 1e-12) -- (0.9+0.8+0.7+0.6+0.5)/5
  lu.assertEquals({ r.lo, r.hi }, { a.lo, a.hi })
  local html = HTML(res, {})
  lu.assertStrContains(html, "Nothing to compare with: no baseline run and no second system.")
  local attrs = row_of(html, "m")
  lu.assertEquals({ num(attrs, "data-lo"), num(attrs, "data-hi") }, { a.lo, a.hi })
end

function test_a_delta_without_an_interval_says_why()
  local rows = { { qid = "q1", variant = "old" }, { qid = "q1", variant = "new" } }
  local m = { name = "m", fn = function(r) return r.variant == "old" and 0.5 or 0.25 end }
  local res = ev.evaluate(rows, { metrics = { m }, system = "variant" })
  ev.compare.systems(res, { baseline = "old" })
  local r = forest.groups(res)[1].rows[1]
  lu.assertEquals({ r.point, r.lo, r.note }, { -0.25, nil, "no interval: 1 paired item" })
  lu.assertStrContains(HTML(res, {}), "-0.250 (no interval: 1 paired item)")
end

os.exit(lu.LuaUnit.run())
