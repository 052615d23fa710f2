-- The judge's JSON: canonical request text (one request, one cache key)
-- and lenient reading of model answers.
local lu = require "luaunit"
local json = require "evalua.judge.json"

function test_canonical_encoding_sorts_keys_and_normalises_numbers()
  lu.assertEquals(json.encode { b = 1, a = { 2, 3.5, true }, c = "x\"y" },
                  '{"a":[2,3.5,true],"b":1,"c":"x\\"y"}')
  -- 0 and 0.0 are the same request; shortest exact form of 0.1
  lu.assertEquals(json.encode { t = 0.0, u = 0, v = 0.1, w = 1e300 }, '{"t":0,"u":0,"v":0.1,"w":1e+300}')
  lu.assertEquals(json.encode { 1 / 3 }, "[0.33333333333333331]")
  lu.assertEquals(json.encode {}, "[]")
  lu.assertEquals(json.encode { n = json.null }, '{"n":null}')
end

function test_canonical_encoding_refuses_what_json_cannot_say()
  lu.assertErrorMsgContains("cannot encode NaN or infinity", json.encode, { 0 / 0 })
  lu.assertErrorMsgContains("cannot encode NaN or infinity", json.encode, { math.huge })
  lu.assertErrorMsgContains("need string keys", json.encode, { [1] = 1, [3] = 3 })
  lu.assertErrorMsgContains("cannot encode a function", json.encode, { print })
end

function test_lenient_reads_plain_fenced_prose_wrapped_and_trailing_commas()
  lu.assertEquals(json.lenient('{"a": 1}'), { a = 1 })
  lu.assertEquals(json.lenient('```json\n{"a": 1}\n```'), { a = 1 })
  lu.assertEquals(json.lenient('```\n[1, 2]\n```'), { 1, 2 })
  lu.assertEquals(json.lenient('Here is my verdict: {"a": {"b": [1, 2,],},} Hope it helps.'), { a = { b = { 1, 2 } } })
  lu.assertEquals(json.lenient('{"s": "keep, ] this,}"}'), { s = "keep, ] this,}" })
end

function test_lenient_refuses_nan_and_non_json()
  local v, err = json.lenient('{"score": NaN}')
  lu.assertNil(v)
  lu.assertStrContains(err, "invalid JSON in the answer")
  v, err = json.lenient("The answer is four.")
  lu.assertNil(v)
  lu.assertEquals(err, "no JSON object in the answer")
  lu.assertNil((json.lenient(nil)))
  lu.assertNil((json.lenient('"just a string"')))
end

function test_denull_drops_null_fields()
  local t = json.denull(json.decode('{"a": null, "b": {"c": null, "d": 1}, "e": [1, null]}'))
  lu.assertNil(t.a)
  lu.assertEquals(t.b, { d = 1 })
  lu.assertEquals(#t.e, 2)
end

os.exit(lu.LuaUnit.run(), true)
