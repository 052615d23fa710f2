-- ev.vector from Lua: values worked out by hand, batched forms agreeing with
-- the single ones, and the errors for mismatched, empty or broken vectors.
local lu = require "luaunit"
local ev = require "evalua"
local v = ev.vector

function test_values()
  lu.assertEquals(v.dot({ 1, 2, 3 }, { 4, 5, 6 }), 32.0)          -- 4 + 10 + 18
  lu.assertAlmostEquals(v.cosine({ 3, 4 }, { 4, 3 }), 0.96, 1e-15) -- 24 / 25
  lu.assertEquals(v.cosine({ 1, 0 }, { -1, 0 }), -1.0)
  lu.assertEquals(v.cosine({ 0, 0 }, { 1, 2 }), 0.0)               -- zero vector: no direction
end

function test_batched_forms_agree_with_single_forms()
  local q = { 0.1, -0.4, 0.8 }
  local vs = { { 0.2, 0.1, 0.9 }, { -1, 0, 0 }, { 0, 0, 0 }, { 0.1, -0.4, 0.8 } }
  local cos, dot = v.cosine_many(q, vs), v.dot_many(q, vs)
  local qs = { q, q, q, q }
  local cp, dp = v.cosine_paired(qs, vs), v.dot_paired(qs, vs)
  for i, x in ipairs(vs) do
    lu.assertEquals(cos[i], v.cosine(q, x))
    lu.assertEquals(dot[i], v.dot(q, x))
    lu.assertEquals(cp[i], cos[i])
    lu.assertEquals(dp[i], dot[i])
  end
  lu.assertEquals(v.cosine_many(q, {}), {})
  -- pairs of different dimensions in one call
  lu.assertEquals(v.dot_paired({ { 1, 2 }, { 3 } }, { { 3, 4 }, { 5 } }), { 11.0, 15.0 })
end

local fails = require("tests.lua.helpers").fails_with_argument_error

function test_bad_input()
  fails(2, "#b is 1 but #a is 2)", v.cosine, { 1, 2 }, { 1 })
  fails(1, "a is empty)", v.dot, {}, {})
  fails(2, "b[2] is NaN)", v.cosine, { 1, 2 }, { 1, 0 / 0 })
  fails(1, "query is empty)", v.cosine_many, {}, { {} })
  fails(2, "#vectors[2] is 1 but #query is 2)", v.cosine_many, { 1, 2 }, { { 1, 2 }, { 1 } })
  fails(2, "vectors[2][1] is a string, expected a number)", v.dot_many, { 1 }, { { 1 }, { "x" } })
  fails(2, "vectors[1] is a number, expected a list of numbers)", v.dot_many, { 1 }, { 5 })
  fails(2, "#b is 2 but #a is 1)", v.cosine_paired, { { 1 } }, { { 1 }, { 2 } })
  fails(2, "#b[1] is 1 but #a[1] is 2)", v.cosine_paired, { { 1, 2 } }, { { 1 } })
  fails(1, "a[1] is empty)", v.dot_paired, { {} }, { {} })
end

os.exit(lu.LuaUnit.run(), true)
