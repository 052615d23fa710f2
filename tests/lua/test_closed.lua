-- Every evalua userdata type follows one rule (host/runtime/udata.h; issue 26,
-- item 1): a script may call its finalisers (__gc, __close) by hand, any
-- number of times; the first closes the object, and every method of a
-- closed object raises "closed object" instead of touching freed memory.
-- The types are found, not listed by hand alone: the C side records each
-- type it makes (with a function that makes an empty object of it), and
-- every metatable named evalua.* in the registry must be one of them.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

-- A new type is added here, and made with evalua_newclass (host/runtime/udata.c).
local TYPES = {
  "evalua.JudgeBox", "evalua.JudgeCacheFailures", "evalua.JudgeCacheStore", "evalua.JudgeEngine", "evalua.Lock", "evalua.Regex", "evalua.TrecData",
  "evalua.TrecFiles", "evalua.Watch", "evalua.codes", "evalua.embedder", "evalua.json.buffer",
  "evalua.report.sink", "evalua.report.stage", "evalua.retrieval.scratch", "evalua.scores", "evalua.scratch", "evalua.sqlite.db", "evalua.sqlite.stmt",
  "evalua.table", "evalua.text.workspace", "evalua.textscan",
}
-- Methods that close: calling them on a closed object does nothing.
local CLOSERS = { close = true, unlock = true }
-- Metamethods that are not methods of the object.
local NOT_METHODS = { __gc = true, __close = true, __index = true, __name = true, __tostring = true }

local registry = debug.getregistry()

local function every_c_module()
  for name in pairs(package.preload) do
    if name:match("^evalua%._") then require(name) end
  end
end

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

function test_every_type_is_known()
  every_c_module()
  local made = registry["evalua.udata_types"]
  lu.assertEquals(sorted_keys(made), TYPES)
  for name, mt in pairs(registry) do
    if type(name) == "string" and name:match("^evalua%.") and type(mt) == "table" and rawget(mt, "__name") == name then
      lu.assertNotNil(made[name], name .. " is made without evalua_newclass")
    end
  end
end

-- The methods of an object: its __index table and its other metamethods.
local function methods_of(mt)
  local out = {}
  for _, t in ipairs { type(mt.__index) == "table" and mt.__index or {}, mt } do
    for k, f in pairs(t) do
      if type(f) == "function" and not NOT_METHODS[k] then out[k] = f end
    end
  end
  return out
end

local function check_closed(name, finaliser)
  local obj = registry["evalua.udata_types"][name]()
  local mt = debug.getmetatable(obj)
  lu.assertIsFunction(mt.__gc, name .. " has no __gc")
  local methods = methods_of(mt)
  local fin = mt[finaliser] or methods[finaliser]
  if not fin then return 0 end
  for _ = 1, 3 do fin(obj) end -- as often as a script likes
  local n = 0
  for m, f in pairs(methods) do
    n = n + 1
    local ok, err = pcall(f, obj, 1, 1, 1)
    if CLOSERS[m] then
      lu.assertTrue(ok, ("%s:%s after %s: %s"):format(name, m, finaliser, tostring(err)))
    else
      lu.assertFalse(ok, ("%s:%s after %s"):format(name, m, finaliser))
      lu.assertStrContains(err, "closed object", false, ("%s:%s after %s"):format(name, m, finaliser))
    end
  end
  if mt.__tostring then lu.assertIsString(tostring(obj)) end
  return n
end

function test_a_finaliser_called_by_hand_closes_the_object()
  every_c_module()
  local tried = {}
  for _, name in ipairs(TYPES) do
    tried[name] = check_closed(name, "__gc")
    check_closed(name, "__close")
    for m in pairs(CLOSERS) do check_closed(name, m) end
  end
  -- the walk reaches the methods (10 of a data set's table, 10 of a client engine ...)
  lu.assertEquals({ tried["evalua.table"], tried["evalua.scores"], tried["evalua.JudgeEngine"],
                    tried["evalua.Watch"], tried["evalua.codes"], tried["evalua.TrecData"] }, { 11, 9, 10, 2, 2, 2 })
  collectgarbage() -- the collector's own __gc of every closed object
  collectgarbage()
end

-- The reproduction of the audit, in the sandbox: the TREC data's __gc by
-- hand, then the data evaluated (a SIGSEGV in metrics/trec.c before), and a
-- data set's table the same way.
function test_a_sandboxed_script_cannot_use_freed_objects()
  local dir = h.tmpdir()
  h.write(dir .. "/in/q", "q1 0 d1 1\n")
  h.write(dir .. "/in/r", "q1 Q0 d1 1 2.0 r\n")
  h.write(dir .. "/in/d.jsonl", '{"qid": "q1", "answer": "a"}\n')
  h.write(dir .. "/s.lua", [[
local ev = require "evalua"
local data = ev.metrics.load_trec("in/q", "in/r")
getmetatable(data).__gc(data)
getmetatable(data).__gc(data)
print(pcall(ev.metrics.evaluate, data, "map"))
print(pcall(data.rows, data))
local t = ev.dataset.load("in/d.jsonl").table
getmetatable(t).__gc(t)
print(pcall(t.get, t, 1, "qid"))
print(pcall(function() return #t end))]])
  local r = h.run(("cd %s && %s run --sandbox --read in s.lua"):format(dir, h.bin))
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, table.concat({
    "false\tbad argument #1 to '?' (closed object)",
    "false\tbad argument #1 to '?' (closed object)",
    "false\tbad argument #1 to '?' (closed object)",
    "false\ts.lua:10: bad argument #1 to 'len' (closed object)", "" }, "\n"))
end

os.exit(lu.LuaUnit.run(), true)
