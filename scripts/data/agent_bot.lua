-- A simulated tool-using support bot of Nimbus Storage, for
-- scripts/agent_eval.lua: five tools over a simulated account
-- (agent_account.json) and the documentation (corpus.jsonl), and two
-- rule-based policies that play the model offline. Neither policy is a
-- model: "v1" matches keywords and has known faults (it answers off-topic
-- requests, reads no Chinese month or bucket name, never escalates a
-- ticket, looks up one month where two are asked for); "v2" fixes them.
-- Both are deterministic, so the bundled evaluation gives the same
-- numbers on every machine.
local json = require("evalua").json -- public, so the bot runs under --sandbox too

local M = {}

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- ---- the tools ----------------------------------------------------------------------

local function schema(props, required)
  return { type = "object", properties = props, required = required, additionalProperties = false }
end

local MONTH = { type = "string", description = "a month as YYYY-MM" }

-- tools(dir) -> the tool list of ev.provider.openai / offline (with run functions).
function M.tools(dir)
  local account = json.decode(read(dir .. "/agent_account.json"))
  local docs = {}
  for line in io.lines(dir .. "/corpus.jsonl") do docs[#docs + 1] = json.decode(line) end
  local ev = require "evalua"
  local content = ev.judge.offline.content_tokens -- words without stop words
  local function words(s)
    local set = {}
    for _, w in ipairs(content(s)) do set[w] = true end
    return set
  end
  local doc_words = {}
  for i, d in ipairs(docs) do doc_words[i] = words(d.title .. " " .. d.text) end
  local function month_of(args)
    if type(args.month) ~= "string" or not args.month:match("^%d%d%d%d%-%d%d$") then
      return nil, "month must be YYYY-MM"
    end
    return args.month
  end
  return {
    { name = "search_docs", description = "Search the Nimbus Storage documentation",
      parameters = schema({ query = { type = "string" } }, { "query" }),
      run = function(args)
        local q, best, score = words(args.query or ""), nil, 0
        for i, d in ipairs(docs) do
          local s = 0
          for w in pairs(q) do if doc_words[i][w] then s = s + 1 end end
          if not d.title:find("deprecated", 1, true) and s > score then best, score = d, s end
        end
        if not best then return { found = false } end
        return { found = true, id = best.id, title = best.title, text = best.text }
      end },
    { name = "get_bucket", description = "Settings of one of the customer's buckets",
      parameters = schema({ bucket = { type = "string" } }, { "bucket" }),
      run = function(args)
        local b = account.buckets[args.bucket]
        if not b then return { error = "no bucket named " .. tostring(args.bucket) } end
        local out = { bucket = args.bucket }
        for k, v in pairs(b) do out[k] = v end
        return out
      end },
    { name = "get_usage", description = "Storage, egress, requests and cost of one month",
      parameters = schema({ month = MONTH }, { "month" }),
      run = function(args)
        local m, why = month_of(args)
        local u = m and account.usage[m]
        if not u then return { error = why or ("no usage recorded for " .. m) } end
        local out = { month = m }
        for k, v in pairs(u) do out[k] = v end
        return out
      end },
    { name = "get_invoice", description = "The invoice of one month",
      parameters = schema({ month = MONTH }, { "month" }),
      run = function(args)
        local m, why = month_of(args)
        local inv = m and account.invoices[m]
        if not inv then return { error = why or ("no invoice for " .. m) } end
        local out = { month = m }
        for k, v in pairs(inv) do out[k] = v end
        return out
      end },
    { name = "open_ticket", description = "Open a ticket for the support team",
      parameters = schema({ subject = { type = "string" }, priority = { type = "string", enum = { "normal", "high" } } },
        { "subject", "priority" }),
      run = function(args)
        return { ticket = "T-" .. ev.sys.sha256(tostring(args.subject)):sub(1, 6), priority = args.priority }
      end },
  }, account
end

-- ---- reading the user ---------------------------------------------------------------

local EN_MONTHS = { april = "2024-04", may = "2024-05", june = "2024-06" }
local ZH_MONTHS = { ["4月"] = "2024-04", ["四月"] = "2024-04", ["5月"] = "2024-05", ["五月"] = "2024-05",
                    ["6月"] = "2024-06", ["六月"] = "2024-06" }
local BUCKET_NAMES = { "media-prod", "backups-2023", "logs-cn" }

local function chinese(s) return s:find("[\228-\233][\128-\191][\128-\191]") ~= nil end

local function has(s, list)
  for _, w in ipairs(list) do
    if s:find(w, 1, true) then return true end
  end
  return false
end

local function previous(month)
  local y, m = month:match("^(%d+)%-(%d+)$")
  y, m = tonumber(y), tonumber(m) - 1
  if m == 0 then y, m = y - 1, 12 end
  return ("%04d-%02d"):format(y, m)
end

-- The months a message names, in order; v2 also reads Chinese and
-- relative months ("last month", 上个月, "the month before" the one asked last).
local function months(text, careful, last_asked)
  local out, low = {}, text:lower()
  local found = {}
  for name, m in pairs(EN_MONTHS) do
    local at = low:find("%f[%a]" .. name .. "%f[%A]")
    if at then found[#found + 1] = { at = at, m = m } end
  end
  for y, mm in low:gmatch("(20%d%d)%-(%d%d)") do found[#found + 1] = { at = low:find(y .. "-" .. mm, 1, true), m = y .. "-" .. mm } end
  if careful then
    for name, m in pairs(ZH_MONTHS) do
      local at = text:find(name, 1, true)
      if at then found[#found + 1] = { at = at, m = m } end
    end
    if has(low, { "last month", "上个月" }) then found[#found + 1] = { at = 0, m = "2024-05" } end
    if has(low, { "month before", "前一个月", "再前一个月" }) and last_asked then
      found[#found + 1] = { at = 0, m = previous(last_asked) }
    end
  end
  table.sort(found, function(a, b) return a.at < b.at end)
  local seen = {}
  for _, f in ipairs(found) do
    if not seen[f.m] then seen[f.m], out[#out + 1] = true, f.m end
  end
  return out
end

-- The month the conversation asked about last (from the bot's own calls).
local function last_month(messages)
  for i = #messages, 1, -1 do
    for _, c in ipairs(messages[i].tool_calls or {}) do
      local ok, a = pcall(json.decode, c["function"].arguments)
      if ok and type(a) == "table" and type(a.month) == "string" then return a.month end
    end
  end
end

local function bucket_in(text)
  for _, b in ipairs(BUCKET_NAMES) do
    if text:find(b, 1, true) then return b end
  end
end

local OFF_TOPIC = { "joke", "weather", "poem", "football", "笑话", "天气", "写诗" }
local TICKET = { "ticket", "escalate", "human", "工单", "人工" }
local URGENT = { "urgent", "down", "outage", "紧急", "宕机", "无法访问" }
local INVOICE = { "invoice", "bill", "发票", "账单" }
local PAID = { "pay", "paid", "付了", "支付" } -- v2 also reads these as the invoice
local USAGE = { "usage", "egress", "how much data", "how much storage", "用量", "流量", "存了多少" }

-- The calls a policy makes for a user message: {{name =, arguments =}...}, or a refusal.
local function plan(text, careful, messages, latest)
  local low = text:lower()
  if has(low, OFF_TOPIC) then return nil, careful end
  if has(low, TICKET) then
    local priority = (careful and has(low, URGENT)) and "high" or "normal"
    return { { name = "open_ticket", arguments = { subject = text, priority = priority } } }
  end
  local asked = last_month(messages)
  local wanted = months(text, careful, asked)
  local function per_month(name)
    if #wanted == 0 then wanted = { latest } end
    local calls = {}
    for i = 1, careful and #wanted or 1 do calls[i] = { name = name, arguments = { month = wanted[i] } } end
    return calls
  end
  if has(low, INVOICE) or (careful and has(low, PAID)) then return per_month("get_invoice") end
  if has(low, USAGE) then return per_month("get_usage") end
  if careful and asked and #wanted > 0 then -- "and the month before?": the tool asked last, for that month
    for i = #messages, 1, -1 do
      local c = (messages[i].tool_calls or {})[1]
      if c then return per_month(c["function"].name) end
    end
  end
  local b = bucket_in(text)
  if b and (careful or not chinese(text)) then return { { name = "get_bucket", arguments = { bucket = b } } } end
  return { { name = "search_docs", arguments = { query = text } } }
end

-- ---- replies ------------------------------------------------------------------------

-- The sentence of text that shares the most words with the question (the first on a tie).
local function sentence(text, question)
  local ev = require "evalua"
  local q = {}
  for _, w in ipairs(ev.judge.offline.content_tokens(question)) do q[w] = true end
  local best, score = text, -1
  for _, s in ipairs(ev.judge.offline.sentences(text)) do
    local n = 0
    for _, w in ipairs(ev.judge.offline.content_tokens(s)) do if q[w] then n = n + 1 end end
    if n > score then best, score = s, n end
  end
  return best
end

local function reply(call, result, zh, question)
  if result.error then
    return zh and ("抱歉，我没能查到：" .. result.error .. "。") or ("Sorry, I could not look that up: " .. result.error .. ".")
  end
  local n = call["function"].name
  if n == "search_docs" then
    if not result.found then return zh and "文档中没有找到相关内容。" or "The documentation does not cover that." end
    return sentence(result.text, question) .. (zh and ("（见《%s》）"):format(result.title) or (" (see \"%s\")"):format(result.title))
  elseif n == "get_bucket" then
    if zh then
      return ("存储桶 %s 位于 %s，存储类型为 %s，版本控制%s，共 %d GB。"):format(result.bucket, result.region,
        result.storage_class, result.versioning and "已开启" or "未开启", result.size_gb)
    end
    return ("Bucket %s is in %s, storage class %s, versioning %s, %d GB."):format(result.bucket, result.region,
      result.storage_class, result.versioning and "on" or "off", result.size_gb)
  elseif n == "get_usage" then
    if zh then
      return ("%s：存储 %d GB，外网流出 %d GB，费用 %.2f 美元。"):format(result.month, result.storage_gb, result.egress_gb, result.cost_usd)
    end
    return ("In %s you stored %d GB, sent out %d GB and paid $%.2f."):format(result.month, result.storage_gb,
      result.egress_gb, result.cost_usd)
  elseif n == "get_invoice" then
    if zh then
      return ("%s 的发票 %s：%.2f %s，状态：%s。"):format(result.month, result.number, result.amount, result.currency, result.status)
    end
    return ("Invoice %s for %s: %.2f %s, %s."):format(result.number, result.month, result.amount, result.currency, result.status)
  else
    if zh then return ("已为您创建工单 %s（优先级 %s），支持团队会尽快联系您。"):format(result.ticket, result.priority) end
    return ("I opened ticket %s (priority %s); the support team will contact you."):format(result.ticket, result.priority)
  end
end

local function refusal(zh)
  if zh then return "抱歉，我只能回答与 Nimbus Storage 有关的问题。" end
  return "Sorry, I can only help with questions about Nimbus Storage."
end

local JOKE = { en = "Here is one: why did the bucket go to therapy? It had too many objects.",
               zh = "讲个笑话：存储桶为什么去看心理医生？因为它装了太多对象。" }

-- policy(version, latest) -> the offline provider's policy function.
function M.policy(version, latest)
  local careful = version == "v2"
  return function(state)
    local msgs = state.messages
    local last = msgs[#msgs]
    local user
    for i = #msgs, 1, -1 do
      if msgs[i].role == "user" then user = msgs[i]; break end
    end
    local text = type(user.content) == "string" and user.content or ""
    local zh = chinese(text)
    if last.role == "tool" then
      local parts, first = {}, #msgs
      while first > 1 and msgs[first - 1].role == "tool" do first = first - 1 end
      local calls = msgs[first - 1].tool_calls
      for i = first, #msgs do
        local ok, result = pcall(json.decode, msgs[i].content)
        if not ok or type(result) ~= "table" then result = { error = tostring(msgs[i].content) } end
        parts[#parts + 1] = reply(calls[i - first + 1], result, zh, text)
      end
      return { content = table.concat(parts, zh and "" or " ") }
    end
    local calls, refuse = plan(text, careful, msgs, latest)
    if not calls then return { content = refuse and refusal(zh) or (zh and JOKE.zh or JOKE.en) } end
    return { tool_calls = calls }
  end
end

return M
