-- What every judge shares. A judge implementation (judge/http.lua,
-- judge/offline_judge.lua) is a class whose methods are
--   chat(req), embed(req)         requests in the OpenAI shapes
--   answer(name, op, prepared, vars)  one judge operation, checked here first
--   stats(), estimate([fn]), close()
-- and inherits ask() and the request checks below, so metrics call the same
-- methods on either judge and never ask which kind they hold.
local ops = require "evalua.judge.ops"
local options = require "evalua.core.options"

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

local SIMILARITY_OPTIONS = options.set { "model" }

-- Texts per embedding request when similarity() embeds many.
B.embed_batch = 64

-- The distinct texts of queries and candidates, in first-seen order, and
-- each query's and candidate's index among them.
local function distinct(queries, candidates)
  local texts, at = {}, {}
  local function id(s)
    if not at[s] then texts[#texts + 1] = s; at[s] = #texts end
    return at[s]
  end
  local qi, ci = {}, {}
  for i, q in ipairs(queries) do
    qi[i] = id(q)
    local list = type(candidates[i]) == "table" and candidates[i] or { candidates[i] }
    ci[i] = {}
    for j, c in ipairs(list) do ci[i][j] = id(c) end
  end
  return texts, qi, ci
end

-- Embeds texts B.embed_batch at a time; vectors[k] or errors[k] per text.
-- Outside a coroutine the batches go out together through ev.map.
local function embed_batches(self, texts, model)
  local batches = {}
  for k = 1, #texts, B.embed_batch do
    batches[#batches + 1] = table.move(texts, k, math.min(k + B.embed_batch - 1, #texts), 1, {})
  end
  local function one(batch) return self:embed { input = batch, model = model } end
  local answers
  if coroutine.isyieldable() or #batches == 1 then
    answers = {}
    for i, batch in ipairs(batches) do answers[i] = one(batch) end
  else
    answers = require "evalua.client.map"(batches, one, { progress = false })
  end
  local vectors, errors = {}, {}
  for i, r in ipairs(answers) do
    for j = 1, #batches[i] do
      local k = (i - 1) * B.embed_batch + j
      if r.ok then vectors[k] = r.embeddings[j] else errors[k] = r.error end
    end
  end
  return vectors, errors
end

-- The arguments of judge:similarity, checked at the caller's line.
function B.check_similarity(queries, candidates, opts)
  local function strings(list, what)
    for i, s in ipairs(list) do
      if type(s) ~= "string" then error(("judge:similarity: %s[%d] must be a string"):format(what, i), 4) end
    end
  end
  if type(queries) ~= "table" or type(candidates) ~= "table" or #queries ~= #candidates then
    error("judge:similarity: expected two lists of the same length (queries, candidates)", 3)
  end
  strings(queries, "queries")
  for i, c in ipairs(candidates) do
    if type(c) == "table" then strings(c, ("candidates[%d]"):format(i))
    elseif type(c) ~= "string" then error(("judge:similarity: candidates[%d] must be a string or a list"):format(i), 3) end
  end
  if opts ~= nil then options.check(opts, SIMILARITY_OPTIONS, "judge:similarity", 3) end
end

-- judge:similarity(queries, candidates [, {model =}]) -> sims, errors:
-- sims[i] lists the cosines of queries[i] with each text of candidates[i]
-- (a string or a list of strings); when it could not be computed, sims[i]
-- is nil and errors[i] says why. Every distinct text is embedded once.
function B:similarity(queries, candidates, opts)
  B.check_similarity(queries, candidates, opts)
  local texts, qi, ci = distinct(queries, candidates)
  local vectors, errors = embed_batches(self, texts, opts and opts.model)
  local vector = require "evalua.eval.vector"
  local sims, why = {}, {}
  for i in ipairs(queries) do
    local q, vs = vectors[qi[i]], {}
    why[i] = errors[qi[i]]
    for j, k in ipairs(ci[i]) do
      vs[j] = vectors[k]
      why[i] = why[i] or errors[k]
    end
    for _, v in ipairs(vs) do
      if not why[i] and (#v ~= #q or #q == 0) then
        why[i] = ("the server's embeddings differ in length (%d and %d numbers)"):format(#q, #v)
      end
    end
    if not why[i] then sims[i] = #vs > 0 and vector.cosine_many(q, vs) or {} end
  end
  return sims, why
end

-- judge:check_family(ds): warns (stderr, once per message, and in
-- judge:stats().warnings) when the judge's model is of the family of a
-- system under test named by the data set's `model` or `provider` values.
function B:check_family(ds)
  local msg = require("evalua.judge.family").warning(self.model, ds)
  if msg and self:warn(msg) then io.stderr:write("evalua: warning: ", msg, "\n") end
  return msg
end

return B
