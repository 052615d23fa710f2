-- evalua._regex, the PCRE2 binding of the regex assertions: byte positions
-- of the first match in UTF-8 mode, no answer (nil and why) when a limit is
-- hit or the text is not UTF-8, a closed object refuses use, closing is
-- idempotent, and compiled code counts against --mem-limit. What the
-- messages mean to a user is tested with the assertions (test_assertions.lua).
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local R = require "evalua._regex"

TestRegex = {}

function TestRegex:test_find_gives_byte_positions()
  local re = assert(R.compile("分片"))
  lu.assertEquals({ re:find("连续三个分片失败") }, { 13, 18 })
  lu.assertEquals({ re:find("连续三个分片失败", 19) }, { false })
  lu.assertEquals({ assert(R.compile("b*")):find("abc", 4) }, { 4, 3 }) -- the empty match at the end
  h.fails_with_argument_error(3, "init out of range", re.find, re, "abc", 5)
  h.fails_with_argument_error(3, "init out of range", re.find, re, "abc", 0)
  h.fails_with_argument_error(3, "init is inside a UTF-8 character", re.find, re, "分片", 2)
end

function TestRegex:test_bad_patterns_and_texts()
  lu.assertEquals({ R.compile("[a-") }, { nil, "missing terminating ] for character class after 3 bytes of the pattern" })
  lu.assertEquals({ R.compile("\xff") }, { nil, "UTF-8 error: illegal byte (0xfe or 0xff) at the start of the pattern" })
  lu.assertEquals({ R.compile("a\\C") }, { nil, "using \\C is disabled by the application after 3 bytes of the pattern" })
  lu.assertEquals({ assert(R.compile("x")):find("\xc3") },
    { nil, "the text is not valid UTF-8 (byte 1: UTF-8 error: 1 byte missing at end)" })
  lu.assertEquals({ assert(R.compile("^(a|aa)+$")):find(("a"):rep(5000) .. "!") },
    { nil, "gave up after 1000000 backtracking steps (the match limit): the pattern backtracks catastrophically "
      .. "on this text" })
  lu.assertEquals(R.limits, { match = 1000000, depth = 100000, heap_kib = 65536 })
end

function TestRegex:test_closed_object()
  local re = assert(R.compile("x"))
  lu.assertEquals(tostring(re), "regex (open)")
  re:close()
  re:close()
  lu.assertEquals(tostring(re), "regex (closed)")
  lu.assertErrorMsgContains("regex: closed object", re.find, re, "x")
  do
    local scoped <close> = assert(R.compile("x"))
    lu.assertEquals({ scoped:find("axb") }, { 2, 2 })
  end
  re = nil -- collected after close: __gc finds nothing left to free
  for _ = 1, 100 do R.compile("(a|b)+c") end
  collectgarbage()
  collectgarbage()
end

-- Compiled code lives in the state's memory: keeping many patterns meets
-- the cap like any Lua value, instead of growing outside it.
function TestRegex:test_code_counts_against_the_memory_cap()
  local r = h.run_script([[
local R = require "evalua._regex"
local kept = {}
local ok, err = pcall(function()
  for i = 1, 1e6 do kept[i] = assert(R.compile("(?:ab|cd){3000}" .. i)) end -- some 50 KB of code each
end)
print(ok, err, #kept < 1000)
]], "--mem-limit 16")
  lu.assertEquals(r.stdout, "false\tnot enough memory\ttrue\n")
end

os.exit(lu.LuaUnit.run(), true)
