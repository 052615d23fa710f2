-- evalua view [HISTORY_DIR | REPORT.json]: the viewer's command. Opens the
-- store, then serves the app and its JSON API on 127.0.0.1 (evalua._view)
-- until interrupted, or with --export DIR writes the app with the data
-- embedded, read-only.
local cli = require "evalua.core.cli"
local sys = require "evalua._sys"
local labels = require "evalua.history.labels"
local source = require "evalua.view.source"
local api = require "evalua.view.api"

local M = {}

local SPEC = {
  usage = "evalua view [options] HISTORY_DIR | REPORT.json",
  description = "An interactive viewer over a history's store (or a JSON report): runs, items, one item, "
    .. "comparisons, human labels and the judge's calibration. Serves on 127.0.0.1 with a random token "
    .. "in the URL it prints; Ctrl-C stops it.",
  positional = true,
  { "port", 0, "port on 127.0.0.1 (0: a free one)", integer = true, min = 0, max = 65535 },
  { "rater", "", "the reviewer's name saved with each label (default: $USER)" },
  { "scale", "1..5", "the labels' scale: LO..HI (1..5) or pass/fail; a criterion labelled already keeps its scale" },
  { "history", "", "with REPORT.json: the history folder whose store holds the report's run and the labels "
    .. "(default: REPORT's folder/view-history)" },
  { "export", "", "write the app with the data embedded, read-only, to DIR/index.html instead of serving" },
  { "export-items", 5000, "with --export: the newest run's items embedded (the first N by system and id)",
    integer = true, min = 1 },
}

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

local function open_source(opt)
  local target = opt._[1]
  local st = sys.stat(target)
  if not st then sys.input_error(("%s: no such file or folder"):format(target)) end
  if target:find("%.json$") and not st.dir then
    local dir = opt.history ~= "" and opt.history or (dirname(target) .. "/view-history")
    return source.report(target, dir)
  end
  if opt.history ~= "" then cli.usage_error("--history goes with REPORT.json; HISTORY_DIR is the history already") end
  local src = source.history(target)
  src.hist = require("evalua.history").open(target)
  return src
end

function M.main(argv)
  local opt = cli.parse(argv, SPEC)
  if #opt._ > 1 then -- shards' parts, most likely: say what opens them
    cli.usage_error("view takes one HISTORY_DIR or REPORT.json, got %d; if they are %s", #opt._,
      (source.PARTS_HINT:gsub("^a shard.s part", "shards' parts")))
  end
  if #opt._ ~= 1 then cli.usage_error("view needs one HISTORY_DIR or REPORT.json, got %d", #opt._) end
  if not labels.scale(opt.scale) then cli.usage_error("--scale: expected LO..HI (such as 1..5) or pass/fail, got '%s'", opt.scale) end
  local src = open_source(opt)
  src.scale = opt.scale
  src.rater = opt.rater ~= "" and opt.rater or os.getenv("USER") or "reviewer"
  src.exe = require("evalua._view").exe()
  -- calibrate: the installed script (found by name), else the one of the source tree beside the build folder
  local tree = src.exe:match("^(.*)/[^/]*/[^/]*$")
  src.calibrate = (tree and sys.stat(tree .. "/scripts/calibrate.lua")) and tree .. "/scripts/calibrate.lua" or "calibrate"
  if opt.export ~= "" then
    source.finish(src) -- a report's run: into the store, which the export reads
    local n, k, total = require("evalua.view.export").write(src, opt.export, opt["export-items"])
    io.stdout:write(("evalua view: wrote %s/index.html (read-only): %d runs, %d of the newest run's %d items%s\n")
      :format(opt.export, n, k, total, k < total and " (--export-items)" or ""))
    return 0
  end
  require("evalua._view").serve {
    port = opt.port,
    on_ready = function(url)
      io.stdout:write(("evalua view: serving %s on\n    %s\nlabels are saved to %s as '%s'; Ctrl-C stops\n")
        :format(src.file, url, src.file, src.rater))
      io.stdout:flush()
    end,
    -- A report's run: its table and the store's import follow the first page (evalua.view.api).
    on_idle = function() return api.idle(src) end,
    handler = function(method, path, args, body) return api.handle(src, method, path, args, body) end,
  }
  io.stdout:write("evalua view: stopped\n")
  return 0
end

return M
