-- The meeting point of ev.map and the judges. A judge call submits its
-- request to an engine (C) and then awaits it here: inside an ev.map worker
-- the coroutine yields and the map loop resumes it when the answer is in;
-- anywhere else the call drives the engine itself until its answer arrives.
-- Finished requests are filed by engine and id, so whoever polls an engine
-- delivers answers for everyone waiting on it. The files are the current
-- run's (evalua.core.run).
local run = require "evalua.core.run"

local S = {}

S.WAIT = setmetatable({}, { __name = "evalua.client.WAIT" })

function S.add_worker(co) run.current().workers[co] = true end

-- Polls eng for up to timeout_ms; files what finished, and which requests
-- began waiting out a server's Retry-After; returns how many finished and
-- how many began waiting.
function S.drive(eng, timeout_ms)
  local done, parked = eng:poll(timeout_ms)
  local cur = run.current()
  local box = cur.ready[eng]
  if not box then
    box = {}
    cur.ready[eng] = box
  end
  for i = 1, #done do
    local d = done[i]
    box[d.id] = d
  end
  if not parked then return #done, 0 end
  local p = cur.parked[eng]
  if not p then
    p = {}
    cur.parked[eng] = p
  end
  for i = 1, #parked do p[parked[i]] = true end
  cur.parks = cur.parks + #parked
  return #done, #parked
end

-- Whether request id on eng is waiting out a server's Retry-After (or has
-- since gone out again, its answer not yet taken).
function S.parked(eng, id)
  local p = run.current().parked[eng]
  return p ~= nil and p[id] == true
end

-- The finished result of request id on eng, or nil. Several callers may
-- wait for one request (identical requests share it); the result leaves the
-- file when the last of them has it.
function S.take(eng, id)
  local cur = run.current()
  local box = cur.ready[eng]
  local r = box and box[id]
  if r then
    local w = cur.want[eng]
    local n = (w and w[id] or 1) - 1
    if n > 0 then w[id] = n else
      box[id] = nil
      if w then w[id] = nil end
      local p = cur.parked[eng]
      if p then p[id] = nil end
    end
  end
  return r
end

-- Waits for request id on eng and returns its engine result (a table the
-- waiters share: read it, do not change it).
function S.await(eng, id)
  local cur = run.current()
  local w = cur.want[eng]
  if not w then
    w = {}
    cur.want[eng] = w
  end
  w[id] = (w[id] or 0) + 1
  local co = coroutine.running()
  -- A worker yields to ev.map, unless a C function (a table.sort comparator,
  -- a gsub callback) sits between it and the map: then it blocks instead.
  if cur.workers[co] and coroutine.isyieldable() then
    return coroutine.yield(S.WAIT, eng, id)
  end
  while true do
    local r = S.take(eng, id)
    if r then return r end
    S.drive(eng, 200)
  end
end

return S
