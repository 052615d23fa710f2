evalua init scaffolds a project that runs at once with the offline judge.

  $ cd "$CRAMTMP"
  $ "$EVALUA" init proj
  wrote proj/data.jsonl
  wrote proj/eval.lua
  wrote proj/nightly.sh
  wrote proj/README.md
  $ wc -l < proj/README.md
  5
  $ test -x proj/nightly.sh && echo executable
  executable

The data file has three rows in the documented row format:

  $ "$EVALUA" run /dev/stdin proj/data.jsonl <<'LUA'
  > local ds = require("evalua").dataset.load(arg[1])
  > for _, r in ipairs(ds.rows) do print(r.qid, r.query_class, #r.retrieved, #r.contexts, #r.gold_answers) end
  > LUA
  q1\tfactoid\t2\t2\t1 (esc)
  q2\thow-to\t3\t3\t1 (esc)
  q3\tfactoid\t2\t2\t1 (esc)

evalua run eval.lua in it works at once. By hand: recall@5 is 1, 1, 0
(q3 retrieves neither gold page); MRR 1, 1/2 (q2's first relevant page is
second), 0; token F1 (SQuAD: lower case, no punctuation or articles) is
q1 2 common of 7 and 2 tokens = 4/9, q2 8 of 11 and 8 = 16/19, q3 0, so the
mean is (4/9 + 16/19) / 3 = 0.4288; numbers_grounded (the custom metric)
1, 1, 0 (q3's "10" is in no context). faithfulness is the offline judge's
heuristic (docs/judged_metrics.md); actionable (the G-Eval criterion) is
unmeasured, since the offline judge cannot read a criterion.

  $ cd proj
  $ COLUMNS= "$EVALUA" run eval.lua --quiet | sed -n '/^system/,$p'
  system  slice                n  recall@5    mrr  token_f1  numbers_grounded  faithfulness  actionable
  ------  -------------------  -  --------  -----  --------  ----------------  ------------  ----------
  all     all                  3     0.667  0.500     0.429             0.667         0.667     - (0/3)
  all     query_class=factoid  2    0.500!  0.500    0.222!            0.500!        0.500!     - (0/2)
  all     query_class=how-to   1     1.000  0.500     0.842             1.000         1.000     - (0/1)
  
  ! marks the worst slice of each metric
  actionable: 3 of 3 items unmeasured (the offline judge cannot read the criterion of 'actionable': G-Eval needs a model judge (or an offline function on the metric))
  gate pass      recall@5[all] >= 0.5: recall@5 = 0.6667, meets 0.5
  $ ls out
  eval.html
  eval.json
  eval.junit.xml
  eval.md

The JSON report keeps each row's exact scores:

  $ "$EVALUA" run /dev/stdin out/eval.json <<'LUA'
  > local doc = require("evalua.core.json").decode(io.open(arg[1]):read("a"))
  > for _, it in ipairs(doc.items) do
  >   local s = it.scores
  >   print(it.id, ("%.4f %.4f %.4f %g"):format(s["recall@5"], s.mrr, s.token_f1, s.numbers_grounded))
  > end
  > LUA
  q1\t1.0000 1.0000 0.4444 1 (esc)
  q2\t1.0000 0.5000 0.8421 1 (esc)
  q3\t0.0000 0.0000 0.0000 0 (esc)

The nightly wrapper runs it into a dated folder and passes its exit status on:

  $ ln -s "$EVALUA" "$CRAMTMP/evalua" && PATH="$CRAMTMP:$PATH" ./nightly.sh > nightly.txt; echo "status $?"
  status 0
  $ ls out | grep -cE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{6}Z$'
  1
  $ ls out/*Z/
  eval.html
  eval.json
  eval.junit.xml
  eval.md

A failed gate is exit status 1: the gate asks for recall@5 >= 0.5 over all
rows, and q3 alone has 0:

  $ sed -n 3p data.jsonl > q3.jsonl
  $ "$EVALUA" run eval.lua --data q3.jsonl --out out/q3 --quiet | grep '^gate'; echo "status ${PIPESTATUS[0]}"
  gate fail      recall@5[all] >= 0.5: recall@5 = 0.0000, misses 0.5
  status 1

init never overwrites: a file that exists stops it before anything is written.

  $ cd "$CRAMTMP" && mkdir other && echo mine > other/eval.lua
  $ "$EVALUA" init other
  evalua init: other/eval.lua exists already; nothing was written
  [3]
  $ ls other
  eval.lua
  $ "$EVALUA" init a b
  evalua init: expected at most one folder, not 'b' (try 'evalua init --help')
  [2]
  $ "$EVALUA" init proj/data.jsonl/sub
  evalua init: cannot create folder 'proj/data.jsonl/sub': Not a directory
  [3]

Without DIR it writes into the working folder:

  $ mkdir "$CRAMTMP/here" && cd "$CRAMTMP/here" && "$EVALUA" init > out.txt && head -1 out.txt && ls | tr '\n' ' '
  wrote ./data.jsonl
  README.md data.jsonl eval.lua nightly.sh out.txt  (no-eol)
