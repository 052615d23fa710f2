-- The judge calls a metric made for one item, so a report and the viewer
-- can show the prompt and raw answer behind a judged score (from the
-- cache, docs/view.md). ev.evaluate opens a trace around each metric call;
-- every judge request made while it runs, in that coroutine or in the
-- items of an ev.map it started, is noted there: {key, operation} for a
-- request (key: its cache key), {operation, offline = true} for an answer
-- of the offline judge's heuristic. A call that asks no judge allocates
-- nothing.
local M = {}

local OPEN = {} -- a trace open with nothing noted yet
local lists = setmetatable({}, { __mode = "k" }) -- coroutine -> OPEN or the calls noted
local parents = setmetatable({}, { __mode = "k" }) -- an ev.map item -> the coroutine that started it

-- begin(): the running coroutine's judge calls are noted from now on.
function M.begin()
  lists[coroutine.running()] = OPEN
end

-- finish() -> the calls noted since begin, or nil; nothing more is noted.
function M.finish()
  local co = coroutine.running()
  local list = lists[co]
  lists[co] = nil
  return list ~= OPEN and list or nil
end

-- inherit(co): coroutine co (an ev.map item) notes into the trace of the one starting it.
function M.inherit(co)
  local cur = coroutine.running()
  if lists[cur] ~= nil or parents[cur] then parents[co] = cur end
end

-- note(call): a judge call, into the running coroutine's trace if one is open.
function M.note(call)
  local co = coroutine.running()
  while lists[co] == nil and parents[co] do co = parents[co] end
  local list = lists[co]
  if list == nil then return end
  if list == OPEN then
    list = {}
    lists[co] = list
  end
  list[#list + 1] = call
end

return M
