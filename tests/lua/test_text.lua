-- ev.text from Lua: the values a script sees, batch forms agreeing with the
-- single forms, and the error messages for bad input. Expected values are
-- those of the official SQuAD v2.0 evaluation script on the same strings
-- (English) or worked out by hand from docs/text.md (the rest); the C suite
-- tests/c/test_text.c has the full derivations.
local lu = require "luaunit"
local ev = require "evalua"
local text = ev.text

local cases = {
  { "June 29th, 2007", "June 29, 2007" },
  { "The Eiffel Tower", { "Eiffel Tower", "Paris" } },
  { "Broncos won", { "Denver Broncos", "The Broncos won it" } },
  { "", "" }, { "", { "", "Paris" } }, { "Paris", {} }, { "", {} },
  { "iPhone于2007年发布", "2007年" },
  { "连续三个分片失败后中止上传。", { "三个失败分片", "三个分片" } },
  { "東京タワーは333メートルです", "333メートル" },
  { "서울은 한국의 수도입니다", "서울" },
  { "ＩＢＭ　２０２４", "IBM 2024" },
  { "Café", { "cafe", "CAFÉ" } },
  { "kitten", "sitting" },
}

function test_values_a_script_sees()
  lu.assertEquals(text.normalize("iPhone于2007年发布"), "iphone 于 2007 年 发 布")
  lu.assertEquals(text.normalize("《三体》，刘慈欣。"), "三 体 刘 慈 欣")
  lu.assertEquals(text.tokens("The 北京 answer"), { "北", "京", "answer" })
  lu.assertEquals(text.tokens(""), {})
  lu.assertEquals(text.exact_match("Paris", "Paris"), 1)
  lu.assertEquals(math.type(text.exact_match("Paris", "paris")), "integer")
  lu.assertEquals(text.exact_match("Paris", "paris"), 0)
  lu.assertEquals(text.exact_match("The Paris!", "paris", { normalize = true }), 1)
  lu.assertEquals(text.exact_match("x", { "y", "x" }), 1)
  lu.assertAlmostEquals(text.token_f1("June 29th, 2007", "June 29, 2007"), 2 / 3, 1e-15)
  lu.assertAlmostEquals(text.token_f1("连续三个分片失败后中止上传。", "三个失败分片"), 12 / 19, 1e-15)
  lu.assertAlmostEquals(text.rouge_l("连续三个分片失败后中止上传。", "三个失败分片"), 8 / 19, 1e-15)
  lu.assertAlmostEquals(text.edit_similarity("kitten", "sitting"), 4 / 7, 1e-15)
  lu.assertEquals(text.edit_similarity("The Paris!", "paris", { normalize = true }), 1.0)
  lu.assertEquals(text.edit_distance("kitten", "sitting"), 3)
  lu.assertEquals(math.type(text.edit_distance("kitten", "sitting", 3)), "integer")
  lu.assertNil(text.edit_distance("kitten", "sitting", 2)) -- above the bound
  lu.assertEquals(text.edit_distance(("a"):rep(20000), ("a"):rep(19990) .. "b", 11), 10) -- 10 a against b: 1 substitution, 9 deletions
  lu.assertErrorMsgContains("a bound is a whole number >= 0", text.edit_distance, "a", "b", -1)
  lu.assertErrorMsgContains("invalid UTF-8 at byte 2", text.edit_distance, "a", "a\xFF")
  lu.assertEquals(text.token_f1("", {}), 1.0)     -- unanswerable, and no answer given
  lu.assertEquals(text.token_f1("Paris", {}), 0.0)
end

function test_batch_forms_agree_with_single_forms()
  local preds, golds = {}, {}
  for i, c in ipairs(cases) do preds[i], golds[i] = c[1], c[2] end
  local forms = {
    { "exact_match", nil }, { "exact_match", { normalize = true } },
    { "token_f1", nil }, { "rouge_l", nil },
    { "edit_similarity", nil }, { "edit_similarity", { normalize = true } },
  }
  for _, f in ipairs(forms) do
    local name, opts = f[1], f[2]
    local got = text[name .. "_batch"](preds, golds, opts)
    lu.assertEquals(#got, #cases)
    for i = 1, #cases do
      local want = text[name](preds[i], golds[i], opts)
      lu.assertEquals(got[i], want, name .. " row " .. i)
      lu.assertEquals(math.type(got[i]), math.type(want))
    end
  end
end

local function err(f, ...)
  local ok, msg = pcall(f, ...)
  lu.assertFalse(ok)
  return msg
end

-- f(...) must fail with "bad argument #arg to '<name>' (<detail>)"; called
-- through pcall, Lua names the function by its module path.
local function fails(arg, detail, f, ...)
  local msg = err(f, ...)
  lu.assertStrContains(msg, ("bad argument #%d to '"):format(arg))
  lu.assertStrContains(msg, "' (" .. detail)
end

function test_bad_input_names_argument_and_index()
  fails(1, "string expected, got number)", text.token_f1, 1, "x")
  fails(2, "string or list of strings expected", text.token_f1, "x", 3)
  fails(2, "golds[2] is a number, expected a string)", text.token_f1, "x", { "a", 3 })
  fails(2, "golds[2]: invalid UTF-8 at byte 1)", text.token_f1, "x", { "a", "\xff" })
  fails(1, "invalid UTF-8 at byte 3)", text.rouge_l, "ab\xc3", "a")
  fails(2, "#golds is 1 but #preds is 2)", text.token_f1_batch, { "a", "b" }, { "a" })
  fails(1, "preds[2] is a number, expected a string)", text.token_f1_batch, { "a", 2 }, { "a", "b" })
  fails(2, "golds[2][2]: invalid UTF-8 at byte 1)", text.token_f1_batch, { "a", "b" }, { "a", { "b", "\xc3" } })
  fails(2, "golds[2] is a boolean, expected a string or a list of strings)", text.edit_similarity_batch, { "a", "b" }, { "a", false })
  fails(3, "unknown option 'normalise' (known: normalize))", text.exact_match, "a", "b", { normalise = true })
  fails(3, "option 'normalize' must be a boolean, got a number)", text.exact_match, "a", "b", { normalize = 1 })
  fails(3, "this metric takes no options)", text.token_f1, "a", "b", { normalize = true })
end

function test_an_error_leaves_the_module_usable()
  err(text.token_f1_batch, { "a", "\xff" }, { "a", "b" })
  lu.assertEquals(text.token_f1_batch({ "a b c", "x" }, { "b c", "x" }), { 1.0, 1.0 })
  lu.assertAlmostEquals(text.token_f1("cat sat", "cat"), 2 / 3, 1e-15)
end

function test_error_points_at_the_calling_line()
  local r = require("tests.lua.helpers").run_script('local ev = require "evalua"\nprint(ev.text.token_f1("a", nil))')
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "script.lua:2: bad argument #2 to 'token_f1'")
end

os.exit(lu.LuaUnit.run(), true)
