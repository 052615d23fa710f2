-- The data formats of the tools people come from (docs/data.md, "Data as
-- the peers write it"): each reads the peer's files unchanged and maps
-- every record to an evaluation row, keeping the keys that do not map.
--   rows(path, name, opts) -> {rows = {{line =, row =, raw =, from =}...},
--                              hash =, corpus =, where = the file errors name}
--   detect(path) -> a format name | nil, why
local records = require "evalua.data.formats.records"
local c = require "evalua.data.formats.common"
local sys = require "evalua._sys"
local caught = require "evalua.core.caught"

local M = {}

-- The names ev.dataset.load and --data-format take.
M.NAMES = { "evalua", "ragas", "deepeval", "promptfoo", "beir", "msmarco", "auto" }
M.LABEL = { evalua = "evalua's row format", ragas = "a RAGAS EvaluationDataset", deepeval = "DeepEval test cases",
            promptfoo = "a promptfoo test file", beir = "a BEIR folder", msmarco = "an MS MARCO folder" }

local RECORD_FORMATS = { "ragas", "deepeval", "promptfoo" }
local function module_of(name) return require("evalua.data.formats." .. name) end

local function is_dir(path)
  local st = sys.stat(path)
  return st and st.dir
end

-- The keys of the first record of a file (a JSON document's first element,
-- a CSV header), read without loading the rest; nil when there is none.
local function first_keys(path)
  local ext = (path:match("%.([%w]+)$") or ""):lower()
  local f = io.open(path, "rb")
  if not f then return nil end
  local keys = {}
  if ext == "json" then
    f:close()
    local ok, recs, _, key = pcall(records.json, path, { "samples", "goldens", "test_cases", "testCases", "tests",
      "conversational_goldens", "conversationalGoldens" })
    if not ok then caught.pass_on(recs) return nil end -- not JSON records: detection goes on by extension
    if not recs[1] then return nil end
    for k in pairs(recs[1].value) do keys[k] = true end
    return keys, key
  end
  local line
  repeat line = f:read("l") until line == nil or line:find("%S")
  f:close()
  if not line then return nil end
  if ext == "csv" then
    line = line:gsub("^\239\187\191", "")
    if line:find("^sep=") then -- Excel's separator line: the header is the next one
      local g = io.open(path, "rb")
      g:read("l")
      line = g:read("l") or ""
      g:close()
    end
    for cell in (line .. ","):gmatch('%s*"?([^",;\t]*)"?%s*[,;\t]') do if cell ~= "" then keys[cell] = true end end
    return keys
  end
  local v = records.decode(line)
  if type(v) ~= "table" then return nil end
  for k in pairs(v) do keys[k] = true end
  return keys
end

-- detect(path) -> name | nil, why: a folder by its files, a file by the
-- keys of its first record.
function M.detect(path)
  if is_dir(path) then
    local b = require "evalua.data.formats.beir"
    if b.is_beir(path) then return "beir" end
    if b.is_msmarco(path) then return "msmarco" end
    return nil, ("%s: a folder that is neither BEIR's (corpus.jsonl, queries.jsonl, qrels/) nor MS MARCO's "
      .. "(collection.tsv, queries.SPLIT.tsv, qrels.SPLIT.tsv)"):format(path)
  end
  if path:lower():find("%.ya?ml$") then return "promptfoo" end -- the only YAML data evalua reads
  local keys, wrapper = first_keys(path)
  if not keys then return nil, ("%s: no record to tell the format by"):format(path) end
  if keys.qid ~= nil then return "evalua" end
  if wrapper == "goldens" or wrapper == "test_cases" or wrapper == "testCases" then return "deepeval" end
  for _, name in ipairs(RECORD_FORMATS) do
    if module_of(name).claims(keys) then return name end
  end
  local names = {}
  for k in pairs(keys) do names[#names + 1] = tostring(k) end
  table.sort(names)
  return nil, ("%s: its keys (%s) are those of no format evalua reads: evalua (qid), ragas (user_input), "
    .. "deepeval (input, actual_output), promptfoo (vars, __expected)"):format(path, table.concat(names, ", "))
end

-- hint(path) -> " (... load it with format = ...)" when the file is a peer's,
-- for the error of a row without qid; "" otherwise.
function M.hint(path)
  local ok, name = pcall(M.detect, path)
  if not ok then caught.pass_on(name) return "" end -- the hint is for an error already being raised
  if not name or name == "evalua" then return "" end
  return (" (this looks like %s: load it with {format = \"%s\"}, or --data-format %s in the bundled scripts; "
    .. "docs/data.md)"):format(M.LABEL[name], name, name)
end

local function fail_at(path, line, e)
  if c.is_bad(e) then c.input_error(("%s:%d: field '%s': %s"):format(path, line, e.field, e.msg)) end
  error(e, 0)
end

-- rows(path, name, opts): the records of a peer's file or folder, mapped.
function M.rows(path, name, opts)
  if name == "beir" or name == "msmarco" then
    if not is_dir(path) then c.input_error(("%s: %s data is a folder, not a file"):format(path, name)) end
    local rows, hash, corpus, where = module_of("beir")[name](path, opts)
    return { rows = rows, hash = hash, corpus = corpus, where = where }
  end
  if is_dir(path) then c.input_error(("%s: a folder; format \"%s\" reads a file (beir and msmarco read folders)"):format(path, name)) end
  local m = module_of(name)
  local recs, hash, kind
  if name == "promptfoo" then recs, hash = m.records(path)
  else recs, hash, kind = c.read(path, m.WRAPPERS) end
  local out, skipped = {}, {}
  for i, rec in ipairs(recs) do
    local ok, r = pcall(m.map, rec, i, kind == "csv")
    if ok then out[#out + 1] = r
    elseif opts.lenient and c.is_bad(r) then
      skipped[#skipped + 1] = { line = rec.line, error = ("field '%s': %s"):format(r.field, r.msg) }
    else
      fail_at(path, rec.line, r)
    end
  end
  return { rows = out, hash = hash, where = path, skipped = skipped }
end

return M
