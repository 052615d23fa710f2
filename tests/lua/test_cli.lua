-- ev.cli: the option parser every script shares.
local lu = require "luaunit"
local h = require "tests.lua.helpers"

local SCRIPT = [[
local ev = require "evalua"
local opt = ev.cli.parse(arg, {
  usage = "evalua run script.lua [options]",
  { "data", "rows.jsonl", "evaluation rows" },
  { "k", 5, "rank cutoff" },
  { "quiet", false, "no progress" },
  { "format", { "md", "json" }, "report formats", list = true },
  { "judge", "offline", "judge kind", choices = { "offline", "openai" } },
})
print(opt.data, opt.k, math.type(opt.k), opt.quiet, table.concat(opt.format, "+"), opt.judge)
]]

function test_defaults()
  local r = h.run_script(SCRIPT)
  lu.assertEquals(r.stdout, "rows.jsonl\t5\tinteger\tfalse\tmd+json\toffline\n")
end

-- parse's second result names what the command line set, a default value
-- given explicitly included, so a script can refuse an option that would do
-- nothing.
function test_given_names_what_the_command_line_set()
  local script = [[
local ev = require "evalua"
local opt, given = ev.cli.parse(arg, { { "k", 5, "rank cutoff" }, { "quiet", false, "quiet" }, { "data", "d", "rows" } })
local names = {}
for name in pairs(given) do names[#names + 1] = name end
table.sort(names)
print(table.concat(names, ","), opt.k)
]]
  lu.assertEquals(h.run_script(script).stdout, "\t5\n")
  lu.assertEquals(h.run_script(script, "", "--k 5 --no-quiet").stdout, "k,quiet\t5\n")
end

function test_values_flags_lists_and_equals_form()
  local r = h.run_script(SCRIPT, "", "--data x.csv --k=10 --quiet --format html --format csv,junit --judge openai")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "x.csv\t10\tinteger\ttrue\thtml+csv+junit\topenai\n")
  r = h.run_script(SCRIPT, "", "--quiet --no-quiet")
  lu.assertStrContains(r.stdout, "\tfalse\t")
end

function test_usage_errors_exit_2_with_one_line()
  local cases = {
    ["--bogus"] = "evalua: unknown option --bogus (try --help)\n",
    ["--k ten"] = "evalua: --k expects a number, got 'ten' (try --help)\n",
    ["--data"] = "evalua: --data needs a value (try --help)\n",
    ["--quiet=yes"] = "evalua: --quiet is a flag and takes no value (try --help)\n",
    ["--judge claude"] = "evalua: --judge must be one of offline, openai, got 'claude' (try --help)\n",
    ["stray"] = "evalua: unexpected argument 'stray' (try --help)\n",
  }
  for args, want in pairs(cases) do
    local r = h.run_script(SCRIPT, "", args)
    lu.assertEquals(r.status, 2, args)
    lu.assertEquals(r.stderr, want)
    lu.assertEquals(r.stdout, "")
  end
end

function test_help_lists_options_with_defaults_and_exits_0()
  local r = h.run_script(SCRIPT, "", "--help")
  lu.assertEquals(r.status, 0)
  lu.assertStrContains(r.stdout, "evalua run script.lua [options]")
  lu.assertStrContains(r.stdout, "  --k K                    rank cutoff (default: 5)")
  lu.assertStrContains(r.stdout, "  --quiet                  no progress")
  lu.assertStrContains(r.stdout, "  --format FORMAT          report formats (default: md,json)")
end

-- Every value is checked when parsed, before a script does any work:
-- bounds of numbers, the choices of each list item, and paths.
local CHECKED = [[
local ev = require "evalua"
local opt = ev.cli.parse(arg, {
  { "k", 5, "rank cutoff", integer = true, min = 1, max = 100 },
  { "share", 0.5, "a share", min = 0, max = 1 },
  { "format", { "md" }, "formats", list = true, choices = ev.report.formats },
  { "scores", "", "a report", path = "file" },
  { "prompts", ".", "a folder", path = "folder" },
  { "out", "out", "reports", path = "out" },
})
print(opt.k, math.type(opt.k), opt.share, table.concat(opt.format, "+"), opt.out)
]]

