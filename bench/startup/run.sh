#!/bin/sh
# Start-up time of `evalua run` on an empty script, over many runs, as a
# ratio against starting a plain process (/bin/true) and, when installed,
# the stock lua5.4 interpreter on the same script.
# usage: bench/startup/run.sh [path/to/evalua]   (needs hyperfine: apt-get install hyperfine)
set -eu
bin=${1:-build/evalua}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
: > "$dir/empty.lua"
printf 'local ev = require "evalua"\nlocal _ = ev.dataset, ev.report\n' > "$dir/library.lua"
set -- -N --warmup 20 --runs 300 --export-json "$dir/r.json" \
  -n true "/bin/true" \
  -n "evalua run empty.lua" "$bin run $dir/empty.lua" \
  -n "evalua run (library loaded)" "$bin run $dir/library.lua"
command -v lua5.4 >/dev/null && set -- "$@" -n "lua5.4 empty.lua" "lua5.4 $dir/empty.lua"
hyperfine "$@" >/dev/null
# mean in ms and the ratio against /bin/true, from hyperfine's JSON
"$bin" run /dev/stdin "$dir/r.json" <<'LUA'
local r = require("cjson").decode(io.open(arg[1]):read("a")).results
local base = r[1].mean
for _, x in ipairs(r) do
  print(("%-30s %7.2f ms  (%.1fx /bin/true)"):format(x.command, x.mean * 1000, x.mean / base))
end
LUA
