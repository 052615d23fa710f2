-- The public surface (issue 27, items 1 and 3; issue 26, item 4): ev.<name>
-- is an explicit, documented list in lua/evalua/init.lua; anything else is
-- an error naming it; internal modules keep their full names; a sandboxed
-- script requires the public modules and the standard libraries only.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local ev = require "evalua"

local PUBLIC = { "agent", "assertions", "cli", "compare", "dataset", "evaluate", "gate", "generate", "geval", "history",
                 "json", "judge", "llm_evaluator", "map", "matrix_view", "metrics", "notify", "provider", "rag",
                 "report", "scorers", "shard", "stats", "template", "text", "vector" }
local LIST = table.concat(PUBLIC, ", ")

local function read(path)
  local f = assert(io.open(os.getenv("EVALUA_SRC") .. "/" .. path))
  local s = f:read("a")
  f:close()
  return s
end

local function lines_of(cmd)
  local p = io.popen(cmd)
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

function test_the_list_is_the_documented_one()
  local names = {}
  for name in pairs(getmetatable(ev).__public) do names[#names + 1] = name end
  table.sort(names)
  lu.assertEquals(names, PUBLIC)
  local docs = read("README.md")
  for _, f in ipairs(lines_of("ls " .. os.getenv("EVALUA_SRC") .. "/docs/*.md")) do
    local file = assert(io.open(f))
    docs = docs .. file:read("a")
    file:close()
  end
  local reference = read("README.md"):match("## Reference\n(.-)\n%- %[")
  for _, name in ipairs(PUBLIC) do
    lu.assertStrContains(reference, "`ev." .. name .. "`", false, name .. " is not in the README's reference")
    lu.assertNotNil(docs:find("ev." .. name .. "[.(`{ ]"), name .. " is documented nowhere")
  end
end

function test_an_unknown_name_is_an_error_naming_the_public_modules()
  local ok, err = pcall(function() return ev.frobnicate end)
  lu.assertFalse(ok)
  lu.assertEquals(err, "tests/lua/test_public.lua:48: ev.frobnicate: no such module (public: " .. LIST .. ")")
  local r = h.run_script("local ev = require 'evalua'\nprint(ev.frobnicate)", "--sandbox")
  lu.assertEquals(r.status, 3)
  lu.assertStrContains(r.stderr, "script.lua:2: ev.frobnicate: no such module (public: " .. LIST .. ")")
end

-- Every module of lua/evalua that is not public is internal: reached by its
-- full name, by the library and by tests.
function test_internal_modules_keep_their_full_names()
  local public = {}
  for _, name in ipairs(PUBLIC) do public[name] = true end
  local n = 0
  for _, path in pairs(getmetatable(ev).__public) do public[path] = true end
  for _, f in ipairs(lines_of("cd " .. os.getenv("EVALUA_SRC") .. "/lua/evalua && find . -name '*.lua' | sort")) do
    local name = "evalua" .. f:sub(2):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
    if name ~= "evalua" and not public[name] and name ~= "evalua.core.sandbox" then
      lu.assertNotNil(require(name), name)
      n = n + 1
    end
  end
  lu.assertTrue(n >= 10)
end

-- For one release the internal names ev reached still load, saying so once,
-- outside --sandbox; under --sandbox they are unknown names.
function test_former_names_warn_for_one_release()
  local r = h.run_script([[
local ev = require "evalua"
print(ev.run == require "evalua.core.run", ev.results == require "evalua.eval.results", ev.run ~= nil)]])
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "true\ttrue\ttrue\n")
  lu.assertEquals(r.stderr, table.concat({
    'evalua: warning: ev.run is internal and leaves ev in the next release; use require "evalua.core.run" (public modules: '
      .. LIST .. ")",
    'evalua: warning: ev.results is internal and leaves ev in the next release; use require "evalua.eval.results" '
      .. "(public modules: " .. LIST .. ")", "" }, "\n"))
  r = h.run_script("print(pcall(function() return require('evalua').run end))", "--sandbox")
  lu.assertEquals(r.stdout, "false\tscript.lua:1: ev.run: no such module (public: " .. LIST .. ")\n")
end

-- The audit's way in: a sandboxed script required evalua._table and made a
-- 1.5 GB score table; every internal module, C or Lua, is refused now, by
-- require and through package.loaded, package.preload and the searchers.
function test_a_sandboxed_script_reaches_only_the_public_modules()
  local internal = { "cjson", "cjson.safe", "evalua.core.run", "evalua.eval.results", "evalua.report.html",
                     "evalua.judge.http", "evalua.core.sandbox" }
  for name in pairs(package.preload) do
    if name:match("^evalua%._") then internal[#internal + 1] = name end
  end
  table.sort(internal)
  local r = h.run_script(([[
local ev = require "evalua"
local refused = 0
for _, name in ipairs { "%s" } do
  local ok, err = pcall(require, name)
  if not ok and err:find("sandbox: module '" .. name .. "' is not available in --sandbox mode", 1, true) then
    refused = refused + 1
  end
  assert(package.loaded[name] == nil and package.preload[name] == nil, name)
  for _, search in ipairs(package.searchers) do assert(type(search(name)) ~= "function", name) end
end
print(refused)
-- the library keeps its own: ev.dataset loads evalua._table and ev.metrics evalua._retrieval
local t = ev.dataset.from_rows { { qid = "q", retrieved = { "a" }, gold_doc_ids = { "a" } } }
print(#t, ev.metrics.mrr({ "a" }, { "a" }), package.loaded["evalua._table"], package.loaded["evalua.core.run"])
print(require("evalua.eval.text").token_f1("a b", "a b"), require("string") == string, package.loaded.evalua == ev)
print(pcall(require, "evalua._table"))]]):format(table.concat(internal, '", "')), "--sandbox")
  lu.assertEquals(r.status, 0, r.stderr)
  local out = {}
  for l in r.stdout:gmatch("[^\n]+") do out[#out + 1] = l end
  lu.assertEquals(out[1], tostring(#internal))
  lu.assertEquals(out[2], "1\t1.0\tnil\tnil")
  lu.assertEquals(out[3], "1.0\ttrue\ttrue")
  lu.assertEquals(out[4], "false\tsandbox: module 'evalua._table' is not available in --sandbox mode "
    .. '(a script requires "evalua", the standard libraries and the public modules: ' .. LIST .. ")")
end

-- The bundled nightly job asked evalua._judge whether a server is set; it
-- asks the public ev.judge.configured() now, which works under --sandbox.
function test_judge_configured_says_whether_a_server_is_set()
  local dir = h.tmpdir()
  h.write(dir .. "/s.lua", 'print(require("evalua").judge.configured())')
  local r = h.run(("(cd %s && env -u OPENAI_BASE_URL %s run --sandbox s.lua && OPENAI_BASE_URL=http://127.0.0.1:9/v1 %s run --sandbox s.lua)")
    :format(dir, h.bin, h.bin))
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.stdout, "false\ntrue\n")
end

os.exit(lu.LuaUnit.run(), true)
