-- Command-line options for scripts, parsed the same way everywhere:
--   --name value, --name=value, --flag / --no-flag, repeated list options,
--   --help. A script declares its options as data:
--
--   local opt = ev.cli.parse(arg, {
--     usage = "evalua run scripts/x.lua [options]",
--     { "data", "scripts/data/rag_eval.jsonl", "evaluation rows (JSONL or CSV)" },
--     { "k", 5, "rank cutoff" },                      -- a number, since the default is
--     { "quiet", false, "no progress on stderr" },    -- a flag, since the default is a boolean
--     { "format", { "md", "json" }, "report formats", list = true },
--   })
--
-- Every script also takes --shard i/N|auto and --parts DIR (evalua.shard),
-- unless it declares options of those names itself.
--
-- A usage error prints one line and exits with status 2, through the same
-- exit request as ev.exit, so a pcall around parse cannot keep the run going.
local options = require "evalua.options"
local shard = require "evalua.shard"
local sys = require "evalua._sys"

local M = {}

local function usage_error(fmt, ...)
  io.stderr:write("evalua: ", fmt:format(...), " (try --help)\n")
  sys.exit(2)
end

local function kind_of(spec)
  if spec.list then return "list" end
  local t = type(spec[2])
  if t == "boolean" or t == "number" then return t end
  return "string"
end

local function convert(spec, name, value)
  local kind = kind_of(spec)
  if kind == "number" then
    local n = tonumber(value)
    if not n then usage_error("--%s expects a number, got '%s'", name, value) end
    return n
  end
  if spec.choices then
    for _, c in ipairs(spec.choices) do
      if c == value then return value end
    end
    usage_error("--%s must be one of %s, got '%s'", name, table.concat(spec.choices, ", "), value)
  end
  return value
end

local function show_default(spec)
  local d = spec[2]
  if type(d) == "table" then return table.concat(d, ",") end
  if d == nil then return "" end
  return tostring(d)
end

local COMMON = {
  { "shard", "", "evaluate only shard i/N of the rows (or auto: from Slurm, Kubernetes, Buildkite, GitLab); see evalua merge" },
  { "parts", "", "folder for a shard's part file (default: $EVALUA_PARTS or parts)" },
}

-- The script's options and the common ones it does not declare itself.
local function with_common(spec)
  local all, mine = {}, {}
  for i, o in ipairs(spec) do all[i], mine[o[1]] = o, true end
  for _, o in ipairs(COMMON) do
    if not mine[o[1]] then all[#all + 1] = o end
  end
  return all
end

function M.help(spec)
  local out = { spec.usage or "evalua run SCRIPT [options]" }
  if spec.description then out[#out + 1] = "\n" .. spec.description end
  out[#out + 1] = "\noptions:"
  for _, o in ipairs(with_common(spec)) do
    local left = kind_of(o) == "boolean" and ("--" .. o[1]) or ("--" .. o[1] .. " " .. o[1]:upper())
    local def = show_default(o)
    local text = o[3] or ""
    if o.choices then text = text .. " (one of: " .. table.concat(o.choices, ", ") .. ")" end
    if kind_of(o) ~= "boolean" and def ~= "" then text = text .. " (default: " .. def .. ")" end
    out[#out + 1] = ("  %-24s %s"):format(left, text)
  end
  out[#out + 1] = ("  %-24s %s"):format("--help", "this text")
  return table.concat(out, "\n") .. "\n"
end

local function defaults(spec)
  local opt = { _ = {} }
  for _, o in ipairs(spec) do
    local d = o[2]
    if type(d) == "table" then
      local copy = {}
      for i, v in ipairs(d) do copy[i] = v end
      d = copy
    end
    opt[o[1]] = d
  end
  return opt
end

local function assign(opt, seen_list, o, name, value)
  if kind_of(o) == "list" then
    if not seen_list[name] then opt[name], seen_list[name] = {}, true end
    for item in value:gmatch("[^,]+") do opt[name][#opt[name] + 1] = item end
  else
    opt[name] = convert(o, name, value)
  end
end

local SPEC_KEYS = options.set { "usage", "description", "positional" }
local ENTRY_KEYS = options.set { "list", "choices" }

local function string_keys(t)
  local out = {}
  for k, v in pairs(t) do
    if type(k) ~= "number" then out[k] = v end
  end
  return out
end

-- A misspelt key in the spec (positonal, choice) is an error at the
-- script's line, not an option that silently does nothing.
local function check_spec(spec)
  if type(spec) ~= "table" then error("ev.cli.parse: the spec must be a table", 3) end
  options.check(string_keys(spec), SPEC_KEYS, "ev.cli.parse", 3)
  for _, o in ipairs(spec) do
    options.check(string_keys(o), ENTRY_KEYS, ("ev.cli.parse: option --%s"):format(tostring(o[1])), 3)
  end
end

-- The run-wide options take effect: the shard, and a merge's --out.
local function finish(opt, byname, argv)
  local merging = shard.merging()
  if merging and merging.out then
    if not byname.out then usage_error("evalua merge --out: the script has no --out option") end
    opt.out = merging.out
  end
  if byname.shard == COMMON[1] then
    local ok, err = pcall(shard.configure, opt.shard, opt.parts, argv)
    if not ok then usage_error("%s", tostring(err)) end
  end
  return opt
end

-- parse(arg, spec) -> opt; opt._ holds positional arguments when spec.positional is set.
function M.parse(argv, spec)
  check_spec(spec)
  local byname, all = {}, with_common(spec)
  for _, o in ipairs(all) do byname[o[1]] = o end
  local opt, seen_list = defaults(all), {}
  local i, n = 1, #(argv or {})
  while i <= n do
    local a = argv[i]
    if a == "--help" or a == "-h" then
      io.stdout:write(M.help(spec))
      sys.exit(0)
    elseif a == "--" then
      for j = i + 1, n do opt._[#opt._ + 1] = argv[j] end
      break
    elseif a:sub(1, 2) == "--" then
      local name, value = a:match("^%-%-([^=]+)=(.*)$")
      name = name or a:sub(3)
      local o, negated = byname[name], false
      if not o and name:sub(1, 3) == "no-" and byname[name:sub(4)] then
        o, negated, name = byname[name:sub(4)], true, name:sub(4)
      end
      if not o then usage_error("unknown option --%s", name) end
      if kind_of(o) == "boolean" then
        if value then usage_error("--%s is a flag and takes no value", name) end
        opt[name] = not negated
      else
        if negated then usage_error("unknown option --no-%s", name) end
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then usage_error("--%s needs a value", name) end
        end
        assign(opt, seen_list, o, name, value)
      end
    else
      if not spec.positional then usage_error("unexpected argument '%s'", a) end
      opt._[#opt._ + 1] = a
    end
    i = i + 1
  end
  return finish(opt, byname, argv)
end

M.usage_error = usage_error

-- script_dir(arg) -> the folder of the running script (arg[0]), so a
-- bundled script finds its data beside itself from any working folder.
function M.script_dir(argv)
  local script = argv and argv[0]
  if type(script) ~= "string" then return "." end
  return script:match("^(.*)/[^/]*$") or "."
end

return M
