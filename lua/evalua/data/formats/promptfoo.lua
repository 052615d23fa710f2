-- promptfoo test files: CSV (a column per variable, and the special
-- columns __expected, __expectedN, __description, __prefix, __suffix,
-- __providerOutput, __metric, __threshold, __metadata:KEY), and JSON or
-- JSON-lines lists of test cases {vars, assert, description, options,
-- threshold, metadata, providerOutput}. tests(path) gives the test cases in
-- promptfoo's own shape (for a config's `tests: file://...`); map() makes a
-- test an evaluation row. YAML test lists are read once evalua has a YAML
-- reader (evalua._yaml); until then a .yaml file is refused naming it.
local c = require "evalua.data.formats.common"
local json = require "evalua.core.json"

local M = { name = "promptfoo" }

M.WRAPPERS = { "tests" }

function M.claims(keys)
  if keys.vars ~= nil or keys.assert ~= nil then return true end
  for k in pairs(keys) do
    if type(k) == "string" and (k:find("^__expected") or k == "__description" or k:find("^__metadata:")) then return true end
  end
  return false
end

-- promptfoo's base assertion types (src/types): "TYPE:value" in an
-- __expected cell names one of them; any other text is an `equals` value.
M.TYPE_LIST = {
  "answer-relevance", "bleu", "classifier", "contains", "contains-all", "contains-any", "contains-html",
  "contains-json", "contains-sql", "contains-xml", "context-faithfulness", "context-recall", "context-relevance",
  "conversation-relevance", "cost", "equals", "factuality", "finish-reason", "g-eval", "gleu", "guardrails",
  "icontains", "icontains-all", "icontains-any", "is-html", "is-json", "is-refusal", "is-sql",
  "is-valid-function-call", "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "javascript",
  "latency", "levenshtein", "llm-rubric", "pi", "meteor", "model-graded-closedqa", "model-graded-factuality",
  "moderation", "perplexity", "perplexity-score", "python", "regex", "rouge-n", "ruby", "similar", "similar:cosine",
  "similar:dot", "similar:euclidean", "starts-with", "tool-call-f1", "skill-used", "trajectory:goal-success",
  "trajectory:tool-args-match", "trajectory:step-count", "trajectory:tool-sequence", "trajectory:tool-used",
  "trace-error-spans", "trace-span-count", "trace-span-duration", "search-rubric", "webhook", "word-count",
}
M.TYPES = {}
for _, t in ipairs(M.TYPE_LIST) do M.TYPES[t] = true end

-- Types whose cell value is a comma-separated list, and those that take a
-- threshold in parentheses with promptfoo's defaults (0.8 for similar, else 0.75).
local LISTS = { ["contains-all"] = true, ["contains-any"] = true, ["icontains-all"] = true, ["icontains-any"] = true }
local THRESHOLD = {}
for _, t in ipairs { "answer-relevance", "classifier", "context-faithfulness", "context-recall", "context-relevance",
                     "cost", "latency", "levenshtein", "perplexity-score", "perplexity", "rouge-n", "similar",
                     "starts-with" } do THRESHOLD[t] = true end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- An __expected cell as promptfoo's assertionFromString reads it.
