The install tree (cmake --install): bundled scripts run by name from any
folder, with their data beside them. The binary under test replaces the
installed copy, so each build flavour is checked; the Debian package is
checked in tests/install/deb.t.

  $ build=$(dirname "$EVALUA")
  $ cmake --install "$build" --prefix "$CRAMTMP/prefix" > /dev/null
  $ cp "$EVALUA" "$CRAMTMP/prefix/bin/evalua"
  $ cd "$CRAMTMP/prefix" && find . -path ./share/evalua/scripts/data -prune -o -type f -print | grep -v '/docs/' | sort
  ./bin/evalua
  ./share/bash-completion/completions/evalua
  ./share/doc/evalua/README.md
  ./share/evalua/scripts/agent_eval.lua
  ./share/evalua/scripts/calibrate.lua
  ./share/evalua/scripts/custom_metric.lua
  ./share/evalua/scripts/custom_report.lua
  ./share/evalua/scripts/geval_custom.lua
  ./share/evalua/scripts/nightly.lua
  ./share/evalua/scripts/prompt_experiment.lua
  ./share/evalua/scripts/prompt_matrix.lua
  ./share/evalua/scripts/prompts/concise.txt
  ./share/evalua/scripts/prompts/detailed.txt
  ./share/evalua/scripts/rag_report.lua
  ./share/man/man1/evalua.1
  $ (cd "$EVALUA_SRC/docs" && ls *.md) | diff - <(ls share/doc/evalua/docs | grep -v '^img$') && echo "every docs/*.md"
  every docs/*.md
  $ ls share/doc/evalua/docs/img
  viewer.png
  $ bash -n share/bash-completion/completions/evalua && echo parses
  parses

From an empty folder, the main job runs by name, with or without .lua, and
gives the numbers it gives in the source tree (tests/cli/scripts.t), at
full width (COLUMNS= : cram sets 80):

  $ mkdir "$CRAMTMP/elsewhere" && cd "$CRAMTMP/elsewhere"
  $ COLUMNS= "$CRAMTMP/prefix/bin/evalua" run rag_report --quiet --format json > table.txt
  wrote out/rag_report.json
  $ grep -E '^(system|hybrid_rerank +all) ' table.txt | cut -c1-59
  system         slice                    n  recall@5     mrr
  hybrid_rerank  all                     60     0.695   0.947
  $ ls out
  rag_report.json
  $ "$CRAMTMP/prefix/bin/evalua" run rag_report.lua --help | grep -c 'share/evalua/scripts/data/rag_eval.jsonl'
  1

A file in the working folder wins over a bundled script of the same name:

  $ printf 'print("the local one")\n' > rag_report.lua
  $ "$CRAMTMP/prefix/bin/evalua" run rag_report.lua
  the local one

A name that is neither says where bundled scripts are:

  $ "$CRAMTMP/prefix/bin/evalua" run no_such_script
  evalua: cannot open script 'no_such_script' (no such file, and no bundled script of that name in */prefix/share/evalua/scripts) (glob)
  [2]

Bash completion (with Debian's bash-completion, which install-deps.sh
installs) offers the commands, run's options, the bundled scripts by name,
files for the script's own arguments, and trec's options and measures:

  $ [ -f /usr/share/bash-completion/bash_completion ] || { echo "bash-completion is missing: run install-deps.sh"; exit 1; }
  $ cat > "$CRAMTMP/comp.sh" <<'SH'
  > source /usr/share/bash-completion/bash_completion
  > source "$CRAMTMP/prefix/share/bash-completion/completions/evalua"
  > PATH="$CRAMTMP/prefix/bin:$PATH"
  > comp() {
  >   COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
  >   _evalua
  >   printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '; echo
  > }
  > comp evalua ""
  > comp evalua run --s
  > comp evalua run --sandbox cal
  > comp evalua run rag_report.lua --format json ta
  > comp evalua trec -
  > comp evalua trec -m ndcg
  > SH
  $ cd "$CRAMTMP/elsewhere" && bash "$CRAMTMP/comp.sh"
  --help diff init merge run trec version view 
  --sandbox 
  calibrate 
  table.txt 
  --help -J -M -N -R -T -Z -a -c -l -m -n -q 
  ndcg ndcg_cut.5,10 

The package test (tests/install/deb.t) skips where it cannot install, as
a user who is not root (run as nobody when this runs as root):

  $ t=$(mktemp -d /tmp/evalua-deb-t-XXXXXX) && chmod 777 "$t" && cp "$EVALUA_SRC/tests/install/deb.t" "$t/" && chmod 644 "$t/deb.t"
  $ as_user() { if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
  $ (cd "$t" && as_user env EVALUA_BUILD=/nonexistent cram3 --shell=/bin/bash deb.t | tail -1); rm -rf "$t"
  # Ran 1 tests, 1 skipped, 0 failed.
