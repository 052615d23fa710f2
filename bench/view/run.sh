#!/usr/bin/env bash
# evalua view on a generated run of ROWS items (default 100,000; two systems,
# four metrics, two slice dimensions, query/answer/contexts text): the time
# to open the run (its summary and the first page of items) and to answer
# each filter, each against the same query on the same store through
# Python's sqlite3 module (the reference: what the SQL alone costs).
# usage: bench/view/run.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:-build}" && pwd)/evalua
exec python3 "$root/bench/view/bench.py" "$bin" "${ROWS:-100000}"
