#!/bin/sh
# The load of 1,000,000 simulated rows (or ROWS) by two builds, their
# processes alternating RUNS times (load.lua): the median wall and CPU
# seconds of each and NEW's ratio to REF; then whether both loaded the
# same rows, byte for byte (a full JSON report of each, its time line
# aside). On a shared machine read the ratios, not the times.
# usage: bench/dataplane/load.sh REF_EVALUA NEW_EVALUA [ROWS] [RUNS]
set -eu
ref=$1 new=$2 rows=${3:-1000000} runs=${4:-5}
. "$(dirname "$0")/alternate.sh"
alternate "$dir/load_times" load.lua
awk -v rows="$rows" "$MEDIAN"'
  { w[$1] = w[$1] " " $2; c[$1] = c[$1] " " $3; n[$1]++ }
  END {
    rw = median(w["ref"], n["ref"]); rc = median(c["ref"], n["ref"]); nw = median(w["new"], n["new"]); nc = median(c["new"], n["new"])
    printf "%d rows, load: median wall / CPU seconds of %d runs\nref %.3f / %.3f  new %.3f / %.3f  new/ref %.2fx wall, %.2fx CPU\n", rows, n["new"], rw, rc, nw, nc, nw / rw, nc / rc
  }' "$dir/load_times"
for who in ref new; do
  eval bin=\$$who
  "$bin" run "$src/load.lua" "$data" "$dir/$who" write > /dev/null
  grep -v '"time":' "$dir/$who/load.json" > "$dir/$who/load.rows"
done
if cmp -s "$dir/ref/load.rows" "$dir/new/load.rows"; then echo "loaded rows: byte-identical"; else echo "loaded rows: DIFFER"; fi
