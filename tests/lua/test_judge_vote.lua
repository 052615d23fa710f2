-- How the answers of n samples combine (lua/evalua/judge/vote.lua); values
-- by hand.
local lu = require "luaunit"
local vote = require "evalua.judge.vote"

TestVote = {}

function TestVote:test_majority_and_its_ties()
  lu.assertEquals({ vote.majority { "YES", "NO", "YES" } }, { "YES", 2 / 3 })
  lu.assertEquals(vote.majority { "A", "B" }, "A")      -- strings: the earliest sample's
  lu.assertEquals(vote.majority { 1, 0 }, 0)            -- numbers: the lower, against the statement
  lu.assertEquals(vote.majority { 2, 1, 1, 2, 0 }, 1)
end

function TestVote:test_kinds()
  local m, d = vote.combine("mean", { 3, 4, 5 })
  lu.assertEquals({ m, d.spread }, { 4, 1 })
  lu.assertEquals(vote.combine("mean", { 0.5 }), 0.5)
  local v, info = vote.combine("verdicts", { { { statement = "s", grade = 2 } }, { { statement = "s", grade = 1 } },
                                             { { statement = "s", grade = 1 } } })
  lu.assertEquals(v, { { statement = "s", grade = 1, votes = { 2, 1, 1 } } })
  lu.assertAlmostEquals(info.agreement, 2 / 3, 1e-15)
  lu.assertEquals({ vote.combine("verdicts", { { { verdict = 1 } }, {} }) },
                  { nil, "the samples listed different statements" })
  lu.assertEquals(vote.combine("concat", { { 1, 2 }, { 3 } }), { 1, 2, 3 })
  lu.assertEquals(vote.combine("outputs", { { score = 1, label = "x" }, { score = 0, label = "y" }, { score = 1, label = "y" } }),
                  { score = 2 / 3, label = "y" })
  lu.assertErrorMsgContains("vote: unknown kind 'median'", vote.combine, "median", { 1 })
end

os.exit(lu.LuaUnit.run(), true)
