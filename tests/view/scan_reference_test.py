#!/usr/bin/env python3
"""The viewer's text scan (evalua._textscan, docs/view.md#the-scan) finds
exactly the rows Python finds with `in` over the same texts: 600 generated
rows of Chinese, Japanese, Korean, emoji (with skin tones), precomposed and
combining accents, ß, İ, ligatures, one-letter words, mixed case and
punctuation; 1,500 searches of one or two words cut from those texts (in
changed case) or made up, on the scan as built and as read back from
its file, each a substring, or for ASCII words of one or
two letters or digits the start of a word (the code point before is no
letter or digit), as the items page routes them.

The reference folds as docs/view.md says, with Python's unicodedata:
canonical decomposition, case folding, the combining marks U+0300..U+036F
dropped, NFC. Environment: EVALUA (the binary).
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unicodedata

EVALUA = os.environ.get("EVALUA", "build/evalua")

PIECES = ["Upload", "upload", "UP", "up", "s", "S", "a", "I", "分片", "上传", "中止", "阈值", "😀", "👍🏽", "👍",
          "é", "e\u0301", "É", "E\u0301", "café", "CAFE\u0301", "Müller", "MÜLLER", "mu\u0308ller", "ß", "SS",
          "Straße", "が", "か", "ガ", "한국어", "İstanbul", "ﬁle", "Ωmega", "ωmega", "x1", "42", "_", "-", "?", "'s",
          "\u00a0", "Ⅻ", "½"]
SEPS = ["", " ", " ", ", ", "\n", "/"]


def fold(s):
    d = unicodedata.normalize("NFD", unicodedata.normalize("NFD", s).casefold())
    d = "".join(" " if c == "\0" else c for c in d if not "\u0300" <= c <= "\u036f")
    return unicodedata.normalize("NFC", d)


def text(rng, k):
    return "".join(rng.choice(PIECES) + rng.choice(SEPS) for _ in range(k))


def make_rows(rng):
    rows = []
    for i in range(600):
        row = {"qid": f"q{i}", "query": text(rng, rng.randint(0, 6)), "answer": text(rng, rng.randint(0, 8)),
               "gold_answers": [text(rng, 3)]}  # not searched
        c = rng.random()
        if c < 0.15:
            row["contexts"] = text(rng, 5)  # one string
        elif c < 0.9:
            row["contexts"] = [text(rng, rng.randint(1, 10)) for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.05:
            del row["answer"]
        rows.append(row)
    return rows


def texts_of(row):
    out = [row["qid"], row.get("query", ""), row.get("answer", "")]
    c = row.get("contexts", [])
    out += [c] if isinstance(c, str) else c
    return [fold(t) for t in out]


def word_start(word):
    return bool(re.fullmatch(r"[A-Za-z0-9]{1,2}", word))


def holds(t, w, start):
    if not start:
        return w in t
    return any(i == 0 or not t[i - 1].isalnum() for i in (m.start() for m in re.finditer(re.escape(w), t)))


def queries(rng, rows):
    out = []
    for _ in range(1500):
        words = []
        for _ in range(rng.choice([1, 1, 2])):
            if rng.random() < 0.7:  # cut from a row's text, its case changed at random
                row = rng.choice(rows)
                t = rng.choice([row["query"], row.get("answer", ""), row["qid"]] + (row.get("contexts") or [""])
                               if isinstance(row.get("contexts"), list) else [row["query"], row["qid"]])
                t = "".join(t.split()) or "分片"
                a = rng.randrange(len(t))
                w = t[a:a + rng.randint(1, 4)]
                w = "".join(ch.upper() if rng.random() < 0.3 else ch for ch in w)
            else:
                w = rng.choice(PIECES + ["zz", "上上", "😀😀", "q1", "q59", "1", "ll", "ss"])
            w = "".join(w.split())
            if w:
                words.append(w)
        if words:
            out.append(words)
    return out


SCRIPT = r"""
local json = require "evalua.core.json"
local scan = require("evalua._textscan").new()
local rows, k = {}, 0
for line in io.lines(arg[1]) do
  k = k + 1
  rows[k] = { k = k, id = json.decode(line).qid, row = line }
end
scan:add_rows(nil, rows)
if arg[3] then -- the scan as a later start reads it from the viewer's cache
  assert(scan:save(arg[3], "key"))
  scan:close()
  assert(not require("evalua._textscan").load(arg[3], "another key"))
  scan = assert(require("evalua._textscan").load(arg[3], "key"))
end
for line in io.lines(arg[2]) do
  local keys = scan:find(json.decode(line))
  io.write(keys, "\n")
end
"""


def main():
    rng = random.Random(29)
    rows = make_rows(rng)
    qs = queries(rng, rows)
    tmp = tempfile.mkdtemp(prefix="evalua_scan_ref_")
    with open(os.path.join(tmp, "rows.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:  # ensure_ascii: the \u escapes (and surrogate pairs) are decoded by the scan
            f.write(json.dumps(r, ensure_ascii=rng.random() < 0.5) + "\n")
    terms = [[[w, word_start(w)] for w in q] for q in qs]
    with open(os.path.join(tmp, "queries.jsonl"), "w", encoding="utf-8") as f:
        for t in terms:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    with open(os.path.join(tmp, "scan.lua"), "w") as f:
        f.write(SCRIPT)
    outs = []
    for saved in ([], [os.path.join(tmp, "scan")]):  # built, then saved and read back
        got = subprocess.run([EVALUA, "run", os.path.join(tmp, "scan.lua"), os.path.join(tmp, "rows.jsonl"),
                              os.path.join(tmp, "queries.jsonl")] + saved, capture_output=True, text=True)
        if got.returncode != 0:
            print(got.stderr)
            return 1
        outs.append(got.stdout.splitlines())
        assert len(outs[-1]) == len(terms), (len(outs[-1]), len(terms))
    # A row's folded texts joined by NUL, which no folded search holds and
    # which is no letter or digit: a match never spans two texts, and a
    # text's start is a word's start as at the start of the whole.
    joined = ["\0".join(texts_of(r)) for r in rows]
    wants = []  # Python's answer to each search, once for both passes
    for t in terms:
        ws = [(fold(w), start) for w, start in t]
        wants.append([i + 1 for i, x in enumerate(joined) if all(holds(x, w, start) for w, start in ws)])
    bad, found, empty = 0, 0, 0
    for t, want, line in zip(terms + terms, wants + wants, outs[0] + outs[1]):
        have = json.loads(line)
        found += len(want)
        empty += not want
        if have != want:
            bad += 1
            if bad <= 5:
                print(f"not ok - {t}: scan {have[:10]}..., Python {want[:10]}...")
    print(f"{len(terms)} searches twice (the scan built, then read from its file), {found} matches in all, "
          f"{empty} with none; {bad} differ from Python's")
    subprocess.run(["rm", "-rf", tmp])
    print(f"{2 * len(terms) - bad} passed, {bad} failed")
    return 1 if bad else 0


sys.exit(main())
