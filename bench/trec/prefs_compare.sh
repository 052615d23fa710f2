#!/bin/sh
# Compares `evalua trec -R prefs|qrels_prefs|qrels_jg` with a trec_eval 10.0
# binary on N random cases of prefs_gen.lua (seeds 1..N; every fifth case
# "wild", with preferences that may contradict): for each case and each
# option set below, both must fail, or both succeed with the same output
# byte for byte. Prints each difference and the counts.
# usage: bench/trec/prefs_compare.sh path/to/trec_eval [N] [path/to/evalua]
set -u
te=${1:?usage: prefs_compare.sh path/to/trec_eval [N] [path/to/evalua]}
n=${2:-200}
ev=${3:-build/evalua}
src=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
same=0 failed=0 differ=0

# compare FORMAT RUN OPTIONS...
compare() {
  fmt=$1 run=$2; shift 2
  "$te" -R "$fmt" "$@" "$dir/$fmt" "$dir/$run" > "$dir/te.out" 2> /dev/null; s1=$?
  "$ev" trec -R "$fmt" "$@" "$dir/$fmt" "$dir/$run" > "$dir/ev.out" 2> "$dir/ev.err"; s2=$?
  if [ "$s1" -ne 0 ] && [ "$s2" -ne 0 ]; then failed=$((failed + 1)); return; fi
  if [ "$s1" -eq 0 ] && [ "$s2" -eq 0 ] && cmp -s "$dir/te.out" "$dir/ev.out"; then same=$((same + 1)); return; fi
  differ=$((differ + 1))
  echo "seed $seed: -R $fmt $* $run: trec_eval exit $s1, evalua exit $s2 $(head -c 200 "$dir/ev.err")"
  diff "$dir/te.out" "$dir/ev.out" | head -5
  cp -r "$dir" "${TMPDIR:-/tmp}/prefs_compare.seed$seed" 2> /dev/null
}

for seed in $(seq "$n"); do
  "$ev" run "$src/prefs_gen.lua" "$dir" "$seed" "$([ $((seed % 5)) -eq 0 ] && echo 1 || echo 0)" || exit 1
  for fmt in prefs qrels_prefs; do
    compare "$fmt" run -q -m all_prefs
    compare "$fmt" run_part -q -c -m all_prefs
    compare "$fmt" run -q -M 3 -m all_prefs
    compare "$fmt" run -m prefs -m prefs_pair_imp -n
    compare "$fmt" run -q -m prefs_avgjg_Rnonrel_ret -m prefs_simp_ret -m num_q
  done
  compare prefs run -q -Z "$dir/zscores" -m all_prefs
  compare qrels_jg run -q -m qrels_jg
  compare qrels_jg run_part -q -c -m qrels_jg
  compare qrels_jg run -q -J -M 4 -m qrels_jg
  compare qrels_jg run -q -l 2 -m P_avgjg.1,3,7 -m Rprec_mult_avgjg.0.5,1.5,3
  compare qrels_jg run -q -l 0 -J -m map_avgjg -m runid
done
echo "$n cases: $same comparisons equal, $failed failed in both, $differ different"
[ "$differ" -eq 0 ]
