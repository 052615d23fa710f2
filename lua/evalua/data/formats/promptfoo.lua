-- promptfoo test files: CSV (a column per variable, and the special
-- columns __expected, __expectedN, __description, __prefix, __suffix,
-- __providerOutput, __metric, __threshold, __metadata:KEY), and JSON or
-- JSON-lines lists of test cases {vars, assert, description, options,
-- threshold, metadata, providerOutput}. tests(path) gives the test cases in
-- promptfoo's own shape (for a config's `tests: file://...`); map() makes a
-- test an evaluation row. YAML test lists go through evalua's YAML reader
-- (evalua._yaml).
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

-- promptfoo's base assertion types (src/types, the union of its releases):
-- "TYPE:value" in an __expected cell names one of them; any other text is
-- an `equals` value.
M.TYPE_LIST = {
  "answer-relevance", "bleu", "classifier", "contains", "contains-all", "contains-any", "contains-html",
  "contains-json", "contains-sql", "contains-xml", "context-faithfulness", "context-recall", "context-relevance",
  "conversation-relevance", "cost", "equals", "factuality", "finish-reason", "g-eval", "gleu", "guardrails",
  "icontains", "icontains-all", "icontains-any", "is-html", "is-json", "is-refusal", "is-sql",
  "is-valid-function-call", "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "javascript",
  "latency", "levenshtein", "llm-rubric", "pi", "meteor", "model-graded-closedqa", "model-graded-factuality",
  "moderation", "perplexity", "perplexity-score", "python", "regex", "rouge-l", "rouge-n", "rouge-s", "ruby",
  "similar", "similar:cosine", "similar:dot", "similar:euclidean", "starts-with", "tool-call-f1", "skill-used",
  "trajectory:goal-success", "trajectory:tool-args-match", "trajectory:step-count", "trajectory:tool-sequence",
  "trajectory:tool-used", "trace-error-spans", "trace-span-count", "trace-span-duration", "search-rubric",
  "webhook", "word-count", "human", "select-best",
}
M.TYPES = {}
for _, t in ipairs(M.TYPE_LIST) do M.TYPES[t] = true end

-- Types whose cell value is a comma-separated list, and the threshold a
-- cell without "(N)" gets: 0.8 for similar, 0.75 for these (promptfoo's
-- DEFAULT_SEMANTIC_SIMILARITY_THRESHOLD and its fallback).
local LISTS = { ["contains-all"] = true, ["contains-any"] = true, ["icontains-all"] = true, ["icontains-any"] = true }
local THRESHOLD = { similar = 0.8 }
for _, t in ipairs { "answer-relevance", "classifier", "context-faithfulness", "context-recall", "context-relevance",
                     "cost", "latency", "levenshtein", "perplexity-score", "perplexity", "rouge-l", "rouge-n",
                     "rouge-s", "starts-with" } do THRESHOLD[t] = 0.75 end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- A contains-any value split as promptfoo's parseCommaSeparatedValues
