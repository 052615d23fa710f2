-- Per-case gates: the share of cases passing, and a bottom percentile, with
-- values computed by hand; unmeasured cases never count as passing.
local lu = require "luaunit"
local ev = require "evalua"

local function run(values)
  local rows = {}
  for i, v in ipairs(values) do
    rows[i] = { qid = "q" .. i, system = v.system or "s", pass = v.pass, f1 = v.f1 }
  end
  local pass = { name = "pass", fn = function(r)
    if r.pass == nil then return { unmeasured = true, reason = "no output" } end
    return r.pass
  end }
  local f1 = { name = "f1", fn = function(r) return r.f1 end }
  return ev.evaluate(rows, { metrics = { pass, f1 }, system = "system", ci = false })
end

TestGateCases = {}

function TestGateCases:test_pass_share()
  local res = run { { pass = true, f1 = 0.1 }, { pass = false, f1 = 0.5 }, { pass = true, f1 = 0.9 },
                    { pass = true, f1 = 1.0 } }
  local g = ev.gate.check(res, { pass_share = { pass = 0.75 } })
  lu.assertEquals(#g, 1)
  lu.assertEquals({ g[1].status, g[1].actual, g[1].name, g[1].message },
    { "pass", 0.75, "pass[all] passing share >= 0.75", "3 of 4 cases pass (0.7500), meets 0.75" })
  g = ev.gate.check(res, { pass_share = { pass = 0.95 } })
  lu.assertEquals({ g[1].status, ev.gate.exit_code(g) }, { "fail", 1 })
end

function TestGateCases:test_unmeasured_cases_do_not_pass()
  -- 4 of 5 measured (80% coverage), 4 pass: the share is 4/5, not 4/4
  local res = run { { pass = true }, { pass = true }, { pass = true }, { pass = true }, {} }
  local g = ev.gate.check(res, { pass_share = { pass = 0.9 } })
  lu.assertEquals({ g[1].status, g[1].actual }, { "fail", 0.8 })
  g = ev.gate.check(res, { pass_share = { pass = 0.5 }, min_coverage = 0.9 })
  lu.assertEquals({ g[1].status, g[1].message }, { "undecided", "only 4 of 5 items measured (need 90%)" })
end

function TestGateCases:test_bottom_percentile()
  -- type 7: h = (4 - 1) * 0.10 = 0.3, so p10 = 0.1 + 0.3 * (0.5 - 0.1) = 0.22
  local res = run { { pass = true, f1 = 0.9 }, { pass = true, f1 = 0.1 }, { pass = true, f1 = 1.0 },
                    { pass = true, f1 = 0.5 } }
  local g = ev.gate.check(res, { percentiles = { f1 = { p = 10, min = 0.2 } } })
  lu.assertEquals({ g[1].status, g[1].name, g[1].message }, { "pass", "f1[all] p10 >= 0.2", "p10 of f1 = 0.2200, meets 0.2" })
  lu.assertAlmostEquals(g[1].actual, 0.22, 1e-12)
  g = ev.gate.check(res, { percentiles = { f1 = { p = 10, min = 0.25 } } })
  lu.assertEquals(g[1].status, "fail")
  g = ev.gate.check(res, { percentiles = { f1 = { p = 90, max = 0.9 } } })
  lu.assertEquals(g[1].status, "fail") -- p90 = 0.9 + 0.7 * 0.1 = 0.97
  lu.assertAlmostEquals(g[1].actual, 0.97, 1e-12)
end

function TestGateCases:test_one_gate_per_system_and_bad_specs()
  local res = run { { system = "a", pass = true }, { system = "b", pass = false } }
  local g = ev.gate.check(res, { pass_share = { pass = 1 } })
  lu.assertEquals({ g[1].system, g[1].status, g[2].system, g[2].status }, { "a", "pass", "b", "fail" })
  lu.assertErrorMsgContains("gate: percentiles.pass must be {p = 0..100, min = x} or {p =, max = x}",
    ev.gate.check, res, { percentiles = { pass = { p = 10 } } })
  lu.assertErrorMsgContains("gate: pass_share.pass must be a share from 0 to 1", ev.gate.check, res,
    { pass_share = { pass = 95 } })
  lu.assertErrorMsgContains("gate: metric 'nope' is not in this run", ev.gate.check, res,
    { pass_share = { nope = 0.5 } })
end

os.exit(lu.LuaUnit.run(), true)
