"""Python's side of bench/yaml/run.sh: decodes FILE RUNS times with PyYAML's
Loader given as LOADER (CSafeLoader: libyaml's parser, Python objects;
SafeLoader: pure Python), prints the best wall time, and writes the value as
JSON (keys sorted)."""
import json
import sys
import time

import yaml

path, runs, loader, out = sys.argv[1], int(sys.argv[2]), getattr(yaml, sys.argv[3]), sys.argv[4]
text = open(path, encoding="utf-8").read()
best = float("inf")
for _ in range(runs):
    t = time.monotonic()
    v = yaml.load(text, Loader=loader)
    best = min(best, time.monotonic() - t)
json.dump(v, open(out, "w"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
print("%.4f" % best)
