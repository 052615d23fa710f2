-- ev.map: input order, errors captured per item, concurrency as the server
-- sees it, blocking calls outside a map, progress only on a terminal.
local lu = require "luaunit"
local ev = require "evalua"
local mockmod = require "tests.mock.mock"
local h = require "tests.lua.helpers"

local mock = mockmod.start()
local say = mockmod.say

local function judge(opts) return mock:judge(nil, opts) end

TestMap = {}
function TestMap:setUp() mock:reset() end

function TestMap:test_plain_functions_map_in_order()
  local out, info = ev.map({ 3, 1, 2 }, function(x, i) return x * 10 + i end)
  lu.assertEquals(out, { 31, 12, 23 })
  lu.assertEquals(info.n, 3)
  lu.assertEquals(info.failed, 0)
  lu.assertEquals(ev.map({}, function() return 1 end), {})
end

function TestMap:test_results_keep_input_order_when_answers_arrive_out_of_order()
  local j = judge()
  local latency = { 150, 30, 120, 60, 40, 90 }
  local out = ev.map(latency, function(ms, i)
    return j:chat { messages = { { role = "user", content = say { latency_ms = ms } .. " order " .. i } } }.text
  end)
  for i = 1, #latency do lu.assertStrContains(out[i], "order " .. i) end
  -- they overlapped: the server had all six at once
  lu.assertEquals(mock:stats().peak_in_flight, 6)
end

function TestMap:test_an_error_becomes_that_items_result()
  local out, info = ev.map({ 1, 2, 3 }, function(x)
    if x == 2 then error("no two") end
    return { ok = true, value = x }
  end)
  lu.assertEquals(out[1], { ok = true, value = 1 })
  lu.assertEquals(out[2].ok, false)
  lu.assertEquals(out[2].unmeasured, true)
  lu.assertStrContains(out[2].error, "test_map.lua:")
  lu.assertStrContains(out[2].error, "no two")
  lu.assertEquals(out[3], { ok = true, value = 3 })
  lu.assertEquals(info.failed, 1)
  local e = ev.map({ 1 }, function() error({ code = 7 }) end)
  lu.assertStrContains(e[1].error, "table:")
end

function TestMap:test_failed_judge_results_count_as_failures()
  local j = judge()
  local _, info = ev.map({ "400", "ok" }, function(x)
    return j:chat { messages = { { role = "user", content = x == "400" and say { faults = { "400" } } or "fine" } } }
  end)
  lu.assertEquals(info.failed, 1)
end

function TestMap:test_concurrency_bounds_the_items_in_flight()
  local j = judge { concurrency = 16 }
  local items = {}
  for i = 1, 12 do items[i] = i end
  local t0 = ev.sys.monotonic()
  ev.map(items, function(i)
    return j:chat { messages = { { role = "user", content = say { latency_ms = 100 } .. " c" .. i } } }
  end, { concurrency = 3 })
  lu.assertEquals(mock:stats().peak_in_flight, 3)
  local wall = ev.sys.monotonic() - t0
  lu.assertTrue(wall >= 0.4 and wall < 1.2, "wall " .. wall) -- 4 rounds of 100 ms
end

