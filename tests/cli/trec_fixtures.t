evalua trec against trec_eval 10.0's own test outputs (tests/fixtures/trec_eval):
every line of every measure evalua implements, byte for byte and in order.
A silent diff is a pass.

  $ F="$EVALUA_SRC/tests/fixtures/trec_eval"
  $ ours='^(runid|num_q|num_ret|num_rel|num_rel_ret|map|gm_map|Rprec|bpref|recip_rank|iprec_at_recall_[0-9.]+|P_[0-9]+|recall_[0-9]+|infAP|gm_bpref|Rprec_mult_[0-9.]+|utility|11pt_avg|binG|G|ndcg|ndcg_rel|Rndcg|ndcg_cut_[0-9]+|map_cut_[0-9]+|relative_P_[0-9]+|success_[0-9]+|set_P|set_relative_P|set_recall|set_map|set_F|num_nonrel_judged_ret) '
  $ expect() { grep -E "$ours" "$F/$1"; }

With no -m, the official measures: the whole of trec_eval's output.

  $ "$EVALUA" trec "$F/qrels.test" "$F/results.test" | diff "$F/out.test" -

all_trec, summary only and per query:

  $ "$EVALUA" trec -m all_trec "$F/qrels.test" "$F/results.test" | diff <(expect out.test.a) -
  $ "$EVALUA" trec -m all_trec -q "$F/qrels.test" "$F/results.test" | diff <(expect out.test.aq) -
  $ expect out.test.aq | wc -l
  364

The lines of all_trec that evalua does not print yet:

  $ grep -vE "$ours" "$F/out.test.a" | cut -f1 | tr -d ' ' | tr '\n' ' '
  rbp rbp_resid unj_5 unj_10 unj_20  (no-eol)

-c over a run that lacks some documents and has extra words after RUNID,
then cut at 100 documents per query with -M:

  $ "$EVALUA" trec -m all_trec -q -c "$F/qrels.test" "$F/results.trunc" | diff <(expect out.test.aqc) -
  $ "$EVALUA" trec -m all_trec -q -c -M100 "$F/qrels.test" "$F/results.trunc" | diff <(expect out.test.aqcM) -

Graded judgments with relevance level 2 (-l2 written as trec_eval users do):

  $ "$EVALUA" trec -m all_trec -q -l2 "$F/qrels.rel_level" "$F/results.test" | diff <(expect out.test.aql) -

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
