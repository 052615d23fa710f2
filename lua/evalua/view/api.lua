-- The viewer's JSON API: one function per route, each a query over the
-- store (src.db) and the run's texts. handle(src, method, path, args, body)
-- -> status, body, content type; a bad request is a 400 whose body says
-- which argument and why.
local json = require "evalua.core.json"
local labels = require "evalua.history.labels"
local caught = require "evalua.core.caught"
local index = require "evalua.view.index"
local items = require "evalua.view.items"
local runs = require "evalua.view.runs"
local queue = require "evalua.view.queue"
local source = require "evalua.view.source"
local texts = require "evalua.view.texts"

local M = {}
local GET, POST = {}, {}

local function bad(fmt, ...) error({ status = 400, message = fmt:format(...) }, 0) end

local function run_arg(src, args)
  local r = runs.find(src, args.run)
  if not r then bad("run: no run '%s' in %s", tostring(args.run), src.file) end
  return r
end

-- An item id as the app sends it: JSON (a string in quotes, or an integer).
local function id_arg(args)
  local ok, id = pcall(json.decode, args.id or "")
  if ok and math.type(id) == "float" and (args.id or ""):find("^%-?%d+$") then id = math.tointeger(id) end -- cjson: 7 is 7.0
  if not ok or (type(id) ~= "string" and math.type(id) ~= "integer") then
    bad("id: expected an item id as JSON (\"q1\" or 7), got %s", tostring(args.id))
  end
  return id
end

local function number_arg(args, name)
  if args[name] == nil or args[name] == "" then return nil end
  local n = tonumber(args[name])
  if not n or n ~= n then bad("%s: expected a number, got '%s'", name, args[name]) end
  return n
end

local function int_arg(args, name, default, lo, hi)
  local n = number_arg(args, name) or default
  if math.tointeger(n) == nil or n < lo or n > hi then bad("%s: expected an integer from %d to %d", name, lo, hi) end
  return math.tointeger(n)
end

function GET.info(src)
  return { kind = src.kind, file = src.file, report = src.report, rater = src.rater, scale = src.scale,
           readonly = src.readonly or false, runs = src.db:rows("SELECT count(*) AS n FROM runs")[1].n
             + (src.pending and 1 or 0), importing = src.pending and src.pending.record.run_id or nil }
end

function GET.runs(src, args)
  return runs.list(src, { label = args.label, commit = args.commit, judge = args.judge })
end

function GET.run(src, args)
  return runs.summary(src, run_arg(src, args), args.baseline)
end

function GET.items(src, args)
  local r = run_arg(src, args)
  local slices = {}
  for k, v in pairs(args) do
    local dim = k:match("^slice%.(.+)$")
    if dim then slices[dim] = v end
  end
  local f = { seq = r.seq, pending = r.pending, system = args.system ~= "" and args.system or nil, metric = args.metric ~= "" and args.metric or nil,
              below = number_arg(args, "below"), unmeasured = args.unmeasured == "1",
              failing = args.failing == "1", disagree = args.disagree == "1", slices = slices, q = args.q,
              sort = args.sort, desc = args.desc == "1", page = int_arg(args, "page", 1, 1, 1e9),
              per = int_arg(args, "per", 50, 1, 500) }
  if f.below and not f.metric then bad("below: needs metric (the metric that is below it)") end
  local idx = index.first(src, r) -- a plain page of a run not in the store yet: from its decoded report
  if idx.rows and not items.plain(f) then idx = index.build(src, r) end
  return items.page(src, idx, f)
end

function GET.item(src, args)
  return runs.item(src, run_arg(src, args), args.system, id_arg(args))
end

function GET.compare(src, args)
  local a, b = runs.find(src, args.a), runs.find(src, args.b)
  if not a or not b then bad("a, b: two runs of %s (labels or run ids)", src.file) end
  return runs.compare(src, a, b, number_arg(args, "pass") or items.PASS)
end

function GET.queue(src, args)
  if not args.metric or args.metric == "" then bad("metric: the criterion to label") end
  return queue.build(src, run_arg(src, args), args.metric, int_arg(args, "n", 50, 1, 1000))
end

function GET.labels(src, args)
  return runs.A(labels.list(src.db, { metric = args.metric ~= "" and args.metric or nil }))
end

