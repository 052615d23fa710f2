#!/bin/sh
# The prompt matrix benchmark against the mock at 100 ms (bench/matrix/bench.lua).
# usage: bench/matrix/run.sh [BUILD_DIR]     (default: build)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:-build}" && pwd)/evalua
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
python3 "$root/tests/mock/mock_openai.py" --port-file "$tmp/port" --latency-ms 100 --no-record \
  --watch-pid $$ >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
cd "$root"
"$bin" run bench/matrix/bench.lua "http://127.0.0.1:$(cat "$tmp/port")/v1" "$tmp/cache"
