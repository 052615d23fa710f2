-- A history record and item line: their shapes, and the checked decoding
-- of a record's JSON text (for the store, the import of history.jsonl and
-- bench/history, which reads the older format as it was read).
local json = require "evalua.core.json"
local shape = require "evalua.core.shape"
local sys = require "evalua._sys"

local M = {}

-- A record's run_id names its item file (runs/<run_id>.jsonl): a name of
-- letters, digits, '.', '_' and '-' that starts with a letter or digit, so
-- a tampered record cannot point outside the folder ("../x").
local function run_id_shape(v)
  if type(v) ~= "string" or #v > 128 or not v:find("^[%w][%w._-]*$") then
    return "a run id (letters, digits, '.', '_', '-'; no '/' or '..')"
  end
end

local AGGREGATE = shape.object { mean = "number?", lo = "number?", hi = "number?" } -- what the readers read
M.RECORD = shape.object {
  run_id = run_id_shape, time = "string", label = "string|number?", notes = "string|number?", git_commit = "string?",
  evalua = "string?", report = "string?",
  dataset = shape.optional(shape.object { path = "string?", hash = "string?", rows = "integer?" }),
  judge = shape.optional(shape.object { model = "string?", system_fingerprints = "table?" }),
  systems = shape.list("string"), metrics = shape.list("string"),
  metric_definitions = shape.optional(shape.map("string")), higher_is_better = shape.optional(shape.map("boolean")),
  dims = shape.optional(shape.list("string")), slice_values = shape.optional(shape.map(shape.list("string"))),
  gates = shape.optional(shape.list(shape.object {
    system = "string?", metric = "string", dim = "string?", value = "string?", threshold = "number?",
    status = "string?", higher_is_better = "boolean?" })),
  aggregates = shape.map(shape.map(shape.map(shape.map(AGGREGATE)))),
}
M.ITEM = shape.object { id = function(v)
  if type(v) ~= "string" and math.type(v) ~= "integer" then return "an id (a string or an integer)" end
end, system = "string", scores = shape.map("number"), slices = shape.optional(shape.map("string")) }

-- A label or note given as a number is text: 5, not 5.0, and found by "5".
function M.text_of(v)
  if type(v) ~= "number" then return v end
  return tostring(math.tointeger(v) or v)
end

-- The record in text, checked: a record that is not one is an error naming
-- where it is (file and line, or the store and run); the history is
-- evidence, not a cache.
function M.decode(text, where)
  local rec, err = json.decode(text)
  if type(rec) ~= "table" then err = "invalid history record: " .. tostring(err)
  else err = shape.check(M.RECORD, rec) end
  if err then sys.input_error(("%s: %s"):format(where, err)) end
  if rec.dataset and rec.dataset.rows then rec.dataset.rows = math.tointeger(rec.dataset.rows) end -- a count: 180, not 180.0
  rec.label, rec.notes = M.text_of(rec.label), M.text_of(rec.notes)
  return rec
end

return M
