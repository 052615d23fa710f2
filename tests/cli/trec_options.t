trec_eval's options beyond -q -c -n -l -M -m, on a query worked by hand:
q1 judges d1 relevant and d2 not; the run ranks x (not judged), d2, d1.

  $ cd "$CRAMTMP"
  $ printf 'q1 0 d1 1\nq1 0 d2 0\n' > qrels
  $ printf 'q1 Q0 x 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d1 3 1 r\n' > run

-J ranks only the judged documents: d2, d1 (AP 1/2 instead of 1/3):

  $ "$EVALUA" trec -m num_ret -m map -m unj.2 qrels run
  num_ret               \tall\t3 (esc)
  map                   \tall\t0.3333 (esc)
  unj_2                 \tall\t0.5000 (esc)
  $ "$EVALUA" trec -J -m num_ret -m map -m unj.2 qrels run
  num_ret               \tall\t2 (esc)
  map                   \tall\t0.5000 (esc)
  unj_2                 \tall\t0.0000 (esc)

-N is the size of the collection, utility's fourth term counts the
documents neither relevant nor retrieved: 100 + 1 - 3 - 1 = 97 (0 when not
given: 1 - 3 - 1 = -3):

  $ "$EVALUA" trec -m utility.0,0,0,1 qrels run
  utility_0,0,0,1       \tall\t-3.0000 (esc)
  $ "$EVALUA" trec -N 100 -m utility.0,0,0,1 qrels run
  utility_0,0,0,1       \tall\t97.0000 (esc)
  $ "$EVALUA" trec -N x qrels run
  evalua trec: -N: 'x' is not a number of documents (try 'evalua trec --help')
  [2]

-a is -m all_trec:

  $ "$EVALUA" trec -a qrels run | cmp - <("$EVALUA" trec -m all_trec qrels run)
  $ "$EVALUA" trec -a qrels run | wc -l
  99

-R and -T name the formats: -R any of trec_eval's four relevance formats
(qrels here, the others in trec_prefs.t), -T its one run format:

  $ "$EVALUA" trec -R qrels -T trec_results -m map qrels run
  map                   \tall\t0.3333 (esc)
  $ "$EVALUA" trec -R pref qrels run
  evalua trec: -R: 'pref' is not a relevance format: qrels, prefs, qrels_prefs or qrels_jg (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -T tsv qrels run
  evalua trec: -T: 'tsv' is not read: runs are in trec_eval's 'trec_results' format (try 'evalua trec --help')
  [2]

-Z prints z-scores, (value - mean) / standard deviation, for the pairs of
query and measure the file lists: map (1/3 - 0.2) / 0.1 = 1.3333, num_ret
(3 - 1) / 4 = 0.5; P_1 is not listed (-1000000, trec_eval's mark); the
summaries are made of the z-scores, lines marked Z as trec_eval marks them:

  $ printf 'q1 map 0.2 0.1\nq1 num_ret 1 4\n' > z
  $ "$EVALUA" trec -q -Z z -m num_ret -m map -m P.1 qrels run
  Znum_ret               \tq1\t0.5000 (esc)
  Zmap                   \tq1\t1.3333 (esc)
  ZP_1                   \tq1\t-1000000.0000 (esc)
  Znum_ret               \tall\t0.5000 (esc)
  Zmap                   \tall\t1.3333 (esc)
  ZP_1                   \tall\t-1000000.0000 (esc)

num_q counts the queries, z-scores or not, but is marked and printed as a
value too (trec_eval's out.test.aqZ has "Znum_q ... 3.0000"):

  $ "$EVALUA" trec -Z z -m num_q -m map qrels run
  Znum_q                 \tall\t1.0000 (esc)
  Zmap                   \tall\t1.3333 (esc)
  $ printf 'q1 map 0.2\n' > bad; "$EVALUA" trec -Z bad qrels run
  evalua trec: bad:1: expected 4 fields (QID MEASURE MEAN STDDEV)
  [3]
  $ printf 'q1 map 0.2 x\n' > bad; "$EVALUA" trec -Z bad qrels run
  evalua trec: bad:1: MEAN and STDDEV must be numbers
  [3]
  $ "$EVALUA" trec -Z missing qrels run
  evalua trec: missing: cannot open (No such file or directory)
  [3]
