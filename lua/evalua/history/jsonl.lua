-- The history's older format, JSON lines: history.jsonl (one record per run)
-- and runs/<run_id>.jsonl (that run's per-item scores). The store
-- (evalua.history.store) imports it on first use, and writes it on request
-- (ev.history.open(dir, {jsonl = true})) for those who keep it in git.
--
-- Appends are crash- and race-safe: the item file is written atomically
-- first, then the record goes into history.jsonl in one write(2) under an
-- exclusive lock, so two runs finishing at once never interleave and a
-- record never points at a missing item file.
local json = require "evalua.core.json"
local sys = require "evalua._sys"

local M = {}
local COUNTED = { replaced = true } -- json.encode returns the invalid UTF-8 sequences it replaced

-- records(path, decode, warn) -> the records of history.jsonl, oldest
-- first, each checked by decode(line, where) (where names file and line),
-- and the file's size; {} and 0 when there is no file. One pass over the
-- file. A last line without its newline is a record whose append was cut
-- off (sys.append never leaves one, but a power loss can): it is skipped,
-- with a warning.
function M.records(path, decode, warn)
  local f = io.open(path, "rb")
  if not f then return {}, 0 end
  assert(sys.flock(f, "sh")) -- an append in progress is seen whole or not at all
  local text = f:read("a")
  f:close()
  local out, pos, line = {}, 1, 1
  local e = text:find("\n", 1, true)
  while e do
    local s = text:sub(pos, e - 1)
    if s:find("%S") then out[#out + 1] = decode(s, ("%s:%d"):format(path, line)) end
    pos, line = e + 1, line + 1
    e = text:find("\n", pos, true)
  end
  if pos <= #text then
    warn("%s:%d: ignoring a torn final record (%d bytes without a newline; it is not imported)",
      path, line, #text - pos + 1)
  end
  return out, #text
end

-- items(path, check) -> the item lines of a run's file, each checked by
-- check(item, where); nil when the file is missing.
function M.items(path, check)
  local f = io.open(path, "rb")
  if not f then return nil end
  local out, n = {}, 0
  for l in f:lines() do
    n = n + 1
    if l:find("%S") then
      local it, err = json.decode(l)
      if type(it) ~= "table" then
        f:close()
        sys.input_error(("%s:%d: invalid item line: %s"):format(path, n, tostring(err)))
      end
      check(it, ("%s:%d"):format(path, n))
      out[#out + 1] = it
    end
  end
  f:close()
  return out
end

-- append(dir, rec, items) writes a run in the old format: its item file
-- (runs/<run_id>.jsonl, atomically), then its record (one line of
-- history.jsonl). Returns the size of history.jsonl before the append,
-- and after.
function M.append(dir, rec, items)
  assert(sys.mkdir(dir .. "/runs"))
  local lines, replaced, n = {}, 0, 0
  for i, it in ipairs(items) do
    lines[i], n = json.encode({ id = it.id, system = it.system, scores = it.scores, slices = it.slices }, COUNTED)
    replaced = replaced + n
  end
  local path = dir .. "/runs/" .. rec.run_id .. ".jsonl"
  assert(sys.write_atomic(path, table.concat(lines, "\n") .. "\n"))
  json.say_replaced(path, replaced)
  local file = dir .. "/history.jsonl"
  local line
  line, replaced = json.encode(rec, COUNTED)
  local before = sys.stat(file)
  local ok, dropped = sys.append(file, line .. "\n")
  if not ok then error(dropped, 3) end
  json.say_replaced(file, replaced)
  if dropped > 0 then
    io.stderr:write(("evalua: warning: %s: removed a torn final record of %d bytes before appending\n")
      :format(file, dropped))
  end
  local after = sys.stat(file)
  return before and before.size or 0, after and after.size or 0
end

return M
