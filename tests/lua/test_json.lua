-- evalua.core.json: sorted keys, exact numbers, escapes, arrays, errors.
local lu = require "luaunit"
local json = require "evalua.core.json"

function test_keys_sorted_and_nested()
  lu.assertEquals(json.encode { b = 1, a = { 3, 2 }, c = { z = true, y = false } },
    '{"a":[3,2],"b":1,"c":{"y":false,"z":true}}')
end

function test_numbers_round_trip_exactly()
  lu.assertEquals(json.encode { 0.1, 1 / 3, 2 ^ 53, 3, -0.5, 1e-300 },
    "[0.1,0.33333333333333331,9007199254740992,3,-0.5,1e-300]")
  for _, x in ipairs { 0.1, 1 / 3, 123.456, 1e-300, 2 ^ 60 + 0.0 } do
    lu.assertEquals(tonumber(json.encode(x)), x)
  end
end

function test_strings_escaped_and_utf8_kept()
  lu.assertEquals(json.encode('a"b\\c\n\1</script>中文'), '"a\\"b\\\\c\\n\\u0001</script>中文"')
end

function test_empty_tables()
  lu.assertEquals(json.encode {}, "{}")
  lu.assertEquals(json.encode(setmetatable({}, json.array)), "[]")
end

function test_nan_and_functions_are_errors()
  lu.assertErrorMsgEquals("json: cannot encode NaN or infinity", json.encode, { x = 0 / 0 })
  lu.assertErrorMsgEquals("json: cannot encode a function", json.encode, { print })
end

function test_indent()
  lu.assertEquals(json.encode({ a = { 1 } }, { indent = " " }), '{\n "a": [\n  1\n ]\n}')
end

os.exit(lu.LuaUnit.run(), true)
