-- evalua view --export DIR: the app as one self-contained, read-only
-- index.html: its CSS and JavaScript inline, the data embedded as
-- window.EVALUA_DATA (the answers the API would give: every run's
-- summary, the newest run's items with each item's page, labels, queues
-- and the calibration), and a Content-Security-Policy that allows exactly
-- those inline blocks by their SHA-256 hashes, no request to anything.
local json = require "evalua.core.json"
local sys = require "evalua._sys"
local runs = require "evalua.view.runs"
local queue = require "evalua.view.queue"
local index = require "evalua.view.index"
local items = require "evalua.view.items"
local labels = require "evalua.history.labels"
local fold = require("evalua._textscan").fold

-- The texts the server's search reads (docs/view.md "The search"), folded as its scan folds them and
-- joined by NUL, for the export's page to search: the id, query, answer and contexts of the row.
local function search_text(id, row_json)
  local row, err = json.decode(row_json)
  if type(row) ~= "table" then
    error(("evalua view --export: item %s: its row in the report is not a JSON object (%s)"):format(
      json.encode(id), err or type(row)), 0)
  end
  local parts = { type(id) == "number" and tostring(math.tointeger(id) or id) or tostring(id) }
  local function add(v) if type(v) == "string" then parts[#parts + 1] = v end end
  add(row.query)
  add(row.answer)
  if type(row.contexts) == "table" then for _, c in ipairs(row.contexts) do add(c) end else add(row.contexts) end
  for i, t in ipairs(parts) do parts[i] = fold(t) end
  return table.concat(parts, "\0")
end

local M = {}
M.MAX_ITEMS = 5000 -- items of the newest run embedded by default (--export-items)

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

-- base64 of the bytes a hex string spells (a CSP hash is base64 of the digest)
local function hex_base64(hex)
  local bytes = hex:gsub("..", function(h) return string.char(tonumber(h, 16)) end)
  local out = {}
  for i = 1, #bytes, 3 do
    local a, b, c = bytes:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local s = ""
    for k = 3, 0, -1 do
      local v = (n // (64 ^ k)) % 64
      s = s .. B64:sub(v + 1, v + 1)
    end
    if not b then s = s:sub(1, 2) .. "==" elseif not c then s = s:sub(1, 3) .. "=" end
    out[#out + 1] = s
  end
  return table.concat(out)
end

local function csp_hash(text) return "'sha256-" .. hex_base64(sys.sha256(text)) .. "'" end

-- The data: what the API answers, for the routes the app asks in an export.
local function collect(src, max_items)
  local list = runs.list(src, {})
  local data = { info = { kind = "export", file = src.file, rater = src.rater, scale = src.scale, readonly = true,
                          runs = #list.runs },
                 runs = list, runs_detail = {}, labels = runs.A(labels.list(src.db, {})), queues = {},
                 calibration = {}, compare = {} }
  for _, r in ipairs(list.runs) do
    local full = runs.find(src, r.run_id)
    data.runs_detail[r.run_id] = { summary = runs.summary(src, full, nil) }
  end
  local newest = list.runs[#list.runs]
  if not newest then return data, 0, 0 end
  data.newest = newest.run_id
  local r = runs.find(src, newest.run_id)
  local idx = index.build(src, r)
  local page = items.page(src, idx, { seq = r.seq, page = 1, per = max_items })
  local hay, keys = {}, idx.db:rows(("SELECT k, system, item FROM %s ORDER BY k LIMIT ?"):format(idx.table), max_items)
  local ks = {}
  for i, h in ipairs(keys) do ks[i] = h.k end
  local rows = require("evalua.view.texts").read(idx, ks)
  for _, h in ipairs(keys) do
    hay[h.system .. "\0" .. json.encode(h.item)] = rows[h.k] and search_text(h.item, rows[h.k])
  end
  for _, it in ipairs(page.rows) do
    it.hay = hay[it.system .. "\0" .. json.encode(it.item)]
    it.full = runs.item(src, r, it.system, it.item)
  end
  data.runs_detail[newest.run_id].items = page.rows
  data.runs_detail[newest.run_id].total = page.total
  for _, m in ipairs(idx.list) do
    data.queues[m] = queue.build(src, r, m, 50)
    if data.queues[m].labelled > 0 and src.calibrate then data.calibration[m] = runs.calibration(src, m, nil).text end
  end
  if #list.runs >= 2 then
    local a = runs.find(src, list.runs[#list.runs - 1].run_id)
    data.compare[a.run_id .. "\0" .. r.run_id] = runs.compare(src, a, r, items.PASS)
  end
  return data, #page.rows, page.total
end

-- write(src, dir [, max_items]) -> runs, items embedded, items of the newest run
function M.write(src, dir, max_items)
  local assets = require("evalua._view").assets()
  local data, n, total = collect(src, max_items or M.MAX_ITEMS)
  data.info.exported_items, data.info.total_items = n, total
  local data_js = "window.EVALUA_DATA = " .. json.encode(data):gsub("</", "<\\/") .. ";"
  local app_js, css = assets["app.js"], assets["app.css"]
  local csp = ("default-src 'none'; script-src %s %s; style-src %s; img-src data:; base-uri 'none'; form-action 'none'")
    :format(csp_hash(data_js), csp_hash(app_js), csp_hash(css))
  local html = assets["index.html"]
  html = html:gsub('<link rel="stylesheet" href="app.css">', function() return "<style>" .. css .. "</style>" end)
  html = html:gsub('<script src="data.js"></script>', function() return "<script>" .. data_js .. "</script>" end)
  html = html:gsub('<script src="app.js" defer></script>\n', "") -- inline scripts cannot defer: at the end of body
  html = html:gsub("</body>", function() return "<script>" .. app_js .. "</script>\n</body>" end)
  html = html:gsub('<meta charset="utf%-8">', function()
    return '<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="' .. csp .. '">'
  end)
  assert(sys.mkdir(dir))
  assert(sys.write_atomic(dir .. "/index.html", html))
  return #data.runs.runs, n, total
end

return M
