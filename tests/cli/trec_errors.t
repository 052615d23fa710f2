evalua trec on small hand-made files: what it computes, and how bad input
is reported (one line naming the file and line; exit 3 for input, 2 for usage).

  $ cd "$CRAMTMP"
  $ printf 'q1 0 d1 1\nq1 0 d2 0\n# a comment\n\nq2 0 d1 2\n' > qrels
  $ printf 'q1\tQ0\td2\t1\t2.5\trunA\nq1 Q0 d1 2 1.5 runA\nq2 Q0 d1 1 3 runA\n' > run

q1 retrieves its non-relevant d2 first, then d1 (AP 1/2); q2 finds d1 first:

  $ "$EVALUA" trec -q -m map -m P.1 -m num_rel_ret qrels run
  num_rel_ret           \tq1\t1 (esc)
  map                   \tq1\t0.5000 (esc)
  P_1                   \tq1\t0.0000 (esc)
  num_rel_ret           \tq2\t1 (esc)
  map                   \tq2\t1.0000 (esc)
  P_1                   \tq2\t1.0000 (esc)
  num_rel_ret           \tall\t2 (esc)
  map                   \tall\t0.7500 (esc)
  P_1                   \tall\t0.5000 (esc)

yaap, in none of trec_eval's sets: log((1 + S) / (1 + R - S)), S the sum
of the precisions at the relevant ranks (AP x R): q1 S = 1/2 and
log(1.5/1.5) = 0, q2 S = 1 and log(2/1):

  $ "$EVALUA" trec -q -m yaap qrels run
  yaap                  \tq1\t0.0000 (esc)
  yaap                  \tq2\t0.6931 (esc)
  yaap                  \tall\t0.3466 (esc)

Lines may come in any order, and the run may be read from standard input:

  $ sort -r run | "$EVALUA" trec -m map qrels -
  map                   \tall\t0.7500 (esc)

Malformed lines:

  $ printf 'q1 0 d1 1\nq1 0 d2 x\n' > bad; "$EVALUA" trec bad run
  evalua trec: bad:2: relevance is not an integer: 'x'
  [3]
  $ printf 'q1 0 d1 1\nq1 0 d2 0.5\n' > bad; "$EVALUA" trec bad run
  evalua trec: bad:2: relevance is not an integer: '0.5'
  [3]
  $ printf 'q1 0 d1 1.0\nq1 0 d2 0\nq2 0 d1 2.00\n' > ok; "$EVALUA" trec -m map ok run
  map                   \tall\t0.7500 (esc)
  $ printf 'q1 0 d1 1\nq1 d2 1\n' > bad; "$EVALUA" trec bad run
  evalua trec: bad:2: expected 4 fields (QID ITER DOCNO REL), found 3
  [3]
  $ printf 'q1 0 d1 1 extra\n' > bad; "$EVALUA" trec bad run
  evalua trec: bad:1: expected 4 fields (QID ITER DOCNO REL), found more than 4
  [3]
  $ printf 'q1 Q0 d1 1 2.5 runA\nq1 Q0 d2 2 abc runA\n' > bad; "$EVALUA" trec qrels bad
  evalua trec: bad:2: score is not a number: 'abc'
  [3]
  $ printf 'q1 Q0 d1 1 nan runA\n' > bad; "$EVALUA" trec qrels bad
  evalua trec: bad:1: score is not a number: 'nan'
  [3]
  $ printf 'q1 Q0 d1 1 2.5\n' > bad; "$EVALUA" trec qrels bad
  evalua trec: bad:1: expected 6 fields (QID Q0 DOCNO RANK SCORE RUNID), found 5
  [3]

A document repeated within one query, in the qrels or in the run:

  $ printf 'q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n' > bad; "$EVALUA" trec bad run
  evalua trec: bad:3: document 'd1' is judged twice for query 'q1' (first at line 1)
  [3]
  $ printf 'q1 Q0 d1 1 2.5 r\nq2 Q0 d1 1 1 r\nq1 Q0 d1 3 0.5 r\n' > bad; "$EVALUA" trec qrels bad
  evalua trec: bad:3: document 'd1' is retrieved twice for query 'q1' (first at line 1)
  [3]

Files that cannot be read, or share no query:

  $ "$EVALUA" trec qrels missing
  evalua trec: missing: cannot open (No such file or directory)
  [3]
  $ printf 'q9 Q0 d1 1 2.5 r\n' > other; "$EVALUA" trec qrels other
  evalua trec: no query has both judgments in qrels and results in other
  [3]

With -c the queries of the qrels count as zeros when the run lacks them:

  $ "$EVALUA" trec -c -m num_ret -m num_rel -m map qrels other
  num_ret               \tall\t0 (esc)
  num_rel               \tall\t2 (esc)
  map                   \tall\t0.0000 (esc)

Usage errors:

  $ "$EVALUA" trec qrels
  evalua trec: expected two files: QRELS RUN (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -m foo qrels run
  evalua trec: unknown measure 'foo' (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -m P.0 qrels run
  evalua trec: P: cutoff '0' is not a positive integer (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -m P.5,5 qrels run
  evalua trec: P: cutoff 5 given twice (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -l x qrels run
  evalua trec: -l: 'x' is not a relevance grade (an integer >= 0) (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -M 0 qrels run
  evalua trec: -M: '0' is not a positive number of documents (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -x qrels run
  evalua trec: unknown option -x (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec qrels run -l
  evalua trec: option -l needs a value (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec --help | head -1
  usage: evalua trec [-q] [-c] [-n] [-a] [-J] [-l LEVEL] [-M N] [-N DOCS]
