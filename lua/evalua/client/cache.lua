-- The answer cache as judges and providers use it: a folder opened once
-- as a store (host/client/cache_writer.h), whose entries C journals at once and
-- writes behind, on a thread of its own; a write that fails there reaches
-- whoever stored the entry, through its sink.
local C = require "evalua._client"

local M = {}

-- dir .. mode -> store, held weakly: one descriptor per folder while in use
local stores = setmetatable({}, { __mode = "v" })

-- What replaying a killed run's journals found, said once on stderr.
local function say_recovered(dir, r)
  local parts = { ("evalua: judge cache: %d answer%s recovered from the journal of a run that was killed, in '%s'")
    :format(r.entries, r.entries == 1 and "" or "s", dir) }
  if r.torn > 0 then parts[#parts + 1] = ("; %d torn record%s skipped"):format(r.torn, r.torn == 1 and "" or "s") end
  if r.failed > 0 then
    parts[#parts + 1] = ("; %d could not be written (%s), their journal is kept for the next run")
      :format(r.failed, r.error or "?")
  end
  io.stderr:write(table.concat(parts), "\n")
end

-- open(dir, write) -> the store of folder dir, or nil for a folder to read
-- that does not exist; raises when the folder cannot be used (the sandbox
-- refuses it, it is a file). Opening for writing replays the journals of
-- killed runs into entries.
function M.open(dir, write)
  local k = dir .. (write and "\0w" or "\0r")
  local store = stores[k]
  if store then return store end
  store = C.cache_open(dir, write)
  local found = store and store:recovered()
  if found then say_recovered(dir, found) end
  stores[k] = store
  return store
end

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

-- writer(store, on_error) -> put(key, data), journaling entries and
-- queuing them for the store's folder; on_error(message) hears of a write
-- refused now or failed later, for as long as the writer is kept.
function M.writer(store, on_error)
  local sink = C.cache_sink() -- unique in the process, which may hold several Lua states
  sinks[sink] = on_error
  return function(key, data)
    M.collect(false)
    local queued, err = store:put(key, data, sink)
    if not queued then on_error(err) end
  end
end

return M
