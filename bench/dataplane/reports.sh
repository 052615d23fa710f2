#!/bin/sh
# The JSON (compact) and CSV reports of 1,000,000 simulated rows (or ROWS)
# written by two builds, their processes alternating RUNS times, each
# report written REPS times per process (reports.lua): the median wall and
# CPU seconds of each build, the first report of a process apart (it pays
# for new memory), and NEW's ratio to REF; whether the two builds' reports
# are byte-identical. On a shared machine read the ratios, not the times.
# usage: bench/dataplane/reports.sh REF_EVALUA NEW_EVALUA [ROWS] [RUNS] [REPS]
set -eu
ref=$1 new=$2 rows=${3:-1000000} runs=${4:-3} reps=${5:-5}
. "$(dirname "$0")/alternate.sh"
alternate "$dir/times" reports.lua "$reps"
awk -v rows="$rows" "$MEDIAN"'
  { k = $1 " " $2 (($3 == 1) ? " first" : " later"); w[k] = w[k] " " $4; c[k] = c[k] " " $5; n[k]++ }
  END {
    printf "%d rows: median wall / CPU seconds (reports)\n", rows
    split("json first,json later,csv first,csv later", kinds, ",")
    for (i = 1; i <= 4; i++) {
      r = "ref " kinds[i]; m = "new " kinds[i]
      rw = median(w[r], n[r]); rc = median(c[r], n[r]); nw = median(w[m], n[m]); nc = median(c[m], n[m])
      printf "%-11s ref %.3f / %.3f  new %.3f / %.3f  new/ref %.2fx wall, %.2fx CPU (%d)\n", kinds[i], rw, rc, nw, nc, nw / rw, nc / rc, n[m]
    }
  }' "$dir/times"
for f in reports.json reports.csv; do
  if cmp -s "$dir/ref/$f" "$dir/new/$f"; then echo "$f: byte-identical"; else echo "$f: DIFFERS"; fi
done
