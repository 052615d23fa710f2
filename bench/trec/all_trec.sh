#!/bin/sh
# The price of every measure: `evalua trec -q -m all_trec` (the 118 columns
# of trec_eval's all_trec) against `evalua trec -q` with the five measures
# of run.sh, on the anchor case (NQ = 50,000 queries x 100, gen.lua). Runs
# alternate, best of N wall-clock seconds each, with CPU seconds (user +
# system) of the same runs; the bar is all_trec at most 2x.
# usage: bench/trec/all_trec.sh [path/to/evalua] [NQ] [N]   (files cached in $BENCH_DIR)
set -eu
bin=${1:-build/evalua}
nq=${2:-50000}
n=${3:-5}
src=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/evalua-bench-trec}
qrels=$dir/qrels.$nq
run=$dir/run.$nq
[ -f "$run" ] || "$bin" run "$src/gen.lua" "$dir" "$nq"
five="-m map -m ndcg_cut.10 -m P.10 -m recall.100 -m recip_rank"

# keeps the best wall time of label and the CPU time of that run
timed() {
  label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$dir/time" "$@" > /dev/null
  read -r t u s < "$dir/time"
  eval "best=\${t_$label:-}"
  if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then
    eval "t_$label=$t; c_$label=$(awk "BEGIN { print $u + $s }")"
  fi
}

for _ in $(seq "$n"); do
  timed five "$bin" trec -q $five "$qrels" "$run"
  timed all "$bin" trec -q -m all_trec "$qrels" "$run"
done
echo "input: $nq queries x 100; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-30s %6s s wall  %6s s CPU\n' "five measures (-q)" "$t_five" "$c_five" "all_trec (-q)" "$t_all" "$c_all"
awk "BEGIN { printf \"all_trec / five: wall %.2f, CPU %.2f (bar: 2)\n\", $t_all / $t_five, $c_all / $c_five }"
