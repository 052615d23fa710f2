#!/bin/sh
# Times evalua._yaml (libyaml's parser into Lua tables with a line per key)
# against PyYAML on the same promptfoo-style YAML test list: its CSafeLoader
# (the same libyaml parser, building Python objects) and its pure-Python
# SafeLoader. Each is the best of $BENCH_RUNS decodes (default 3) inside one
# process; the values are compared as JSON. Needs python3-yaml.
# usage: bench/yaml/run.sh [path/to/evalua] [CASES]
set -eu
bin=${1:-build/evalua}
n=${2:-20000}
runs=${BENCH_RUNS:-3}
src=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/evalua-bench-yaml}
mkdir -p "$dir"
file=$dir/tests.$n.yaml
[ -f "$file" ] || python3 "$src/gen.py" "$n" "$file"
t_ev=$("$bin" run "$src/decode.lua" "$file" "$runs" "$dir/evalua.json")
t_c=$(python3 "$src/decode.py" "$file" "$runs" CSafeLoader "$dir/csafe.json")
t_py=$(python3 "$src/decode.py" "$file" "$runs" SafeLoader "$dir/safe.json")
same=$(python3 -c "import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); print('identical' if a==b else 'DIFFERENT')" \
  "$dir/evalua.json" "$dir/csafe.json")
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
echo "input: $n test cases, $(($(stat -c %s "$file") / 1024)) KB; best of $runs decodes each"
printf '%-44s %8s s\n' "evalua._yaml.decode (values and lines)" "$t_ev"
printf '%-44s %8s s  %sx evalua\n' "PyYAML CSafeLoader (libyaml, Python objects)" "$t_c" "$(ratio "$t_c" "$t_ev")"
printf '%-44s %8s s  %sx evalua\n' "PyYAML SafeLoader (pure Python)" "$t_py" "$(ratio "$t_py" "$t_ev")"
echo "values: $same"