-- Every label (or a metric's) as JSONL, as calibrate --export-labels writes them.
function GET.labels_jsonl(src, args)
  local lines = {}
  for i, l in ipairs(labels.list(src.db, { metric = args.metric ~= "" and args.metric or nil })) do
    lines[i] = json.encode(l)
  end
  return { raw = #lines > 0 and table.concat(lines, "\n") .. "\n" or "", type = "application/x-ndjson; charset=utf-8" }
end

-- Labels made elsewhere (JSONL in the body): every line checked first, then
-- stored in one transaction, those the store holds already left (labels.import).
function POST.labels_import(src, _, body)
  if src.readonly then error({ status = 403, message = "this viewer is read-only" }, 0) end
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(body or "")
  f:close()
  local ok, added, had = pcall(labels.import, src.db, path)
  os.remove(path)
  if not ok then bad("%s", (tostring(added):gsub(path:gsub("%p", "%%%0"), "body"))) end
  return { added = added, already = had }
end

function GET.calibration(src, args)
  if not args.metric or args.metric == "" then bad("metric: the criterion whose labels are compared") end
  return runs.calibration(src, args.metric, args.run)
end

-- A label from the app: the rater and scale are the viewer's (--rater,
-- --scale), the time now; checked and stored at once.
function POST.label(src, _, body)
  if src.readonly then error({ status = 403, message = "this viewer is read-only" }, 0) end
  local ok, l = pcall(json.decode, body or "")
  if not ok or type(l) ~= "table" then bad("body: expected a label as JSON") end
  local scale = runs.scale_of(src, l.metric) or src.scale
  local clean, why = labels.check { item = l.item, system = l.system, metric = l.metric, value = l.value,
                                    note = l.note ~= "" and l.note or nil, run = l.run, scale = scale,
                                    rater = src.rater }
  if not clean then bad("%s", why) end
  local store = require "evalua.history.store"
  local added = store.transaction(src.db, store.insert_label, src.db, clean)
  clean.added = added
  return clean
end

-- What a run not in the store yet (a report's, evalua.view.source) can be served from: its decoded
-- report (and the store's earlier runs). Any other request imports it first and waits for that (labels
-- need no run: they go to the store as they come).
local WITHOUT_STORE = { info = true, runs = true, run = true, items = true, item = true, label = true, labels = true,
                        labels_jsonl = true, labels_import = true }

-- idle(src): the work left for when no request is waiting (the server calls it after a quiet second, again
-- while it returns true, and again after the next request), one step a call: a report's run first gets its
-- table in the cache (its first page was served from the decoded report); then each opened run's
-- full-text index starts building on a thread of its own, one run at a time (the next after a later
-- request), then each opened run's texts for the scan are read (texts.scan: 0.8-1.0 s on 100,000 rows,
-- which the run's first search of a Chinese or one-letter word would wait for), and the report's run
-- goes into the store meanwhile, a chunk a call. A request that needs a step does it itself. -> true
-- while there is more to do at once.
function M.idle(src)
  local r = src.pending and runs.find(src, src.pending.record.run_id)
  if r and index.first(src, r).rows then
    index.build(src, r)
    return true
  end
  local building = false
  for _, idx in pairs(src.indexes or {}) do building = building or index.search_state(idx) == "building" end
  for _, idx in pairs(building and {} or src.indexes or {}) do
    if not idx.fts_tried and index.search_state(idx) == "none" then
      index.search_start(idx)
      break
    end
  end
  for _, idx in pairs(src.indexes or {}) do
    if not idx.scan and not idx.scan_tried and not idx.rows and not idx.why then
      idx.scan_tried = true -- once: a scan that failed here is left to the first search, which says why
      local ok, err = pcall(texts.scan, idx)
      if not ok then
        io.stderr:write(("evalua view: warning: reading the run's texts for the search failed (%s); the next "
          .. "search reads them\n"):format(caught.pass_on(err)))
      end
      return true
    end
  end
  return r ~= nil and source.import_step(src)
end

function M.handle(src, method, path, args, body)
  local name = path:match("^/api/([%w_]+)$")
  local fn = name and (method == "POST" and POST or GET)[name]
  if not fn then return 404, json.encode { error = ("no API %s %s"):format(method, path) } end
  -- A label waits for an import under way (it holds the store's write lock); it does not start one.
  if src.pending and (not WITHOUT_STORE[name] or (method == "POST" and source.importing(src))) then source.finish(src) end
  local ok, out = pcall(fn, src, args, body)
  if not ok then
    if type(out) == "table" and out.status then return out.status, json.encode { error = out.message, building = out.building } end
    error(out, 0)
  end
  if out.raw then return 200, out.raw, out.type end
  return 200, json.encode(out)
end

return M
