evalua trec streams a run that is grouped by query (each query's lines
together): the same report as reading it whole, in far less memory. A run
that is not grouped, or comes through a pipe, is read whole without being
asked.

  $ cd "$CRAMTMP"
  $ F="$EVALUA_SRC/tests/fixtures/trec_eval"

trec_eval's own files, streamed (results.test is grouped), read whole from
standard input, shuffled line by line, and with the last newline cut off:

  $ for o in "" "-q" "-q -c" "-q -c -M50" "-q -l2 -n"; do
  >   "$EVALUA" trec -m all_trec $o "$F/qrels.test" "$F/results.test" > streamed
  >   "$EVALUA" trec -m all_trec $o "$F/qrels.test" - < "$F/results.test" | cmp - streamed
  >   shuf --random-source=<(yes) "$F/results.test" > shuffled
  >   "$EVALUA" trec -m all_trec $o "$F/qrels.test" shuffled | cmp - streamed
  >   head -c -1 "$F/results.test" > cut
  >   "$EVALUA" trec -m all_trec $o "$F/qrels.test" cut | cmp - streamed
  > done
  $ awk '{ print $1 }' "$F/results.test" | uniq | sort | uniq -d | wc -l
  0

A generated run of 10,000 queries x 100 documents (ties every three ranks;
query ids not in byte order) with three judgments per query. Streamed, its
peak memory stays far below the run's size; read whole (from standard
input, which is mapped as the file itself), it holds more than the whole
run. The saving is asserted as a difference, so the fixed cost of the
program (larger under the sanitizers) does not matter:

  $ awk 'BEGIN { for (q = 1; q <= 10000; q++) for (d = 1; d <= 100; d++)
  >   printf "q%d Q0 D%d %d %d r\n", q, (q * 7919 + d * 104729) % 1000003, d, (100 - d) / 3 }' > run
  $ awk 'BEGIN { for (q = 1; q <= 10000; q++) for (j = 1; j <= 3; j++)
  >   printf "q%d 0 D%d %d\n", q, (q * 7919 + j * 13 * 104729) % 1000003, j % 3 }' > qrels
  $ M="-q -m map -m P.10 -m ndcg_cut.10 -m recip_rank -m num_rel_ret"
  $ /usr/bin/time -f %M -o rss.streamed "$EVALUA" trec $M qrels run > streamed
  $ /usr/bin/time -f %M -o rss.whole "$EVALUA" trec $M qrels - < run > whole
  $ cmp streamed whole
Each query's relevant documents, D(13) of grade 1 and D(26) of grade 2, sit
in groups of three tied scores (ranks 11-13 and 26-28), ordered by id
descending: computed here on their own, the means match:

  $ LC_ALL=C awk 'function n(q, d) { return "D" ((q * 7919 + d * 104729) % 1000003) }
  >   BEGIN { for (q = 1; q <= 10000; q++) {
  >     r1 = 11 + (n(q, 11) > n(q, 13)) + (n(q, 12) > n(q, 13))
  >     r2 = 26 + (n(q, 27) > n(q, 26)) + (n(q, 28) > n(q, 26))
  >     rr += 1 / r1; ap += (1 / r1 + 2 / r2) / 2 }
  >   printf "map %.4f\nrecip_rank %.4f\n", ap / 10000, rr / 10000 }' > expected
  $ awk '$2 == "all" && ($1 == "map" || $1 == "recip_rank") { print $1, $3 }' streamed | diff expected -
  $ grep -E '^(num_rel_ret|P_10|ndcg_cut_10) ' streamed | grep all
  num_rel_ret           \tall\t20000 (esc)
  P_10                  \tall\t0.0000 (esc)
  ndcg_cut_10           \tall\t0.0000 (esc)

  $ kb=$(( $(stat -c %s run) / 1024 ))
  $ echo "run > 22 MB: $(( kb > 22 * 1024 ))"
  run > 22 MB: 1
  $ echo "whole holds the run: $(( $(cat rss.whole) > kb ))"
  whole holds the run: 1
  $ echo "streaming saves 80% of the run: $(( $(cat rss.whole) - $(cat rss.streamed) > kb * 8 / 10 ))"
  streaming saves 80% of the run: 1

The same run with one line of q17 moved to the end is not grouped (a query
met again after others): it is read whole, with the same values:

  $ { sed 1601d run; sed -n 1601p run; } > moved
  $ sed -n '$p' moved
  q17 Q0 D239352 1 33 r
  $ /usr/bin/time -f %M -o rss.moved "$EVALUA" trec $M qrels moved | cmp - streamed
  $ echo "read whole: $(( $(cat rss.moved) > kb ))"
  read whole: 1

Errors in a streamed run name the line, wherever it is:

  $ sed '750001s/ [0-9]* r$/ x r/' run > bad; "$EVALUA" trec $M qrels bad
  evalua trec: bad:750001: score is not a number: 'x'
  [3]
  $ sed '750001,750002s/D[0-9]*/D17/' run > twice; "$EVALUA" trec $M qrels twice
  evalua trec: twice:750002: document 'D17' is retrieved twice for query 'q7501' (first at line 750001)
  [3]
