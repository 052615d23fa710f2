#!/bin/sh
# The data plane end to end against what a user would write instead, on the
# same simulated rows (gen.lua): evalua (load, recall@5, MRR, nDCG@10, exact
# match, token F1, two slice dimensions, 95% CIs, JSON and CSV reports),
# evalua's load + evaluate alone with CIs off, a plain Lua loop run by evalua
# (reference.lua: cjson and loops) and a plain Python 3 script
# (reference.py: json and loops, SQuAD normalisation), each computing the
# same five metrics and their slice means. Prints CPU and wall seconds,
# ratios against evalua, peak memory against the input, and whether the
# plain Lua loop's per-row scores equal evalua's CSV report on every row.
# Needs GNU time (/usr/bin/time).
# usage: bench/dataplane/run.sh [path/to/evalua] [ROWS]   (files cached in $BENCH_DIR)
set -eu
bin=${1:-build/evalua}
rows=${2:-100000}
src=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/evalua-bench-dataplane}
mkdir -p "$dir"
data=$dir/rows.$rows.jsonl
[ -f "$data" ] || "$bin" run "$src/gen.lua" "$data" "$rows"
input_kb=$(( $(stat -L -c %s "$data") / 1024 ))

# cpu (user+sys) and wall seconds, peak RSS in KB, of one run
measure() {
  /usr/bin/time -f "%U %S %e %M" -o "$dir/time" "$@" > "$dir/out" 2>&1 || { cat "$dir/out"; exit 1; }
  read -r u s e m < "$dir/time"
  cpu=$(awk "BEGIN { print $u + $s }"); wall=$e; rss=$m
}

cat > "$dir/load_evaluate.lua" <<LUA
local ev = require "evalua"
local res = ev.evaluate(ev.dataset.load(arg[1]), { ci = false, slices = { "query_class", "variant" },
  metrics = { "recall@5", "mrr", "ndcg@10", "exact_match", "token_f1" } })
print(res:agg("all", "token_f1").mean)
LUA

measure "$bin" run "$src/evalua_e2e.lua" "$data" "$dir/report"; e_cpu=$cpu; e_wall=$wall; e_rss=$rss
measure "$bin" run "$dir/load_evaluate.lua" "$data"; l_cpu=$cpu; l_wall=$wall
measure "$bin" run "$src/reference.lua" "$data" "$dir/report/bench.csv"; r_cpu=$cpu; r_wall=$wall
same=$(tail -n 1 "$dir/out")
measure python3 "$src/reference.py" "$data"; p_cpu=$cpu; p_wall=$wall

ratio() { awk "BEGIN { printf \"%.1f\", $1 / ($2 > 0 ? $2 : 0.005) }"; }
echo "input: $rows rows, $((input_kb / 1024)) MB (simulated, bench/dataplane/gen.lua)"
printf '%-44s %7s s cpu %7s s wall\n' "evalua end to end (CIs, JSON + CSV)" "$e_cpu" "$e_wall"
printf '%-44s %7s s cpu %7s s wall\n' "evalua load + evaluate (CIs off)" "$l_cpu" "$l_wall"
printf '%-44s %7s s cpu %7s s wall  %5sx evalua end to end (wall)\n' "plain Lua loop (reference.lua)" "$r_cpu" "$r_wall" "$(ratio "$r_wall" "$e_wall")"
printf '%-44s %7s s cpu %7s s wall  %5sx evalua end to end (wall)\n' "plain Python (reference.py)" "$p_cpu" "$p_wall" "$(ratio "$p_wall" "$e_wall")"
printf 'evalua peak RSS %d MB = %sx the input\n' $((e_rss / 1024)) "$(ratio "$e_rss" "$input_kb")"
echo "$same"
