-- Command-line options for scripts, parsed the same way everywhere:
--   --name value, --name=value, --flag / --no-flag, repeated list options,
--   --help. A script declares its options as data:
--
--   local opt = ev.cli.parse(arg, {
--     usage = "evalua run scripts/x.lua [options]",
--     { "data", "scripts/data/rag_eval.jsonl", "evaluation rows (JSONL or CSV)" },
--     { "k", 5, "rank cutoff" },                      -- a number, since the default is
--     { "quiet", false, "no progress on stderr" },    -- a flag, since the default is a boolean
--     { "format", { "md", "json" }, "report formats", list = true, choices = ev.report.formats },
--     { "n", 10, "items", integer = true, min = 1 },  -- bounds of a number
--     { "out", "out", "report folder", path = "out" }, -- checked before any work
--   })
--
-- Every value is checked when parsed, before the script does any work:
-- choices (a list, or a function giving one) for strings and each item of
-- a list; integer, min, max for numbers; path = "file" (readable),
-- "folder" (a folder) or "out" (a folder that exists or can be made, and
-- may be written in).
--
-- Every script also takes --shard i/N|auto and --parts DIR (evalua.scale.shard),
-- unless it declares options of those names itself.
--
-- A usage error prints one line and exits with status 2, through the same
-- exit request as ev.exit, so a pcall around parse cannot keep the run going.
local options = require "evalua.core.options"
local caught = require "evalua.core.caught"
local shard = require "evalua.scale.shard"
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

-- A number option's bounds: integer = true, min =, max = (all optional).
local function check_number(spec, name, n, value)
  if n ~= n or n == math.huge or n == -math.huge then usage_error("--%s expects a finite number, got '%s'", name, value) end
  if spec.integer and n ~= math.floor(n) then usage_error("--%s expects a whole number, got '%s'", name, value) end
  if spec.min and n < spec.min then usage_error("--%s must be at least %s, got '%s'", name, spec.min, value) end
  if spec.max and n > spec.max then usage_error("--%s must be at most %s, got '%s'", name, spec.max, value) end
  return spec.integer and math.tointeger(n) or n
end

local function choices_of(spec)
  local c = spec.choices
  if type(c) == "function" then c = c() end -- computed when parsed: report formats registered before
  return c
end

local function check_choice(spec, name, value)
  local choices = choices_of(spec)
  if not choices then return value end
  for _, c in ipairs(choices) do
    if c == value then return value end
  end
  usage_error("--%s must be one of %s, got '%s'", name, table.concat(choices, ", "), value)
end

local function convert(spec, name, value)
  if kind_of(spec) == "number" then
    local n = tonumber(value)
    if not n then usage_error("--%s expects a number, got '%s'", name, value) end
    return check_number(spec, name, n, value)
  end
  return check_choice(spec, name, value)
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
    if o.choices then text = text .. " (one of: " .. table.concat(choices_of(o), ", ") .. ")" end
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

