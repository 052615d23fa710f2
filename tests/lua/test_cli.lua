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

os.exit(lu.LuaUnit.run(), true)
