BEIR's data and evaluation with evalua trec: three-column and headed qrels
(BEIR's qrels/SPLIT.tsv), -m beir, --ignore-identical-ids and the queries
BEIR counts (tests/data/peers/beir/README.md works the values by hand), and
trec_eval 10.0's long options.

  $ D="$EVALUA_SRC/tests/data/peers/beir"

BEIR's EvaluateRetrieval.evaluate(qrels, results, [1, 3], ignore_identical_ids=False):

  $ "$EVALUA" trec -m num_q -m beir.1,3 "$D/qrels/test.tsv" "$D/run.trec"
  num_q                 \tall\t2 (esc)
  P_1                   \tall\t1.0000 (esc)
  P_3                   \tall\t0.5000 (esc)
  recall_1              \tall\t0.7500 (esc)
  recall_3              \tall\t1.0000 (esc)
  ndcg_cut_1            \tall\t1.0000 (esc)
  ndcg_cut_3            \tall\t0.9599 (esc)
  map_cut_1             \tall\t0.7500 (esc)
  map_cut_3             \tall\t0.9167 (esc)

and with BEIR's default, ignore_identical_ids=True: q2 loses its only
result and still counts, as retrieving nothing:

  $ "$EVALUA" trec --ignore-identical-ids -q -m num_q -m num_ret -m beir.1,3 "$D/qrels/test.tsv" "$D/run.trec" | grep -E '[[:space:]](q2|all)[[:space:]]'
  num_ret               \tq2\t0 (esc)
  P_1                   \tq2\t0.0000 (esc)
  P_3                   \tq2\t0.0000 (esc)
  recall_1              \tq2\t0.0000 (esc)
  recall_3              \tq2\t0.0000 (esc)
  ndcg_cut_1            \tq2\t0.0000 (esc)
  ndcg_cut_3            \tq2\t0.0000 (esc)
  map_cut_1             \tq2\t0.0000 (esc)
  map_cut_3             \tq2\t0.0000 (esc)
  num_q                 \tall\t2 (esc)
  num_ret               \tall\t3 (esc)
  P_1                   \tall\t0.5000 (esc)
  P_3                   \tall\t0.3333 (esc)
  recall_1              \tall\t0.2500 (esc)
  recall_3              \tall\t0.5000 (esc)
  ndcg_cut_1            \tall\t0.5000 (esc)
  ndcg_cut_3            \tall\t0.4599 (esc)
  map_cut_1             \tall\t0.2500 (esc)
  map_cut_3             \tall\t0.4167 (esc)

-m beir alone is BEIR's default k values, 1, 3, 5, 10, 100 and 1000:

  $ "$EVALUA" trec -m beir "$D/qrels/test.tsv" "$D/run.trec" | cut -f1 | tr -d ' ' | tr '\n' ' '
  P_1 P_3 P_5 P_10 P_100 P_1000 recall_1 recall_3 recall_5 recall_10 recall_100 recall_1000 ndcg_cut_1 ndcg_cut_3 ndcg_cut_5 ndcg_cut_10 ndcg_cut_100 ndcg_cut_1000 map_cut_1 map_cut_3 map_cut_5 map_cut_10 map_cut_100 map_cut_1000  (no-eol)

BEIR's custom MRR@1 divides by every judged query (q3 counts as 0): -c -M 1:

  $ "$EVALUA" trec -c -M 1 -m recip_rank "$D/qrels/test.tsv" "$D/run.trec"
  recip_rank            \tall\t0.6667 (esc)

A headed three-column file gives what the same judgements give in
trec_eval's four columns, byte for byte; so does one without the header:

  $ cd "$CRAMTMP"
  $ printf 'q1 0 d1 1\nq1 0 d2 1\nq2 0 q2 1\nq2 0 d4 0\nq3 0 d5 2\n' > four
  $ tail -n +2 "$D/qrels/test.tsv" > three
  $ "$EVALUA" trec -q -a four "$D/run.trec" > a; "$EVALUA" trec -q -a "$D/qrels/test.tsv" "$D/run.trec" > b; "$EVALUA" trec -q -a three "$D/run.trec" > c
  $ cmp a b && cmp a c && wc -l < a
  291

Columns are decided by the first line; a later line with another count,
and a grade that is not an integer, are errors naming the line:

  $ printf 'q1\td1\t1\nq1 0 d2 1\n' > mixed; "$EVALUA" trec mixed "$D/run.trec"
  evalua trec: mixed:2: expected 3 fields (QID DOCNO REL) as the first line has, found 4
  [3]
  $ printf 'query-id\tcorpus-id\tscore\nq1\td1\t0.5\n' > half; "$EVALUA" trec half "$D/run.trec"
  evalua trec: half:2: relevance is not an integer: '0.5'
  [3]
  $ printf 'q1\td1\t0.5\n' > first; "$EVALUA" trec first "$D/run.trec"
  evalua trec: first:1: relevance is not an integer: '0.5'
  [3]
  $ printf 'q1\td1\t1\nq1\td1\t0\n' > twice; "$EVALUA" trec twice "$D/run.trec"
  evalua trec: twice:2: document 'd1' is judged twice for query 'q1' (first at line 1)
  [3]

--ignore-identical-ids ranks documents against their query, so only the
qrels format takes it:

  $ "$EVALUA" trec --ignore-identical-ids -R prefs four "$D/run.trec"
  evalua trec: --ignore-identical-ids applies to -R qrels, whose documents are ranked against their query (try 'evalua trec --help')
  [2]

trec_eval 10.0's long options, with its names (and getopt's unambiguous
abbreviations); -m set is its nickname for the unranked measures:

  $ "$EVALUA" trec --query_eval_wanted --nosummary --measure map --measure=P.1 --level_for_rel 1 --Max_retrieved_per_topic 2 four "$D/run.trec" | head -2
  map                   \tq1\t0.5000 (esc)
  P_1                   \tq1\t1.0000 (esc)
  $ "$EVALUA" trec --complete_rel_info_wanted --Judged_docs_only --Number_docs_in_coll 10 --Rel_info_format qrels --Results_format trec_results --meas num_q four "$D/run.trec"
  num_q                 \tall\t3 (esc)
  $ "$EVALUA" trec -m set four "$D/run.trec" | cut -f1 | tr -d ' ' | tr '\n' ' '
  runid num_q num_ret num_rel num_rel_ret utility set_P set_relative_P set_recall set_map set_F  (no-eol)
  $ "$EVALUA" trec --version | sed 's/trec [0-9.]*/trec X/'
  evalua trec X (trec_eval 10.0's measures, options and output)
  $ "$EVALUA" trec -v | sed 's/trec [0-9.]*/trec X/'
  evalua trec X (trec_eval 10.0's measures, options and output)
  $ "$EVALUA" trec --help | head -1
  usage: evalua trec [-q] [-c] [-n] [-a] [-J] [-l LEVEL] [-M N] [-N DOCS]

What evalua does not reproduce is refused, never ignored:

  $ "$EVALUA" trec --Debug_level 1 four "$D/run.trec"
  evalua trec: -D (--Debug_level): trec_eval's debugging output is not reproduced (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec --Output_old_results_format x four "$D/run.trec"
  evalua trec: -o (--Output_old_results_format): obsolete in trec_eval 10.0, which ignores it (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec --nosummary=1 four "$D/run.trec"
  evalua trec: option --nosummary takes no value (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec --measure
  evalua trec: option --measure needs a value (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec --bogus four "$D/run.trec"
  evalua trec: unknown option --bogus (try 'evalua trec --help')
  [2]

On 200 queries whose runs hold their own id among 8 results, the option
gives, byte for byte and for every measure, what the run without those
lines gives, whether the run is streamed from a file or read whole from a pipe:

  $ awk 'BEGIN { for (i = 0; i < 200; i++) for (j = 0; j < 6; j++) printf "q%d 0 %s %d\n", i, (j == 0 ? "q" i : "d" (i * 7 + j * 3) % 50), (i + j) % 4 }' > gq
  $ awk 'BEGIN { for (i = 0; i < 200; i++) for (j = 0; j < 8; j++) printf "q%d Q0 %s %d %.4f r\n", i, (j == (i % 8) ? "q" i : "d" (i * 11 + j * 5) % 50), j + 1, (97 * i + 31 * j) % 101 / 100 }' > gr
  $ awk '$1 != $3' gr > gr_without
  $ "$EVALUA" trec -q -a gq gr_without > want
  $ "$EVALUA" trec --ignore-identical-ids -q -a gq gr | cmp - want
  $ cat gr | "$EVALUA" trec --ignore-identical-ids -q -a gq - | cmp - want
  $ "$EVALUA" trec -q -a gq gr | cmp -s - want || echo differs without the option
  differs without the option
