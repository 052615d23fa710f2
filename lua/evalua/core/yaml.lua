-- evalua.core.yaml: YAML as Lua values for the library's readers (assertion
-- values from file://x.yaml, promptfoo test files): the libyaml binding
-- evalua._yaml (host/bindings/l_yaml.c; docs/promptfoo.md#evalua_yaml).
--   yaml.decode(text [, name [, limits]]) -> value, lines | nil, "name:line:col: message"
local Y = require "evalua._yaml"

return { decode = Y.decode, null = Y.null, array = Y.array, limits = Y.limits }
