#!/usr/bin/env bash
# Reading the history stays linear (issue 26, item 11), on this machine:
#  1. scripts/nightly.lua run RUNS times (default 100) into one history:
#     the CPU time (user + system; wall time swings with other work on the
#     machine) of runs 1, 10, 60 and RUNS, and the ratio of the last run to
#     the first, and of medians of five runs, which stay near 1 when
#     reading the history does not grow with it. The trend dashboard draws
#     the newest 60 runs, so up to run 60 each run draws one more point per
#     chart; from there on nothing grows;
#  2. latest(), find() and records() from the SQLite store, against the older
#     JSONL read of the same records, on a history of one 100 kB record
#     and on one of 1,000 records, against reading the file's bytes once.
# usage: bench/history/run.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:-build}" && pwd)/evalua
runs=${RUNS:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$root"

echo "1. scripts/nightly.lua, $runs runs into one history (offline judge, smoke tier)"
TIMEFORMAT='%3U %3S'
# nightly into folder $1; prints its CPU seconds
nightly() {
  local st=0 cpu
  cpu=$( { time "$bin" run scripts/nightly.lua --quiet --out "$1" > /dev/null 2> "$tmp/err" || st=$?; } 2>&1 )
  [ "$st" -le 1 ] || [ "$st" -eq 4 ] || { cat "$tmp/err" >&2; echo "nightly exited $st" >&2; exit 1; }
  echo "$cpu" | awk '{ print $1 + $2 }'
}
mkdir -p "$tmp/before-1"
for i in $(seq "$runs"); do
  [ "$i" -eq 60 ] || [ "$i" -eq "$runs" ] && cp -r "$tmp/n" "$tmp/before-$i"
  echo "$i $(nightly "$tmp/n")"
done > "$tmp/times"
awk -v n="$runs" '
  { t[$1] = $2 }
  function median5(last,   a, i, j, x) {
    for (i = 0; i < 5; i++) a[i] = t[last - i]
    for (i = 0; i < 5; i++) for (j = i + 1; j < 5; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
    return a[2]
  }
  END {
    printf "   CPU: run 1 %.3f s, run 10 %.3f s, run 60 %.3f s, run %d %.3f s\n", t[1], t[10], t[60], n, t[n]
    printf "   run %d / run 1: %.2f; medians of five: runs 1-5 %.3f s, 56-60 %.3f s, %d-%d %.3f s\n",
      n, t[n] / t[1], median5(5), median5(60), n - 4, n, median5(n)
    printf "   median %d-%d / median 1-5: %.2f; median %d-%d / median 56-60: %.2f\n",
      n - 4, n, median5(n) / median5(5), n - 4, n, median5(n) / median5(60)
  }' "$tmp/times"
printf "   history.db: %s bytes\n" "$(wc -c < "$tmp/n/history/history.db")"
echo "   the same runs again, each from a copy of the folder as it was, taken in turn 15 times"
echo "   (so that the machine's load falls on all three alike; the least CPU time of each):"
for k in $(seq 15); do
  for i in 1 60 "$runs"; do
    rm -rf "$tmp/w" && cp -r "$tmp/before-$i" "$tmp/w"
    echo "$i $(nightly "$tmp/w")"
  done
done > "$tmp/again"
awk -v n="$runs" '
  { if (!($1 in m) || $2 < m[$1]) m[$1] = $2 }
  END {
    printf "   least CPU: run 1 %.3f s, run 60 %.3f s, run %d %.3f s; run %d / run 1: %.2f; run %d / run 60: %.2f\n",
      m[1], m[60], n, m[n], n, m[n] / m[1], n, m[n] / m[60]
  }' "$tmp/again"

echo "2. one 100 kB record, and 1,000 records of 6 kB"
"$bin" run bench/history/read.lua "$tmp"
