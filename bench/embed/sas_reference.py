"""The plain-Python reference of bench/embed/sas.sh: the TF-IDF similarity
docs/judged_metrics.md describes ("The offline embedder"), written as one
would in Python with dicts and Counter, on the pairs of sas_gen.lua (ASCII
English and Chinese ideographs, where the normalisation below is exactly
evalua's: lower case, ASCII punctuation deleted, a/an/the dropped, each
ideograph a token). Features: each word and the character 3- to 5-grams of
<word>; in a run of ideographs each character and each pair of neighbours
as words, and its 1- to 3-grams as characters. IDF over every text of the
run, weight (1 + ln tf) * (ln((1 + N) / (1 + df)) + 1), similarity
0.5 * cosine(words) + 0.5 * cosine(characters), the best gold answer's.

usage: python3 bench/embed/sas_reference.py PAIRS.tsv SCORES.out [RUNS]
Prints the number of rows and the best wall seconds of the scoring.
"""
import collections
import math
import string
import sys
import time

PUNCT = str.maketrans("", "", string.punctuation)
ARTICLES = {"a", "an", "the"}


def is_han(t):
    return len(t) == 1 and "\u4e00" <= t <= "\u9fff"


def tokens(s):
    out = []
    for w in s.lower().translate(PUNCT).split():
        run = []
        for ch in w:
            if is_han(ch):
                if run:
                    out.append("".join(run))
                    run = []
                out.append(ch)
            else:
                run.append(ch)
        if run:
            out.append("".join(run))
    return [t for t in out if t not in ARTICLES]


def grams(s, lo, hi):
    return [s[i:i + n] for n in range(lo, hi + 1) for i in range(len(s) - n + 1)]


def features(text):
    toks, feats, i = tokens(text), [], 0
    while i < len(toks):
        j = i
        while j < len(toks) and is_han(toks[j]):
            j += 1
        if j > i:
            run = toks[i:j]
            feats += [("w", c) for c in run]
            feats += [("p", run[k] + run[k + 1]) for k in range(len(run) - 1)]
            feats += [("c", g) for g in grams("".join(run), 1, 3)]
            i = j
        else:
            w = toks[i]
            feats.append(("w", w))
            feats += [("c", g) for g in grams("<" + w + ">", 3, 5)]
            i += 1
    return collections.Counter(feats)


def vectors(texts):
    counts = [features(t) for t in texts]
    df = collections.Counter()
    for c in counts:
        df.update(c.keys())
    n = len(texts)
    out = []
    for c in counts:
        v, norm = {}, {"w": 0.0, "c": 0.0}
        for f, tf in c.items():
            w = (1 + math.log(tf)) * (math.log((1 + n) / (1 + df[f])) + 1)
            v[f] = w
            norm["c" if f[0] == "c" else "w"] += w * w
        out.append((v, {k: math.sqrt(x) for k, x in norm.items()}))
    return out


def cosine(a, b):
    dot = {"w": 0.0, "c": 0.0}
    for f, w in a[0].items():
        if f in b[0]:
            dot["c" if f[0] == "c" else "w"] += w * b[0][f]
    sim = 0.0
    for part in ("w", "c"):
        n = a[1][part] * b[1][part]
        sim += 0.5 * (min(1.0, dot[part] / n) if n > 0 else 0.0)
    return sim


def sas(rows):
    texts = [r[0] for r in rows]
    for r in rows:
        texts += r[1:]
    vec = vectors(texts)
    scores, k = [], len(rows)
    for i, r in enumerate(rows):
        best = 0.0
        for j in range(len(r) - 1):
            s = cosine(vec[i], vec[k + j])
            best = s if j == 0 or s > best else best
        k += len(r) - 1
        scores.append(best)
    return scores


def main(path, out, runs):
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    best = math.inf
    for _ in range(runs):
        t0 = time.perf_counter()
        scores = sas(rows)
        best = min(best, time.perf_counter() - t0)
    with open(out, "w") as f:
        f.writelines("%.12f\n" % s for s in scores)
    print("%d %.4f" % (len(rows), best))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
