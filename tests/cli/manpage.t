The man page (docs/evalua.1) and --help list the same commands and options:
each list below is read from both and must be equal.

  $ cd "$EVALUA_SRC"
  $ man_items() { awk -v sec="$1" '/^\.SH/ { on = ($0 == ".SH " sec) } on && prev == ".TP" { print $2 } { prev = $0 }' docs/evalua.1 | sed 's/\\-/-/g; s/"//g' | sort; }

Commands:

  $ "$EVALUA" --help | grep -oE '^(usage:)? +evalua [a-z-]+' | awk '{ print $NF }' | sort > "$CRAMTMP/help.txt"
  $ man_items COMMANDS > "$CRAMTMP/man.txt"
  $ diff "$CRAMTMP/help.txt" "$CRAMTMP/man.txt" && tr "\\n" " " < "$CRAMTMP/man.txt"
  --help diff init merge run trec version view  (no-eol)

Options of run:

  $ "$EVALUA" --help | grep -oE '^  --[a-z-]+' | tr -d ' ' | sort > "$CRAMTMP/help.txt"
  $ man_items "RUN OPTIONS" > "$CRAMTMP/man.txt"
  $ diff "$CRAMTMP/help.txt" "$CRAMTMP/man.txt" && tr "\\n" " " < "$CRAMTMP/man.txt"
  --cpu-limit --help --lua-dir --mem-limit --out --read --sandbox --time-limit  (no-eol)

Options of trec:

  $ "$EVALUA" trec --help | grep -oE '^  -[a-zA-Z]|^  --[a-z-]+' | tr -d ' ' | sort > "$CRAMTMP/help.txt"
  $ man_items "TREC OPTIONS" > "$CRAMTMP/man.txt"
  $ diff "$CRAMTMP/help.txt" "$CRAMTMP/man.txt" && tr "\\n" " " < "$CRAMTMP/man.txt"
  --ignore-identical-ids -J -M -N -R -T -Z -a -c -l -m -n -q -v  (no-eol)

The synopsis names every trec option too:

  $ for o in $(cat "$CRAMTMP/man.txt"); do sed 's/\\-/-/g' docs/evalua.1 | grep -q -- "^\.RB \[ $o" || echo "$o missing from the synopsis"; done

Bundled scripts named in the man page exist:

  $ sed -n '/^\.SH BUNDLED SCRIPTS/,/^\.SH ENVIRONMENT/p' docs/evalua.1 | grep -E '^\.BR? ' | sed 's/^\.BR* //; s/"//g; s/,//g' | tr ' ' '\n' | grep -E '^[a-z_]+$' | while read -r s; do [ -f "scripts/$s.lua" ] && echo "$s ok" || echo "$s MISSING"; done
  rag_report ok
  nightly ok
  calibrate ok
  prompt_matrix ok
  agent_eval ok
  custom_metric ok
  custom_report ok
  geval_custom ok
  prompt_experiment ok

Every bundled script is named in BUNDLED SCRIPTS:

  $ bundled=$(sed -n '/^\.SH BUNDLED SCRIPTS/,/^\.SH ENVIRONMENT/p' docs/evalua.1)
  $ for f in scripts/*.lua; do s=$(basename "$f" .lua); grep -qw -- "$s" <<< "$bundled" || echo "$s is not in the man page"; done

Every environment variable evalua reads (getenv in C, the judge's settings,
the shard variables, os.getenv in the library and the scripts) is in
ENVIRONMENT:

  $ { grep -rho --include='*.c' --include='*.lua' 'getenv("[A-Z_]*")' host lua/evalua scripts | sed 's/.*("\(.*\)")/\1/'
  >   grep -rho --include='*.c' 'set_env(L, "[a-z_]*", "[A-Z_]*")' host | sed 's/.*, "\([A-Z_]*\)")/\1/'
  >   grep -ho '"api_key_env", "[A-Z_]*"' host/client/l_client.c | sed 's/.*, "\(.*\)"/\1/'
  >   sed -n '/static const char \*const names\[\] = {/,/NULL}/p' host/bindings/l_sys.c | grep -o '"[A-Z_]*"' | tr -d '"'
  > } | sort -u > "$CRAMTMP/env.txt"
  $ wc -l < "$CRAMTMP/env.txt"
  30
  $ environment=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH EXIT STATUS/p' docs/evalua.1)
  $ while read -r v; do grep -qw -- "$v" <<< "$environment" || echo "$v is not in the man page"; done < "$CRAMTMP/env.txt"

EXIT STATUS lists every status, --help names the same ones, and every
status a bundled script returns is among them:

  $ sed -n '/^\.SH EXIT STATUS/,/^\.SH EXAMPLES/p' docs/evalua.1 | awk 'prev == ".TP" { print $2 } { prev = $0 }' | tr '\n' ' '
  0 1 2 3 4 75  (no-eol)
  $ "$EVALUA" --help | sed -n '/^exit status/,$p' | grep -oE '(^|[ ,:]) ?[0-9]+ [a-z]' | grep -oE '[0-9]+' | tr '\n' ' '
  0 1 2 3 4 75  (no-eol)
  $ grep -ho 'return [0-9]\+$\|ev.exit([0-9]\+)' scripts/*.lua lua/evalua/core/scaffold.lua | grep -o '[0-9]\+' | sort -un | tr '\n' ' '
  0 2 3 4 75  (no-eol)
