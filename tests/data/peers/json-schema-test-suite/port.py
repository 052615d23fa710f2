#!/usr/bin/env python3
"""Writes draft7.jsonl: one line per case of the JSON-Schema-Test-Suite's
draft7 files (the required ones, not optional/), as
{"from": "<file> :: <group> :: <test>", "schema": ..., "data": ..., "valid": ...}.
Run: port.py SUITE_GIT_DIR (a clone or bare mirror) > draft7.jsonl. refRemote.json is left out: its
schemas name documents on a server the suite runs, which evalua never reads.
Cases whose schema refers to the draft-07 meta-schema (another document)
carry what evalua gives instead: the schema refused, naming the $ref."""
import json, os, subprocess, sys

META = '"http://json-schema.org/draft-07/schema#"'
suite = sys.argv[1]
commit = subprocess.run(["git", "-C", suite, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
def git(*args):
    return subprocess.run(["git", "-C", suite] + list(args), capture_output=True, text=True, check=True).stdout

for name in sorted(git("ls-tree", "--name-only", "HEAD", "tests/draft7/").split()):
    name = os.path.basename(name)
    if not name.endswith(".json") or name == "refRemote.json":
        continue
    groups = json.loads(git("show", "HEAD:tests/draft7/" + name))
    for g in groups:
        for t in g["tests"]:
            case = {"from": "json-schema-org/JSON-Schema-Test-Suite@%s tests/draft7/%s :: %s :: %s"
                    % (commit, name, g["description"], t["description"]),
                    "schema": g["schema"], "data": t["data"], "valid": t["valid"]}
            if META in json.dumps(g["schema"]):
                case["evalua"] = {"refused": "references to other documents are not read"}
                case["why"] = "the schema refers to the draft-07 meta-schema, a document of its own"
            print(json.dumps(case, ensure_ascii=False, sort_keys=True))
