-- Tool calls and conversations in rows (docs/agents.md, "Data"): the fields
-- `messages` and `reference_messages` (OpenAI chat format), `tools`,
-- `expected_tool_calls` and `tool_errors`, decoded and checked once per
-- row when a metric, ds:turns() or the agent loop first reads them. The C
-- reader keeps these nested values as JSON text and the row view decodes
-- them; this module checks their shape and decodes the arguments strings.
-- A bad value is "field 'messages[3].tool_calls[1].function.arguments':
-- not JSON (...)"; check(ds) raises it as FILE:LINE: before any work.
local cjson = require("cjson.safe").new()
cjson.decode_invalid_numbers(false)
local options = require "evalua.core.options"
local sys = require "evalua._sys"
local equal = require "evalua.agent.equal"

local M = {}

local null = cjson.null
local ROLES = { system = true, developer = true, user = true, assistant = true, tool = true }
local ROLE_LIST = "system, developer, user, assistant or tool"

local function typename(v)
  if v == null then return "null" end
  if type(v) == "table" then return equal.is_list(v) and next(v) ~= nil and "a list" or "an object" end
  return type(v) == "number" and "a number" or type(v) == "string" and "a string" or type(v)
end

local function is_list(v) return type(v) == "table" and v ~= null and equal.is_list(v) end
local function is_object(v) return equal.is_object(v) end

local function bad(path, fmt, ...) return nil, ("field '%s': " .. fmt):format(path, ...) end

-- A JSON value with no NaN or infinity (1e400 decodes to infinity).
local function finite(v, depth)
  if type(v) == "number" then return v == v and v ~= math.huge and v ~= -math.huge end
  if type(v) ~= "table" or depth > 100 then return true end
  for _, x in pairs(v) do
    if not finite(x, depth + 1) then return false end
  end
  return true
end

local strip_nulls = require("evalua.core.tables").strip_nulls

