-- evalua._yaml, the libyaml binding that reads promptfoo configs and test
-- lists: YAML 1.2 core-schema scalars as js-yaml (promptfoo's reader) types
-- them, the line of every key and item, merge keys, aliases as copies
-- under a node budget, and malformed or oversized YAML as nil and
-- "file:line:col: message" (the positions counted by hand from the texts).
local lu = require "luaunit"
local Y = require "evalua._yaml"
local json = require "evalua.core.json"

TestYaml = {}

function TestYaml:test_scalars_follow_the_core_schema()
  local v = assert(Y.decode([[
n1: null
n2: ~
n3:
n4: "null"
b1: true
b2: False
b3: yes
i1: 42
i2: -7
i3: 0x1F
i4: 0o17
i5: 007
f1: 2.5
f2: 1e3
f3: -.inf
f4: .5
s1: 1.2.3
s2: '42'
s3: !!str 42
s4: 12:30
t1: !!int "12"
t2: !!float 3
big: 123456789012345678901234
]], "s.yaml"))
  lu.assertIs(v.n1, Y.null)
  lu.assertIs(v.n2, Y.null)
  lu.assertIs(v.n3, Y.null)
  lu.assertIs(Y.null, json.null) -- one null for JSON and YAML values
  lu.assertEquals(v.n4, "null")
  lu.assertIs(v.b1, true)
  lu.assertIs(v.b2, false)
  lu.assertEquals(v.b3, "yes") -- YAML 1.1's yes/no/on/off are strings in 1.2, as in js-yaml
  lu.assertEquals({ v.i1, v.i2, v.i3, v.i4, v.i5 }, { 42, -7, 31, 15, 7 })
  lu.assertEquals(math.type(v.i1), "integer")
  lu.assertEquals({ v.f1, v.f2, v.f3, v.f4 }, { 2.5, 1000.0, -math.huge, 0.5 })
  lu.assertEquals(math.type(v.f2), "float")
  lu.assertEquals({ v.s1, v.s2, v.s3, v.s4 }, { "1.2.3", "42", "42", "12:30" })
  lu.assertEquals(v.t1, 12)
  lu.assertEquals(math.type(v.t2), "float")
  lu.assertEquals(v.big, 1.2345678901234568e23) -- past 64 bits: a double, as JavaScript keeps it
  local nan = assert(Y.decode("x: .nan")).x
  lu.assertTrue(nan ~= nan)
end

function TestYaml:test_block_and_flow_collections()
  local v = assert(Y.decode([[
prompts:
  - "Say {{ x }}"
  - file://p.txt
providers: [openai:gpt-4o-mini, {id: http, config: {url: "http://h/x"}}]
text: |
  line one
  line two
folded: >
  a
  b
empty_list: []
empty_map: {}
1: numeric key
]], "c.yaml"))
  lu.assertEquals(v.prompts, { "Say {{ x }}", "file://p.txt" })
  lu.assertEquals(v.providers[2].config.url, "http://h/x")
  lu.assertEquals(v.text, "line one\nline two\n")
  lu.assertEquals(v.folded, "a b\n")
  lu.assertEquals(v["1"], "numeric key") -- keys are their text, as JavaScript's object keys
  lu.assertIs(getmetatable(v.prompts), Y.array)
  lu.assertEquals(json.encode(v.empty_list), "[]")
  lu.assertEquals(json.encode(v.empty_map), "{}")
end

function TestYaml:test_lines_of_keys_and_items()
  local v, lines = Y.decode("a: 1\n\ntests:\n  - vars: {x: 1}\n    assert:\n      - type: equals\n  - description: two\n",
                            "l.yaml")
  lu.assertEquals(lines[v][0], 1)
  lu.assertEquals(lines[v].a, 1)
  lu.assertEquals(lines[v].tests, 3)
  lu.assertEquals(lines[v.tests][1], 4)
  lu.assertEquals(lines[v.tests][2], 7)
  lu.assertEquals(lines[v.tests[1]].assert, 5)
  lu.assertEquals(lines[v.tests[1].assert[1]].type, 6)
  lu.assertEquals(lines[v.tests[1].vars][0], 4)
end

function TestYaml:test_anchors_aliases_and_merge_keys()
  local v, lines = Y.decode([[
base: &base
  options: {provider: a}
  threshold: 0.5
one:
  <<: *base
  threshold: 0.8
two:
  <<: [{x: 1}, {x: 2, y: 3}]
  z: 4
same: *base
]], "m.yaml")
  lu.assertEquals(v.one, { options = { provider = "a" }, threshold = 0.8 })
  lu.assertEquals(v.two, { x = 1, y = 3, z = 4 }) -- earlier mappings of a merge list win
  lu.assertEquals(v.same, v.base)
  lu.assertNotIs(v.same, v.base) -- a copy: changing one leaves the other
  lu.assertNotIs(v.one.options, v.base.options)
  lu.assertEquals(lines[v.same][0], 1) -- a copy's lines are its anchor's (where &base stands)
  lu.assertEquals(lines[v.one].threshold, 6)
  lu.assertEquals(lines[v.one].options, 5) -- a merged key is at its << line
end

function TestYaml:test_malformed_yaml_says_file_line_column()
  lu.assertEquals({ Y.decode("a: [1, 2\nb: 3\n", "bad.yaml") },
    { nil, "bad.yaml:2:2: did not find expected ',' or ']' (while parsing a flow sequence on line 1)" })
  lu.assertEquals({ Y.decode("a: 1\n  b: 2\n", "indent.yaml") },
    { nil, "indent.yaml:2:4: mapping values are not allowed in this context" })
  lu.assertEquals({ Y.decode("a:\n\t- x\n", "tab.yaml") },
    { nil, "tab.yaml:2:1: found character that cannot start any token (while scanning for the next token on line 2)" })
  lu.assertEquals({ Y.decode("a: 1\nb: 2\na: 3\n", "dup.yaml") }, { nil, "dup.yaml:3:1: duplicate key 'a' (first on line 1)" })
  lu.assertEquals({ Y.decode("a: 1\n---\nb: 2\n", "two.yaml") },
    { nil, "two.yaml:2:1: a second YAML document: one document is expected" })
  lu.assertEquals({ Y.decode("x: !!js/function 'f'\n", "tag.yaml") }, { nil, "tag.yaml:1:4: unsupported tag '!!js/function'" })
  lu.assertEquals({ Y.decode("x: !!int abc\n", "int.yaml") }, { nil, "int.yaml:1:4: !!int: 'abc' is not an integer" })
  lu.assertEquals({ Y.decode("{[1]: x}", "key.yaml") }, { nil, "key.yaml:1:2: a mapping key must be a scalar" })
  lu.assertEquals({ Y.decode("a: \xff\n", "utf.yaml") }, { nil, "utf.yaml:1:1: invalid leading UTF-8 octet" })
  lu.assertEquals({ Y.decode("a: &x [1, *x]\n", "rec.yaml") },
    { nil, "rec.yaml:1:11: alias *x: no anchor &x before it (or the alias is inside its own anchor)" })
  lu.assertEquals({ Y.decode("a: {<<: [1]}\n", "merge.yaml") },
    { nil, "merge.yaml:1:5: a merge key (<<) takes a mapping or a list of mappings" })
end

function TestYaml:test_sizes_are_bounded()
  -- 9 aliases of 9 aliases ... 7 levels: 9^7 = 4.8 million scalars if expanded
  local parts = { "a: &a [x,x,x,x,x,x,x,x,x]" }
  for i, name in ipairs { "b", "c", "d", "e", "f", "g" } do
    local prev = ("abcdef"):sub(i, i)
    parts[#parts + 1] = ("%s: &%s [%s]"):format(name, name, ("*" .. prev .. ","):rep(8) .. "*" .. prev)
  end
  local bomb = table.concat(parts, "\n") .. "\n"
  -- by hand: the root 1, a 10, b 1 + 9 * 10 = 91, c 820, d 7381: 8303 nodes;
  -- e's list is the 8304th, and its first *d (line 5, column 8) brings 7381 more
  local v, why = Y.decode(bomb, "bomb.yaml", { max_nodes = 10000 })
  lu.assertNil(v)
  lu.assertEquals(why, "bomb.yaml:5:8: more than 10000 nodes (max_nodes), aliases expanded: too large a document or an alias bomb")
  lu.assertNil((Y.decode(bomb, "bomb.yaml"))) -- the default budget stops it too
  lu.assertEquals({ Y.decode(("["):rep(101), "deep.yaml") },
    { nil, "deep.yaml:1:101: nested deeper than 100 levels (max_depth)" })
  lu.assertEquals({ Y.decode("a: 1234567", "big.yaml", { max_bytes = 5 }) },
    { nil, "big.yaml: 10 bytes, more than the limit of 5 (max_bytes)" })
  lu.assertEquals(Y.limits, { max_bytes = 64 * 1024 * 1024, max_nodes = 1000000, max_depth = 100 })
  lu.assertErrorMsgContains("unknown option 'max_node'", Y.decode, "a: 1", "x", { max_node = 1 })
  lu.assertErrorMsgContains("max_depth must be a whole number from 1 to 1000", Y.decode, "a: 1", "x", { max_depth = 0 })
end

function TestYaml:test_empty_and_bare_documents()
  lu.assertIs((Y.decode("", "e.yaml")), Y.null)
  lu.assertIs((Y.decode("# only a comment\n", "e.yaml")), Y.null)
  lu.assertEquals((Y.decode("just text", "e.yaml")), "just text")
  lu.assertEquals((Y.decode("- \n- 2\n", "e.yaml")), { Y.null, 2 })
end

os.exit(lu.LuaUnit.run(), true)
