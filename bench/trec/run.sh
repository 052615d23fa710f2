#!/bin/sh
# Times `evalua trec -q` on the anchor case (NQ queries x 100 retrieved,
# about 20 judged per query) against the floor (`wc -l` reading the same
# bytes) and a straightforward Lua implementation (reference.lua) run by
# evalua itself, checks that the two reports agree, and gives peak memory
# against the input size. Every command is timed alike: the best of
# $BENCH_RUNS runs (default 3). Needs GNU time (/usr/bin/time).
# usage: bench/trec/run.sh [path/to/evalua] [NQ]    (files cached in $BENCH_DIR)
set -eu
bin=${1:-build/evalua}
nq=${2:-50000}
runs=${BENCH_RUNS:-3}
src=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/evalua-bench-trec}
qrels=$dir/qrels.$nq
run=$dir/run.$nq
[ -f "$run" ] || "$bin" run "$src/gen.lua" "$dir" "$nq"
measures="-m map -m ndcg_cut.10 -m P.10 -m recall.100 -m recip_rank"

# best of N wall-clock seconds and the peak resident set (KB) of that run
best() {
  n=$1; shift
  bestt=; bestm=
  for _ in $(seq "$n"); do
    /usr/bin/time -f "%e %M" -o "$dir/time" "$@" > "$dir/out"
    read -r t m < "$dir/time"
    if [ -z "$bestt" ] || awk "BEGIN { exit !($t < $bestt) }"; then bestt=$t; bestm=$m; cp "$dir/out" "$dir/best.out"; fi
  done
}

input_kb=$(( ($(stat -c %s "$qrels") + $(stat -c %s "$run")) / 1024 ))
best "$runs" wc -l "$qrels" "$run"; t_wc=$bestt
best "$runs" "$bin" trec -q $measures "$qrels" "$run"; t_ev=$bestt; m_ev=$bestm; cp "$dir/best.out" "$dir/evalua.out"
best "$runs" "$bin" run "$src/reference.lua" "$qrels" "$run"; t_ref=$bestt; m_ref=$bestm
same=$(cmp -s "$dir/evalua.out" "$dir/best.out" && echo "identical" || echo "DIFFERENT")

echo "input: $(wc -l < "$run") run lines, $(wc -l < "$qrels") qrels lines, $((input_kb / 1024)) MB; best of $runs runs each"
printf '%-34s %8s s  %s\n' "wc -l (reading the bytes)" "$t_wc" ""
ratio() { awk "BEGIN { printf \"%.2f\", $1 / ($2 > 0 ? $2 : 0.005) }"; }
printf '%-34s %8s s  %6sx wc -l   peak %d MB = %sx input\n' "evalua trec -q (5 measures)" "$t_ev" \
  "$(ratio "$t_ev" "$t_wc")" $((m_ev / 1024)) "$(ratio "$m_ev" "$input_kb")"
printf '%-34s %8s s  %6sx evalua  peak %d MB\n' "reference.lua (plain Lua)" "$t_ref" \
  "$(ratio "$t_ref" "$t_ev")" $((m_ref / 1024))
echo "reports of evalua and reference.lua: $same"
