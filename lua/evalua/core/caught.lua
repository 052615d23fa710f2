-- evalua.core.caught: what a pcall in the library may not keep. A request
-- to exit (ev.exit: a table with evalua_exit), a time or CPU limit passed
-- (--time-limit, --cpu-limit) and running out of memory (--mem-limit) end
-- the run wherever they happen (host/runtime/state.c raises them again on
-- every instruction); recorded as a reason they would stand for a verdict
-- that was never reached. Any other error the caller records with its reason.
local M = {}

function M.fatal(e)
  if type(e) == "table" then return e.evalua_exit ~= nil end
  if type(e) ~= "string" then return false end
  return e:find("not enough memory$") ~= nil or e:find("limit of [%d.]+ s exceeded %(%-%-[%a]+%-limit%)$") ~= nil
end

-- pass_on(e) -> e, after raising it again when it must not be caught.
function M.pass_on(e)
  if M.fatal(e) then error(e, 0) end
  return e
end

return M
