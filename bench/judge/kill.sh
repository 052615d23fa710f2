#!/bin/sh
# kill -9 against the judge cache (bench/judge/kill.py): runs of many
# requests to a fast mock judge killed at random moments, then rerun; prints
# how many answers the cache lost and how long before the kill they came.
# usage: bench/judge/kill.sh [BUILD_DIR] [--trials N] [--items N] [--concurrency N] [--seed N]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=build
case "${1:-}" in -*|"") ;; *) build=$1; shift ;; esac
exec python3 "$root/bench/judge/kill.py" --bin "$(cd "$build" && pwd)/evalua" "$@"