-- splits it: fields between commas, trimmed, empty ones dropped; a field
-- in double quotes keeps its commas, with \" \\ and "" as escapes, and
-- must end before a comma. Raises (common.bad) naming field on bad quoting.
function M.comma_values(v, field)
  local out, i, n = {}, 1, #v
  local function skip_ws(j) return v:find("[^%s]", j) or n + 1 end
  while i <= n do
    repeat -- separators: white space and any number of commas
      i = skip_ws(i)
      local more = v:sub(i, i) == ","
      if more then i = i + 1 end
    until not more
    if i > n then break end
    if v:sub(i, i) == '"' then
      local buf, j, closed = {}, i + 1, false
      while j <= n do
        local ch, nx = v:sub(j, j), v:sub(j + 1, j + 1)
        if ch == "\\" and (nx == '"' or nx == "\\") then buf[#buf + 1] = nx; j = j + 2
        elseif ch == '"' and nx == '"' then buf[#buf + 1] = '"'; j = j + 2
        elseif ch == '"' then j = j + 1; closed = true; break
        else buf[#buf + 1] = ch; j = j + 1 end
      end
      if not closed then c.bad(field, "unterminated quoted field in a contains value: %s", v) end
      out[#out + 1] = table.concat(buf)
      i = skip_ws(j)
      if i <= n and v:sub(i, i) ~= "," then c.bad(field, "expected a comma after a quoted field in a contains value: %s", v) end
    else
      local j = v:find(",", i, true) or n + 1
      out[#out + 1] = trim(v:sub(i, j - 1))
      i = j
    end
  end
  return setmetatable(out, json.array)
end

-- file://PATH or file://PATH:FUNCTION naming a Python file: the last path
-- segment (after / or \) holds at most one colon, its file part ends in .py
-- in any case and has no ? or #, and a function named is not empty.
local function python_file(s)
  local rest = s:sub(8)
  local last = rest:match("^.*[/\\](.*)$") or rest
  local colons = select(2, last:gsub(":", ""))
  if colons > 1 then return false end
  local file, fn = last, nil
  if colons == 1 then file, fn = last:match("^(.-):(.*)$") end
  if fn == "" or file:find("[?#]") then return false end
  return file:lower():sub(-3) == ".py"
end

-- An __expected cell as promptfoo's assertionFromString reads it.
function M.assertion(s, field)
  for _, p in ipairs { "javascript:", "fn:", "eval:" } do
    if s:sub(1, #p) == p then return { type = "javascript", value = trim(s:sub(#p + 1)) } end
  end
  if s:sub(1, 6) == "grade:" then return { type = "llm-rubric", value = s:sub(7) } end
  if s:sub(1, 11) == "llm-rubric:" then return { type = "llm-rubric", value = s:sub(12) } end
  if s:sub(1, 7) == "python:" then return { type = "python", value = trim(s:sub(8)) } end
  if s:sub(1, 7) == "file://" and python_file(s) then return { type = "python", value = s } end
  -- ^(not-)?(TYPE)(\((\d+(\.\d+)?)\))?(:(.*))?$, the longest TYPE that fits
  -- (similar:cosine before similar, so the metric is not read as the value)
  local negated = s:sub(1, 4) == "not-"
  local body = negated and s:sub(5) or s
  local best, thr, value
  for _, t in ipairs(M.TYPE_LIST) do
    if body:sub(1, #t) == t and (not best or #t > #best) then
      local after = body:sub(#t + 1)
      local num = after:match("^%((%d+%.%d+)%)") or after:match("^%((%d+)%)")
      if num then after = after:sub(#num + 3) end
      if after == "" or after:sub(1, 1) == ":" then
        best, thr, value = t, num, after ~= "" and after:sub(2) or nil
      end
    end
  end
  if not best then return { type = "equals", value = s } end
  -- the value trimmed, as promptfoo trims it, except a JSON schema's text
  if value and best ~= "is-json" and best ~= "contains-json" then value = trim(value) end
  local a = { type = (negated and "not-" or "") .. best, value = value }
  if LISTS[best] and value then a.value = M.comma_values(value, field or "value") end
  if thr then a.threshold = tonumber(thr) else a.threshold = THRESHOLD[best] end
  return a
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
        test.assert[#test.assert + 1] = M.assertion(trim(val), k)
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

-- A YAML test list (or {tests = [...]}) through evalua's YAML reader
-- (evalua._yaml, libyaml), each test with the line its item starts on.
local function yaml_records(path)
  local yaml = require "evalua.core.yaml" -- libyaml is a dependency of every build
  local records = require "evalua.data.formats.records"
  local text = records.read_file(path)
  local list, lines = yaml.decode(text, path)
  if list == nil then c.input_error(lines) end
  if type(list) == "table" and list[1] == nil and type(list.tests) == "table" then list = list.tests end
  if not c.is_list(list) then c.input_error(("%s:1: expected a list of test cases (or tests: [...])"):format(path)) end
  local where = lines[list] or {}
  local out = {}
  for i, t in ipairs(list) do
    local line = where[i] or 1
    if not c.is_object(t) then c.input_error(("%s:%d: test %d: expected a test case {vars =, assert =}"):format(path, line, i)) end
    out[i] = { line = line, value = records.strip_nulls(t), raw = {} }
  end
  return out, require("evalua._sys").sha256(text), "yaml"
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
