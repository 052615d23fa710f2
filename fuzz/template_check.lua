-- The template engine (lua/evalua/experiment/template.lua): any text compiles to a
-- template or fails with a "template '...' line N: ..." message; rendering
-- likewise. Input: TEMPLATE, optionally '\0' and a value for x.
local T = require "evalua.experiment.template"
local function expected(err)
  return type(err) == "string" and err:match("^template '[^']*'") ~= nil
end
return function(s)
  local src, x = s:match("^(.-)%z(.*)$")
  src = src or s
  local vars = { x = x or "v", name = "n", n = 3, t = true, f = false,
                 xs = { "a", { k = "b" }, 3 }, row = { query = "q", contexts = { "c1", "c2" } } }
  local ok, t = pcall(T.compile, src, "fuzz")
  if not ok then
    if not expected(t) then error("compile: " .. tostring(t)) end
    return
  end
  local rok, out = pcall(t.render, t, vars)
  if not rok and not expected(out) then error("render: " .. tostring(out)) end
  if rok and type(out) ~= "string" then error("render returned " .. type(out)) end
  t:variables()
end