function M.assertion(s)
  for _, p in ipairs { "javascript:", "fn:", "eval:" } do
    if s:sub(1, #p) == p then return { type = "javascript", value = trim(s:sub(#p + 1)) } end
  end
  if s:sub(1, 6) == "grade:" then return { type = "llm-rubric", value = s:sub(7) } end
  if s:sub(1, 11) == "llm-rubric:" then return { type = "llm-rubric", value = s:sub(12) } end
  if s:sub(1, 7) == "python:" then return { type = "python", value = trim(s:sub(8)) } end
  if s:sub(1, 7) == "file://" then -- a grader file; the reference keeps its file:// form
    local rest = s:sub(8):lower()
    if rest:find("%.py$") or rest:find("%.py:") then return { type = "python", value = trim(s) } end
    if rest:find("%.[jt]s$") or rest:find("%.[jt]s:") then return { type = "javascript", value = trim(s) } end
  end
  -- ^(not-)?(TYPE)(\((\d+(\.\d+)?)\))?(:(.*))?$ with the first TYPE of
  -- promptfoo's list that fits, as the regular expression's alternation takes it
  local negated = s:sub(1, 4) == "not-"
  local body = negated and s:sub(5) or s
  local best
  for _, t in ipairs(M.TYPE_LIST) do
    if body:sub(1, #t) == t then
      local after = body:sub(#t + 1)
      if after == "" or after:find("^:") or after:find("^%(%d+%.?%d*%)$") or after:find("^%(%d+%.?%d*%):") then
        best = t
        break
      end
    end
  end
  if best then
    local after = body:sub(#best + 1)
    local thr = after:match("^%((%d+%.?%d*)%)")
    if thr then after = after:sub(#thr + 3) end
    if after == "" or after:sub(1, 1) == ":" then
      local value = after:sub(2)
      local a = { type = (negated and "not-" or "") .. best }
      if after ~= "" then a.value = value end
      if LISTS[best] then
        local items = {}
        for _, item in ipairs(c.split(value, ",")) do items[#items + 1] = trim(item) end
        a.value = setmetatable(items, json.array)
      elseif THRESHOLD[best] then
        local t = tonumber(thr or "")
        a.threshold = (t and t ~= 0) and t or (best == "similar" and 0.8 or 0.75)
      end
      return a
    end
  end
  return { type = "equals", value = s }
end

local SPECIAL = { __prefix = "prefix", __suffix = "suffix" }

-- A whole finite number literal (promptfoo's parseFiniteNumber): "0.8",
-- ".5", "5.", "-2.5e-2", "+1", with spaces around; nil for anything else.
local function finite_number(s)
  s = trim(s)
  if not (s:find("^[-+]?%d+%.?%d*[eE][-+]?%d+$") or s:find("^[-+]?%d+%.?%d*$") or s:find("^[-+]?%.%d+[eE][-+]?%d+$")
          or s:find("^[-+]?%.%d+$")) then return nil end
  local v = tonumber(s)
  if not v or v ~= v or v == math.huge or v == -math.huge then return nil end
  return v
end

-- "a\,b,c" -> {"a,b", "c"}: split at commas not escaped with a backslash.
local function split_escaped(s)
  local out, cur, i = {}, {}, 1
  while i <= #s do
    local ch = s:sub(i, i)
    if ch == "\\" and s:sub(i + 1, i + 1) == "," then cur[#cur + 1] = ","; i = i + 2
    elseif ch == "," then out[#out + 1] = trim(table.concat(cur)); cur = {}; i = i + 1
    else cur[#cur + 1] = ch; i = i + 1 end
  end
  out[#out + 1] = trim(table.concat(cur))
  return setmetatable(out, json.array)
end

local function warn(line, fmt, ...)
  io.stderr:write(("evalua: warning: line %d: " .. fmt .. "\n"):format(line, ...))
end

-- The order of __expected columns: __expected, then __expected1, 2, ...
local function expected_rank(k)
  if k == "__expected" then return 0 end
  return tonumber(k:match("^__expected(%d+)$") or "")
end

-- A CSV row as promptfoo's testCaseFromCsvRow makes a test case (the keys
-- and the assertion texts trimmed, as promptfoo does).
function M.test_from_csv_row(v, line, warned)
  line, warned = line or 0, warned or {}
  local test = { vars = {}, assert = setmetatable({}, json.array), options = {} }
  local keys, row = {}, {}
  for k, x in pairs(v) do row[trim(k)] = x; keys[#keys + 1] = trim(k) end
  table.sort(keys, function(a, b)
    local na, nb = expected_rank(a), expected_rank(b)
    if na and nb then return na < nb end
    if na or nb then return na ~= nil end
    return a < b
  end)
  local metric, config, slot = nil, {}, {}
  for _, k in ipairs(keys) do
    local val = row[k]
    if k:find("^_[^_]") and not warned[k] then
      for _, s in ipairs { "_expected", "_prefix", "_suffix", "_description", "_providerOutput", "_metric", "_threshold" } do
        if k:sub(1, #s) == s then
          warned[k] = true
          warn(line, "column '%s' has one underscore; promptfoo reads it as a variable (did you mean '_%s'?)", k, k)
          break
        end
      end
    end
    if expected_rank(k) or k:find("^__expected") and not k:find(":") then
      if trim(val) ~= "" then
        test.assert[#test.assert + 1] = M.assertion(trim(val))
        slot[k] = #test.assert
      end
    elseif SPECIAL[k] then test.options[SPECIAL[k]] = val
    elseif k == "__description" then test.description = val
    elseif k == "__providerOutput" then test.providerOutput = val
    elseif k == "__metric" then metric = val
    elseif k == "__threshold" then
      if trim(val) ~= "" then
        local t = finite_number(val)
        if not t then c.bad(k, "expected a number, got '%s'", val) end
        test.threshold = t
      end
    elseif k == "__metadata" then
      if not warned[k] then warned[k] = true; warn(line, "column '__metadata' needs a key (__metadata:KEY); it is ignored") end
    elseif k:find("^__metadata:") then
      test.metadata = test.metadata or {}
      local name = k:sub(#"__metadata:" + 1)
      if name:sub(-2) == "[]" then test.metadata[name:sub(1, -3)] = split_escaped(val)
      else test.metadata[name] = val end
    elseif k:find("^__config:") then
      local which, key = k:match("^__config:([^:]+):([^:]+)$")
      if not which then c.bad(k, "expected __config:__expected:threshold or __config:__expectedN:threshold") end
      local n = expected_rank(which)
      if not n or (which ~= "__expected" and n < 1) then
        c.bad(k, "'%s' is not __expected or __expectedN with N >= 1", which)
      end
      if key ~= "threshold" then c.bad(k, "'%s' is not a config key (threshold)", key) end
      local t = finite_number(val)
      if not t then c.bad(k, "expected a number, got '%s'", val) end
      config[which] = t
    else
      test.vars[k] = val
    end
  end
  for which, t in pairs(config) do
    local a = test.assert[slot[which] or 0]
    if not a then c.bad("__config:" .. which .. ":threshold", "no assertion in column %s", which) end
    a.threshold = t
  end
  if metric then for _, a in ipairs(test.assert) do a.metric = metric end end
  if next(test.metadata or {}) == nil then test.metadata = nil end
  return test
end
local from_csv = M.test_from_csv_row

local TEST_KEYS = { "vars", "assert", "description", "options", "threshold", "metadata", "providerOutput", "provider",
                    "providers", "prompts" }

-- A YAML test list through evalua's YAML reader (evalua._yaml, when the
-- build has it): its decode gives the list; records carry line 1, as the
-- reader gives no line per item here.
local function yaml_records(path)
  local ok, yaml = pcall(require, "evalua._yaml")
  local decode = ok and type(yaml) == "table" and (yaml.decode or yaml.load)
  if not decode then
    c.input_error(("%s: YAML test files need evalua's YAML reader (evalua._yaml), which this build lacks; write "
      .. "the tests as CSV, JSON or JSON lines"):format(path))
  end
  local list, err = decode(require("evalua.data.formats.records").read_file(path))
  if type(list) == "table" and list[1] == nil and type(list.tests) == "table" then list = list.tests end
  if type(list) ~= "table" then c.input_error(("%s: %s"):format(path, err or "expected a list of test cases")) end
  local out = {}
  for i, t in ipairs(list) do
    if type(t) ~= "table" then c.input_error(("%s: test %d: expected a test case {vars =, assert =}"):format(path, i)) end
    out[i] = { line = 1, value = t, raw = {} }
  end
  return out, require("evalua._sys").sha256(require("evalua.data.formats.records").read_file(path)), "yaml"
end

-- tests(path) -> test cases {line =, test = {vars =, assert =, ...}}, hash
function M.tests(path)
  local ext = (path:match("%.([%w]+)$") or ""):lower()
  local recs, hash, kind
  if ext == "yaml" or ext == "yml" then recs, hash, kind = yaml_records(path)
  else recs, hash, kind = c.read(path, M.WRAPPERS) end
  local out, warned = {}, {}
  for i, rec in ipairs(recs) do
    local ok, test = pcall(function()
      if kind == "csv" then return from_csv(rec.value, rec.line, warned) end
      return rec.value
    end)
    if not ok then
      if c.is_bad(test) then c.input_error(("%s:%d: field '%s': %s"):format(path, rec.line, test.field, test.msg)) end
      error(test, 0)
    end
    out[i] = { line = rec.line, test = test, raw = rec.raw }
  end
  return out, hash
end

local TEST_FIELD = {}
for _, k in ipairs(TEST_KEYS) do TEST_FIELD[k] = true end

-- map(rec, i) -> the evaluation row of test i: qid = i, its variables as
-- the row's keys, assert, description, options, threshold, metadata as
-- they are, providerOutput as the row's answer.
function M.map(rec, i)
  local t, out = rec.value, c.new_row(rec.line)
  out.row.qid = i
  local vars = t.vars
  if vars ~= nil and not c.is_object(vars) then c.bad("vars", "expected an object of variables, got %s", c.typename(vars)) end
  for k, x in pairs(vars or {}) do
    if TEST_FIELD[k] or k == "qid" or k == "answer" then
      c.bad("vars." .. k, "a variable named '%s' would take the place of the test's own '%s'; rename it", k, k)
    end
    out.row[k], out.from[k] = x, "vars." .. k
  end
  if t.assert ~= nil then
    if not c.is_list(t.assert) then c.bad("assert", "expected a list of assertions, got %s", c.typename(t.assert)) end
    out.row.assert = setmetatable(t.assert, json.array)
  end
  if t.providerOutput ~= nil then c.set(out, "answer", t.providerOutput, "providerOutput") end
  for _, k in ipairs { "description", "options", "threshold", "metadata", "provider", "providers", "prompts" } do
    if t[k] ~= nil and not (k == "options" and next(t[k]) == nil) then out.row[k], out.from[k] = t[k], k end
  end
  for k in pairs(t) do
    if not TEST_FIELD[k] then
      c.bad(k, "not a key of a promptfoo test case (%s)", table.concat(TEST_KEYS, ", "))
    end
  end
  return out
end

-- records(path) -> records for map(), hash, kind: CSV rows as test cases.
function M.records(path)
  local tests, hash = M.tests(path)
  local recs = {}
  for i, t in ipairs(tests) do recs[i] = { line = t.line, value = t.test, raw = {} } end
  return recs, hash
end

return M