local function assign(opt, given, o, name, value)
  if kind_of(o) == "list" then
    if not given[name] then opt[name] = {} end
    for item in value:gmatch("[^,]+") do opt[name][#opt[name] + 1] = check_choice(o, name, item) end
  else
    opt[name] = convert(o, name, value)
  end
  given[name] = true
end

local SPEC_KEYS = options.set { "usage", "description", "positional" }
local ENTRY_KEYS = options.set { "list", "choices", "integer", "min", "max", "path" }
local PATHS = options.set { "file", "folder", "out" }

-- The nearest folder at or above dir that exists ("." for a relative path).
local function existing_parent(dir)
  local p = dir
  while not sys.stat(p) do
    local up = p:match("^(.*[^/])/+[^/]+/*$") or (p:sub(1, 1) == "/" and "/" or ".")
    if up == p then return nil end
    p = up
  end
  return p
end

-- nil when value fits path (see the top of this file), else why not.
local function path_problem(kind, value)
  if kind == "file" then
    local f, err = io.open(value, "rb")
    if not f then return err end
    f:close()
    return nil
  end
  local st = sys.stat(value)
  if kind == "folder" then
    return not st and ("no folder '%s'"):format(value) or not st.dir and ("'%s' is not a folder"):format(value) or nil
  end
  if st and not st.dir then return ("'%s' is not a folder"):format(value) end
  local parent = existing_parent(value)
  if not parent or not sys.stat(parent).dir then return ("'%s' cannot be created"):format(value) end
  local probe = ("%s/.evalua-write-check-%d"):format(parent, sys.getpid())
  local f, err = io.open(probe, "w")
  if not f then return ("cannot write in '%s': %s"):format(parent, tostring(err):gsub("^.-: ", "")) end
  f:close()
  os.remove(probe)
  return nil
end

local function check_paths(opt, all)
  for _, o in ipairs(all) do
    local v = opt[o[1]]
    if o.path and type(v) == "string" then
      if v == "" and o.path == "out" then usage_error("--%s needs a folder", o[1]) end
      local why = v ~= "" and path_problem(o.path, v)
      if why then usage_error("--%s: %s", o[1], why) end
    end
  end
end

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
    local what = ("ev.cli.parse: option --%s"):format(tostring(o[1]))
    options.check(string_keys(o), ENTRY_KEYS, what, 3)
    if o.path ~= nil and not PATHS[o.path] then error(what .. ": path is \"file\", \"folder\" or \"out\"", 3) end
  end
end

-- The folder of `evalua run --out DIR SCRIPT`: arg's negative indices hold
-- the words before the script, as lua.c sets them (nil when not given).
local function run_out(argv)
  local first = 0
  while argv[first - 1] ~= nil do first = first - 1 end
  if argv[first + 1] ~= "run" then return nil end
  local out, i = nil, first + 2
  while i < 0 and argv[i] ~= "--" do
    if argv[i] == "--out" then out = argv[i + 1] end
    i = i + (argv[i] == "--sandbox" and 1 or 2) -- every other run option takes a value
  end
  return out
end

-- run --out DIR is the script's --out unless the script's own --out is
-- given too: under --sandbox that one (a folder inside DIR) wins, else two
-- different folders are a contradiction.
local function take_run_out(opt, byname, given, dir)
  if not dir then return end
  if not byname.out then
    if sys.sandboxed() then return end -- the folder the sandbox lets it write; it has no option for it
    usage_error("evalua run --out %s: this script has no --out option", dir)
  end
  if not given.out then opt.out = dir
  elseif opt.out ~= dir and not sys.sandboxed() then
    usage_error("evalua run --out %s and the script's --out %s name different folders; give one", dir, opt.out)
  end
end

-- The run-wide options take effect: the shard, run's and a merge's --out.
local function finish(opt, all, byname, given, argv, dir)
  take_run_out(opt, byname, given, dir)
  local merging = shard.merging()
  if merging and merging.out then
    if not byname.out then usage_error("evalua merge --out: the script has no --out option") end
    opt.out = merging.out
  end
  if byname.shard == COMMON[1] then
    local ok, err = pcall(shard.configure, opt.shard, opt.parts, argv)
    if not ok then usage_error("%s", tostring(err)) end
    local why = shard.current() and path_problem("out", shard.state().parts)
    if why then usage_error("--parts: %s", why) end -- the part is written after the work
  end
  check_paths(opt, all)
  return opt
end

-- parse(arg, spec) -> opt, given; opt._ holds positional arguments when
-- spec.positional is set; given[name] is true for each option the command
-- line set (a default is not given), so a script can refuse one that would
-- do nothing.
function M.parse(argv, spec)
  check_spec(spec)
  local dir = run_out(argv or {})
  -- the host checks that a trusted script read it (host/cli/main.c); a sandboxed
  -- one may write only there, and its modules are frozen
  if dir and not sys.sandboxed() then M.run_out_taken = true end
  local byname, all = {}, with_common(spec)
  for _, o in ipairs(all) do byname[o[1]] = o end
  local opt, given = defaults(all), {}
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
        opt[name], given[name] = not negated, true
      else
        if negated then usage_error("unknown option --no-%s", name) end
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then usage_error("--%s needs a value", name) end
        end
        assign(opt, given, o, name, value)
      end
    else
      if not spec.positional then usage_error("unexpected argument '%s'", a) end
      opt._[#opt._ + 1] = a
    end
    i = i + 1
  end
  return finish(opt, all, byname, given, argv, dir), given
end

M.usage_error = usage_error

-- try(fn, ...) -> what fn returns. An error fn raises becomes a usage error
-- (one line without its position, exit status 2, no traceback): for the
-- calls a script makes from its options and environment before any work,
-- such as ev.judge.open without $EVALUA_MODEL.
function M.try(fn, ...)
  local r = table.pack(pcall(fn, ...))
  if r[1] then return table.unpack(r, 2, r.n) end
  if type(r[2]) == "table" or caught.fatal(r[2]) then error(r[2], 0) end -- an exit request, a limit, no memory pass through
  usage_error("%s", (tostring(r[2]):gsub("^[^\n]-:%d+: ", "")))
end

-- script_dir(arg) -> the folder of the running script (arg[0]), so a
-- bundled script finds its data beside itself from any working folder.
function M.script_dir(argv)
  local script = argv and argv[0]
  if type(script) ~= "string" then return "." end
  return script:match("^(.*)/[^/]*$") or "."
end

return M
