#!/bin/sh
# The coverage table of evalua's 95% intervals (coverage.lua): scores in
# [0, 1] at 15, 20, 60 and 500 items, 2,000 simulated data sets per cell,
# each one slice of an ev.evaluate run; then, for reference, scores beyond
# [0, 1] and paired differences. Exits 1 unless every [0, 1] cell covers at
# least 0.92, the cells average at least 0.94 and no interval has zero
# width unless every value is equal and it says so. Deterministic.
# usage: bench/stats/run.sh [path/to/evalua] [SETS [SIZES [SEED]]]
set -eu
bin=${1:-build/evalua}
shift $(( $# > 0 ? 1 : 0 ))
exec "$bin" run "$(dirname "$0")/coverage.lua" "$@"
