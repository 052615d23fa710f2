Input that is not a TREC file ends with one clear error instead of reading
until memory runs out (issue 13, item 15): a line may be at most 1 MiB.

  $ cd "$CRAMTMP"
  $ printf 'q1 0 d1 1\n' > qrels
  $ printf 'q1 Q0 d1 1 2.5 runA\n' > run

An endless device, as run or as qrels, and an endless pipe:

  $ "$EVALUA" trec qrels /dev/zero
  evalua trec: /dev/zero:1: line longer than 1048576 bytes: not a TREC file
  [3]
  $ "$EVALUA" trec /dev/zero run
  evalua trec: /dev/zero:1: line longer than 1048576 bytes: not a TREC file
  [3]
  $ { cat run; cat /dev/zero; } | "$EVALUA" trec qrels -
  evalua trec: -:2: line longer than 1048576 bytes: not a TREC file
  [3]

A regular file whose last line is too long (it would be copied to add its
newline), while a long line that fits is only a bad line:

  $ { cat run; head -c 1048577 /dev/zero | tr '\0' x; } > long; "$EVALUA" trec qrels long
  evalua trec: long:2: line longer than 1048576 bytes: not a TREC file
  [3]
  $ { head -c 1000 /dev/zero | tr '\0' x; echo; } > wide; "$EVALUA" trec qrels wide
  evalua trec: wide:1: expected 6 fields (QID Q0 DOCNO RANK SCORE RUNID), found 1
  [3]
