# Sourced by the scripts that time two builds (reports.sh, load.sh): the
# rows file, the runs alternating between the builds, the median in awk.
# Needs ref, new, rows, runs set; sets src, dir, data.
src=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/evalua-bench-dataplane}
mkdir -p "$dir/ref" "$dir/new"
data=$dir/rows.$rows.jsonl
[ -f "$data" ] || "$new" run "$src/gen.lua" "$data" "$rows"

# alternate TIMES SCRIPT [ARG...]: SCRIPT ROWS DIR/ref|new ARG... run by
# each build in turn, runs times; each output line prefixed by "ref " or
# "new " in TIMES.
alternate() {
  out=$1 script=$2
  shift 2
  : > "$out"
  i=0
  while [ $i -lt "$runs" ]; do
    for who in ref new; do
      eval bin=\$$who
      "$bin" run "$src/$script" "$data" "$dir/$who" "$@" | sed "s/^/$who /" >> "$out"
    done
    i=$((i + 1))
  done
}

MEDIAN='
  function median(list, n,   a, i, j, t) {
    split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }'
