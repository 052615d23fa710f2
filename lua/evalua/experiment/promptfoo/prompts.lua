-- A promptfoo config's `prompts`: strings, file:// paths and globs (a text
-- file holds one prompt or several separated by a line "---"; a .json file
-- is one chat prompt), {raw =, id =, label =} entries, or the older map
-- {"file://p.txt": label}. Each becomes {label, template, file, line}.
-- A rendered prompt that is a JSON list of {role, content} messages is a
-- chat prompt (providers.lua sends it as those messages), as in promptfoo.
local config = require "evalua.experiment.promptfoo.config"
local nunjucks = require "evalua.experiment.promptfoo.nunjucks"

local M = {}

local KEYS = { raw = true, id = true, label = true }
local HINTS = { config = "per-prompt provider config is promptfoo's; set it on the provider",
                ["function"] = "prompt functions are JavaScript or Python code, which evalua does not run" }

local function basename(path) return (path:match("([^/]+)$"):gsub("%.[^.]*$", "")) end

-- A text file's prompts: split on lines that are exactly "---".
local function split(text)
  local parts, cur, first_line, line = {}, {}, 1, 0
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line + 1
    if l == "---" then
      parts[#parts + 1] = { text = table.concat(cur, "\n"), line = first_line }
      cur, first_line = {}, line + 1
    else
      cur[#cur + 1] = l
    end
  end
  if #cur > 0 and text:sub(-1) == "\n" and cur[#cur] == "" then cur[#cur] = nil end
  parts[#parts + 1] = { text = table.concat(cur, "\n"), line = first_line }
  return parts
end

-- The prompts of one file:// reference.
local function from_files(out, problems, doc, spec, label, line)
  local paths, why = config.files(doc.dir, spec)
  if not paths then return problems:add(doc.file, line, "prompts: file://%s: %s", spec, why) end
  for _, path in ipairs(paths) do
    local ext = config.ext(path)
    if ext == "js" or ext == "cjs" or ext == "mjs" or ext == "ts" or ext == "py" or ext == "jsonl"
       or ext == "yaml" or ext == "yml" then
      problems:add(doc.file, line, "prompts: %s: %s prompt files are not supported (text files, one or more prompts "
        .. "separated by '---' lines, and .json chat prompts are)", path, ext)
    else
      local text, err = config.read(path)
      if not text then
        problems:add(doc.file, line, "prompts: cannot read %s: %s", path, tostring(err))
      else
        local parts = ext == "json" and { { text = text, line = 1 } } or split(text)
        for k, p in ipairs(parts) do
          local name = label or basename(path)
          if #parts > 1 then name = name .. ":" .. k
          elseif label and #paths > 1 then name = label .. ":" .. basename(path) end
          out[#out + 1] = { label = name, text = p.text, file = path, line = p.line, given = label ~= nil }
        end
      end
    end
  end
end

local function add_one(out, problems, doc, v, label, line, where)
  if type(v) ~= "string" then
    return problems:add(doc.file, line, "%s: expected a prompt text or file://path", where)
  end
  local spec = v:match("^file://(.*)$")
  if spec then return from_files(out, problems, doc, spec, label, line) end
  out[#out + 1] = { label = label, text = v, file = doc.file, line = line, inline = true, given = label ~= nil }
end

local function entry(out, problems, doc, v, i, t)
  local line, where = doc:line(t, i), ("prompts[%d]"):format(i)
  if type(v) ~= "table" then return add_one(out, problems, doc, v, nil, line, where) end
  config.check_keys(problems, doc, v, where, KEYS, HINTS)
  local label = config.value(v.label)
  if label ~= nil and type(label) ~= "string" then problems:add(doc.file, doc:line(v, "label"), "%s.label: expected a string", where) end
  local raw, id = config.value(v.raw), config.value(v.id)
  if raw ~= nil and id ~= nil then return problems:add(doc.file, line, "%s: give raw or id, not both", where) end
  if raw == nil and id == nil then return problems:add(doc.file, line, "%s: needs raw (the text) or id (file://path)", where) end
  if raw ~= nil then
    if type(raw) ~= "string" then return problems:add(doc.file, line, "%s.raw: expected a string", where) end
    out[#out + 1] = { label = label, text = raw, file = doc.file, line = doc:line(v, "raw"), inline = true, given = label ~= nil }
  else
    add_one(out, problems, doc, id, label, doc:line(v, "id"), where .. ".id")
  end
end

-- Labels: given ones as they are; inline prompts without one are
-- "prompt N"; two prompts with one label are refused.
local function name_all(list, problems, doc)
  local seen = {}
  for i, p in ipairs(list) do
    p.label = p.label or ("prompt " .. i)
    if seen[p.label] then
      problems:add(doc.file, p.line, "prompts: two prompts are labelled '%s' (give each its own label)", p.label)
    end
    seen[p.label] = true
  end
end

-- Compiles each prompt's Nunjucks; a problem names the prompt's own file and line.
local function compile_all(list, problems)
  for _, p in ipairs(list) do
    local t, why, l = nunjucks.compile(p.text, p.label)
    if t then p.template = t
    elseif p.inline then problems:add(p.file, p.line, "prompt '%s': %s", p.label, why)
    else problems:add(p.file, p.line + (l or 1) - 1, "prompt '%s': %s", p.label, why) end
  end
end

-- read(problems, doc, cfg) -> list of prompts (possibly with problems added).
function M.read(problems, doc, cfg)
  local spec, out = cfg.prompts, {}
  local line = doc:line(cfg, "prompts")
  if spec == nil or spec == config.null then
    problems:add(doc.file, 1, "prompts: missing (a list of prompt texts or file:// paths)")
    return out
  end
  if type(spec) == "string" then
    add_one(out, problems, doc, spec, nil, line, "prompts")
  elseif config.is_list(spec) then
    for i, v in ipairs(spec) do entry(out, problems, doc, v, i, spec) end
  elseif type(spec) == "table" then -- {"file://p.txt": "label"}, sorted by line
    local keys = config.unknown_keys(doc, spec, {})
    for _, k in ipairs(keys) do
      local label = spec[k]
      if type(label) ~= "string" then problems:add(doc.file, doc:line(spec, k), "prompts.%s: expected a label", k)
      else add_one(out, problems, doc, k, label, doc:line(spec, k), "prompts") end
    end
  else
    problems:add(doc.file, line, "prompts: expected a list of prompt texts or file:// paths")
  end
  if #out == 0 and #problems.list == 0 then problems:add(doc.file, line, "prompts: no prompt given") end
  name_all(out, problems, doc)
  compile_all(out, problems)
  return out
end

return M
