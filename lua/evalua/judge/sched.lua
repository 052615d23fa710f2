-- The meeting point of ev.map and the judges. A judge call submits its
-- request to an engine (C) and then awaits it here: inside an ev.map worker
-- the coroutine yields and the map loop resumes it when the answer is in;
-- anywhere else the call drives the engine itself until its answer arrives.
-- Finished requests are filed by engine and id, so whoever polls an engine
-- delivers answers for everyone waiting on it.
local S = {}

S.WAIT = setmetatable({}, { __name = "evalua.judge.WAIT" })

local workers = setmetatable({}, { __mode = "k" }) -- coroutine -> true
local ready = setmetatable({}, { __mode = "k" })   -- engine -> {id -> result}

function S.add_worker(co) workers[co] = true end

-- Polls eng for up to timeout_ms; files what finished; returns how many.
function S.drive(eng, timeout_ms)
  local done = eng:poll(timeout_ms)
  local box = ready[eng]
  if not box then
    box = {}
    ready[eng] = box
  end
  for i = 1, #done do
    local d = done[i]
    box[d.id] = d
  end
  return #done
end

-- The finished result of request id on eng, removed from the file, or nil.
function S.take(eng, id)
  local box = ready[eng]
  local r = box and box[id]
  if r then box[id] = nil end
  return r
end

-- Waits for request id on eng and returns its engine result.
function S.await(eng, id)
  local co = coroutine.running()
  -- A worker yields to ev.map, unless a C function (a table.sort comparator,
  -- a gsub callback) sits between it and the map: then it blocks instead.
  if workers[co] and coroutine.isyieldable() then
    return coroutine.yield(S.WAIT, eng, id)
  end
  while true do
    local r = S.take(eng, id)
    if r then return r end
    S.drive(eng, 200)
  end
end

return S
