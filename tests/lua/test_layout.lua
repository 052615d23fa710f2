-- The library's shape (issue 27, items 2, 4 and 6): modules depend on each
-- other in one direction (no cycle of requires), and what a script adds to
-- a registry lives in its run, so a fresh run sees every built-in and none
-- of the additions.
local lu = require "luaunit"
local ev = require "evalua"
local run = require "evalua.core.run"

local SRC = os.getenv("EVALUA_SRC")

-- module name -> { required module names }, from every require of a string
-- literal in lua/evalua/ (a require inside a function counts too: a cycle
-- through a late require is still a cycle).
local function graph()
  local g = {}
  local p = io.popen("cd " .. SRC .. "/lua && find evalua -name '*.lua'")
  for path in p:lines() do
    local name = path:gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
    local f = assert(io.open(SRC .. "/lua/" .. path))
    local deps = {}
    for dep in f:read("a"):gmatch("require%s*%(?%s*[\"']([%w_.]+)[\"']") do deps[dep] = true end
    f:close()
    g[name] = deps
  end
  p:close()
  return g
end

-- The first cycle found by a depth-first walk, as "a -> b -> a", or nil.
local function a_cycle(g)
  local state, stack = {}, {}
  local function visit(m)
    state[m] = "open"
    stack[#stack + 1] = m
    for dep in pairs(g[m]) do
      if g[dep] and dep ~= m then
        if state[dep] == "open" then
          local from = 1
          while stack[from] ~= dep do from = from + 1 end
          return table.concat(stack, " -> ", from) .. " -> " .. dep
        end
        if not state[dep] then
          local c = visit(dep)
          if c then return c end
        end
      end
    end
    stack[#stack] = nil
    state[m] = "done"
  end
  local names = {}
  for m in pairs(g) do names[#names + 1] = m end
  table.sort(names)
  for _, m in ipairs(names) do
    if not state[m] then
      local c = visit(m)
      if c then return c end
    end
  end
end

function test_no_module_cycle()
  local g = graph()
  lu.assertNotNil(g["evalua.core.registry"], "the walk found the library")
  lu.assertNil(a_cycle(g))
  -- the walk finds a cycle when there is one
  lu.assertEquals(a_cycle { a = { b = true }, b = { c = true }, c = { a = true } }, "a -> b -> c -> a")
end

-- Each registry a script can add to: the addition is seen in its run, not
-- in a fresh one, and the built-ins are seen in both.
function test_a_fresh_run_sees_the_builtins_and_none_of_the_additions()
  local registry = require "evalua.core.registry"
  local first = run.current()
  ev.register("shouts", function() return 1 end)
  ev.report.register("shout", function() return "!" end, "txt")
  ev.template.filters.shout = function(v) return v .. "!" end
  ev.judge.prices["judge-x"] = { prompt = 1, completion = 2 }
  ev.judge.register_op("shout_op", { prompt = { system = "s", user = "u" }, parse = function() return 1 end })
  lu.assertEquals(ev.template.compile("{{x | shout}}"):render { x = "a" }, "a!")
  lu.assertEquals(ev.judge.prices["judge-x"].completion, 2)

  run.use(run.new())
  lu.assertErrorMsgContains("unknown metric 'shouts'", registry.resolve, "shouts")
  lu.assertNotNil(registry.resolve("faithfulness"))
  lu.assertNotNil(registry.resolve("tool_correctness"))
  lu.assertNotNil(registry.resolve("token_f1"))
  lu.assertNotNil(registry.resolve("ndcg_cut_10"))
  lu.assertErrorMsgContains("unknown filter 'shout'", ev.template.compile, "{{x | shout}}")
  lu.assertEquals(ev.template.compile("{{x | upper}}"):render { x = "a" }, "A")
  lu.assertNil(ev.judge.prices["judge-x"])
  local formats = table.concat(ev.report.formats(), ",")
  lu.assertEquals(formats, "csv,html,json,junit,markdown,md,terminal")
  lu.assertErrorMsgContains("unknown operation 'shout_op'", require("evalua.judge.ops").get, "shout_op")
  lu.assertNotNil(require("evalua.judge.ops").get("statements"))

  run.use(first)
  lu.assertEquals(ev.template.compile("{{x | shout}}"):render { x = "a" }, "a!")
  lu.assertStrContains(table.concat(ev.report.formats(), ","), "shout")
  local seen = {}
  for name in pairs(ev.template.filters) do seen[#seen + 1] = name end
  table.sort(seen)
  lu.assertEquals(#seen, 11) -- the 10 built-ins and the addition
  lu.assertStrContains(table.concat(seen, ","), "shout")
end

os.exit(lu.LuaUnit.run())
