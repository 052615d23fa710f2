-- The state a script's run changes for everything after it, kept in one
-- object instead of in module locals: its metric registry (ev.register),
-- judge operations (ev.judge.register_op), report formats
-- (ev.report.register), template filters, prices, its part as a shard or a
-- merge's replay, the dry-run switch
-- (ev.judge.dry_run, ev.provider.dry_run), the accounts of the judges it
-- opened, and the scheduler's mailboxes (what the judges' engines finished,
-- who waits for it, which coroutines are ev.map workers). A Lua state runs
-- one script, so it makes one run; run.new() gives a fresh one and
-- run.use(r) makes it the current one, for tests and for tools that
-- evaluate one script after another in one state.
local C = require "evalua._client"

local M = {}

local Run = {}
Run.__index = Run
Run.__name = "evalua.Run"

local function truthy(v)
  return v ~= nil and v ~= "" and v ~= "0" and v:lower() ~= "false" and v:lower() ~= "no"
end

-- $EVALUA_DRY_RUN belongs to whoever started the process: no script turns it off.
local ENV_DRY_RUN = truthy(C.env().dry_run)

function M.new()
  local weak = { __mode = "k" }
  return setmetatable({
    metrics = {}, metric_order = {},      -- name -> metric; names in registration order
    ops = {},                             -- name -> judge operation of the script's own (ev.judge.register_op)
    formats = {},                         -- name -> report format of the script's own (ev.report.register)
    filters = {},                         -- name -> template filter of the script's own (ev.template.filters)
    prices = {},                          -- model -> price the script set (ev.judge.prices)
    shard = { calls = 0 },                -- this process as a shard or a merge's replay (evalua.scale.shard)
    dry_run = false,                      -- every judge and provider only counts what it would send
    judges = {},                          -- each judge's accounts, in the order they were opened
    workers = setmetatable({}, weak),     -- coroutine -> true: ev.map's workers
    ready = setmetatable({}, weak),       -- engine -> {id -> finished result}
    want = setmetatable({}, weak),        -- engine -> {id -> how many wait for it}
    parked = setmetatable({}, weak),      -- engine -> {id -> true}: waiting out a Retry-After (ev.map parks its worker)
    parks = 0,                            -- how many such waits began: ev.map looks at parked when it moves
    undecided = nil,                      -- the stderr line of an evaluation whose judge failed
  }, Run)
end

-- The dry-run switch, with $EVALUA_DRY_RUN over it.
function Run:dry()
  return ENV_DRY_RUN or self.dry_run
end

local current = M.new()
local undecided_runs = setmetatable({}, { __mode = "k" })

-- Records that an evaluation of run r was undecided because its judge
-- failed (ev.evaluate calls it with the line it printed).
function Run:mark_undecided(line)
  self.undecided = self.undecided or line
  undecided_runs[self] = true
end

-- The first undecided line of any run of this state, or nil: the host turns
-- a script's normal end into exit status 4 with it (host/cli/main.c), so a run
-- whose judge answered nothing never ends 0 by omission.
function M.undecided()
  if current.undecided then return current.undecided end
  for r in pairs(undecided_runs) do return r.undecided end
  return nil
end

function M.current() return current end

-- A table that reads the current run's kind first and builtins second, and
-- writes into the current run: how a script's additions to a built-in table
-- (ev.template.filters.x = f, ev.judge.prices[m] = p) stay in its run. pairs
-- gives the run's entries and then the built-ins they do not replace.
function M.layered(kind, builtins)
  local function own() return current[kind] end
  return setmetatable({}, {
    __index = function(_, k)
      local v = own()[k]
      if v == nil then v = builtins[k] end
      return v
    end,
    __newindex = function(_, k, v) own()[k] = v end,
    __pairs = function()
      local mine, k, inbuilt = own(), nil, false
      return function()
        local v
        if not inbuilt then
          k, v = next(mine, k)
          if k ~= nil then return k, v end
          inbuilt = true
        end
        repeat k, v = next(builtins, k) until k == nil or mine[k] == nil
        return k, v
      end
    end,
  })
end

-- Makes r the current run; returns the one it replaces.
function M.use(r)
  if getmetatable(r) ~= Run then error("run.use: expected a run from run.new()", 2) end
  local old = current
  current = r
  return old
end

return M
