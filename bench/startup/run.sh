#!/bin/sh
# Start-up time of `evalua run` on an empty script and on one that loads the
# library, as ratios against starting a plain process (/bin/true) and the
# stock interpreter starting with nothing to do (`lua5.4 -e ''`, package
# lua5.4; the goal of issue 30 is an empty script in at most 3 ms). Every command
# is timed alike: 20 warm-up runs, then the mean of 300, with hyperfine
# (installed by install-deps.sh) or, without it, a shell loop whose own cost
# is in every figure alike (so ratios against /bin/true are understated).
# Wall time and CPU time (user + system) are both printed: on a busy machine
# the wall time of a short process mostly measures waiting for a core.
# usage: bench/startup/run.sh [path/to/evalua]     BENCH_TIMER=loop forces the loop
set -eu
bin=${1:-build/evalua}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
: > "$dir/empty.lua"
printf 'local ev = require "evalua"\nlocal _ = ev.dataset, ev.report\n' > "$dir/library.lua"
command -v lua5.4 >/dev/null || { echo "bench/startup: lua5.4 (the reference) is not installed: apt-get install lua5.4" >&2; exit 2; }
set -- "true" "/bin/true" \
  "lua5.4 -e ''" 'lua5.4 -e ""' \
  "evalua run empty.lua" "$bin run $dir/empty.lua" \
  "evalua run (library loaded)" "$bin run $dir/library.lua"

# Writes "wall seconds<TAB>cpu seconds<TAB>name" per command (means) to
# $dir/means, in order.
with_hyperfine() {
  args=""
  while [ $# -gt 0 ]; do args="$args -n \"$1\" '$2'"; shift 2; done
  eval hyperfine -N --warmup 20 --runs 300 --export-json "$dir/r.json" "$args" > /dev/null
  "$bin" run /dev/stdin "$dir/r.json" > "$dir/means" <<'LUA'
for _, x in ipairs(require("cjson").decode(io.open(arg[1]):read("a")).results) do
  print(("%.9f\t%.9f\t%s"):format(x.mean, x.user + x.system, x.command))
end
LUA
}
# CPU seconds (user + system) of the shell's finished children, from `times`.
# (Run in this shell, not in a $(...) subshell, which has children of its own.)
children_cpu() {
  times > "$dir/times"
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$dir/times"
}
with_loop() {
  : > "$dir/means"
  while [ $# -gt 0 ]; do
    i=0; while [ $i -lt 20 ]; do eval "$2" > /dev/null; i=$((i + 1)); done
    children_cpu > "$dir/c0"; t0=$(date +%s%N)
    i=0; while [ $i -lt 300 ]; do eval "$2" > /dev/null; i=$((i + 1)); done
    t1=$(date +%s%N); children_cpu > "$dir/c1"
    c0=$(cat "$dir/c0"); c1=$(cat "$dir/c1")
    awk "BEGIN { printf \"%.9f\t%.9f\t%s\n\", ($t1 - $t0) / 300 / 1e9, ($c1 - $c0) / 300, \"$1\" }" >> "$dir/means"
    shift 2
  done
}
if [ "${BENCH_TIMER:-}" != loop ] && command -v hyperfine > /dev/null; then
  timer="hyperfine"; with_hyperfine "$@"
else
  timer="a shell loop (hyperfine not used)"; with_loop "$@"
fi
echo "timed with $timer: mean of 300 runs after 20 warm-up runs"
awk -F '\t' '{ wall[NR] = $1; cpu[NR] = $2 > 0 ? $2 : 1e-9; name[NR] = $3 }
  END { for (i = 1; i <= NR; i++)
    printf "%-28s wall %6.2f ms (%4.1fx /bin/true, %4.2fx lua5.4 -e \x27\x27)   cpu %6.2f ms (%4.2fx lua5.4)\n",
           name[i], wall[i] * 1000, wall[i] / wall[1], wall[i] / wall[2], cpu[i] * 1000, cpu[i] / cpu[2] }' "$dir/means"
