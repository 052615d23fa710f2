"""The plain-Python reference of bench/dataplane: the json module and loops,
SQuAD's normalisation (CJK characters as tokens of their own, as evalua
counts them). Computes recall@5, MRR, nDCG@10 (trec_eval's definitions),
strict exact match and token F1 per row, and their means per query class
and per variant.

usage: python3 bench/dataplane/reference.py ROWS.jsonl
"""
import collections
import json
import math
import re
import string
import sys

PUNCT = set(string.punctuation)
CJK = re.compile(r"([\u4e00-\u9fff])")
ARTICLES = re.compile(r"\b(a|an|the)\b")


def tokens(s):
    s = "".join(ch for ch in s.lower() if ch not in PUNCT)
    s = ARTICLES.sub(" ", CJK.sub(r" \1 ", s))
    return s.split()


def f1(pred, gold):
    p, g = tokens(pred), tokens(gold)
    same = sum((collections.Counter(p) & collections.Counter(g)).values())
    if same == 0:
        return 0.0
    pr, rc = same / len(p), same / len(g)
    return 2 * pr * rc / (pr + rc)


def retrieval(row):
    grades = row["graded_relevance"]
    nrel = sum(1 for g in grades.values() if g >= 1)
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)
    ranked = sorted(row["retrieved"], key=lambda e: (e["score"], e["id"]), reverse=True)
    hits5, rr, dcg = 0, 0.0, 0.0
    for i, e in enumerate(ranked, 1):
        g = grades.get(e["id"], 0)
        if i <= 5 and g >= 1:
            hits5 += 1
        if rr == 0 and g >= 1:
            rr = 1 / i
        if i <= 10 and g > 0:
            dcg += g / math.log2(i + 1)
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal[:10], 1))
    return hits5 / nrel, rr, dcg / idcg if idcg > 0 else 0.0


def main(path):
    sums = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0])
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            vals = list(retrieval(row))
            vals.append(1.0 if row["answer"] in row["gold_answers"] else 0.0)
            vals.append(max(f1(row["answer"], g) for g in row["gold_answers"]))
            for key in ("all", "query_class=" + row["query_class"], "variant=" + row["variant"]):
                s = sums[key]
                s[0] += 1
                for k in range(5):
                    s[k + 1] += vals[k]
    for key in sorted(sums):
        s = sums[key]
        print(f"{key:28s} n={s[0]:<8d}" + "".join(f"  {v / s[0]:.6f}" for v in s[1:]))


if __name__ == "__main__":
    main(sys.argv[1])
