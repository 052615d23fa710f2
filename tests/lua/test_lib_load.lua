-- libxml2 and libmicrohttpd are opened on first use (host/bindings/xml_load.c,
-- host/view/mhd_load.c; host/runtime/lib_load.c): an empty script maps
-- neither, nor their trees (ICU, GnuTLS); the XML assertions' module maps
-- libxml2 and parses with it.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local SCRIPT = [[
local function mapped(name)
  for line in io.lines("/proc/self/maps") do
    if line:find(name, 1, true) then return true end
  end
  return false
end
local names = { "libxml2", "libicu", "libmicrohttpd", "libgnutls" }
local function all() local t = {} for _, n in ipairs(names) do t[#t + 1] = tostring(mapped(n)) end return table.concat(t, " ") end
local ev = require "evalua"
local _ = ev.dataset, ev.report
print(all())
local is_xml = ev.assertions.compile({ type = "is-xml" }, "test")
print(all())
local xml = require "evalua._xml"
print(all(), xml.check("<a><b/></a>")[1] ~= nil, (select(2, xml.check("<a>"))) ~= nil)
]]

function test_xml_and_http_server_libraries_are_mapped_only_when_used()
  local dir = h.tmpdir()
  h.write(dir .. "/s.lua", SCRIPT)
  local r = h.run(("%s run %s/s.lua"):format(h.bin, dir))
  h.sh("rm -rf " .. dir)
  lu.assertEquals(r.stderr, "")
  lu.assertEquals(r.stdout, "false false false false\nfalse false false false\ntrue true false false\ttrue\ttrue\n")
end

function test_the_binary_does_not_need_them()
  local needed = h.run(("readelf -d %s"):format(h.bin)).stdout
  lu.assertStrContains(needed, "liblua5.4") -- the list was read
  lu.assertNotStrContains(needed, "libxml2")
  lu.assertNotStrContains(needed, "libmicrohttpd")
end

os.exit(lu.LuaUnit.run(), true)
