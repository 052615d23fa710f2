#!/bin/sh
# Offline sas (ev.rag.sas on the offline judge) against a plain-Python
# TF-IDF doing the same computation (sas_reference.py), on the same
# simulated pairs (sas_gen.lua), timed alike: the wall seconds of the
# scoring alone (rows in memory to scores), the best of RUNS runs each.
# Prints pairs per second, the ratio, and the largest difference between
# the two sides' scores over every row.
# usage: bench/embed/sas.sh [path/to/evalua] [PAIRS] [RUNS]   (files cached in $BENCH_DIR)
set -eu
bin=${1:-build/evalua}
pairs=${2:-20000}
runs=${3:-3}
src=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/evalua-bench-sas}
mkdir -p "$dir"
data=$dir/pairs.$pairs.tsv
[ -f "$data" ] || "$bin" run "$src/sas_gen.lua" "$data" "$pairs"
read -r n e_s <<EOT
$("$bin" run "$src/sas.lua" "$data" "$dir/evalua.out" "$runs")
EOT
read -r n p_s <<EOT
$(python3 "$src/sas_reference.py" "$data" "$dir/python.out" "$runs")
EOT
echo "input: $n rows, $(awk -F'\t' '{ g += NF - 1 } END { print g }' "$data") gold answers (simulated, bench/embed/sas_gen.lua)"
awk -v n="$n" -v e="$e_s" -v p="$p_s" 'BEGIN {
  printf "%-34s %8.3f s %10.0f rows/s\n", "evalua offline sas", e, n / e
  printf "%-34s %8.3f s %10.0f rows/s  evalua is %.1fx faster\n", "plain Python TF-IDF (reference)", p, n / p, p / e }'
paste "$dir/evalua.out" "$dir/python.out" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d }
  END { printf "largest score difference over %d rows: %.3g\n", NR, m }'