-- Issue 12, defect 1: with more items in progress than the judge's window
-- the engine polled with a zero timeout until its deadline (0.96 s of CPU
-- and thousands of wake-ups for this run). It must sleep until a socket
-- event or a due retry: a handful of wake-ups per request.
function TestMap:test_items_waiting_for_a_slot_sleep_instead_of_spinning()
  local j = judge { concurrency = 4 }
  local items = {}
  for i = 1, 80 do items[i] = i end
  local c0 = ev.sys.cputime()
  local out, info = ev.map(items, function(i)
    return j:chat { messages = { { role = "user", content = say { latency_ms = 50 } .. " w" .. i } } }.ok
  end, { concurrency = 20 })
  lu.assertEquals(info.failed, 0)
  lu.assertEquals(#out, 80)
  lu.assertEquals(mock:stats().peak_in_flight, 4)
  local waits = j:stats().engine_waits
  lu.assertTrue(waits <= 3 * 80, ("%d wake-ups for 80 requests, %.3f s CPU"):format(waits, ev.sys.cputime() - c0))
end

-- With two judges in one map the loop polled them in turn, one with a 5 ms
-- timeout: 200 wake-ups a second whatever the traffic. Now it sleeps on
-- both engines' descriptors at once.
function TestMap:test_a_map_over_two_judges_sleeps_on_both()
  local a, b = judge { concurrency = 4 }, judge { concurrency = 4 }
  local items = {}
  for i = 1, 40 do items[i] = i end
  local out, info = ev.map(items, function(i)
    local j = i % 2 == 0 and a or b
    return j:chat { messages = { { role = "user", content = say { latency_ms = 50 } .. " two " .. i } } }.ok
  end, { concurrency = 20 })
  lu.assertEquals(info.failed, 0)
  lu.assertEquals(#out, 40)
  for _, j in ipairs { a, b } do
    local waits = j:stats().engine_waits
    lu.assertTrue(waits <= 3 * 20, waits .. " wake-ups for 20 requests")
  end
end

function TestMap:test_calls_outside_a_map_block_and_nested_maps_work()
  local j = judge()
  local r = j:chat { messages = { { role = "user", content = "outside" } } }
  lu.assertEquals(r.text, "mock answer: outside")
  local out = ev.map({ 1, 2 }, function(i)
    local inner = ev.map({ "a", "b" }, function(s)
      return j:chat { messages = { { role = "user", content = s .. i } } }.text
    end)
    return table.concat(inner, ",")
  end)
  lu.assertEquals(out, { "mock answer: a1,mock answer: b1", "mock answer: a2,mock answer: b2" })
end

function TestMap:test_two_judges_in_one_map()
  local a, b = judge(), judge { model = "other" }
  local out = ev.map({ 1, 2, 3 }, function(i)
    local ra = a:chat { messages = { { role = "user", content = "a" .. i } } }
    local rb = b:chat { messages = { { role = "user", content = "b" .. i } } }
    return ra.model .. "/" .. rb.model
  end)
  lu.assertEquals(out, { "m/other", "m/other", "m/other" })
end

function TestMap:test_a_coroutine_of_the_users_own_still_works()
  local j = judge()
  local out = ev.map({ 1 }, function()
    local co = coroutine.wrap(function()
      coroutine.yield("first")
      return j:chat { messages = { { role = "user", content = "own" } } }.text
    end)
    return co() .. "+" .. co()
  end)
  lu.assertEquals(out[1], "first+mock answer: own")
end

function TestMap:test_a_stray_yield_fails_that_item_only()
  local out = ev.map({ 1, 2 }, function(i)
    if i == 1 then coroutine.yield("stray") end
    return i
  end)
  lu.assertEquals(out[1].error, "ev.map: the item function yielded outside a coroutine of its own")
  lu.assertEquals(out[2], 2)
end

function TestMap:test_bad_arguments_are_errors()
  lu.assertErrorMsgContains("ev.map: items must be a list", ev.map, 5, print)
  lu.assertErrorMsgContains("ev.map: fn must be a function", ev.map, {}, 5)
  lu.assertErrorMsgContains("concurrency must be a whole number", ev.map, {}, print, { concurrency = 0 })
  lu.assertErrorMsgContains("concurrency must be a whole number", ev.map, {}, print, { concurrency = 1.5 })
end

local PROGRESS = [[
local ev = require "evalua"
ev.map({1, 2, 3}, function(i) return i end, %s)
io.stdout:write("done\n")
]]

function TestMap:test_progress_is_redrawn_on_a_terminal_only()
  -- stderr is a file here and the run is short: nothing is written
  local r = h.run_script(PROGRESS:format("{progress = true}"))
  lu.assertEquals(r.stdout, "done\n")
  lu.assertEquals(r.stderr, "")
  -- under a pseudo-terminal (util-linux script) the line is redrawn in place
  local dir = h.tmpdir()
  h.write(dir .. "/p.lua", PROGRESS:format("{label = 'items'}"))
  r = h.run(("cd %s && TERM=xterm script -qec '%s run p.lua' /dev/null"):format(dir, h.bin))
  lu.assertStrContains(r.stdout, "\ritems 3/3 100%")
  lu.assertStrContains(r.stdout, "failed 0\27[K")
  -- TERM=dumb cannot redraw: as in a log, a short run writes nothing
  r = h.run(("cd %s && TERM=dumb script -qec '%s run p.lua' /dev/null"):format(dir, h.bin))
  lu.assertNotStrContains(r.stdout, "3/3")
  h.write(dir .. "/q.lua", PROGRESS:format("{quiet = true}"))
  r = h.run(("cd %s && TERM=xterm script -qec '%s run q.lua' /dev/null"):format(dir, h.bin))
  lu.assertNotStrContains(r.stdout, "3/3")
  h.sh("rm -rf " .. dir)
end

-- A log (stderr a file) gets a whole line every few seconds of a long run:
-- every 5 s, here every 0.05 s ($EVALUA_PROGRESS_SECONDS) over items of 0.1 s.
function TestMap:test_a_long_run_writes_progress_lines_into_a_log()
  local code = [[
local ev = require "evalua"
ev.map({1, 2, 3}, function(i) ev.sys.sleep(0.1) return i end, { label = "items" })
]]
  local r = h.run_script(code, nil, nil, "EVALUA_PROGRESS_SECONDS=0.05")
  local lines = {}
  for l in r.stderr:gmatch("[^\n]+") do lines[#lines + 1] = l:gsub("%d+%.%d/s", "R/s") end
  lu.assertEquals(lines, { "items 1/3  33% R/s ETA 0:00 failed 0", "items 2/3  66% R/s ETA 0:00 failed 0",
                           "items 3/3 100% R/s in 0:00 failed 0" })
  lu.assertNotStrContains(r.stderr, "\r")
end

-- A limit passed inside an item ends the run (exit 3), as anywhere else:
-- it was kept as the item's failure (or, through ev.evaluate, as an
-- unmeasured row), and the run went on to exit 0.
local EVALUATE = [[
local ev = require "evalua"
local res = ev.evaluate({ { qid = "a" } }, { metrics = { { name = "m", fn = function() %s end } }, ci = false })
io.stdout:write("measured ", res:agg("all", "m").measured, "\n")
]]

function TestMap:test_a_limit_passed_in_an_item_ends_the_run()
  local cases = {
    { [[
local ev = require "evalua"
local out = ev.map({1}, function(i) while true do end end)
io.stdout:write("after map: ", tostring(out[1].error), "\n")
]], "--time-limit 0.3", "time limit of 0.3 s exceeded (--time-limit)" },
    { EVALUATE:format("while true do end"), "--time-limit 0.3", "time limit of 0.3 s exceeded (--time-limit)" },
    { EVALUATE:format('return #("x"):rep(2e8)'), "--mem-limit 64", "memory limit of 64 MB exceeded (--mem-limit)" },
  }
  for _, c in ipairs(cases) do
    local r = h.run_script(c[1], c[2])
    lu.assertEquals(r.status, 3, c[1])
    lu.assertEquals(r.stdout, "", c[1])
    lu.assertStrContains(r.stderr, c[3])
  end
end

local code = lu.LuaUnit.run()
mock:stop()
os.exit(code, true)
