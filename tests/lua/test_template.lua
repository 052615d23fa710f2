-- ev.template: values, dotted paths, sections, filters, standalone lines,
-- errors that name the variable and line, and values never re-evaluated.
local lu = require "luaunit"
local ev = require "evalua"
local h = require "tests.lua.helpers"

local T = ev.template

function test_values_and_dotted_paths()
  lu.assertEquals(T.render("Q: {{query}} / {{row.meta.lang}} / {{contexts.2}}",
    { query = "why?", row = { meta = { lang = "zh" } }, contexts = { "a", "b" } }),
    "Q: why? / zh / b")
  lu.assertEquals(T.render("{{n}} {{x}} {{ok}}", { n = 3, x = 0.25, ok = false }), "3 0.25 false")
  lu.assertEquals(T.render("{{ spaced }}", { spaced = "s" }), "s")
end

function test_values_are_substituted_never_evaluated()
  local t = T "<a>{{answer}}</a>"
  lu.assertEquals(t:render { answer = "{{secret}} {{#x}}y{{/x}} }}{{" }, "<a>{{secret}} {{#x}}y{{/x}} }}{{</a>")
  lu.assertEquals(T.render('{{"{{"}}literal}}', {}), "{{literal}}")
end

function test_missing_variable_is_an_error_naming_it_and_the_line()
  local t = T.compile("line one\nQ: {{query}}\nA: {{answer.text}}", "judge/user")
  local ok, err = pcall(t.render, t, { query = "q", answer = {} })
  lu.assertFalse(ok)
  lu.assertEquals(err, "template 'judge/user' line 3: missing variable 'answer.text'")
  lu.assertErrorMsgEquals("template 'inline' line 1: missing variable 'x'", T.render, "{{x | upper}}", {})
end

function test_default_filter_makes_a_value_optional()
  lu.assertEquals(T.render('[{{lang | default("en")}}][{{other | default}}]', {}), "[en][]")
  lu.assertEquals(T.render('[{{lang | default("en") | upper}}]', { lang = "zh" }), "[ZH]")
end

function test_sections_over_lists_with_index()
  local t = T "{{#contexts}}[{{@index}}] {{.}}{{^@last}}; {{/@last}}{{/contexts}}"
  lu.assertEquals(t:render { contexts = { "alpha", "beta", "gamma" } }, "[1] alpha; [2] beta; [3] gamma")
  lu.assertEquals(t:render { contexts = {} }, "")
  lu.assertEquals(T.render("{{#items}}{{name}}={{v}} {{/items}}",
    { items = { { name = "a", v = 1 }, { name = "b", v = 2 } } }), "a=1 b=2 ")
end

function test_sections_as_conditionals_with_else()
  local t = T "{{#reference}}Ref: {{reference}}{{else}}no reference{{/reference}}"
  lu.assertEquals(t:render { reference = "R" }, "Ref: R")
  lu.assertEquals(t:render {}, "no reference")
  lu.assertEquals(t:render { reference = "" }, "no reference")
  lu.assertEquals(T.render("{{^x}}none{{else}}some{{/x}}", { x = true }), "some")
  -- a table value opens a scope: names resolve inside it first, then outside
  lu.assertEquals(T.render("{{#case}}{{input}} by {{who}}{{/case}}", { case = { input = "i" }, who = "w" }),
    "i by w")
end

function test_standalone_block_tags_leave_no_blank_lines()
  local t = T "Contexts:\n{{#contexts}}\n- {{.}}\n{{/contexts}}\nEnd\n"
  lu.assertEquals(t:render { contexts = { "a", "b" } }, "Contexts:\n- a\n- b\nEnd\n")
  lu.assertEquals(T.render("  {{! a comment }}\nx", {}), "x")
  -- a tag sharing its line with text is not standalone
  lu.assertEquals(T.render("a {{#x}}b{{/x}}\nc", { x = true }), "a b\nc")
end

function test_filters()
  local v = { xs = { "one", "two" }, s = "  Hi  ", o = { b = 1, a = { true } }, long = "你好世界" }
  lu.assertEquals(T.render("{{xs | json}} {{o | json}} {{s | json}}", v), '["one","two"] {"a":[true],"b":1} "  Hi  "')
  lu.assertEquals(T.render("{{xs | numbered}}", v), "1. one\n2. two")
  lu.assertEquals(T.render("{{xs | bullets}}", v), "- one\n- two")
  lu.assertEquals(T.render('{{xs | join(", ")}}|{{xs | join}}', v), "one, two|one\ntwo")
  lu.assertEquals(T.render("[{{s | trim | upper}}] [{{s | lower}}]", v), "[HI] [  hi  ]")
  lu.assertEquals(T.render("{{xs | length}} {{long | length}} {{long | truncate(2)}}", v), "2 4 你好")
  lu.assertEquals(T.render("{{xs | numbered | indent(2)}}", v), "  1. one\n  2. two")
end

function test_user_filters_can_be_added()
  T.filters.shout = function(v) return tostring(v) .. "!" end
  lu.assertEquals(T.render("{{x | shout}}", { x = "hey" }), "hey!")
  T.filters.shout = nil
end

function test_tables_need_a_filter_or_section()
  lu.assertErrorMsgEquals(
    "template 'inline' line 1: 'xs' is a list; use a section or a filter such as json, join or numbered",
    T.render, "{{xs}}", { xs = { 1 } })
end

function test_parse_errors_name_the_line()
  lu.assertErrorMsgEquals("template 'p' line 2: section 'xs' is never closed", T.compile, "a\n{{#xs}}\nb", "p")
  lu.assertErrorMsgEquals("template 'p' line 1: '{{/ys}}' closes section 'xs' opened on line 1",
    T.compile, "{{#xs}}{{/ys}}", "p")
  lu.assertErrorMsgEquals("template 'p' line 3: unknown filter 'nope'", T.compile, "\n\n{{x | nope}}", "p")
  lu.assertErrorMsgEquals("template 'p' line 1: '{{' is never closed", T.compile, "{{x", "p")
  lu.assertErrorMsgEquals("template 'p' line 1: cannot read '{{a b}}'", T.compile, "{{a b}}", "p")
end

function test_variables_lists_top_level_names()
  lu.assertEquals(T("{{a.b}} {{#xs}}{{y}}{{/xs}} {{c | default}}"):variables(), { "a", "c", "xs" })
end

function test_load_from_file_string_or_template()
  local dir = h.tmpdir()
  h.write(dir .. "/p.txt", "Hello {{who}}\n")
  local t = T.load { file = dir .. "/p.txt" }
  lu.assertEquals(t:render { who = "you" }, "Hello you\n")
  lu.assertEquals(t.name, dir .. "/p.txt")
  lu.assertIs(T.load(t), t)
  lu.assertEquals(T.load("x{{y}}"):render { y = 1 }, "x1")
  lu.assertErrorMsgContains("template: cannot read", T.file, dir .. "/absent.txt")
  h.sh("rm -rf " .. dir)
end

os.exit(lu.LuaUnit.run(), true)
