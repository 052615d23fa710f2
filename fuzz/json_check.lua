-- The lenient JSON reader of judge answers (lua/evalua/judge/json.lua, over
-- lua-cjson's C decoder): a table, or nil and a message; never a raise.
local J = require "evalua.judge.json"
return function(s)
  local ok, v, err = pcall(J.lenient, s)
  if not ok then error("lenient raised: " .. tostring(v)) end
  if not (type(v) == "table" or (v == nil and type(err) == "string")) then
    error(("lenient returned %s, %s"):format(type(v), type(err)))
  end
  if v then pcall(J.denull, v) end
end
