-- The parts of evalua run promptfooconfig.yaml on their own: the Nunjucks
-- subset (what converts, what is refused, the filters by Nunjucks' rules),
-- promptfoo's __expected forms, and the scoring of promptfoo's
-- AssertionsResult (weighted mean, threshold, weight 0, unmeasured,
-- named metrics, assert-sets), with values computed by hand.
local lu = require "luaunit"
local nunjucks = require "evalua.experiment.promptfoo.nunjucks"
local score = require "evalua.experiment.promptfoo.score"
local config = require "evalua.experiment.promptfoo.config"
local yaml = require "evalua._yaml"

TestNunjucks = {}

function TestNunjucks:test_conversion()
  lu.assertEquals(nunjucks.convert("Hi {{ name }}!"), "Hi {{name}}!")
  lu.assertEquals(nunjucks.convert("{{ rows[0].text }} {{ m['k'] }} {{ m[\"k2\"] }}"), "{{rows.1.text}} {{m.k}} {{m.k2}}")
  lu.assertEquals(nunjucks.convert("{{ x | d('none') | upper }}"), "{{x | default('none') | upper}}")
  lu.assertEquals(nunjucks.convert("a{# a comment #}b"), "ab")
  lu.assertEquals(nunjucks.convert("a \n {{- x -}} \n b"), "a{{x}}b") -- whitespace control trims both sides
  lu.assertEquals({ nunjucks.convert("one\ntwo {% set x = 1 %}") },
    { nil, "the Nunjucks tag '{% set x = 1 %}' is not supported: evalua converts if, elif, else and for, not set, "
      .. "macro, include or other tags", 2 })
  lu.assertEquals({ nunjucks.convert("{% if a == 'b' %}x{% endif %}") },
    { nil, "{% if a == 'b' %}: cannot read 'a == 'b'' (a variable or a dotted path) (conditions are a variable or 'not' a variable)", 1 })
  lu.assertEquals({ nunjucks.convert("a\n{% for x in xs %}\n{{ x }}") }, { nil, "{% for %} is never closed", 2 })
  lu.assertEquals({ nunjucks.convert("{% for e in xs %}{% for f in e.ys %}{{ e.q }}{% endfor %}{% endfor %}") },
    { nil, "the outer loop's variable 'e' inside an inner loop is not supported", 1 })
  lu.assertEquals({ nunjucks.convert("{{ a + b }}") },
    { nil, "the Nunjucks expression '{{  a + b  }}' is not supported (a variable, a dotted path or an index, with filters)", 1 })
  lu.assertEquals({ nunjucks.convert("x\n\n{{ a") }, { nil, "'{{' is never closed", 3 })
end

function TestNunjucks:test_if_and_for_tags()
  -- an if is an inverted section whose else part holds the then part: rendered in the same scope
  lu.assertEquals(nunjucks.convert("{% if a %}A{% elif b %}B{% else %}C{% endif %}"),
    "{{^a}}{{^b}}C{{else}}B{{/b}}{{else}}A{{/a}}")
  lu.assertEquals(nunjucks.convert("{% for e in xs %}{{ loop.index }}:{{ e.q }}{% else %}none{% endfor %}"),
    "{{#xs}}{{@index}}:{{q}}{{else}}none{{/xs}}")
end

local function render(src, vars)
  nunjucks.install()
  local t = assert(nunjucks.compile(src, "t"))
  return assert(nunjucks.render(t, vars))
end

function TestNunjucks:test_tags_render_as_nunjucks_does()
  local src = "{% if a %}A{% elif b %}B{% else %}C{% endif %}"
  lu.assertEquals({ render(src, { a = "x" }), render(src, { b = true }), render(src, {}), render(src, { a = false, b = "" }) },
    { "A", "B", "C", "C" })
  lu.assertEquals(render("{% if not a %}no{% else %}yes{% endif %}|{% if not b %}no{% endif %}", { a = "x" }), "yes|no")
  local loop = "{% for e in xs %}[{{ loop.index }}:{{ e.q | upper }}{% if e.ok %}!{% endif %}]{% else %}none{% endfor %}"
  lu.assertEquals(render(loop, { xs = { { q = "a", ok = true }, { q = "b" } } }), "[1:A!][2:B]")
  lu.assertEquals(render(loop, { xs = {} }), "none")
  lu.assertEquals(render("{% for e in xs %}{{ e }}{% if not loop.last %}, {% endif %}{% endfor %}", { xs = { "p", "q" } }), "p, q")
  -- a tag alone on its line takes the line with it (evalua's rule; Nunjucks keeps the line break)
  lu.assertEquals(render("Examples:\n{% for e in xs %}\n- {{ e }}\n{% endfor %}\nEnd", { xs = { "a", "b" } }),
    "Examples:\n- a\n- b\nEnd")
end

function TestNunjucks:test_filters_by_nunjucks_rules()
  local v = { s = "hello wORLD", q = 'say "hi"', xs = { "b", "a", "c" }, n = 2.567, neg = -2.5, amp = "a&b <c>" }
  lu.assertEquals(render("{{ s | capitalize }}|{{ s | title }}", v), "Hello world|Hello World")
  lu.assertEquals(render("{{ q | dump }}|{{ xs | dump }}", v), '"say \\"hi\\""|["b","a","c"]')
  lu.assertEquals(render("{{ xs | first }}{{ xs | last }}{{ s | first }}", v), "bch")
  lu.assertEquals(render("{{ xs | sort | join(',') }}|{{ xs | reverse | join('') }}", v), "a,b,c|cab")
  lu.assertEquals(render("{{ s | replace('o', '0') }}", v), "hell0 wORLD")
  lu.assertEquals(render("{{ n | round }}|{{ n | round(1) }}|{{ n | int }}|{{ neg | int }}|{{ neg | abs }}", v), "3|2.6|2|-2|2.5")
  lu.assertEquals(render("{{ s | wordcount }}|{{ s | length }}", v), "2|11")
  lu.assertEquals(render("{{ amp | urlencode }}|{{ amp | escape }}|{{ amp | safe }}", v), "a%26b%20%3Cc%3E|a&amp;b &lt;c&gt;|a&b <c>")
  lu.assertEquals(render("{{ missing | d('-') }}", v), "-")
  local t = assert(nunjucks.compile("{{ missing }}", "t"))
  lu.assertEquals({ nunjucks.render(t, {}) }, { nil, "missing variable 'missing'" }) -- Nunjucks would print ""
end

-- The converter's contract on any text: a template that renders (or says
-- which variable is missing), or nil, why and a line; never a raise.
function TestNunjucks:test_never_raises()
  local pieces = { "{{", "}}", "{%", "%}", "{#", "#}", " if ", " for x in xs ", " endfor ", " endif ", " else ",
                   " elif b ", "x", "xs", ".", "[0]", "|", " upper ", "(", ")", "'", '"', "-", "\n", "loop.index",
                   " not ", "a.b", "dump", "load", " set " }
  math.randomseed(7)
  local compiled = 0
  for _ = 1, 5000 do
    local t = {}
    for _ = 1, math.random(1, 14) do t[#t + 1] = pieces[math.random(#pieces)] end
    local src = table.concat(t)
    local ok, tpl, why, line = pcall(nunjucks.compile, src, "f")
    lu.assertTrue(ok, src)
    if tpl then
      compiled = compiled + 1
      lu.assertTrue((pcall(nunjucks.render, tpl, { x = "v", xs = { "p", { q = 1 } }, a = { b = 2 }, b = true })), src)
    else
      lu.assertEquals({ type(why), math.type(line) }, { "string", "integer" }, src)
    end
  end
  lu.assertTrue(compiled > 1000) -- the pieces make both kinds
end

TestScoring = {}

-- The verdict of the assertions in yaml (a list) on answer, with threshold.
local function verdict(list_yaml, answer, threshold, row)
  local list, lines = assert(yaml.decode(list_yaml, "t.yaml"))
  local doc = config.doc("t.yaml", lines, ".")
  local problems = config.problems()
  local entries = {}
  for i, a in ipairs(list) do entries[i] = { a = a, doc = doc, line = doc:line(list, i), where = "assert[" .. i .. "]" } end
  local items = score.prepare_list(problems, entries, {})
  lu.assertEquals(problems.list, {})
  local r = { answer = answer }
  for k, v in pairs(row or {}) do r[k] = v end
  return score.verdict({ items = items, vars = {}, threshold = threshold }, r)
end

function TestScoring:test_weighted_mean_and_threshold()
  local list = "- {type: contains, value: a}\n- {type: contains, value: b, weight: 3}\n- {type: contains, value: c, weight: 0.5}\n"
  local v = verdict(list, "a c")
  lu.assertFalse(v.pass)
  lu.assertAlmostEquals(v.weighted, 1.5 / 4.5, 1e-15) -- (1 + 0 + 0.5) / (1 + 3 + 0.5)
  v = verdict(list, "a c", 0.3)
  lu.assertTrue(v.pass) -- the threshold decides: 0.333 >= 0.3, though b failed
  lu.assertEquals(v.reason, "aggregate score 0.33 >= 0.3 threshold")
  v = verdict(list, "b", 0.7)
  lu.assertAlmostEquals(v.weighted, 3 / 4.5, 1e-15)
  lu.assertFalse(v.pass)
  lu.assertEquals(v.reason, "aggregate score 0.67 < 0.7 threshold")
end

function TestScoring:test_weight_zero_and_unmeasured()
  local v = verdict("- {type: contains, value: a}\n- {type: contains, value: z, weight: 0}\n", "a")
  lu.assertTrue(v.pass) -- promptfoo forces a weight-0 assertion to pass: it only reports its score
  lu.assertEquals(v.weighted, 1)
  lu.assertEquals(v.results[2].score, 0)
  lu.assertEquals(v.results[2].reason, 'lacks "z" (weight 0: reported, never failing)')
  v = verdict("- {type: contains, value: a, weight: 0, metric: m}\n- {type: contains, value: a, metric: n}\n", "a")
  lu.assertEquals({ v.named.m.score, v.named.n.score }, { 0, 1 }) -- weight 0 counts in no metric: 0 / 0 is 0
  v = verdict("- {type: contains, value: z, weight: 0}\n", "a")
  lu.assertEquals(v.weighted, 0) -- every weight 0: score 0
  -- an assertion that cannot tell (no cost recorded) leaves the case unmeasured ...
  v = verdict("- {type: contains, value: a}\n- {type: cost, threshold: 1}\n", "a")
  lu.assertNil(v.pass)
  lu.assertEquals(v.reason, "cost 1: the output has no cost")
  -- ... unless another one failed
  v = verdict("- {type: contains, value: z}\n- {type: cost, threshold: 1}\n", "a")
  lu.assertFalse(v.pass)
  lu.assertNil(v.weighted)
  -- an open assertion of weight 0 does not count, with a threshold or without
  v = verdict("- {type: contains, value: a}\n- {type: cost, threshold: 1, weight: 0}\n", "a", 0.5)
  lu.assertTrue(v.pass)
  lu.assertEquals(v.weighted, 1)
  v = verdict("- {type: contains, value: a}\n- {type: cost, threshold: 1, weight: 0}\n", "a")
  lu.assertTrue(v.pass)
  v = verdict("[]", "a")
  lu.assertNil(v.pass)
  lu.assertEquals(v.reason, "no assertions")
  lu.assertEquals(score.verdict({ items = {}, vars = {} }, { output_error = "HTTP 500" }).reason, "no output: HTTP 500")
end

function TestScoring:test_named_metrics_and_assert_sets()
  local v = verdict([[
- {type: contains, value: a, metric: m}
- {type: contains, value: z, metric: m, weight: 3}
- type: assert-set
  threshold: 0.5
  metric: s
  assert:
    - {type: contains, value: a}
    - {type: contains, value: y}
]], "a")
  lu.assertEquals(v.named.m.score, 0.25) -- (1 + 0) / (1 + 3)
  lu.assertEquals(v.named.s.score, 0.5) -- the set's own score
  lu.assertFalse(v.pass) -- contains z failed; the set passed (0.5 >= 0.5)
  lu.assertTrue(v.results[3].pass)
  lu.assertAlmostEquals(v.weighted, (1 + 0 + 0.5) / 5, 1e-15)
end

function TestScoring:test_cross_cell_and_judged_types()
  local list, lines = assert(yaml.decode("- {type: max-score}\n- {type: similar, value: x}\n- {type: select-best, value: y}\n",
    "t.yaml"))
  local doc = config.doc("t.yaml", lines, ".")
  local problems = config.problems()
  local entries = {}
  for i, a in ipairs(list) do entries[i] = { a = a, doc = doc, line = doc:line(list, i), where = "assert[" .. i .. "]" } end
  local own, across = score.split(assert(score.prepare_list(problems, entries, {})))
  lu.assertEquals({ #own, own[1].name }, { 1, 'similar "x"' })
  lu.assertEquals({ #across, across[1].c.type, across[2].c.type }, { 2, "max-score", "select-best" })
  lu.assertNil(problems.list[1])
  lu.assertEquals(problems.judged, { { file = "t.yaml", line = 2, type = "similar" },
                                     { file = "t.yaml", line = 3, type = "select-best" } }) -- for --judge to check
end

function TestScoring:test_transforms()
  local fn = assert(score.compile_transform("output:upper() .. context.vars.x", "t"))
  lu.assertEquals(score.apply(fn, "ab", { vars = { x = "!" } }, "t"), "AB!")
  fn = assert(score.compile_transform("function(output) return {n = #output} end", "t"))
  lu.assertEquals(score.apply(fn, "abc", {}, "t"), '{"n":3}')
  lu.assertEquals({ score.compile_transform("output:upper(", "t") },
    { nil, "transform: not a Lua expression: unexpected symbol near 'end'" })
  fn = assert(score.compile_transform("os.exit(1)", "t")) -- no os in a transform's environment
  lu.assertStrContains(select(2, score.apply(fn, "x", {}, "the transform")), "the transform raised: ")
  fn = assert(score.compile_transform("{f = tostring}", "t"))
  lu.assertEquals({ score.apply(fn, "x", {}, "t") }, { nil, "t gave a table that is not JSON: "
    .. "json: cannot encode a function" })
  -- what a pcall may not keep: an exit request, a limit passed, no memory; they go on as they came
  local caught = require "evalua.core.caught"
  for _, e in ipairs { { evalua_exit = 3 }, "not enough memory", "x.lua:8: time limit of 1.0 s exceeded (--time-limit)",
                       "CPU time limit of 2 s exceeded (--cpu-limit)" } do
    fn = function() error(e, 0) end
    local ok, got = pcall(score.apply, fn, "x", {}, "t")
    lu.assertFalse(ok)
    lu.assertIs(got, e)
  end
  lu.assertFalse(caught.fatal("the limit of 3 words exceeded"))
  lu.assertFalse(caught.fatal({}))
end

os.exit(lu.LuaUnit.run(), true)
