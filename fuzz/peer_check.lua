-- The readers of the peers' data that are evalua's own Lua
-- (lua/evalua/data/formats/): the Python-literal reader of RAGAS's CSV
-- cells, the scan that finds each record's line in a JSON document, and
-- promptfoo's __expected cells. Each returns, or (a contains value with bad
-- quoting) raises the input error that names the field; nothing else.
local py = require "evalua.data.formats.pyliteral"
local records = require "evalua.data.formats.records"
local promptfoo = require "evalua.data.formats.promptfoo"
local common = require "evalua.data.formats.common"
return function(s)
  local ok, v, why = pcall(py.parse, s, records.null)
  if not ok then error("pyliteral raised: " .. tostring(v)) end
  if v == nil and type(why) ~= "string" then error("pyliteral returned nil without a reason") end
  local fine, err = pcall(records.element_offsets, s)
  if not fine then error("element_offsets raised: " .. tostring(err)) end
  local good, a = pcall(promptfoo.assertion, s, "__expected")
  if not good and not common.is_bad(a) then error("assertion raised: " .. tostring(a)) end
  if good and (type(a) ~= "table" or type(a.type) ~= "string") then error("assertion returned no type") end
end
