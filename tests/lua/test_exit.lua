-- ev.exit ends the run from anywhere: inside a metric, an ev.map item or a
-- pcall, the request is not turned into an unmeasured item (issue 13, 16).
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local function both_profiles(code, check)
  for _, opts in ipairs { "", "--sandbox --cpu-limit 5 --mem-limit 128" } do check(h.run_script(code, opts), opts) end
end

function test_exit_inside_ev_map_ends_the_run()
  both_profiles([[
local ev = require "evalua"
local out = ev.map({ 1, 2, 3 }, function(x) if x == 2 then ev.exit(5) end return x end)
print("not reached", #out)]], function(r, opts)
    lu.assertEquals(r.status, 5, opts .. r.stderr)
    lu.assertNotStrContains(r.stdout, "not reached")
  end)
end

function test_exit_inside_a_metric_ends_the_run()
  both_profiles([[
local ev = require "evalua"
ev.register("stop", function(row) ev.exit(6) end)
local res = ev.evaluate({ { qid = "q1", answer = "a", gold_answers = { "a" } } }, { metrics = { "stop" } })
print("not reached")]], function(r, opts)
    lu.assertEquals(r.status, 6, opts .. r.stderr)
    lu.assertNotStrContains(r.stdout, "not reached")
  end)
end

function test_pcall_cannot_keep_an_exit_request()
  both_profiles([[
local ev = require "evalua"
print(pcall(ev.exit, 7))
print("not reached")]], function(r, opts)
    lu.assertEquals(r.status, 7, opts .. r.stderr)
    lu.assertEquals(r.stdout, "")
    lu.assertEquals(r.stderr, "")
  end)
end

function test_a_usage_error_inside_pcall_still_exits_2()
  both_profiles([[
local ev = require "evalua"
print(pcall(ev.cli.parse, { "--bogus" }, { { "k", 1, "rank cutoff" } }))
print("not reached")]], function(r, opts)
    lu.assertEquals(r.status, 2, opts .. r.stderr)
    lu.assertEquals(r.stdout, "")
    lu.assertEquals(r.stderr, "evalua: unknown option --bogus (try --help)\n")
  end)
end

os.exit(lu.LuaUnit.run(), true)
