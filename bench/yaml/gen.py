"""Writes a promptfoo-style YAML test list of N cases (vars, asserts, an
anchor merged into each) for bench/yaml/run.sh."""
import random
import sys

n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(1)
words = "alpha beta gamma delta library monde Paris capital answer question".split()
with open(path, "w") as f:
    f.write("defaults: &defaults\n  threshold: 0.5\n  options: {transform: output:upper()}\ntests:\n")
    for i in range(n):
        q = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        f.write("  - description: case %d\n    <<: *defaults\n    vars:\n      question: '%s'\n"
                "      lang: [en, fr]\n      n: %d\n      score: %.3f\n    assert:\n"
                "      - type: icontains\n        value: %s\n      - {type: max-words, value: %d, weight: 2}\n"
                % (i, q, i, rng.random(), rng.choice(words), rng.randint(3, 20)))
