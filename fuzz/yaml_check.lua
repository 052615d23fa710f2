-- The YAML reader of promptfoo configs (host/bindings/l_yaml.c, over
-- libyaml): a value with a line for each of its tables, or nil and
-- "name:line:col: message"; never a raise.
local Y = require "evalua._yaml"

local function walk(v, lines, depth)
  if type(v) ~= "table" then return end
  if type(lines[v]) ~= "table" or math.type(lines[v][0]) ~= "integer" then error("a table without its line") end
  if depth > 200 then error("deeper than max_depth") end
  for _, x in pairs(v) do walk(x, lines, depth + 1) end
end

return function(s)
  local ok, v, lines = pcall(Y.decode, s, "f.yaml", { max_nodes = 20000 })
  if not ok then error("decode raised: " .. tostring(v)) end
  if v == nil then
    if type(lines) ~= "string" or not (lines:match("^f%.yaml:%d+:%d+: .") or lines:match("^f%.yaml: ")) then
      error("decode failed without a file:line:col message: " .. tostring(lines))
    end
    return
  end
  walk(v, lines, 0)
end