-- The text of a message's content: a string, or the text of its parts
-- ([{type = "text", text = ...}]) joined by line breaks; "" when absent.
function M.text(content)
  if type(content) == "string" then return content end
  if type(content) ~= "table" then return "" end
  local out = {}
  for _, part in ipairs(content) do
    if type(part) == "table" and type(part.text) == "string" then out[#out + 1] = part.text end
  end
  return table.concat(out, "\n")
end

local function check_content(c, path, required)
  if c == nil or c == null then
    if required then return bad(path, "missing (a %s)", required) end
    return true
  end
  if type(c) == "string" then return true end
  if not is_list(c) then return bad(path, "expected a string or a list of content parts, got %s", typename(c)) end
  for i, part in ipairs(c) do
    local p = ("%s[%d]"):format(path, i)
    if not is_object(part) or type(part.type) ~= "string" then return bad(p, "expected a content part {type =, ...}") end
    if part.type == "text" and type(part.text) ~= "string" then return bad(p .. ".text", "expected a string") end
  end
  return true
end

-- Arguments as a model writes them (a JSON string holding an object), or
-- already decoded; returns the object, or nil and why.
function M.arguments(a)
  if is_object(a) then return strip_nulls(a) end
  if type(a) ~= "string" then return nil, "expected a JSON object (as a string), got " .. typename(a) end
  local v, err = cjson.decode(a)
  if v == nil then return nil, ("not JSON (%s): %s"):format(tostring(err), #a > 60 and a:sub(1, 57) .. "..." or a) end
  if not is_object(v) then return nil, "the JSON is " .. typename(v) .. ", not an object" end
  if not finite(v, 0) then return nil, "holds a number that is not finite" end
  return strip_nulls(v)
end

-- One call of an assistant message, checked; `recorded` lists the ids whose
-- failures the row records in tool_errors (a model's bad arguments are
-- data there, not bad input).
local function read_call(c, path, recorded)
  if not is_object(c) then return bad(path, "expected a tool call {id =, type = \"function\", function =}") end
  for k in pairs(c) do
    if k ~= "id" and k ~= "type" and k ~= "function" and k ~= "index" then
      return bad(path .. "." .. tostring(k), "not a key of a tool call (id, type, function)")
    end
  end
  if c.id ~= nil and (type(c.id) ~= "string" or c.id == "") then return bad(path .. ".id", "expected a non-empty string") end
  if c.type ~= nil and c.type ~= "function" then return bad(path .. ".type", "expected \"function\", got %s", typename(c.type)) end
  local f = c["function"]
  if not is_object(f) then return bad(path .. ".function", "expected {name =, arguments =}, got %s", typename(f)) end
  local failed = c.id and recorded[c.id] -- a model's bad call the row records
  if type(f.name) ~= "string" or (f.name == "" and not failed) then
    return bad(path .. ".function.name", "expected a non-empty string")
  end
  local args, why = M.arguments(f.arguments == nil and "{}" or f.arguments)
  local call = { id = c.id, name = f.name, arguments = args, error = failed or nil }
  if not args then
    if not failed then return bad(path .. ".function.arguments", "%s", why) end
    call.raw = f.arguments
  end
  return call
end

local function unknown_key(path, m, keys)
  for k in pairs(m) do
    if not keys[k] then
      return bad(path .. "." .. tostring(k), "not a key of a message (role, content, name, tool_calls, tool_call_id, refusal, id)")
    end
  end
end

local MESSAGE_KEYS = options.set { "role", "content", "name", "tool_calls", "tool_call_id", "refusal", "id" }

-- conversation(list, field [, recorded]) -> {messages =, calls =, turn_of =}
-- | nil, why. calls lists every call in order: {id=, name=, arguments=,
-- message = m, index = k (within its message), turn =, output = the text of
-- the tool message answering it, answer = that message's index}.
-- turn_of[m] is the number of user messages up to message m.
function M.conversation(list, field, recorded)
  recorded = recorded or {}
  if not is_list(list) then return bad(field, "expected a list of messages, got %s", typename(list)) end
  local calls, by_id, turn_of, turn = {}, {}, {}, 0
  for m, msg in ipairs(list) do
    local path = ("%s[%d]"):format(field, m)
    if not is_object(msg) then return bad(path, "expected a message {role =, content =}, got %s", typename(msg)) end
    local role = msg.role
    if type(role) ~= "string" or not ROLES[role] then
      return bad(path .. ".role", "expected %s, got %s", ROLE_LIST, type(role) == "string" and ("'" .. role .. "'") or typename(role))
    end
    local _, why = unknown_key(path, msg, MESSAGE_KEYS)
    if why then return nil, why end
    if role == "user" then turn = turn + 1 end
    turn_of[m] = turn
    if msg.tool_calls ~= nil and role ~= "assistant" then
      return bad(path .. ".tool_calls", "only an assistant message makes tool calls (this one is %s)", role)
    end
    if msg.tool_call_id ~= nil and role ~= "tool" then
      return bad(path .. ".tool_call_id", "only a tool message answers a call (this one is %s)", role)
    end
    local has_calls = msg.tool_calls ~= nil and next(msg.tool_calls) ~= nil
    local ok
    ok, why = check_content(msg.content, path .. ".content",
      (role == "user" or role == "tool" or role == "system" or role == "developer") and "string" or nil)
    if not ok then return nil, why end
    if role == "assistant" and msg.tool_calls ~= nil then
      if not is_list(msg.tool_calls) then return bad(path .. ".tool_calls", "expected a list, got %s", typename(msg.tool_calls)) end
      for k, c in ipairs(msg.tool_calls) do
        local call, err = read_call(c, ("%s.tool_calls[%d]"):format(path, k), recorded)
        if not call then return nil, err end
        if call.id then
          if by_id[call.id] then
            return bad(("%s.tool_calls[%d].id"):format(path, k), "'%s' is the id of an earlier call too", call.id)
          end
          by_id[call.id] = call
        end
        call.message, call.index, call.turn, call.position = m, k, turn, #calls + 1
        calls[#calls + 1] = call
      end
    end
    if role == "assistant" and not has_calls and (msg.content == nil or msg.content == null) and msg.refusal == nil then
      return bad(path .. ".content", "missing: an assistant message needs content or tool_calls")
    end
    if role == "tool" then
      local id = msg.tool_call_id
      if type(id) ~= "string" or id == "" then return bad(path .. ".tool_call_id", "missing: a tool message names the call it answers") end
      local call = by_id[id]
      if not call then return bad(path .. ".tool_call_id", "'%s' answers no call made before it", id) end
      if call.answer then
        return bad(path .. ".tool_call_id", "answers call '%s' a second time (first in %s[%d])", id, field, call.answer)
      end
      call.answer, call.output = m, M.text(msg.content)
    end
  end
  return { messages = list, calls = calls, turn_of = turn_of, turns = turn }
end

local EXPECTED_KEYS = { "name", "arguments", "output", "turn" }
local EXPECTED = options.set(EXPECTED_KEYS)

-- expected(list, field) -> calls {name=, arguments=, output=, turn=} | nil, why
function M.expected(list, field)
  if not is_list(list) then return bad(field, "expected a list of calls {name =, arguments =}, got %s", typename(list)) end
  local out = {}
  for i, c in ipairs(list) do
    local path = ("%s[%d]"):format(field, i)
    if not is_object(c) then return bad(path, "expected a call {name =, arguments =}, got %s", typename(c)) end
    for k in pairs(c) do
      if not EXPECTED[k] then
        local near = options.suggest(k, EXPECTED_KEYS)
        return bad(path .. "." .. tostring(k), "not a key of an expected call (%s)%s", table.concat(EXPECTED_KEYS, ", "), near)
      end
    end
    if type(c.name) ~= "string" or c.name == "" then return bad(path .. ".name", "expected a non-empty string") end
    local args = c.arguments
    if args == nil then args = {} end
    if not is_object(args) then
      return bad(path .. ".arguments", "expected an object (the arguments decoded), got %s", typename(args))
    end
    if not finite(args, 0) then return bad(path .. ".arguments", "holds a number that is not finite") end
    local turn = math.tointeger(c.turn)
    if c.turn ~= nil and (not turn or turn < 1) then
      return bad(path .. ".turn", "expected a whole number >= 1 (the user turn the call belongs to)")
    end
    if (c.turn ~= nil) ~= (list[1].turn ~= nil) then
      return bad(path .. ".turn", "every expected call names its turn, or none does (expected_tool_calls[1] %s)",
        list[1].turn ~= nil and "does" or "does not")
    end
    out[i] = { name = c.name, arguments = strip_nulls(args), output = c.output, turn = turn, position = i }
  end
  return out
end

-- tools(list, field) -> the offered functions {name=, description=, parameters=} | nil, why
function M.tools(list, field)
  if not is_list(list) then return bad(field, "expected a list of tools {type = \"function\", function =}, got %s", typename(list)) end
  local out = {}
  for i, t in ipairs(list) do
    local path = ("%s[%d]"):format(field, i)
    local f = is_object(t) and t["function"]
    if not is_object(f) or (t.type ~= nil and t.type ~= "function") then
      return bad(path, "expected {type = \"function\", function = {name =, parameters =}}")
    end
    if type(f.name) ~= "string" or f.name == "" then return bad(path .. ".function.name", "expected a non-empty string") end
    if f.parameters ~= nil and not is_object(f.parameters) then
      return bad(path .. ".function.parameters", "expected a JSON schema object, got %s", typename(f.parameters))
    end
    out[i] = { name = f.name, description = f.description, parameters = f.parameters }
  end
  return out
end

-- tool_errors: [{id =, error =}], what went wrong with a call in a loop
-- (written by ev.generate's agent loop); id -> error.
local function recorded_errors(list, field)
  if list == nil then return {} end
  if not is_list(list) then return bad(field, "expected a list of {id =, error =}, got %s", typename(list)) end
  local out = {}
  for i, e in ipairs(list) do
    if not is_object(e) or type(e.id) ~= "string" or type(e.error) ~= "string" then
      return bad(("%s[%d]"):format(field, i), "expected {id = \"call id\", error = \"what went wrong\"}")
    end
    out[e.id] = e.error
  end
  return out
end

M.FIELDS = { "messages", "reference_messages", "expected_tool_calls", "tools", "tool_errors" }

local parsed = setmetatable({}, { __mode = "k" })

-- row(row) -> {messages =, reference =, expected =, tools =, errors =}
-- (each nil when the row lacks the field) | nil, why. Kept per row view.
function M.row(row)
  local p = parsed[row]
  if p then return p end
  local errors, why = recorded_errors(row.tool_errors, "tool_errors")
  if not errors then return nil, why end
  p = { errors = errors }
  if row.messages ~= nil then
    p.messages, why = M.conversation(row.messages, "messages", errors)
    if not p.messages then return nil, why end
  end
  if row.reference_messages ~= nil then
    p.reference, why = M.conversation(row.reference_messages, "reference_messages")
    if not p.reference then return nil, why end
  end
  if row.expected_tool_calls ~= nil then
    p.expected, why = M.expected(row.expected_tool_calls, "expected_tool_calls")
    if not p.expected then return nil, why end
  end
  if row.tools ~= nil then
    p.tools, why = M.tools(row.tools, "tools")
    if not p.tools then return nil, why end
  end
  parsed[row] = p
  return p
end

local function where(ds, i, row)
  return ("%s:%s"):format(ds.path or "(rows)", tostring(row._line or i))
end

local checked = setmetatable({}, { __mode = "k" })

-- check(ds): every row's agent fields are well formed, or an input error
-- (FILE:LINE: field ...) stops the run before any metric runs or asks.
function M.check(ds)
  if checked[ds] then return end
  for i = 1, ds.n do
    local row = ds.rows[i]
    local _, why = M.row(row)
    if why then sys.input_error(where(ds, i, row) .. ": " .. why) end
  end
  checked[ds] = true
end

-- ---- what the ev.agent functions take ------------------------------------------

local function looks_like_messages(x) return type(x[1]) == "table" and x[1].role ~= nil end

-- calls(x, what) -> the calls of x | nil, why. x is a row (its messages),
-- a list of messages, or a list of calls {name =, arguments =} (arguments
-- decoded or a JSON string; the OpenAI form {function = {...}} too).
function M.calls(x, what)
  if type(x) ~= "table" then return nil, what .. ": expected a list of messages or of calls, got " .. typename(x) end
  if x.messages ~= nil and x[1] == nil then
    local p, why = M.row(x)
    if not p then return nil, what .. ": " .. why end
    return p.messages.calls
  end
  if looks_like_messages(x) then
    local conv, why = M.conversation(x, what)
    if not conv then return nil, why end
    return conv.calls
  end
  if not is_list(x) then return nil, what .. ": expected a list of messages or of calls, got " .. typename(x) end
  local flat = {}
  for i, c in ipairs(x) do
    local f = type(c) == "table" and c["function"]
    if is_object(f) then c = { name = f.name, arguments = f.arguments } end
    if type(c) == "table" and type(c.arguments) == "string" then
      local args, why = M.arguments(c.arguments)
      if not args then return bad(("%s[%d].arguments"):format(what, i), "%s", why) end
      c = { name = c.name, arguments = args, output = c.output, turn = c.turn }
    end
    flat[i] = c
  end
  return M.expected(flat, what)
end

-- conversation_of(x, what) -> the parsed conversation of a row (its
-- messages, or with reference = true its reference_messages) or of a list
-- of messages | nil, why.
function M.conversation_of(x, what, reference)
  if type(x) ~= "table" then return nil, what .. ": expected a list of messages, got " .. typename(x) end
  if x[1] == nil and (x.messages ~= nil or x.reference_messages ~= nil) then
    local p, why = M.row(x)
    if not p then return nil, what .. ": " .. why end
    local conv = reference and p.reference or p.messages
    if not conv then return nil, ("%s: the row has no %s"):format(what, reference and "reference_messages" or "messages") end
    return conv
  end
  return M.conversation(x, what)
end

-- ---- turns ---------------------------------------------------------------------

-- Fields of a conversation that stay with it, not with each turn.
local CONVERSATION_ONLY = { messages = true, reference_messages = true, expected_tool_calls = true,
                            tool_errors = true, _line = true, qid = true }

local function turn_rows(row, p, where_)
  local conv, out = p.messages, {}
  if not conv then return out end
  local base = {}
  for k, v in pairs(type(row.table) == "function" and row:table() or row) do
    if not CONVERSATION_ONLY[k] then base[k] = v end
  end
  local msgs, first = conv.messages, {}
  for m = 1, #msgs do
    local t = conv.turn_of[m]
    if t > 0 and not first[t] then first[t] = m end
  end
  for _, c in ipairs(conv.calls) do
    if c.answer and conv.turn_of[c.answer] ~= c.turn then
      sys.input_error(("%s: field 'messages[%d]': answers call '%s' of an earlier turn, so the conversation "
        .. "cannot be split into turns"):format(where_, c.answer, c.id))
    end
  end
  for t = 1, conv.turns do
    local from, to = first[t], (first[t + 1] or #msgs + 1) - 1
    local r = {}
    for k, v in pairs(base) do r[k] = v end
    r.qid = ("%s#%d"):format(tostring(row.qid), t)
    r.conversation, r.turn, r._line = row.qid, t, row._line
    r.messages = table.move(msgs, from, to, 1, {})
    r.history = table.move(msgs, 1, from - 1, 1, {})
    r.query = M.text(msgs[from].content)
    for m = to, from, -1 do
      local msg = msgs[m]
      if msg.role == "assistant" and type(M.text(msg.content)) == "string" and M.text(msg.content) ~= "" then
        r.answer = M.text(msg.content)
        break
      end
    end
    if p.expected then
      local mine = {}
      for k, e in ipairs(p.expected) do
        if e.turn == t then mine[#mine + 1] = row.expected_tool_calls[k] end
      end
      -- per turn only when the calls say their turn (or none is expected at all)
      if next(p.expected) == nil or p.expected[1].turn ~= nil then r.expected_tool_calls = mine end
    end
    local errs = {}
    for _, e in ipairs(row.tool_errors or {}) do
      for _, c in ipairs(conv.calls) do
        if c.id == e.id and c.turn == t then errs[#errs + 1] = e end
      end
    end
    if #errs > 0 then r.tool_errors = errs end
    out[#out + 1] = r
  end
  return out
end

-- turn_rows(ds) -> the rows of a data set with one row per user turn of each conversation:
-- qid "QID#k", conversation = QID, turn = k, query (the user's message),
-- answer (the turn's last assistant text), messages (the turn's: the user
-- message and every assistant and tool message up to the next user one),
-- history (the messages before it), the expected calls marked turn = k, and
-- the conversation's other fields (scenario, variant, ...).
-- The rows only: Dataset:turns (evalua.data.dataset) makes them a data set.
function M.turn_rows(ds)
  M.check(ds)
  local rows = {}
  for i = 1, ds.n do
    local row = ds.rows[i]
    for _, r in ipairs(turn_rows(row, M.row(row), where(ds, i, row))) do rows[#rows + 1] = r end
  end
  return rows
end

return M
