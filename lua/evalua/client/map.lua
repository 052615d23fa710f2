-- ev.map(items, fn [, opts]): runs fn(item, i) for every item, each in a
-- coroutine, so judge calls inside fn overlap while fn reads as plain
-- sequential code. Results come back in input order; an error in one item
-- becomes that item's result and the others go on.
local sched = require "evalua.client.sched"
local run = require "evalua.core.run"
local sys = require "evalua._sys"
local client = require "evalua._client"
local options = require "evalua.core.options"
local caught = require "evalua.core.caught"
local trace = require "evalua.judge.trace"

local KNOWN = options.set { "concurrency", "progress", "quiet", "label" }

local DEFAULT_CONCURRENCY = 64

-- Items whose request waits out a server's Retry-After step aside: they
-- hold no place, so the map starts others meanwhile (docs/judge.md,
-- "ev.map"), up to this many times `concurrency` of them at once; past
-- that they keep their places.
local PARKED_PER_PLACE = 4

local function failure(err)
  return { ok = false, error = tostring(err), unmeasured = true }
end

local function is_failure(v)
  return type(v) == "table" and v.ok == false
end

local function clock(seconds)
  seconds = math.floor(seconds + 0.5)
  if seconds >= 3600 then
    return ("%d:%02d:%02d"):format(seconds // 3600, seconds // 60 % 60, seconds % 60)
  end
  return ("%d:%02d"):format(seconds // 60, seconds % 60)
end

-- Progress on stderr: on a terminal one line redrawn in place; elsewhere
-- (a log, a CI job, TERM=dumb) a whole line every 5 seconds
-- ($EVALUA_PROGRESS_SECONDS), and a last one at the end when any was
-- written, so a short run adds nothing to a log.
local function meter(n, opts)
  if opts.quiet or opts.progress == false then return nil end
  local term = sys.terminal("stderr")
  local redraw, LOG_EVERY = term.tty and not term.dumb, term.progress_seconds or 5
  local label, start, last, wrote = opts.label or "ev.map", sys.monotonic(), nil, false
  local m = {}
  function m.update(done, failed, final)
    if not final and done == n then return end -- the last line says it
    local now = sys.monotonic()
    if redraw and not final and last and now - last < 0.2 then return end
    if not redraw and not (final and wrote) and now - (last or start) < LOG_EVERY then return end
    last, wrote = now, true
    local elapsed = now - start
    local rate = elapsed > 0 and done / elapsed or 0
    local eta = rate > 0 and clock((n - done) / rate) or "?"
    local text = ("%s %d/%d %3d%% %.1f/s %s %s failed %d"):format(label, done, n, n > 0 and done * 100 // n or 100,
      rate, final and "in" or "ETA", final and clock(elapsed) or eta, failed)
    if redraw then io.stderr:write("\r", text, "\27[K", final and "\n" or "")
    else io.stderr:write(text, "\n") end
    io.stderr:flush()
  end
  return m
end

local function check_args(items, fn, opts)
  if type(items) ~= "table" then error("ev.map: items must be a list (got " .. type(items) .. ")", 3) end
  local mt = getmetatable(fn)
  if type(fn) ~= "function" and not (type(mt) == "table" and mt.__call) then
    error("ev.map: fn must be a function (got " .. type(fn) .. ")", 3)
  end
  if opts ~= nil and type(opts) ~= "table" then error("ev.map: opts must be a table", 3) end
  opts = opts or {}
  options.check(opts, KNOWN, "ev.map", 3)
  local c = opts.concurrency or DEFAULT_CONCURRENCY
  if type(c) ~= "number" or c ~= math.floor(c) or c < 1 or c > 1e6 then
    error("ev.map: concurrency must be a whole number from 1 to 1000000", 3)
  end
  return opts, math.tointeger(c)
end

return function(items, fn, opts)
  local concurrency
  opts, concurrency = check_args(items, fn, opts)
  local n, out, done, failed = #items, {}, 0, 0
  local active, parked, next_i = {}, {}, 1
  local max_parked = concurrency * PARKED_PER_PLACE
  local cur = run.current()
  local parks_seen = cur.parks -- the run's count of Retry-After waits begun; looked at when it moves
  local progress = meter(n, opts)
  local body = type(fn) == "function" and fn or function(...) return fn(...) end
  local start = sys.monotonic()

  local function settle(w, value)
    out[w.i] = value
    done = done + 1
    if is_failure(value) then failed = failed + 1 end
    if progress then progress.update(done, failed) end -- items that never wait count too
  end

  -- Resumes worker w; true when it is waiting on a judge again.
  local function step(w, ...)
    local ok, a, eng, id = coroutine.resume(w.co, ...)
    if not ok and caught.fatal(a) then
      error(a, 0) -- ev.exit, a limit passed or no memory end the run: not an item's failure
    elseif not ok then
      settle(w, failure(a))
    elseif coroutine.status(w.co) == "dead" then
      settle(w, a)
    elseif a == sched.WAIT then
      w.eng, w.id = eng, id
      return true
    else
      coroutine.close(w.co)
      settle(w, failure("ev.map: the item function yielded outside a coroutine of its own"))
    end
    return false
  end

  -- Polls the engines the waiting workers need.
  local function drive()
    local engines, count, first = {}, 0, nil
    for _, list in ipairs { active, parked } do
      for _, w in ipairs(list) do
        if not engines[w.eng] then engines[w.eng] = true; count = count + 1; first = w.eng end
      end
    end
    if count == 1 then
      sched.drive(first, 100)
      return
    end
    -- several engines: sleep until one has news, then collect from each
    local list = {}
    for eng in pairs(engines) do list[#list + 1] = eng end
    client.wait_any(list, 100)
    for _, eng in ipairs(list) do sched.drive(eng, 0) end
  end

  -- Moves the active workers whose request waits out a Retry-After to the
  -- parked ones, which hold no place.
  local function park()
    for k = #active, 1, -1 do
      if #parked >= max_parked then return end
      local w = active[k]
      if sched.parked(w.eng, w.id) then
        active[k] = active[#active]
        active[#active] = nil
        parked[#parked + 1] = w
      end
    end
  end

  -- Starts the next item; it joins the active workers when it waits.
  local function spawn()
    local w = { i = next_i, co = coroutine.create(body) }
    next_i = next_i + 1
    sched.add_worker(w.co)
    trace.inherit(w.co) -- its judge calls count for the metric that started this map
    if step(w, items[w.i], w.i) then active[#active + 1] = w end
  end

  while true do
    while #active < concurrency and next_i <= n do spawn() end
    if #active == 0 and #parked == 0 then break end
    local progressed = false
    for k = #active, 1, -1 do
      local w = active[k]
      local r = sched.take(w.eng, w.id)
      if r then
        progressed = true
        if not step(w, r) then
          active[k] = active[#active]
          active[#active] = nil
          -- the freed place is taken at once, so that its request leaves
          -- before the next answer is read, not after all of them
          if next_i <= n then spawn() end
        end
      end
    end
    for k = #parked, 1, -1 do
      local w = parked[k]
      local r = sched.take(w.eng, w.id)
      if r then
        progressed = true
        parked[k] = parked[#parked]
        parked[#parked] = nil
        if step(w, r) then active[#active + 1] = w end -- waiting again: on a place
        parks_seen = nil -- room among the parked: look again at the next drive
      end
    end
    if not progressed then
      drive()
      if cur.parks ~= parks_seen then
        parks_seen = cur.parks
        park()
      end
    end
    if progress then progress.update(done, failed) end
  end
  if progress then progress.update(done, failed, true) end
  return out, { n = n, failed = failed, seconds = sys.monotonic() - start }
end
