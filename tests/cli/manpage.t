The man page (docs/evalua.1) and --help list the same commands and options:
each list below is read from both and must be equal.

  $ cd "$EVALUA_SRC"
  $ man_items() { awk -v sec="$1" '/^\.SH/ { on = ($0 == ".SH " sec) } on && prev == ".TP" { print $2 } { prev = $0 }' docs/evalua.1 | sed 's/\\-/-/g; s/"//g' | sort; }

Commands:

  $ "$EVALUA" --help | grep -oE '^(usage:)? +evalua [a-z-]+' | awk '{ print $NF }' | sort > "$CRAMTMP/help.txt"
  $ man_items COMMANDS > "$CRAMTMP/man.txt"
  $ diff "$CRAMTMP/help.txt" "$CRAMTMP/man.txt" && tr "\\n" " " < "$CRAMTMP/man.txt"
  --help diff init merge run trec version  (no-eol)

Options of run:

  $ "$EVALUA" --help | grep -oE '^  --[a-z-]+' | tr -d ' ' | sort > "$CRAMTMP/help.txt"
  $ man_items "RUN OPTIONS" > "$CRAMTMP/man.txt"
  $ diff "$CRAMTMP/help.txt" "$CRAMTMP/man.txt" && tr "\\n" " " < "$CRAMTMP/man.txt"
  --cpu-limit --help --lua-dir --mem-limit --out --read --sandbox --time-limit  (no-eol)

Options of trec:

  $ "$EVALUA" trec --help | grep -oE '^  -[a-zA-Z]' | tr -d ' ' | sort > "$CRAMTMP/help.txt"
  $ man_items "TREC OPTIONS" > "$CRAMTMP/man.txt"
  $ diff "$CRAMTMP/help.txt" "$CRAMTMP/man.txt" && tr "\\n" " " < "$CRAMTMP/man.txt"
  -J -M -N -R -T -Z -a -c -l -m -n -q  (no-eol)

The synopsis names every trec option too:

  $ for o in $(cat "$CRAMTMP/man.txt"); do grep -q -- "^\.RB \[ \\\\$o" docs/evalua.1 || echo "$o missing from the synopsis"; done

Bundled scripts named in the man page exist:

  $ sed -n '/^\.SH BUNDLED SCRIPTS/,/^\.SH ENVIRONMENT/p' docs/evalua.1 | grep -E '^\.BR? ' | sed 's/^\.BR* //; s/"//g; s/,//g' | tr ' ' '\n' | grep -E '^[a-z_]+$' | while read -r s; do [ -f "scripts/$s.lua" ] && echo "$s ok" || echo "$s MISSING"; done
  rag_report ok
  nightly ok
  calibrate ok
  custom_metric ok
  custom_report ok
  geval_custom ok
  prompt_experiment ok
