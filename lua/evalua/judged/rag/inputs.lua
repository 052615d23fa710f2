-- What a RAG metric reads from a row (question, answer, contexts,
-- reference, renamed by the metric's `fields`), and how contexts are packed
-- into groups that fit one judge request.
local I = {}

local FIELDS = { question = "query", answer = "answer", contexts = "contexts", reference = "gold_answers" }

-- The text of field `what` in row, or nil and why it is missing. A list of
-- reference answers gives its first; a row's own `reference` wins.
function I.field(o, row, what)
  local from = (o.fields or {})[what] or FIELDS[what]
  local v
  if type(from) == "function" then v = from(row) else v = row[from] end
  if what == "reference" and v == nil and from == FIELDS.reference then v = row.reference end
  local name = type(from) == "string" and from or what
  if what == "contexts" then
    if type(v) == "string" then v = { v } end
    if type(v) ~= "table" or #v == 0 then return nil, ("no '%s' in the row"):format(name) end
    for i, c in ipairs(v) do
      if type(c) ~= "string" then return nil, ("'%s[%d]' is not text"):format(name, i) end
    end
    return v
  end
  if type(v) == "table" then v = v[1] end
  if type(v) ~= "string" or not v:find("%S") then return nil, ("no '%s' in the row"):format(name) end
  return v
end

-- Reads the named fields; returns the values table or nil, reason.
function I.read(o, row, names)
  local out = {}
  for _, n in ipairs(names) do
    local v, why = I.field(o, row, n)
    if v == nil then return nil, why end
    out[n] = v
  end
  return out
end


-- Every reference answer of row (gold_answers, a string or a list), or nil
-- and why there is none.
function I.references(o, row)
  local from = (o.fields or {}).reference or FIELDS.reference
  local v
  if type(from) == "function" then v = from(row) else v = row[from] end
  if v == nil and from == FIELDS.reference then v = row.reference end
  local name = type(from) == "string" and from or "reference"
  if type(v) == "string" then v = { v } end
  local out = {}
  for i, g in ipairs(type(v) == "table" and v or {}) do
    if type(g) ~= "string" then return nil, ("'%s[%d]' is not text"):format(name, i) end
    if g:find("%S") then out[#out + 1] = g end
  end
  if #out == 0 then return nil, ("no '%s' in the row"):format(name) end
  return out
end

-- Contexts packed in order into groups of at most budget characters (a
-- longer single context is a group of its own).
function I.pack(contexts, budget)
  local groups, cur, size = {}, {}, 0
  for _, c in ipairs(contexts) do
    if #cur > 0 and size + #c > budget then
      groups[#groups + 1] = table.concat(cur, "\n\n")
      cur, size = {}, 0
    end
    cur[#cur + 1] = c
    size = size + #c
  end
  if #cur > 0 then groups[#groups + 1] = table.concat(cur, "\n\n") end
  return groups
end

return I
