-- The judge's prompt and raw answer behind an item's judged scores, read
-- from the cache the run's judge wrote (docs/judge.md#cache): each score's
-- detail lists the calls its metric made (judge_calls, judge/trace.lua),
-- each call names its cache entry by key. A call the cache cannot give
-- says why (the offline judge sends no prompt, the run had no cache, the
-- entry is gone), so the page never shows a blank.
local json = require "evalua.core.json"
local caught = require "evalua.core.caught"

local M = {}

-- A message or answer longer than this is cut, saying by how much.
M.MAX_TEXT = 20000

local function A(t) return setmetatable(t or {}, json.array) end

local function cut(s)
  if type(s) ~= "string" then s = s == nil and "" or json.encode(s) end
  if #s <= M.MAX_TEXT then return s end
  return s:sub(1, M.MAX_TEXT) .. ("\n… (%d more bytes in the cache entry)"):format(#s - M.MAX_TEXT)
end

-- The cache of the run's judge: {dir} or {why} it has none.
function M.cache_of(judge)
  if type(judge) ~= "table" then
    return { why = "the run recorded no judge accounts, so where its cache was is not known" }
  end
  if judge.kind == "offline" then return { offline = true } end
  if judge.cache_mode == "off" or (judge.kind == "http" and not judge.cache_dir) then
    return { why = "the run's judge had no cache (cache = false or cache_mode = \"off\")" }
  end
  if type(judge.cache_dir) ~= "string" then
    return { why = "the run did not record its judge's cache folder (a run made before evalua recorded it)" }
  end
  return { dir = judge.cache_dir }
end

-- An entry: its first line the request's metadata, then the server's response as received.
local function entry(dir, key)
  local path = ("%s/%s/%s.json"):format(dir, key:sub(1, 2), key)
  local f = io.open(path, "rb")
  if not f then
    return nil, ("no entry %s in %s: evicted, the folder cleared or moved, or never stored (a failed or "
      .. "invalid answer is not cached)"):format(key:sub(1, 12), dir)
  end
  local head, body = f:read("l"), f:read("a")
  f:close()
  local ok, meta = pcall(json.decode, head or "")
  local ok2, resp = pcall(json.decode, body or "")
  if not ok then caught.pass_on(meta) end
  if not ok2 then caught.pass_on(resp) end
  if not ok or type(meta) ~= "table" or type(meta.request) ~= "table" then
    return nil, ("the entry %s does not parse (damaged)"):format(path)
  end
  return { path = path, meta = meta, response = ok2 and type(resp) == "table" and resp or nil, body = body }
end

-- One call as the page shows it.
local function call_of(cache, c)
  local out = { operation = c.operation, key = c.key }
  if c.offline or cache.offline then
    out.status, out.why = "offline", "the offline judge answered with its heuristic: no prompt was sent, so none is "
      .. "in a cache"
    return out
  end
  if cache.why then
    out.status, out.why = "missing", cache.why
    return out
  end
  if type(c.key) ~= "string" or not c.key:match("^%x+$") or #c.key ~= 64 then
    out.status, out.why = "missing", "the call recorded no cache key"
    return out
  end
  local e, why = entry(cache.dir, c.key)
  if not e then
    out.status, out.why = "missing", why
    return out
  end
  local req, resp = e.meta.request, e.response
  out.status, out.path, out.url, out.latency_ms, out.model = "cached", e.path, e.meta.url, e.meta.latency_ms, req.model
  out.messages = A()
  for i, m in ipairs(type(req.messages) == "table" and req.messages or {}) do
    out.messages[i] = { role = tostring(m.role), content = cut(m.content) }
  end
  if req.input ~= nil then out.messages[#out.messages + 1] = { role = "input", content = cut(req.input) } end
  local choice = resp and type(resp.choices) == "table" and resp.choices[1]
  local msg = type(choice) == "table" and choice.message
  if type(msg) == "table" and msg.content ~= nil then out.answer = cut(msg.content)
  else out.answer = cut(e.body) end -- an embedding or another shape: the response as received
  out.response_model = resp and resp.model
  return out
end

-- of(scores, judge) -> {{metric, calls = {...}}} for the scores whose
-- detail lists judge calls; judge is the run's judge accounts.
function M.of(scores, judge)
  local cache, out = M.cache_of(judge), A()
  for _, s in ipairs(scores) do
    local calls = type(s.detail) == "table" and s.detail.judge_calls
    if type(calls) == "table" and #calls > 0 then
      local list = A()
      for i, c in ipairs(calls) do list[i] = call_of(cache, c) end
      out[#out + 1] = { metric = s.metric, calls = list }
    end
  end
  return out
end

return M
