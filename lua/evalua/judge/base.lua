-- What every judge shares. A judge implementation (judge/http.lua,
-- judge/offline_judge.lua) is a class whose methods are
--   chat(req), embed(req)         requests in the OpenAI shapes
--   answer(name, op, prepared, vars)  one judge operation, checked here first
--   stats(), estimate([fn]), close()
-- and inherits ask() and the request checks below, so metrics call the same
-- methods on either judge and never ask which kind they hold.
local ops = require "evalua.judge.ops"

local B = {}
B.__index = B

local CHAT_FIELDS = { messages = true, json = true, logprobs = true, top_logprobs = true, temperature = true,
  top_p = true, max_tokens = true, seed = true, presence_penalty = true, frequency_penalty = true, stop = true,
  model = true, sample = true, extra = true, check = true, no_repair = true, operation = true }
local EMBED_FIELDS = { input = true, model = true, dimensions = true, sample = true, check = true }

-- Unknown fields are errors at the caller's line (a misspelt `temprature`
-- would otherwise be dropped silently); check must be a function.
local function check_fields(req, known, what)
  for k in pairs(req) do
    if not known[k] then error(("%s: unknown field '%s'"):format(what, tostring(k)), 4) end
  end
  if req.check ~= nil and type(req.check) ~= "function" then
    error(what .. ": check must be a function(result) -> value, reason | nil, why", 4)
  end
end

function B.check_chat(req)
  if type(req) ~= "table" then error("judge:chat: expected a table {messages = ...}", 3) end
  check_fields(req, CHAT_FIELDS, "judge:chat")
  if req.operation ~= nil and (type(req.operation) ~= "string" or not req.operation:match("^[%w_]+$")) then
    error("judge:chat: operation must be a word", 3)
  end
end

function B.check_embed(req)
  if type(req) ~= "table" then error("judge:embed: expected a table {input = ...}", 3) end
  check_fields(req, EMBED_FIELDS, "judge:embed")
  local input = req.input
  local ok = type(input) == "string"
  if type(input) == "table" and #input > 0 then
    ok = true
    for _, s in ipairs(input) do ok = ok and type(s) == "string" end
  end
  if not ok then error("judge:embed: input must be a string or a non-empty list of strings", 3) end
end

-- judge:ask(op, vars) -> {ok=true, value=, reason=} | {ok=false, error=, unmeasured=true}
-- vars may also carry temperature, seed, sample, logprobs and top_logprobs
-- for a judge that asks a model.
function B:ask(name, vars)
  local op = ops.get(name)
  local ok, prepared = pcall(ops.prepare, op, vars)
  if not ok then error(prepared, 2) end
  return self:answer(name, op, prepared, vars)
end

-- judge:embed{input = string | list} -> {ok = true, embeddings = {...}, embedding = (for a string)}
-- judge:similarity(a, bs) -> cosines of text a with each text of bs, one
-- embedding request for all of them; nil, error when it failed.
function B:similarity(a, bs, model)
  local input = { a }
  for i, b in ipairs(bs) do input[i + 1] = b end
  local e = self:embed { input = input, model = model }
  if not e.ok then return nil, e.error end
  local vector = require "evalua.vector"
  local vs = {}
  for i = 2, #e.embeddings do vs[i - 1] = e.embeddings[i] end
  return vector.cosine_many(e.embeddings[1], vs)
end

return B
