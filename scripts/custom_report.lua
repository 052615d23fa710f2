-- A report format of your own is one function of the results object; once
-- registered it is written like the built-in ones. This one is a digest for
-- a chat channel: one line per system with its weakest slice.
local ev = require "evalua"
local here = ev.cli.script_dir(arg) -- default data beside the script, from any folder
local opt = ev.cli.parse(arg, { { "out", "out", "folder for the digest", path = "out" } })

ev.report.register("digest", function(res)
  local lines = { ("Evaluation of %s, %s"):format(res.meta.dataset.path, res.meta.time) }
  for _, system in ipairs(res.systems) do
    local parts = {}
    for _, m in ipairs(res.metrics) do
      local a, w = res:agg(system, m.name), res.worst[system][m.name]
      parts[#parts + 1] = ("%s %.2f (weakest: %s %.2f)"):format(m.name, a.mean, w.value, w.mean)
    end
    lines[#lines + 1] = ("- %s: %s"):format(system, table.concat(parts, "; "))
  end
  return table.concat(lines, "\n") .. "\n"
end, "txt")

local res = ev.evaluate(ev.dataset.load(here .. "/data/rag_eval.jsonl"),
  { metrics = { "recall@5", "token_f1" }, system = "variant", slices = { "query_class" } })
local paths = ev.report.write(res, { dir = opt.out, name = "digest", formats = { "digest" } })
io.write(ev.report.render(res, "digest"))
io.stderr:write("wrote ", paths[1], "\n")
