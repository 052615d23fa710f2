#!/bin/sh
# A large run streamed against the same run read whole: `evalua trec -q` with
# five measures on NQ queries x 100 retrieved (default 1,000,000: a 3.5 GB
# run and 19.5 million qrels lines from gen.lua). Streaming takes a run file
# grouped by query; the reference is the same binary reading the same file
# whole, through standard input (mapped like the file itself, never
# streamed), which is how every run was read before. Runs alternate, best of
# N each; prints wall time and peak memory, the memory of the qrels alone
# (a one-line run), and whether the reports are identical. Needs GNU time.
# usage: bench/trec/stream.sh [path/to/evalua] [NQ] [N]   (files cached in $BENCH_DIR)
set -eu
bin=${1:-build/evalua}
nq=${2:-1000000}
n=${3:-2}
src=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/evalua-bench-trec}
qrels=$dir/qrels.$nq
run=$dir/run.$nq
[ -f "$run" ] || "$bin" run "$src/gen.lua" "$dir" "$nq"
head -n 1 "$run" > "$dir/run.one"
measures="-m map -m ndcg_cut.10 -m P.10 -m recall.100 -m recip_rank"

# keeps the best wall time of label (and the peak KB of that run)
timed() {
  label=$1; shift
  /usr/bin/time -f "%e %M" -o "$dir/time" "$@" > "$dir/out.$label"
  read -r t m < "$dir/time"
  eval "best=\${t_$label:-}"
  if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then eval "t_$label=$t; m_$label=$m"; fi
}

for _ in $(seq "$n"); do
  timed streamed "$bin" trec -q $measures "$qrels" "$run"
  timed whole sh -c 'exec "$0" trec -q $1 "$2" - < "$3"' "$bin" "$measures" "$qrels" "$run"
done
timed qrels "$bin" trec -m map "$qrels" "$dir/run.one"
same=$(cmp -s "$dir/out.streamed" "$dir/out.whole" && echo identical || echo DIFFERENT)

mb() { echo $(( $1 / 1024 )); }
echo "input: $(mb $(( $(stat -c %s "$run") / 1024 ))) MB run, $(mb $(( $(stat -c %s "$qrels") / 1024 ))) MB qrels; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %8s s  peak %6d MB\n' "read whole (stdin)" "$t_whole" "$(mb "$m_whole")"
printf '%-28s %8s s  peak %6d MB\n' "streamed" "$t_streamed" "$(mb "$m_streamed")"
printf '%-28s %8s    peak %6d MB\n' "qrels alone (one-line run)" "" "$(mb "$m_qrels")"
awk "BEGIN { printf \"streamed / whole: time %.2f, memory %.3f\n\", $t_streamed / $t_whole, $m_streamed / $m_whole }"
echo "reports: $same"
