-- evalua: the scripting library. Submodules load on first use, so a script
-- pays only for what it touches: ev.text, ev.metrics, ev.judge ...
local sys = require "evalua._sys"

local ev = {
  version = sys.versions().evalua,
  sys = sys,
}

-- Registers a metric by name (see evalua.registry): ev.register(name, fn [, opts])
-- or ev.register{name=, fn=|batch=, ...}. Then "name" works wherever a metric does.
function ev.register(...)
  return require("evalua.registry").register(...)
end

-- Raises a bad-input message ("data.jsonl:12: field 'x': ..."): exit status 3,
-- printed without a traceback, since the input is at fault, not the script.
ev.input_error = sys.input_error

-- Exit with a status from anywhere in a script (0 ok, 1 gate failed, 4 undecided).
-- A pcall around it (a metric's, ev.map's) cannot keep the run going: the
-- request is raised again at the next instruction (host/state.c).
function ev.exit(code)
  sys.exit(math.tointeger(code) or 3)
end

return setmetatable(ev, {
  __index = function(t, name)
    local ok, mod = pcall(require, "evalua." .. name)
    if not ok then
      if tostring(mod):find("no module 'evalua." .. name .. "'", 1, true) then return nil end
      error(mod, 2)
    end
    rawset(t, name, mod)
    return mod
  end,
})
