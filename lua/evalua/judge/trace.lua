-- The judge calls a metric made for one item, so a report and the viewer
-- can show the prompt and raw answer behind a judged score (from the
-- cache, docs/view.md). ev.evaluate opens a list around each metric call;
-- every judge request made while it runs, in that coroutine or in the
-- items of an ev.map it started, is noted there: {key, operation} for a
-- request (key: its cache key), {operation, offline = true} for an answer
-- of the offline judge's heuristic.
local M = {}

local lists = setmetatable({}, { __mode = "k" }) -- coroutine -> the list its calls go to

-- begin() -> the list the running coroutine's calls now go to.
function M.begin()
  local list = {}
  lists[coroutine.running()] = list
  return list
end

-- finish(): the running coroutine notes nothing more.
function M.finish()
  lists[coroutine.running()] = nil
end

-- inherit(co): coroutine co (an ev.map item) notes into the list of the one starting it.
function M.inherit(co)
  lists[co] = lists[coroutine.running()]
end

-- note(call): a judge call, into the running coroutine's list if one is open.
function M.note(call)
  local list = lists[coroutine.running()]
  if list then list[#list + 1] = call end
end

return M