function test_values_are_checked_before_any_work()
  local r = h.run_script(CHECKED, "", "--k 7 --share 1 --format html,json --out new/sub")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertEquals(r.stdout, "7\tinteger\t1\thtml+json\tnew/sub\n")
  local cases = {
    ["--k 0"] = "--k must be at least 1, got '0'",
    ["--k 2.5"] = "--k expects a whole number, got '2.5'",
    ["--k 101"] = "--k must be at most 100, got '101'",
    ["--k 1e999"] = "--k expects a finite number, got '1e999'",
    ["--share 1.5"] = "--share must be at most 1, got '1.5'",
    ["--format md,pdf"] = "--format must be one of csv, html, json, junit, markdown, md, terminal, got 'pdf'",
    ["--scores nosuch.json"] = "--scores: nosuch.json: No such file or directory",
    ["--prompts nosuch"] = "--prompts: no folder 'nosuch'",
    ["--prompts script.lua"] = "--prompts: 'script.lua' is not a folder",
    ["--out script.lua"] = "--out: 'script.lua' is not a folder",
    ["--out script.lua/x"] = "--out: 'script.lua/x' cannot be created",
    ["--out /proc/x/y"] = "--out: cannot write in '/proc': No such file or directory",
    ["--out="] = "--out needs a folder",
  }
  for args, want in pairs(cases) do
    r = h.run_script(CHECKED, "", args)
    lu.assertEquals(r.status, 2, args)
    lu.assertEquals(r.stderr, "evalua: " .. want .. " (try --help)\n")
  end
end

-- `evalua run --out DIR SCRIPT` is the script's output folder; the
-- script's own --out wins only where it is the same folder (or, under
-- --sandbox, a folder inside DIR); a script that never reads its options
-- has no use for it, which is an error (exit 2) once it has run.
function test_run_out_is_the_scripts_output_folder()
  local r = h.run_script(CHECKED, "--out given")
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, ".*\tgiven\n")
  r = h.run_script(CHECKED, "--out given", "--out given")
  lu.assertEquals(r.status, 0, r.stderr)
  r = h.run_script(CHECKED, "--out given", "--out other")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: evalua run --out given and the script's --out other name different folders;"
    .. " give one (try --help)\n")
  r = h.run_script("print('plain')", "--out given")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stdout, "plain\n")
  lu.assertEquals(r.stderr, "evalua: run --out given: the script took no output folder from it (scripts read it"
    .. " through ev.cli.parse); its files are where it wrote them\n")
  r = h.run_script("local ev = require 'evalua'; ev.cli.parse(arg, {})", "--out given")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: evalua run --out given: this script has no --out option (try --help)\n")
  r = h.run_script("print('sandboxed')", "--sandbox --out given")
  lu.assertEquals(r.status, 0, r.stderr)
  -- the script's --help is not a use of the folder, and is no error
  r = h.run_script(CHECKED, "--out given", "--help")
  lu.assertEquals(r.status, 0, r.stderr)
end

-- A setting the environment lacks is a usage error before any work, not a
-- traceback (rag_report --judge openai without $EVALUA_MODEL printed one);
-- so is a --parts folder that cannot be written (found after the work).
function test_configuration_errors_of_library_calls_are_usage_errors()
  local code = [[
local ev = require "evalua"
ev.cli.parse(arg, {})
print(ev.cli.try(function(a, b) return a + b, "two" end, 1, 2))
ev.cli.try(ev.judge.open, { base_url = "http://127.0.0.1:9/v1" })
print("not reached")
]]
  local r = h.run_script(code, nil, nil, "EVALUA_MODEL=")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stdout, "3\ttwo\n")
  lu.assertEquals(r.stderr, "evalua: ev.judge.open: no model: pass model = \"...\" or set $EVALUA_MODEL (try --help)\n")
  r = h.run_script("require('evalua').cli.parse(arg, {})", nil, "--shard 1/2 --parts /proc/none")
  lu.assertEquals(r.status, 2)
  lu.assertEquals(r.stderr, "evalua: --parts: cannot write in '/proc': No such file or directory (try --help)\n")
end

os.exit(lu.LuaUnit.run(), true)
