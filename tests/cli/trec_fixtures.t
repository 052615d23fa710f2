evalua trec against trec_eval 10.0's own test outputs (tests/fixtures/trec_eval):
every line, byte for byte and in order. A silent diff is a pass.

  $ F="$EVALUA_SRC/tests/fixtures/trec_eval"

With no -m, the official measures: the whole of trec_eval's output.

  $ "$EVALUA" trec "$F/qrels.test" "$F/results.test" | diff "$F/out.test" -

all_trec, summary only and per query (relstring's lines included): every
line of trec_eval's outputs, unfiltered:

  $ "$EVALUA" trec -m all_trec "$F/qrels.test" "$F/results.test" | diff "$F/out.test.a" -
  $ "$EVALUA" trec -m all_trec -q "$F/qrels.test" "$F/results.test" | diff "$F/out.test.aq" -
  $ wc -l < "$F/out.test.aq"
  387

-c over a run that lacks some documents and has extra words after RUNID,
then cut at 100 documents per query with -M:

  $ "$EVALUA" trec -m all_trec -q -c "$F/qrels.test" "$F/results.trunc" | diff "$F/out.test.aqc" -
  $ "$EVALUA" trec -m all_trec -q -c -M100 "$F/qrels.test" "$F/results.trunc" | diff "$F/out.test.aqcM" -

Graded judgments with relevance level 2 (-l2 written as trec_eval users do),
and relstring of 20 ranks:

  $ "$EVALUA" trec -m all_trec -mrelstring.20 -q -l2 "$F/qrels.rel_level" "$F/results.test" | diff "$F/out.test.aql" -

Measure parameters: sorted cutoffs, decimal cutoffs truncated as trec_eval
does (23.4 is 23), recall levels and multiples of R, utility's coefficients
and 11pt_avg's levels (named as written), explicit nDCG gains; that is every
line of the fixture:

  $ "$EVALUA" trec -q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 \
  >   -m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 \
  >   -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "$F/qrels.test" "$F/results.test" \
  >   | diff "$F/out.test.meas_params" -

Given twice, a measure keeps its first parameter list, as in trec_eval:

  $ "$EVALUA" trec -m P.5 -m P.10 "$F/qrels.test" "$F/results.test"
  P_5                   \tall\t0.2667 (esc)
