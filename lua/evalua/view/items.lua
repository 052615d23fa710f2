-- The items table of a run, filtered, sorted and paged in SQL over the
-- store (scores and slices), with the text search done over the run's
-- texts in Lua and handed to SQL as a JSON list of ids (json_each).
local json = require "evalua.core.json"

local M = {}
M.PASS = 0.5 -- "failing" and "disagree" count a score under this as a fail

-- A JSON path to a slice dimension, quoted so any name is one key.
local function slice_path(dim)
  return '$."' .. dim:gsub('[\\"]', "\\%0") .. '"'
end

local function search_ids(texts, system, q)
  q = q:lower()
  local ids = {}
  for sys_name, rows in pairs(texts) do
    if not system or sys_name == system then
      for id, row in pairs(rows) do
        local hay = row.__hay
        if not hay then
          local parts = { tostring(row.query or ""), tostring(row.answer or "") }
          for _, c in ipairs(type(row.contexts) == "table" and row.contexts or {}) do
            parts[#parts + 1] = type(c) == "table" and tostring(c.text or "") or tostring(c)
          end
          hay = table.concat(parts, "\n"):lower()
          row.__hay = hay
        end
        if hay:find(q, 1, true) then ids[#ids + 1] = id end
      end
    end
  end
  return ids
end

-- where(f, texts) -> SQL condition over items `i`, its parameters.
local function where(f, texts)
  local sql, args = { "i.run = ?" }, { f.seq }
  local function add(s, ...)
    sql[#sql + 1] = s
    for _, v in ipairs { ... } do args[#args + 1] = v end
  end
  if f.system then add("i.system = ?", f.system) end
  if f.metric and f.below then
    add("EXISTS (SELECT 1 FROM scores s WHERE s.run = i.run AND s.system = i.system AND s.item = i.item "
      .. "AND s.metric = ? AND s.value < ?)", f.metric, f.below)
  end
  if f.unmeasured then
    if f.metric then
      add("EXISTS (SELECT 1 FROM scores s WHERE s.run = i.run AND s.system = i.system AND s.item = i.item "
        .. "AND s.metric = ? AND s.value IS NULL)", f.metric)
    else
      add("EXISTS (SELECT 1 FROM scores s WHERE s.run = i.run AND s.system = i.system AND s.item = i.item "
        .. "AND s.value IS NULL)")
    end
    if f.why then
      add("EXISTS (SELECT 1 FROM scores s WHERE s.run = i.run AND s.system = i.system AND s.item = i.item "
        .. "AND s.value IS NULL AND s.reason LIKE ?)", "%" .. f.why .. "%")
    end
  end
  if f.failing then -- M.PASS first: f.metric may be nil
    add("EXISTS (SELECT 1 FROM scores s WHERE s.run = i.run AND s.system = i.system AND s.item = i.item "
      .. "AND s.value < ?" .. (f.metric and " AND s.metric = ?" or "") .. ")", M.PASS, f.metric)
  end
  if f.disagree then -- another system of the run passes where this one fails, or the reverse
    local s = "EXISTS (SELECT 1 FROM scores a JOIN scores b ON b.run = a.run AND b.item = a.item "
      .. "AND b.metric = a.metric AND b.system <> a.system WHERE a.run = i.run AND a.system = i.system "
      .. "AND a.item = i.item AND (a.value >= ?) <> (b.value >= ?)"
    if f.metric then add(s .. " AND a.metric = ?)", M.PASS, M.PASS, f.metric) else add(s .. ")", M.PASS, M.PASS) end
  end
  for dim, value in pairs(f.slices or {}) do
    add("json_extract(i.slices, ?) = ?", slice_path(dim), value)
  end
  if f.q and f.q ~= "" then
    add("i.item IN (SELECT value FROM json_each(?))", json.encode(setmetatable(search_ids(texts, f.system, f.q), json.array)))
  end
  return table.concat(sql, " AND "), args
end

-- page(db, f, texts) -> {total, rows = {{system, item, slices, scores = {metric = {value, reason}}, query}}}
-- f: seq, system, metric, below, unmeasured, why, failing, disagree, slices, q, sort, desc, page (from 1), per
function M.page(db, f, texts)
  local cond, args = where(f, texts)
  local total = db:rows("SELECT count(*) AS n FROM items i WHERE " .. cond, table.unpack(args))[1].n
  local order, join, jargs = "i.system, i.item", "", {}
  if f.sort and f.sort ~= "" and f.sort ~= "id" then
    join = " LEFT JOIN scores o ON o.run = i.run AND o.system = i.system AND o.item = i.item AND o.metric = ?"
    jargs = { f.sort }
    order = ("o.value IS NULL, o.value %s, i.system, i.item"):format(f.desc and "DESC" or "ASC")
  elseif f.desc then
    order = "i.item DESC, i.system"
  end
  local all = {}
  for _, v in ipairs(jargs) do all[#all + 1] = v end
  for _, v in ipairs(args) do all[#all + 1] = v end
  all[#all + 1] = f.per
  all[#all + 1] = (f.page - 1) * f.per
  local rows = db:rows(("SELECT i.system, i.item, i.slices FROM items i%s WHERE %s ORDER BY %s LIMIT ? OFFSET ?")
    :format(join, cond, order), table.unpack(all))
  local st = db:prepare("SELECT metric, value, reason FROM scores WHERE run = ? AND system = ? AND item = ?")
  local out = {}
  for i, r in ipairs(rows) do
    local scores = {}
    for _, s in ipairs(st:rows(f.seq, r.system, r.item)) do scores[s.metric] = { value = s.value, reason = s.reason } end
    local row = texts[r.system] and texts[r.system][r.item] or {}
    out[i] = { system = r.system, item = r.item, slices = r.slices and json.decode(r.slices) or {}, scores = scores,
               query = type(row.query) == "string" and row.query:sub(1, 300) or nil }
  end
  st:close()
  return { total = total, rows = setmetatable(out, json.array), page = f.page, per = f.per }
end

return M
