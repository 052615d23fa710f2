#!/usr/bin/env bash
# evalua view on a generated run of ROWS items (default 100,000; two systems,
# four metrics, one slice dimension, query/answer/contexts text, a JSON
# report with its items in full): the time to open the run (its summary and
# the first page of items) against Python's read() of the report, the run's
# first search (which builds its full-text index), and to answer each filter
# and search, each against the same query straight on the store (the word
# search: on the viewer's cache) through Python's sqlite3 module (the
# reference: what the SQL alone costs; the scan: Python's `in` over the same
# texts of the report, decoded first).
# usage: bench/view/run.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:-build}" && pwd)/evalua
exec python3 "$root/bench/view/bench.py" "$bin" "${ROWS:-100000}"
