#!/bin/sh
# Sharded runs against one-process runs, on this machine:
#  1. the bundled report (scripts/rag_report.lua, offline judge) as 1, 2 and
#     4 shards run side by side, plus evalua merge, against one process:
#     wall time and whether the reports are byte-equal apart from time stamps;
#  2. ROWS judge requests (default 100,000) against the mock server, split
#     over 4 shards sharing one cache: shard 2 runs first and is killed with
#     SIGKILL an eighth of the way in; then all four run side by side (shard
#     2 again), then the merge. Counts what the mock received: a request sent
#     twice can only be one that was in flight at the kill.
# usage: bench/shard/run.sh [BUILD_DIR]     (ROWS=20000 for a shorter run)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:-build}" && pwd)/evalua
rows=${ROWS:-100000}
tmp=$(mktemp -d)
mockpid=""
cleanup() { [ -n "$mockpid" ] && kill "$mockpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }
untimed() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TIME/g' "$1"; }

cd "$root"
echo "1. bundled report: one process against N shards side by side + merge"
t0=$(now)
"$bin" run scripts/rag_report.lua --quiet --out "$tmp/one" >/dev/null 2>&1
t1=$(now)
one=$(elapsed "$t0" "$t1")
printf '   one process   %6.2f s\n' "$one"
for n in 1 2 4; do
  t0=$(now)
  pids=""
  for i in $(seq "$n"); do
    "$bin" run scripts/rag_report.lua --quiet --shard "$i/$n" --parts "$tmp/p$n" >/dev/null 2>&1 &
    pids="$pids $!"
  done
  for p in $pids; do wait "$p"; done
  t1=$(now)
  "$bin" merge "$tmp/p$n"/*.json --out "$tmp/m$n" >/dev/null 2>&1
  t2=$(now)
  same=yes
  for ext in json csv md html junit.xml; do
    [ "$(untimed "$tmp/one/rag_report.$ext")" = "$(untimed "$tmp/m$n/rag_report.$ext")" ] || same=NO
  done
  printf '   %d shard(s)    %6.2f s shards + %5.2f s merge = %5.2f s (%.2fx one process); reports equal: %s\n' \
    "$n" "$(elapsed "$t0" "$t1")" "$(elapsed "$t1" "$t2")" "$(elapsed "$t0" "$t2")" \
    "$(echo "($t2 - $t0) / $one" | bc -l)" "$same"
done

echo "2. $rows judge requests over 4 shards sharing one cache, shard 2 killed and rerun"
python3 tests/mock/mock_openai.py --port-file "$tmp/port" --latency-ms 100 --watch-pid $$ \
  --max-lifetime 3600 >/dev/null 2>&1 &
mockpid=$!
for i in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
mockroot="http://127.0.0.1:$(cat "$tmp/port")"
export OPENAI_BASE_URL="$mockroot/v1"
stats() { python3 tests/mock/mock_openai.py --get "$mockroot/_mock/stats"; }
run_shard() { exec "$bin" run bench/shard/judged.lua --rows "$rows" --cache "$tmp/cache" --shard "$1/4" --parts "$tmp/jp"; }
t0=$(now)
# shard 2 alone first, killed once an eighth of its rows is answered and cached
run_shard 2 >/dev/null 2>&1 & p2=$!
while [ "$(find "$tmp/cache" -name '*.json' 2>/dev/null | wc -l)" -lt $((rows / 32)) ]; do sleep 0.1; done
kill -9 $p2
sleep 0.5
at_kill=$(stats)
cached_at_kill=$(find "$tmp/cache" -name '*.json' | wc -l)
# then all four side by side, shard 2 again among them
run_shard 1 >/dev/null 2>&1 & p1=$!
run_shard 2 >/dev/null 2>&1 & p2=$!
run_shard 3 >/dev/null 2>&1 & p3=$!
run_shard 4 >/dev/null 2>&1 & p4=$!
wait $p1 $p2 $p3 $p4
t1=$(now)
"$bin" merge "$tmp"/jp/*.json --out "$tmp/jm" >/dev/null 2>&1
t2=$(now)
final=$(stats)
python3 - "$at_kill" "$final" "$cached_at_kill" "$rows" "$tmp/jm/judged.json" <<'PY'
import json, sys
at_kill, final = json.loads(sys.argv[1]), json.loads(sys.argv[2])
cached, rows = int(sys.argv[3]), int(sys.argv[4])
rep = json.load(open(sys.argv[5]))
agg = rep["aggregates"]["all"]["all"]["all"]["answered"]
sent = final["requests"]
print(f"   shard 2 killed after {at_kill['requests']} requests, {cached} answers on disk "
      f"({at_kill['requests'] - cached} in flight, lost with the process)")
print(f"   requests in all: {sent} for {rows} distinct questions: {sent - rows} sent twice")
print(f"   merged: {agg['measured']} of {agg['n']} rows measured, mean {agg['mean']}")
PY
printf '   shards (with the kill and rerun) %.1f s, merge %.1f s\n' "$(elapsed "$t0" "$t1")" "$(elapsed "$t1" "$t2")"
