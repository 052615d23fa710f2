-- A promptfoo config's `tests` and `defaultTest`: inline test cases, file://
-- CSV, YAML and JSON test files (and globs), vars (a list expands into one
-- case per value, as promptfoo's cartesian product), assert, description,
-- options (transform, prefix, suffix, disableVarExpansion), threshold and
-- metadata. Each case keeps the file and line it came from, for messages.
local config = require "evalua.experiment.promptfoo.config"
local pf_format = require "evalua.data.formats.promptfoo"
local caught = require "evalua.core.caught"

local M = {}

local TEST = { description = true, vars = true, assert = true, options = true, threshold = true, metadata = true }
local TEST_HINTS = {
  provider = "a per-test provider is not supported; every case runs on every provider",
  providerOutput = "a fixed output is not supported; use the echo provider",
  prompts = "limiting a test to some prompts is not supported",
  providers = "limiting a test to some providers is not supported",
  assertScoringFunction = "scoring functions are JavaScript or Python code",
}
local OPTIONS = { transform = true, prefix = true, suffix = true, disableVarExpansion = true }
local OPTIONS_HINTS = {
  provider = "grading providers are evalua's judge (--judge options); model-graded types come from the assertion registry",
  rubricPrompt = "a rubric prompt is set on the assertion type, not here",
  postprocess = "renamed transform in promptfoo; write transform",
  storeOutputAsVar = "outputs are not stored as variables",
  runSerially = "ordering is evalua's client's",
}

-- ---- test lists ------------------------------------------------------------------

-- A CSV test file's cases, read as ev.dataset.load reads promptfoo's CSV
-- (data/formats/promptfoo.lua: promptfoo's columns and __expected forms);
-- each case's lines are its row's.
local function from_csv(problems, path, out)
  local ok, cases = pcall(pf_format.tests, path)
  if not ok then
    local msg = tostring(caught.pass_on(cases))
    return problems:add_text(path, tonumber(msg:match("^[^\n]-:(%d+):")) or 0, msg)
  end
  for _, e in ipairs(cases) do
    local cdoc = config.doc(path, {}, config.dir_of(path))
    cdoc.fixed = e.line
    out[#out + 1] = { test = e.test, doc = cdoc, line = e.line }
  end
end

-- Cases of one file:// reference, each {test, doc} (the doc of its file).
local function from_file(problems, doc, spec, line, out)
  local paths, why = config.files(doc.dir, spec)
  if not paths then return problems:add(doc.file, line, "tests: file://%s: %s", spec, why) end
  for _, path in ipairs(paths) do
    local ext = config.ext(path)
    local text, err
    if ext ~= "csv" then text, err = config.read(path) end
    if ext == "csv" then from_csv(problems, path, out)
    elseif not text then
      problems:add(doc.file, line, "tests: cannot read %s: %s", path, tostring(err))
    elseif ext == "yaml" or ext == "yml" or ext == "json" then
      local v, fdoc = config.decode_yaml(path, text) -- JSON is YAML
      if v == nil then problems:add_text(path, tonumber(fdoc:match(":(%d+):%d+: ")) or 0, fdoc)
      elseif not config.is_list(v) then problems:add(path, fdoc:line(v), "tests: expected a list of test cases")
      else for i, t in ipairs(v) do out[#out + 1] = { test = t, doc = fdoc, line = fdoc:line(v, i) } end end
    else
      problems:add(doc.file, line, "tests: %s: test files are .csv, .yaml, .yml or .json", path)
    end
  end
end

local function collect(problems, doc, cfg)
  local spec, out = config.value(cfg.tests), {}
  if spec == nil then return out end
  local line = doc:line(cfg, "tests")
  if type(spec) == "string" then spec = { spec } end
  if not config.is_list(spec) then
    problems:add(doc.file, line, "tests: expected a list of test cases or file:// paths")
    return out
  end
  for i, t in ipairs(spec) do
    local l = doc:line(spec, i)
    if l == 0 then l = line end -- tests: file://x.csv, one path
    if type(t) == "string" then
      local f = t:match("^file://(.*)$")
      if f then from_file(problems, doc, f, l, out)
      else problems:add(doc.file, l, "tests[%d]: expected a test case or a file:// path", i) end
    else
      out[#out + 1] = { test = t, doc = doc, line = l }
    end
  end
  return out
end

-- ---- one case ---------------------------------------------------------------------

-- vars: a mapping, whose file:// values are read (text, or parsed .json/.yaml).
local function read_vars(problems, d, vars, where, line)
  vars = config.value(vars)
  if vars == nil then return {} end
  local f = type(vars) == "string" and vars:match("^file://(.*)$")
  if f then -- vars: file://vars.yaml, a mapping of its own
    local x, why = config.file_value(config.resolve(d.dir, f))
    if x == nil then problems:add(d.file, line, "%s.vars: %s", where, why) return {} end
    vars = x
  end
  if not config.is_map(vars) then problems:add(d.file, line, "%s.vars: expected a mapping", where) return {} end
  local out = {}
  for k, v in pairs(vars) do
    v = config.value(v)
    local f = type(v) == "string" and v:match("^file://(.*)$")
    if f then
      local x, why = config.file_value(config.resolve(d.dir, f))
      if x == nil then problems:add(d.file, d:line(vars, k), "%s.vars.%s: %s", where, k, why) end
      v = x
    end
    out[k] = v
  end
  return out
end

-- The expansion of list-valued vars into one vars table per combination,
-- keys in sorted order (promptfoo's cartesian product).
local function expand(vars)
  local keys = {}
  for k, v in pairs(vars) do if config.is_list(v) and #v > 0 then keys[#keys + 1] = k end end
  table.sort(keys)
  local out = { {} }
  for k, v in pairs(vars) do if not (config.is_list(v) and #v > 0) then out[1][k] = v end end
  for _, k in ipairs(keys) do
    local nxt = {}
    for _, base in ipairs(out) do
      for _, x in ipairs(vars[k]) do
        local c = {}
        for kk, vv in pairs(base) do c[kk] = vv end
        c[k] = x
        nxt[#nxt + 1] = c
      end
    end
    out = nxt
  end
  return out
end

local function read_options(problems, d, o, where, line)
  o = config.value(o)
  if o == nil then return {} end
  if not config.is_map(o) then problems:add(d.file, line, "%s.options: expected a mapping", where) return {} end
  config.check_keys(problems, d, o, where .. ".options", OPTIONS, OPTIONS_HINTS)
  local out = {}
  for _, k in ipairs { "transform", "prefix", "suffix" } do
    local v = config.value(o[k])
    if v ~= nil and type(v) ~= "string" then
      problems:add(d.file, d:line(o, k), "%s.options.%s: expected a string", where, k)
    else out[k] = v end
  end
  out.transform_line = d:line(o, "transform")
  out.disableVarExpansion = config.value(o.disableVarExpansion)
  return out
end

-- One case's fields, checked: {description, vars, asserts = {{a, doc, line}},
-- options, threshold, metadata}.
local function read_case(problems, d, t, where, line)
  if not config.is_map(t) then problems:add(d.file, line, "%s: expected a test case (a mapping)", where) return nil end
  config.check_keys(problems, d, t, where, TEST, TEST_HINTS)
  local c = { where = where, file = d.file, line = line, doc = d }
  c.description = config.value(t.description)
  if c.description ~= nil and type(c.description) ~= "string" then
    problems:add(d.file, d:line(t, "description"), "%s.description: expected a string", where)
    c.description = nil
  end
  c.vars = read_vars(problems, d, t.vars, where, d:line(t, "vars"))
  c.options = read_options(problems, d, t.options, where, d:line(t, "options"))
  c.threshold = config.value(t.threshold)
  if c.threshold ~= nil and type(c.threshold) ~= "number" then
    problems:add(d.file, d:line(t, "threshold"), "%s.threshold: expected a number", where)
    c.threshold = nil
  end
  c.metadata = config.value(t.metadata)
  c.asserts = {}
  local list = config.value(t.assert)
  if list ~= nil and not config.is_list(list) then
    problems:add(d.file, d:line(t, "assert"), "%s.assert: expected a list of assertions", where)
  else
    for i, a in ipairs(list or {}) do
      c.asserts[#c.asserts + 1] = { a = a, doc = d, line = d:line(list, i), where = ("%s.assert[%d]"):format(where, i) }
    end
  end
  return c
end

-- defaultTest under a case: vars and options merged (the case's win),
-- assertions first the default's then the case's, threshold the case's.
local function merge(default, c)
  if not default then return c end
  local vars = {}
  for k, v in pairs(default.vars) do vars[k] = v end
  for k, v in pairs(c.vars) do vars[k] = v end
  c.vars = vars
  local options = {}
  for k, v in pairs(default.options) do options[k] = v end
  for k, v in pairs(c.options) do options[k] = v end
  c.options = options
  local asserts = {}
  for _, a in ipairs(default.asserts) do asserts[#asserts + 1] = a end
  for _, a in ipairs(c.asserts) do asserts[#asserts + 1] = a end
  c.asserts = asserts
  if c.threshold == nil then c.threshold = default.threshold end
  if c.metadata == nil then c.metadata = default.metadata end
  return c
end

-- read(problems, doc, cfg) -> the cases, expanded, in order; each
-- {id, description, vars, asserts, options, threshold, file, line}.
function M.read(problems, doc, cfg)
  local default
  local dt = config.value(cfg.defaultTest)
  if dt ~= nil then
    if type(dt) == "string" then
      problems:add(doc.file, doc:line(cfg, "defaultTest"), "defaultTest: a file:// default test is not supported; "
        .. "write it in the config")
    else
      default = read_case(problems, doc, dt, "defaultTest", doc:line(cfg, "defaultTest"))
    end
  end
  local out = {}
  for i, e in ipairs(collect(problems, doc, cfg)) do
    local where = e.doc == doc and ("tests[%d]"):format(i) or "test"
    local c = read_case(problems, e.doc, e.test, where, e.line)
    if c then
      c = merge(default, c)
      local all = c.options.disableVarExpansion and { c.vars } or expand(c.vars)
      for k, vars in ipairs(all) do
        local x = {}
        for kk, vv in pairs(c) do x[kk] = vv end
        x.vars, x.expansion = vars, #all > 1 and k or nil
        out[#out + 1] = x
      end
    end
  end
  if #out == 0 then
    -- promptfoo runs each prompt once with no variables when there are no tests
    local c = default and merge(default, { vars = {}, options = {}, asserts = {} }) or { vars = {}, options = {}, asserts = {} }
    c.where, c.file, c.line, c.doc = "defaultTest", doc.file, doc:line(cfg, "defaultTest"), doc
    out[1] = c
  end
  for i, c in ipairs(out) do c.id = ("%d"):format(i) end
  return out
end

return M
