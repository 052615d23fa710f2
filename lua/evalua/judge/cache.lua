-- The answer cache's writes, as judges and providers make them. C writes
-- entries behind, on a thread of its own (host/cache_writer.h); a write
-- that fails there reaches whoever stored the entry, through its sink.
local C = require "evalua._judge"

local M = {}

-- sink number -> on_error, held weakly: a writer keeps its own alive, and
-- a failure whose writer is gone is said on stderr.
local sinks = setmetatable({}, { __mode = "v" })

-- Hands failed writes to their writers; with settle, once every entry
-- queued so far is written, so counts read afterwards are whole.
function M.collect(settle)
  for _, f in ipairs(C.cache_failures(settle)) do
    local on_error = sinks[f.sink]
    if on_error then on_error(f.error) else io.stderr:write("evalua: judge cache: ", f.error, "\n") end
  end
end

-- writer(dir, on_error) -> put(key, data), queuing entries in dir;
-- on_error(message) hears of a write refused now or failed later, for as
-- long as the writer is kept.
function M.writer(dir, on_error)
  local sink = C.cache_sink() -- unique in the process, which may hold several Lua states
  sinks[sink] = on_error
  return function(key, data)
    M.collect(false)
    local queued, err = C.cache_put(dir, key, data, sink)
    if not queued then on_error(err) end
  end
end

return M
