-- The items table of a run, filtered, sorted and paged in SQL over the
-- run's wide table in the viewer's cache (evalua.view.index); the page's
-- reasons come from the store. A filter names a metric by its column (v<i>: score, u<i>:
-- unmeasured), never by text pasted into the SQL.
local json = require "evalua.core.json"
local index = require "evalua.view.index"
local texts = require "evalua.view.texts"

local M = {}
M.PASS = 0.5 -- "failing" and "disagree" count a score under this as a fail

-- A JSON path to a slice dimension, quoted so any name is one key.
local function slice_path(dim)
  return '$."' .. dim:gsub('[\\"]', "\\%0") .. '"'
end

local function bad(fmt, ...) error({ status = 400, message = fmt:format(...) }, 0) end

local function column(idx, metric)
  local i = idx.metrics[metric]
  if not i then bad("metric: the run has no metric '%s'", tostring(metric)) end
  return i
end

-- The search: each word of q, in any order, anywhere among the row's id, query, answer and contexts
-- (docs/view.md#the-scan). A word of ASCII letters and digits is the start of a word there: three
-- characters or more through the run's full-text index (`key` finds "keys"; "audit-key", a phrase:
-- "audit" then a word that starts with "key"), one or two by the scan (FTS5 expands such a prefix to
-- most of the index's words: 50-500 ms). Any other word (Chinese, written without spaces, is one word
-- to the index; a word without letters) is a substring, by the scan. The scan (evalua._textscan) folds
-- as the index does: case (Unicode's folding) and accents. -> seconds spent building the index or the
-- scan's texts (the run's first search of each), or 0.
local function search(idx, q, add)
  local terms, scans = {}, {}
  -- While the index is built in the background, a word of ASCII letters and digits alone is a word's
  -- start for the scan too, the same items as the index's prefix (docs/view.md): answered at once, not
  -- "being built". A word with other characters between its letters is a phrase, for the index only.
  local building = q:find("%w%w%w") and index.search_building(idx)
  for word in q:gmatch("%S+") do
    local ascii = not word:find("[\128-\255]")
    if ascii and (word:find("^%w%w?$") or building and word:find("^%w+$")) then scans[#scans + 1] = { word, true }
    elseif ascii and word:find("%w") then terms[#terms + 1] = '"' .. word:gsub('"', '""') .. '"*'
    else scans[#scans + 1] = { word, false } end
  end
  local spent = 0
  if #scans > 0 then
    local scan, built, whole = texts.scan(idx)
    spent = built
    -- Most rows matching (a one-letter word): the few that do not, when the scan holds every row.
    local keys, _, misses = scan:find(scans, whole)
    add(("t.k %s (SELECT value FROM json_each(?))"):format(misses and "NOT IN" or "IN"), keys)
  end
  if #terms == 0 then return spent end
  spent = spent + index.search_index(idx)
  add(("t.k IN (SELECT rowid FROM %s WHERE %s MATCH ?)"):format(idx.fts, idx.fts), table.concat(terms, " AND "))
  return spent
end

-- where(idx, f) -> SQL condition over the wide table `t`, its parameters.
local function where(idx, f)
  local sql, args = { "1" }, {}
  local function add(s, ...)
    sql[#sql + 1] = s
    for i = 1, select("#", ...) do args[#args + 1] = select(i, ...) end
  end
  local m = f.metric and column(idx, f.metric)
  if f.system then add("t.system = ?", f.system) end
  if m and f.below then add(("t.v%d < ?"):format(m), f.below) end
  local function any(fmt)
    if m then return fmt:format(m, m) end -- string.format ignores the second when fmt has one %d
    local parts = {}
    for i = 1, #idx.list do parts[i] = fmt:format(i, i) end
    return #parts > 0 and "(" .. table.concat(parts, " OR ") .. ")" or "0"
  end
  if f.unmeasured then add(any("t.u%d = 1")) end
  if f.failing then add(any("t.v%d < " .. M.PASS)) end
  if f.disagree then add(any("t.d%d = 1")) end -- another system passes where this one fails, or the reverse
  for dim, value in pairs(f.slices or {}) do
    local j = idx.dims and idx.dims[dim]
    if j then add(("t.s%d = ?"):format(j), value) -- the column the table keeps for it
    else add("json_extract(t.slices, ?) = ?", slice_path(dim), value) end
  end
  local indexed = f.q and search(idx, f.q, add) or 0
  return table.concat(sql, " AND "), args, indexed
end

-- A decoded item's scores as the store gives them: {metric = {value, reason}}.
local function item_scores(it)
  local out = {}
  if not it then return out end
  local reasons = it.reasons or {}
  for m, v in pairs(it.scores or {}) do out[m] = { value = v, reason = reasons[m] } end
  for m, why in pairs(it.unmeasured or {}) do out[m] = { reason = tostring(why) } end
  return out
end

-- scores_of(src, f)(system, item, it) -> {metric = {value, reason}}: from the store, or from the decoded
-- report of a run the store has not imported yet (f.pending; it: the item when the caller has it).
function M.scores_of(src, f)
  if f.pending then
    return function(system, item, it) return item_scores(it or index.item_of(f, system, item)) end
  end
  local st = src.db:prepare("SELECT metric, value, reason FROM scores WHERE run = ? AND system = ? AND item = ?")
  return function(system, item)
    local out = {}
    for _, s in ipairs(st:rows(f.seq, system, item)) do out[s.metric] = { value = s.value, reason = s.reason } end
    return out
  end
end

-- plain(f) -> whether f is a page by id with no filter but a system: what a run's first view (index.first,
-- its rows without the cache's table) answers.
function M.plain(f)
  return not (f.metric or f.below or f.unmeasured or f.failing or f.disagree or next(f.slices or {})
    or (f.q and f.q:find("%S")) or (f.sort and f.sort ~= "" and f.sort ~= "id") or f.desc)
end

-- The page's rows {system, item, slices, row}, the total and the seconds spent building the search index:
-- over the cache's table, or the first view's rows (idx.rows, a plain f).
local function select_rows(idx, f)
  if idx.rows then
    local rows, total, from = {}, 0, (f.page - 1) * f.per
    for _, p in ipairs(idx.rows) do
      if not f.system or p.system == f.system then
        total = total + 1
        if total > from and #rows < f.per then rows[#rows + 1] = p end
      end
    end
    local text = index.first_texts(idx, rows)
    local out = {}
    for i, p in ipairs(rows) do
      out[i] = { system = p.system, item = p.item, row = text[i], it = p.it,
                 slices = p.it.slices and next(p.it.slices) and json.encode(p.it.slices) or nil }
    end
    return out, total, 0
  end
  local db = idx.db
  local cond, args, indexed = where(idx, f)
  local total = db:rows(("SELECT count(*) AS n FROM %s t WHERE %s"):format(idx.table, cond), table.unpack(args))[1].n
  local order = f.desc and "t.item DESC, t.system" or "t.k"
  if f.sort and f.sort ~= "" and f.sort ~= "id" then
    local c = column(idx, f.sort)
    order = ("t.v%d IS NULL, t.v%d %s, t.k"):format(c, c, f.desc and "DESC" or "ASC")
  end
  args[#args + 1] = f.per
  args[#args + 1] = (f.page - 1) * f.per
  -- The page's keys, sorted over the numbers only; then the texts of those rows alone (a join before
  -- the LIMIT would read every row's text).
  local rows = db:rows(("SELECT t.k, t.system, t.item, t.slices FROM %s t WHERE %s ORDER BY %s LIMIT ? OFFSET ?")
    :format(idx.table, cond, order), table.unpack(args))
  local ks = {}
  for i, r in ipairs(rows) do ks[i] = r.k end
  local text = texts.read(idx, ks)
  for _, r in ipairs(rows) do r.row = text[r.k] end
  return rows, total, indexed
end

-- page(src, idx, f) -> {total, rows = {{system, item, slices, scores = {metric = {value, reason}}, query}}}
-- f: seq, system, metric, below, unmeasured, failing, disagree, slices, q, sort, desc, page (from 1), per
function M.page(src, idx, f)
  local rows, total, indexed = select_rows(idx, f)
  local scores_of = M.scores_of(src, f)
  local out = {}
  for i, r in ipairs(rows) do
    local scores = scores_of(r.system, r.item, r.it)
    local row = r.row and json.decode(r.row) or {}
    out[i] = { system = r.system, item = r.item, slices = r.slices and json.decode(r.slices) or {}, scores = scores,
               query = type(row.query) == "string" and row.query:sub(1, 300) or nil }
  end
  return { total = total, rows = setmetatable(out, json.array), page = f.page, per = f.per, texts_missing = idx.why,
           indexed = indexed > 0 and indexed or nil }
end

return M
