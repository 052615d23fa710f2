#!/bin/sh
# Benchmarks the judge client against two mock servers (50 ms and 0 ms
# latency) and prints ratios against the ideal bound (bench/judge/bench.lua).
# usage: bench/judge/run.sh [BUILD_DIR]     (default: build)
#   BENCH_ONLY=healthy|waiting|faulty|quota runs one part (BENCH_SEEDS=N the faulty
#   part's first N seeds, BENCH_MAPS="64 16" its map concurrencies); BENCH_WRAP="perf record -g"
#   runs evalua under a profiler.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:-build}" && pwd)/evalua
tmp=$(mktemp -d)
mock="$root/tests/mock/mock_openai.py"
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

start() { # start NAME LATENCY_MS [CONFIG]: a mock that dies with this script
  python3 "$mock" --port-file "$tmp/$1.port" --latency-ms "$2" --config "${3:-{\}}" --no-record \
    --watch-pid $$ >/dev/null 2>&1 &
  pids="$pids $!"
}
url() { echo "http://127.0.0.1:$(cat "$tmp/$1.port")/v1"; }
start slow 50
start fast 0
start r100 100
start faulty 100
start quota 100 '{"quota": {"requests": 20, "window_s": 2}}'
for i in $(seq 100); do
  [ -s "$tmp/slow.port" ] && [ -s "$tmp/fast.port" ] && [ -s "$tmp/r100.port" ] && [ -s "$tmp/faulty.port" ] \
    && [ -s "$tmp/quota.port" ] && break
  sleep 0.1
done
${BENCH_WRAP:-} "$bin" run "$root/bench/judge/bench.lua" "$(url slow)" "$(url fast)" "$tmp/cache" "$(url r100)" \
  "$(url faulty)" "$(url quota)" ${BENCH_ONLY:-}
