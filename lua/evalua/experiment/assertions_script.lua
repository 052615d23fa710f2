-- The script types of ev.assertions: `lua` (promptfoo's `javascript`: an
-- expression or a function body over `output` and `context`, a Lua
-- function, or file://check.lua returning one) and `webhook` (the output
-- and context POSTed as JSON to a URL that answers {pass =, score =,
-- reason =}; refused under --sandbox, since it sends the output away).
-- A script's result is read as promptfoo reads it: a boolean is the
-- verdict; a number is the score, passing at >= threshold (> 0 without
-- one); a table {pass =, score =, reason =} is taken as it is.
local json = require "evalua.core.json"
local sys = require "evalua._sys"
local K = require "evalua.experiment.assertions_values"

local M = {}

-- What a lua assertion's code sees: the string, table, math and utf8
-- libraries, the basic functions and json; no files, processes or
-- modules, since the code may come from a data row. A Lua function given
-- by a script keeps the script's own environment.
local function env()
  local J = require "evalua.experiment.assertions_json"
  return { string = string, table = table, math = math, utf8 = utf8, tonumber = tonumber, tostring = tostring,
           type = type, pairs = pairs, ipairs = ipairs, select = select, next = next, pcall = pcall, error = error,
           assert = assert, rawequal = rawequal, rawlen = rawlen, setmetatable = setmetatable,
           getmetatable = getmetatable, json = { decode = J.decode, encode = json.encode, null = json.null } }
end

-- At most this many Lua instructions per call (a loop that never ends
-- leaves the row unmeasured instead of hanging the run).
M.max_instructions = 100000000

-- The code of a lua assertion: a function; "return ..." or several lines,
-- a function body; else one expression.
local function compile_code(v, what, opts)
  local base = opts and opts.base
  if type(v) == "function" then return v end
  if type(v) ~= "string" or not v:find("%S") then
    return nil, what .. ": expected Lua code (an expression or a function body), a function or file://x.lua"
  end
  local chunkname, code = "=" .. what, v
  if v:sub(1, 7) == "file://" then
    local path = v:sub(8)
    if not path:find("%.lua$") then return nil, what .. ": " .. v .. ": a lua assertion reads a .lua file" end
    if not path:find("^/") and base then path = base:gsub("/*$", "/") .. path end
    local chunk, err = loadfile(path, "t", env())
    if not chunk then return nil, ("%s: %s"):format(what, tostring(err)) end
    local ok, fn = pcall(chunk)
    if not ok then return nil, ("%s: %s: %s"):format(what, v, tostring(fn)) end
    if type(fn) ~= "function" then return nil, ("%s: %s must return a function(output, context)"):format(what, v) end
    return fn
  end
  local body = code
  if not code:find("\n") and not code:find("^%s*return[%s(]") then body = "return " .. code end
  local chunk, err = load("local output, context = ...\n" .. body, chunkname, "t", env())
  if not chunk and body ~= code then chunk, err = load("local output, context = ...\n" .. code, chunkname, "t", env()) end
  if not chunk then return nil, ("%s: bad Lua: %s"):format(what, tostring(err):gsub("^[^:]*:%d+: ", "")) end
  return chunk
end

-- What a script returned, as pass, reason, score.
local function verdict_of(r, c)
  if type(r) == "boolean" then return r, r and "the script returned true" or "the script returned false" end
  if type(r) == "number" and K.finite(r) then
    local pass = c.threshold ~= nil and r >= c.threshold or (c.threshold == nil and r > 0)
    return pass, ("the script scored %s%s"):format(K.show(r), c.threshold and (" (threshold " .. K.show(c.threshold) .. ")")
      or ""), math.max(0, math.min(1, r))
  end
  if type(r) == "table" and type(r.pass) == "boolean" then
    local score = r.score
    if score ~= nil and not K.finite(score) then return nil, "the script's score is not a finite number" end
    return r.pass, type(r.reason) == "string" and r.reason or (r.pass and "the script passed it" or "the script failed it"),
      score and math.max(0, math.min(1, score))
  end
  return nil, ("the script returned %s, not a boolean, a number or {pass =, score =, reason =}"):format(K.show(r))
end

local function context_of(row)
  return { vars = row.vars or row, row = row, prompt = row.prompt_name, provider = row.provider }
end

-- fn on its own coroutine, under an instruction count where the debug
-- library is there (not under --sandbox, whose CPU limit applies instead).
local function call(fn, ...)
  local co = coroutine.create(fn)
  local dbg = rawget(_G, "debug")
  if dbg and dbg.sethook then
    dbg.sethook(co, function() error("the script ran over " .. M.max_instructions .. " instructions", 0) end, "",
      M.max_instructions)
  end
  -- a yield (a judge request parked by ev.map's scheduler) is passed up and its answer back down
  local res = table.pack(coroutine.resume(co, ...))
  while res[1] and coroutine.status(co) == "suspended" do
    if not coroutine.isyieldable() then return false, "the script yielded outside ev.evaluate" end
    res = table.pack(coroutine.resume(co, coroutine.yield(table.unpack(res, 2, res.n))))
  end
  return res[1], res[2]
end

local function run_lua(answer, fn, row, c)
  local ok, r = call(fn, answer, context_of(row))
  if not ok then return nil, "the script raised: " .. tostring(r) end
  return verdict_of(r, c)
end

local function url(v, what)
  if type(v) ~= "string" or not v:find("^https?://[^/?#]+") then return nil, what .. ": expected an http:// or https:// URL" end
  if sys.sandboxed() then
    return nil, what .. ": webhook sends the output to a server, which --sandbox does not allow"
  end
  return v
end

-- POST {output, context} to the URL; its JSON answer is the verdict.
local function webhook(answer, target, row, c)
  local C = require "evalua._client"
  local ok, engine = pcall(C.engine, { base_url = target, api_key_env = false, max_retries = 2, backoff_ms = 500,
                                       timeout_ms = 30000, concurrency = 1 })
  if not ok then return nil, "webhook: " .. tostring(engine) end
  local body = json.encode { output = answer, context = { vars = row.vars or {}, prompt = row.prompt_name } }
  local id = engine:submit("", body)
  while true do
    for _, d in ipairs(engine:poll(1000)) do
      if d.id == id then
        engine:close()
        if d.error then return nil, "webhook: " .. tostring(d.error) end
        if d.status < 200 or d.status >= 300 then return nil, ("webhook: HTTP %d"):format(d.status) end
        local r = json.decode(d.body)
        if type(r) ~= "table" then return nil, "webhook: the answer is not a JSON object" end
        return verdict_of(r, c)
      end
    end
  end
end

function M.add(A)
  A.values.lua_code = compile_code
  A.values.url = url
  A.types.lua = { value = "lua_code", raw_value = true, threshold = "score", optional_threshold = true, of_row = true, check = run_lua,
                  shown = function(v) return type(v) == "function" and "(function)" or K.show(v) end }
  A.types.webhook = { value = "url", threshold = "score", optional_threshold = true, of_row = true, check = webhook,
                      shown = function() return "(url)" end }
end

return M
