evalua trec -R prefs, qrels_prefs and qrels_jg: trec_eval's other relevance
formats and their measures, on small files worked by hand (trec_eval 10.0
prints the same lines, byte for byte, but where said; the errors are
evalua's own words).

  $ cd "$CRAMTMP"

prefs lines are QID JG JSG DOCNO LEVEL: within a subgroup (JSG) of a
judgment group (JG), a document of a higher level is preferred to one of a
lower. q1 has one group of one subgroup, levels a 3 > b 2 > c 1 > d = e 0:
nine preferences. The run retrieves c, x (not judged), a, e.

  $ printf 'q1 u1 s1 a 3\nq1 u1 s1 b 2\nq1 u1 s1 c 1\nq1 u1 s1 d 0\nq1 u1 s1 e 0\n' > p1
  $ printf 'q1 Q0 c 1 5 r\nq1 Q0 x 2 4 r\nq1 Q0 a 3 3 r\nq1 Q0 e 4 2 r\n' > r1

trec_eval numbers the judged documents retrieved in rank order (c 0, a 1,
e 2; 3 of them), then the others by id (b 3, d 4). A preference is
fulfilled when the preferred document has the lower number; "ret" when
both are retrieved, "imp" when one is:
- a>e c>e: both retrieved, fulfilled: ful_ret 2
- a>c: both retrieved, not fulfilled: poss_ret 1 + 2 = 3
- a>b a>d c>d: only the preferred one retrieved: ful_imp 3
- b>c b>e: only the other one retrieved: poss_imp 2 + 3 = 5
- b>d: neither retrieved: notoccur 1
so num_prefs_poss 3 + 5 + 1 = 9, num_prefs_ful 2 + 3 = 5, ful_ret 2;
simp 5/9, simp_ret 2/3, simp_imp 5/(3 + 5) = 0.625. With one group and no
pair judged twice, pair and avgjg equal simp (and their _ret, _imp forms).
Rnonrel adds R - N = 3 - 2 = 1 fulfilled preference of each relevant
document over a non-relevant one: (5 + rel_ret 2 x 1) / (9 + R 3 x 1) =
7/12; Rnonrel_ret among the retrieved, R 2 (a, c) - N 1 (e):
(2 + 2 x 1) / (poss_ret 3 + R 3 x 1) = 4/6 (trec_eval's denominator takes
all the relevant documents).

  $ "$EVALUA" trec -R prefs -m all_prefs p1 r1
  runid                 \tall\tr (esc)
  num_q                 \tall\t1 (esc)
  prefs_num_prefs_poss  \tall\t9 (esc)
  prefs_num_prefs_ful   \tall\t5 (esc)
  prefs_num_prefs_ful_ret\tall\t2 (esc)
  prefs_simp            \tall\t0.5556 (esc)
  prefs_pair            \tall\t0.5556 (esc)
  prefs_avgjg           \tall\t0.5556 (esc)
  prefs_avgjg_Rnonrel   \tall\t0.5833 (esc)
  prefs_simp_ret        \tall\t0.6667 (esc)
  prefs_pair_ret        \tall\t0.6667 (esc)
  prefs_avgjg_ret       \tall\t0.6667 (esc)
  prefs_avgjg_Rnonrel_ret\tall\t0.6667 (esc)
  prefs_simp_imp        \tall\t0.6250 (esc)
  prefs_pair_imp        \tall\t0.6250 (esc)
  prefs_avgjg_imp       \tall\t0.6250 (esc)

Without -m, trec_eval's set "prefs" (its default, official, needs qrels):

  $ "$EVALUA" trec -R prefs p1 r1 | cut -f1 | tr -s ' \n' ' '
  runid num_q prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair prefs_avgjg  (no-eol)

-M 1 keeps c alone (c 0; then a 1, b 2, d 3, e 4): c>d and c>e are
fulfilled (imp), a>c and b>c not, the five others among a, b, d, e
notoccur: 2 fulfilled of 9.

  $ "$EVALUA" trec -R prefs -M 1 -m prefs_num_prefs_ful -m prefs_simp p1 r1
  prefs_num_prefs_ful   \tall\t2 (esc)
  prefs_simp            \tall\t0.2222 (esc)

q2 has two groups. u1 has two subgroups, so its preferences are those of
both made transitive: a>b (s1), b>c (s2) and a>c. u2 prefers c to a.
Numbers: c 0, a 1 (retrieved), b 2. u1: a>b ful_imp, b>c not (imp), a>c
not (ret): 1 of 3; u2: c>a ful_ret, 1 of 1. num_prefs_poss 3 + 1 = 4,
simp 2/4, avgjg (1/3 + 1)/2 = 0.6667; pair: the pair a,c is preferred each
way once (1/2), a,b agrees (1), b,c not (0): 1.5/3.

  $ printf 'q2 u1 s1 a 2\nq2 u1 s1 b 1\nq2 u1 s2 b 1\nq2 u1 s2 c 0\nq2 u2 s1 a 0\nq2 u2 s1 c 1\n' > p2
  $ printf 'q2 Q0 c 1 3 r\nq2 Q0 a 2 2 r\n' > r2
  $ "$EVALUA" trec -R prefs -m prefs_num_prefs_poss -m prefs_simp -m prefs_pair -m prefs_avgjg p2 r2
  prefs_num_prefs_poss  \tall\t4 (esc)
  prefs_simp            \tall\t0.5000 (esc)
  prefs_pair            \tall\t0.5000 (esc)
  prefs_avgjg           \tall\t0.6667 (esc)

q3: more non-relevant documents than relevant ones, a 1 > b = c = d 0;
the run has a, b, c (numbers 0, 1, 2; d 3). Every preference is
fulfilled, but Rnonrel recounts as trec_eval does: it keeps the first R = 1
non-relevant document (b) and pairs it with every class, its own class
included: a>b fulfilled; b>b, c>b, d>b not: 1/4. Rnonrel_ret the same among
the retrieved (d left out): 1/3.

  $ printf 'q3 u1 s1 a 1\nq3 u1 s1 b 0\nq3 u1 s1 c 0\nq3 u1 s1 d 0\n' > p3
  $ printf 'q3 Q0 a 1 3 r\nq3 Q0 b 2 2 r\nq3 Q0 c 3 1 r\n' > r3
  $ "$EVALUA" trec -R prefs -m prefs_simp -m prefs_avgjg_Rnonrel -m prefs_avgjg_Rnonrel_ret p3 r3
  prefs_simp            \tall\t1.0000 (esc)
  prefs_avgjg_Rnonrel   \tall\t0.2500 (esc)
  prefs_avgjg_Rnonrel_ret\tall\t0.3333 (esc)

Levels below 0 (trec_eval's own qrels.rel_level has -1) are not relevant
in a group of one subgroup. Here R = 2 (a, b) < N = 4 (c, d, e 0; f -1);
numbers a 0, f 1, c 2, b 3, then d 4, e 5. The recount keeps the first 2
lines of the lowest level, -1, which has one: trec_eval reads past it, into
memory it does not own; evalua keeps the one line. Fulfilled: a over c, d,
e, f and b over d, e (6); not: b>c, b>f, c>f, d>f, e>f, f>f (6): 6/12.

  $ printf 'q1 0 a 1\nq1 0 b 1\nq1 0 c 0\nq1 0 d 0\nq1 0 e 0\nq1 0 f -1\n' > low
  $ printf 'q1 Q0 a 1 5 r\nq1 Q0 f 2 4 r\nq1 Q0 c 3 3 r\nq1 Q0 b 4 2 r\n' > rlow
  $ "$EVALUA" trec -R qrels_prefs -m prefs_avgjg_Rnonrel low rlow
  prefs_avgjg_Rnonrel   \tall\t0.5000 (esc)

Together, with q4 judged but not retrieved: counts are summed and the rest
averaged over the queries in both files (trec_eval 10.0 stops at q4); with -c q4 counts too, as
retrieving nothing (its one preference, a>b, notoccur): num_prefs_poss
9 + 4 + 3 (+ 1), simp (5/9 + 1/2 + 1)/3 (or /4), Rnonrel (7/12 + 0.7 +
1/4)/3 (or /4; q2's is (2/5 + 1)/2).

  $ cat p1 p2 p3 > p; cat r1 r2 r3 > r; printf 'q4 u1 s1 a 1\nq4 u1 s1 b 0\n' >> p
  $ "$EVALUA" trec -R prefs -q -m prefs_num_prefs_poss -m prefs_simp -m prefs_avgjg_Rnonrel p r | grep -v '^prefs_simp'
  prefs_num_prefs_poss  \tq1\t9 (esc)
  prefs_avgjg_Rnonrel   \tq1\t0.5833 (esc)
  prefs_num_prefs_poss  \tq2\t4 (esc)
  prefs_avgjg_Rnonrel   \tq2\t0.7000 (esc)
  prefs_num_prefs_poss  \tq3\t3 (esc)
  prefs_avgjg_Rnonrel   \tq3\t0.2500 (esc)
  prefs_num_prefs_poss  \tall\t16 (esc)
  prefs_avgjg_Rnonrel   \tall\t0.5111 (esc)
  $ "$EVALUA" trec -R prefs -m num_q -m prefs_num_prefs_poss -m prefs_simp -m prefs_avgjg_Rnonrel p r
  num_q                 \tall\t3 (esc)
  prefs_num_prefs_poss  \tall\t16 (esc)
  prefs_simp            \tall\t0.6852 (esc)
  prefs_avgjg_Rnonrel   \tall\t0.5111 (esc)
  $ "$EVALUA" trec -R prefs -c -m num_q -m prefs_num_prefs_poss -m prefs_simp -m prefs_avgjg_Rnonrel p r
  num_q                 \tall\t4 (esc)
  prefs_num_prefs_poss  \tall\t17 (esc)
  prefs_simp            \tall\t0.5139 (esc)
  prefs_avgjg_Rnonrel   \tall\t0.3833 (esc)

Documents of equal score: trec_eval ranks them by id ascending for prefs
(descending for qrels and qrels_jg), so a, tied with b, comes first and a>b
is fulfilled:

  $ printf 'q5 u1 s1 a 1\nq5 u1 s1 b 0\n' > tie; printf 'q5 Q0 b 1 1 r\nq5 Q0 a 2 1 r\n' > rtie
  $ "$EVALUA" trec -R prefs -m prefs_simp tie rtie
  prefs_simp            \tall\t1.0000 (esc)

qrels_prefs reads a qrels file as prefs, its second field the group and
one subgroup each: q1's levels again, the same numbers.

  $ printf 'q1 0 a 3\nq1 0 b 2\nq1 0 c 1\nq1 0 d 0\nq1 0 e 0\n' > qp
  $ "$EVALUA" trec -R qrels_prefs qp r1
  runid                 \tall\tr (esc)
  num_q                 \tall\t1 (esc)
  prefs_num_prefs_poss  \tall\t9 (esc)
  prefs_num_prefs_ful   \tall\t5 (esc)
  prefs_num_prefs_ful_ret\tall\t2 (esc)
  prefs_simp            \tall\t0.5556 (esc)
  prefs_pair            \tall\t0.5556 (esc)
  prefs_avgjg           \tall\t0.5556 (esc)

qrels_jg lines are QID JG DOCNO REL: qrels of several judgment groups,
each measure averaged over the groups. g1 judges a and c relevant (R 2),
g2 only c (R 1); the run ranks x (not judged), a, b.
- g1 grades the ranks - 1 0: map (1/2)/2, P_1 0, P_5 1/5, Rprec_mult at
0.5 R = 1 rank 0, at 1.0 R = 2 ranks 1/2
- g2 grades them - 0 0: all 0
averaged: map 0.125, P_5 0.1, Rprec_mult_1.00 0.25. With -J the
unjudged x goes and g1 ranks a first: map (1/1)/2, P_1 1, at 0.5 R 1.

  $ printf 'q1 g1 a 1\nq1 g1 b 0\nq1 g1 c 1\nq1 g2 a 0\nq1 g2 b 0\nq1 g2 c 1\n' > jg
  $ printf 'q1 Q0 x 1 4 r\nq1 Q0 a 2 3 r\nq1 Q0 b 3 2 r\n' > rj
  $ "$EVALUA" trec -R qrels_jg -m map_avgjg -m P_avgjg.1,5 -m Rprec_mult_avgjg.0.5,1 jg rj
  map_avgjg             \tall\t0.1250 (esc)
  P_avgjg_1             \tall\t0.0000 (esc)
  P_avgjg_5             \tall\t0.1000 (esc)
  Rprec_mult_avgjg_0.50 \tall\t0.0000 (esc)
  Rprec_mult_avgjg_1.00 \tall\t0.2500 (esc)
  $ "$EVALUA" trec -R qrels_jg -J -m map_avgjg -m P_avgjg.1,5 -m Rprec_mult_avgjg.0.5,1 jg rj
  map_avgjg             \tall\t0.2500 (esc)
  P_avgjg_1             \tall\t0.5000 (esc)
  P_avgjg_5             \tall\t0.1000 (esc)
  Rprec_mult_avgjg_0.50 \tall\t0.5000 (esc)
  Rprec_mult_avgjg_1.00 \tall\t0.2500 (esc)

With qrels_jg, tied documents come by id descending: b before a, so a,
relevant, is at rank 2 (map 1/2, P_1 0):

  $ printf 'q5 g1 a 1\nq5 g1 b 0\n' > tie; "$EVALUA" trec -R qrels_jg -m map_avgjg -m P_avgjg.1 tie rtie
  map_avgjg             \tall\t0.5000 (esc)
  P_avgjg_1             \tall\t0.0000 (esc)

Without -m, trec_eval's set qrels_jg, cutoffs and multiples as P's and
Rprec_mult's:

  $ "$EVALUA" trec -R qrels_jg jg rj | cut -f1 | tr -s ' \n' ' '
  runid num_q map_avgjg P_avgjg_5 P_avgjg_10 P_avgjg_15 P_avgjg_20 P_avgjg_30 P_avgjg_100 P_avgjg_200 P_avgjg_500 P_avgjg_1000 Rprec_mult_avgjg_0.20 Rprec_mult_avgjg_0.40 Rprec_mult_avgjg_0.60 Rprec_mult_avgjg_0.80 Rprec_mult_avgjg_1.00 Rprec_mult_avgjg_1.20 Rprec_mult_avgjg_1.40 Rprec_mult_avgjg_1.60 Rprec_mult_avgjg_1.80 Rprec_mult_avgjg_2.00  (no-eol)

-a is every measure of the format (all_prefs, qrels_jg):

  $ "$EVALUA" trec -R prefs -a p1 r1 | cmp - <("$EVALUA" trec -R prefs -m all_prefs p1 r1)
  $ "$EVALUA" trec -R qrels_jg -a jg rj | cmp - <("$EVALUA" trec -R qrels_jg -m qrels_jg jg rj)

Each format has its measures; another's is a usage error naming the -R it
needs, as is a format trec_eval does not have:

  $ "$EVALUA" trec -R prefs -m map p1 r1
  evalua trec: measure 'map' needs -R qrels, not -R prefs (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -R qrels_jg -m all_trec jg rj
  evalua trec: measure 'num_ret' needs -R qrels, not -R qrels_jg (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -m prefs_simp qp r1
  evalua trec: measure 'prefs_simp' needs -R prefs or qrels_prefs, not -R qrels (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -R qrels_prefs -m P_avgjg qp r1
  evalua trec: measure 'P_avgjg' needs -R qrels_jg, not -R qrels_prefs (try 'evalua trec --help')
  [2]
  $ "$EVALUA" trec -R qrel_jg jg rj
  evalua trec: -R: 'qrel_jg' is not a relevance format: qrels, prefs, qrels_prefs or qrels_jg (try 'evalua trec --help')
  [2]

Bad lines: one line on standard error naming the file, the line and the
field; nothing on standard output; exit 3.

  $ printf 'q1 u1 s1 a 1\nq1 u1 a 0\n' > bad; "$EVALUA" trec -R prefs bad r1
  evalua trec: bad:2: expected 5 fields (QID JG JSG DOCNO LEVEL), found 4
  [3]
  $ printf '# levels\nq1 u1 s1 a high\n' > bad; "$EVALUA" trec -R prefs bad r1
  evalua trec: bad:2: relevance level is not a number: 'high'
  [3]
  $ printf 'q1 0 a 1 extra\n' > bad; "$EVALUA" trec -R qrels_prefs bad r1
  evalua trec: bad:1: expected 4 fields (QID JG DOCNO LEVEL), found more than 4
  [3]
  $ printf 'q1 g1 a 0.5\n' > bad; "$EVALUA" trec -R qrels_jg bad rj
  evalua trec: bad:1: relevance is not an integer: '0.5'
  [3]
  $ printf 'q1 g1 a 1\nq1 g2 a 1\nq1 g1 a 0\n' > bad; "$EVALUA" trec -R qrels_jg bad rj
  evalua trec: bad:3: document 'a' is judged twice for query 'q1' in group 'g1' (first at line 1)
  [3]
  $ "$EVALUA" trec -R prefs missing r1
  evalua trec: missing: cannot open (No such file or directory)
  [3]

Judgments trec_eval stops at: a document at two levels in a group of one
subgroup, one judged both 0 and above 0 by one group, preferences that
contradict each other once made transitive (trec_eval aborts there); and a
document retrieved twice:

  $ printf 'q1 u1 s1 a 2\nq1 u1 s1 b 1\nq1 u1 s1 a 1\n' > bad; "$EVALUA" trec -R prefs bad r1
  evalua trec: bad:3: document 'a' has two relevance levels in group 'u1' of query 'q1' (first at line 1)
  [3]
  $ printf 'q1 u1 s1 a 0\nq1 u1 s1 b 1\nq1 u1 s2 a 2\nq1 u1 s2 c 1\n' > bad; "$EVALUA" trec -R prefs bad r1
  evalua trec: bad:3: document 'a' is judged both 0 and above 0 in group 'u1' of query 'q1' (first at line 1)
  [3]
  $ printf 'q1 u1 s1 a 2\nq1 u1 s1 b 1\nq1 u1 s2 b 2\nq1 u1 s2 c 1\nq1 u1 s3 c 2\nq1 u1 s3 a 1\n' > bad
  $ "$EVALUA" trec -R prefs bad r1
  evalua trec: bad:6: the preferences of group 'u1' of query 'q1' contradict each other: 'c' and 'a' are each preferred to the other
  [3]
  $ printf 'q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq1 Q0 a 3 0 r\n' > twice; "$EVALUA" trec -R prefs p1 twice
  evalua trec: twice:3: document 'a' is retrieved twice for query 'q1' (first at line 1)
  [3]

The same document beyond the -M depth is no error (trec_eval looks at the
first M only):

  $ "$EVALUA" trec -R prefs -M 2 -m prefs_num_prefs_poss p1 twice
  prefs_num_prefs_poss  \tall\t9 (esc)
