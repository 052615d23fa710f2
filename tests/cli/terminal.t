The conventions of terminals (docs/cli.md, "On a terminal"): colour only
where it is wanted, tables that fit COLUMNS or the terminal, whole lines
into a shared log, progress in a log, and what to do next. Progress is
held back here (EVALUA_PROGRESS_SECONDS) so that no run depends on time.

  $ cd "$EVALUA_SRC"
  $ export EVALUA_PROGRESS_SECONDS=1000
  $ tty() { script -qec "$1" /dev/null < /dev/null | tr -d '\r'; }
  $ red() { grep -c $'\e\\[31m'; }

Colour marks the worst slices on a terminal (a pseudo-terminal here);
NO_COLOR (no-color.org) and TERM=dumb turn it off, and so does a file:

  $ TERM=xterm tty "$EVALUA run scripts/custom_metric.lua --out $CRAMTMP/c" | red
  8
  $ NO_COLOR=1 TERM=xterm tty "$EVALUA run scripts/custom_metric.lua --out $CRAMTMP/c" | red
  0
  [1]
  $ TERM=dumb tty "$EVALUA run scripts/custom_metric.lua --out $CRAMTMP/c" | red
  0
  [1]
  $ TERM=xterm "$EVALUA" run scripts/custom_metric.lua --out "$CRAMTMP/c" | red
  0
  [1]

The table fits COLUMNS: metric columns that do not fit continue in another
table with system, slice and n again, and long lines wrap (lines of up to
268 columns were printed whatever COLUMNS said). Without COLUMNS a terminal's
own width counts; a file without COLUMNS gets the whole width.

  $ widest() { "$EVALUA" run /dev/stdin "$1" "$2" <<'LUA'
  > local longest, tables, names = 0, 0, {}
  > for l in io.lines(arg[1]) do
  >   longest = math.max(longest, utf8.len(l))
  >   if l:match("^system ") then
  >     tables = tables + 1
  >     for n in l:gmatch("%S+") do if n ~= "system" and n ~= "slice" and n ~= "n" then names[#names + 1] = n end end
  >   end
  > end
  > print(longest <= tonumber(arg[2]) and "fits" or longest, tables, table.concat(names, " "))
  > LUA
  > }
  $ COLUMNS=100 "$EVALUA" run scripts/rag_report.lua --out "$CRAMTMP/r" --quiet > "$CRAMTMP/narrow.txt" 2>/dev/null
  $ widest "$CRAMTMP/narrow.txt" 100
  fits\t3\trecall@5 mrr ndcg@5 exact_match_norm token_f1 faithfulness answer_relevance context_precision context_recall (esc)
  $ COLUMNS= NO_COLOR=1 TERM=xterm tty "stty cols 90; $EVALUA run scripts/rag_report.lua --out $CRAMTMP/r --quiet 2>/dev/null" > "$CRAMTMP/tty.txt"
  $ widest "$CRAMTMP/tty.txt" 90
  fits\t3\trecall@5 mrr ndcg@5 exact_match_norm token_f1 faithfulness answer_relevance context_precision context_recall (esc)
  $ COLUMNS= "$EVALUA" run scripts/rag_report.lua --out "$CRAMTMP/r" --quiet 2>/dev/null > "$CRAMTMP/wide.txt"
  $ widest "$CRAMTMP/wide.txt" 100000
  fits\t1\trecall@5 mrr ndcg@5 exact_match_norm token_f1 faithfulness answer_relevance context_precision context_recall (esc)

Into one log (> log 2>&1) stdout and stderr go a line at a time, so the
"wrote" line on stderr starts a line of its own (it landed inside a line of
the table, where stdout's 4 KB buffer happened to end):

  $ "$EVALUA" run scripts/rag_report.lua --out "$CRAMTMP/log" --format md > "$CRAMTMP/log.txt" 2>&1
  $ grep -c '^wrote ' "$CRAMTMP/log.txt"
  1
  $ grep 'wrote ' "$CRAMTMP/log.txt" | grep -v '^wrote '
  [1]

What to do next, after the reports are written (--quiet leaves it out):

  $ "$EVALUA" run scripts/rag_report.lua --out "$CRAMTMP/next" --format md,html 2>&1 >/dev/null | sed "s|$CRAMTMP|TMP|g"
  wrote TMP/next/rag_report.md, TMP/next/rag_report.html
  next: open TMP/next/rag_report.html in a browser: intervals, charts, the lowest items with their reasons
        judged scores come from the offline heuristic judge; for a model's, add --judge openai and set $OPENAI_BASE_URL, $OPENAI_API_KEY, $EVALUA_MODEL
