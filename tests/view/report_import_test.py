#!/usr/bin/env python3
"""evalua view REPORT.json serves its first page before the report's run is in
the store, and imports the run after it, whole (docs/view.md#speed):

- the first page (/api/run, /api/items) answers while the store has no run,
  saying `importing`; its items are the report's;
- a label POSTed before the import is in the store after it, beside the run;
- a viewer killed (kill -9) before or during the import leaves a store that
  passes integrity_check with no part of the run, and the next start imports
  it whole (every item and score of the report).

Expected values come from the report, read here; the store is read with
Python's sqlite3. Environment: EVALUA, EVALUA_SRC (as browser_test.py).
"""
import glob
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

EVALUA = os.environ.get("EVALUA", "build/evalua")
SRC = os.environ.get("EVALUA_SRC", ".")
CHECKS = []


def check(cond, what):
    CHECKS.append(what)
    if not cond:
        raise AssertionError(what)
    print("ok -", what)


def start(report, hist, env):
    p = subprocess.Popen([EVALUA, "view", report, "--history", hist, "--rater", "ana"], stdout=subprocess.PIPE,
                         text=True, env=env)
    line = ""
    while "http://" not in line:
        line = p.stdout.readline()
        if not line and p.poll() is not None:
            raise AssertionError("evalua view exited before serving")
    base, token = line.strip().split("/?token=")
    return p, base, token


def raw(base, token, name, params="", body=None):
    req = urllib.request.Request(f"{base}/api/{name}?{params}", data=body, method="POST" if body else "GET",
                                 headers={"X-Evalua-Token": token})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read()


def get_status(base, token, name, params=""):
    """(HTTP status, decoded body) of a GET, an error status included."""
    try:
        return 200, json.loads(raw(base, token, name, params))
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def api(base, token, name, params="", body=None):
    return json.loads(raw(base, token, name, params, body))


# Plain pages (by id, no filter but a system) that a run not in the store yet answers from its decoded report.
PLAIN = ["", "per=7&page=2", "per=7&page=3", "per=500"]
# Fields of /api/run that say how the answer was made, not what the run holds.
HOW = ("built", "importing", "search_index")


def cache_tables(work):
    """The runs whose table the viewer's cache holds (its `built` table), read by Python's sqlite3."""
    files = glob.glob(os.path.join(work, "cache", "evalua", "view", "*.db"))
    if not files:
        return 0
    db = sqlite3.connect(files[0])
    try:
        return db.execute("SELECT count(*) FROM built").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


# A report of two systems (written b_sys first), integer and string ids, unmeasured cells and a slice.
ROWS = [dict({"qid": i if i % 3 == 0 else f"q{i:02d}", "query": f"how to rotate key {i}", "variant": v,
              "query_class": ["how-to", "factoid"][i % 2], "answer": f"rotate the key {i % 5}",
              "retrieved": ["d1", "d2", "d3"] if (i + len(v)) % 4 else ["d9"], "contexts": ["d1 text", "d2 text"]},
             **({"gold_doc_ids": ["d1"]} if i % 7 else {}), **({"gold_answers": [f"rotate the key {i % 3}"]} if i % 5 else {}))
        for i in range(30) for v in ("b_sys", "a_sys")]
MAKE = """local ev = require "evalua"
local res = ev.evaluate(ev.dataset.load(arg[1]), { metrics = { "recall@5", "mrr", "token_f1" },
  slices = { "query_class" }, system = "variant", ci = {} })
ev.report.write(res, { dir = arg[2], name = "run", formats = { "json" }, items = "full" })
"""


def two_systems(work):
    with open(os.path.join(work, "rows.jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in ROWS)
    with open(os.path.join(work, "make.lua"), "w") as f:
        f.write(MAKE)
    subprocess.run([EVALUA, "run", os.path.join(work, "make.lua"), os.path.join(work, "rows.jsonl"),
                    os.path.join(work, "two")], check=True)
    return os.path.join(work, "two", "run.json")


def summary(base, token, run_id):
    """/api/run without HOW, as canonical JSON."""
    r = api(base, token, "run", "run=" + run_id)
    return json.dumps({k: v for k, v in r.items() if k not in HOW}, sort_keys=True)


def store(hist):
    """(integrity_check, runs, items, scores) of the store, read by Python's sqlite3."""
    db = sqlite3.connect(os.path.join(hist, "history.db"))
    try:
        ok = db.execute("PRAGMA integrity_check").fetchone()[0]
        n = [db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "items", "scores")]
        return (ok, *n)
    finally:
        db.close()


def wait_imported(base, token):
    for _ in range(300):
        if not api(base, token, "info").get("importing"):
            return
        time.sleep(1.5)  # a quiet second: the viewer imports then
    raise AssertionError("the import did not end")


def main():
    work = tempfile.mkdtemp(prefix="evalua_view_import_")
    procs = []
    try:
        out = os.path.join(work, "nightly")
        subprocess.run([EVALUA, "run", os.path.join(SRC, "scripts/nightly.lua"), "--out", out, "--label", "v1",
                        "--quiet"], stdout=subprocess.DEVNULL, cwd=work, check=True)
        reports = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(out, "reports")) for f in fs
                   if f == "nightly.json"]
        report = reports[0]
        items = json.load(open(report))["items"]
        n_scores = sum(len(it["scores"]) + len(it.get("unmeasured") or {}) for it in items)
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))

        # The first page before the import; a label made then; the run imported after it, with the label.
        hist = os.path.join(work, "h1")
        p, base, token = start(report, hist, env)
        procs.append(p)
        run = api(base, token, "run")
        before = {q: raw(base, token, "items", f"run={run['run_id']}&{q}") for q in PLAIN}
        summary_before = summary(base, token, run["run_id"])
        check(cache_tables(work) == 0 and api(base, token, "run")["importing"] is True,
              "the plain pages and the summary are answered before the run's table is in the cache and before the import")
        page = api(base, token, "items", "run=" + run["run_id"])
        check(run.get("importing") is True and store(hist)[1] == 0,
              "the first page is served while the store has no run, and says importing")
        check(page["total"] == len(items) and len(page["rows"]) == min(50, len(items)),
              f"the first page's items are the report's {len(items)}")
        listed = api(base, token, "runs")["runs"]
        check([(r["run_id"], r.get("importing")) for r in listed] == [(run["run_id"], True)],
              "the runs page lists the run being imported, saying so")
        first = page["rows"][0]
        it = next(i for i in items if i["id"] == first["item"] and i["system"] == first["system"])
        m = sorted(it["scores"])[0]
        check(first["scores"][m]["value"] == it["scores"][m], f"a row's {m} is the report's: {it['scores'][m]}")
        label = {"item": first["item"], "system": first["system"], "metric": m, "value": 4, "run": run["run_id"]}
        api(base, token, "label", body=json.dumps(label).encode())
        wait_imported(base, token)
        check(store(hist) == ("ok", 1, len(items), n_scores),
              f"after the import the store holds the run whole: {len(items)} items, {n_scores} scores")
        db = sqlite3.connect(os.path.join(hist, "history.db"))
        labs = db.execute("SELECT item, metric, value, rater FROM labels").fetchall()
        db.close()
        check(labs == [(first["item"], m, 4, "ana")], f"the label made before the import is kept: {labs}")
        again = api(base, token, "run", "run=" + run["run_id"])
        check("importing" not in again and again["counts"] == run["counts"],
              "after the import the run is read from the store, with the same counts")
        for q in PLAIN:
            check(raw(base, token, "items", f"run={run['run_id']}&{q}") == before[q],
                  f"items?{q or '(first page)'} before the import is byte for byte the one after it")
        check(summary(base, token, run["run_id"]) == summary_before,
              "the run's summary before the import (from the decoded report) is the one after it (from the store)")
        # The quiet seconds read the run's texts for the scan too, with no search asking (its file beside the
        # cache): a one-letter word's first search reads none.
        scans = glob.glob(os.path.join(work, "cache", "evalua", "view", "*.scan"))
        status, body = get_status(base, token, "items", f"run={run['run_id']}&q=a")
        check(len(scans) == 1 and status == 200 and "indexed" not in body,
              f"the idle work reads the run's texts for the scan before any search: {scans}, then {status} {body.get('indexed')}")
        p.terminate()
        p.wait()

        # The same on a report of two systems with unmeasured cells: plain pages and summary alike before and after.
        report2 = two_systems(work)
        n2 = len(json.load(open(report2))["items"])
        p, base, token = start(report2, os.path.join(work, "h3"), env)
        procs.append(p)
        run2 = api(base, token, "run")
        before = {q: raw(base, token, "items", f"run={run2['run_id']}&{q}") for q in PLAIN + ["system=a_sys&per=9&page=2"]}
        summary_before = summary(base, token, run2["run_id"])
        check(run2["importing"] is True and json.loads(before[""])["total"] == n2 and run2["unmeasured"],
              f"a two-system report's first page is served before its import: {n2} items, unmeasured causes listed")
        first_ids = [(r["system"], r["item"]) for r in json.loads(before["per=500"])["rows"]]
        # Item pages (one with unmeasured cells, one by id alone), answered from the decoded report before the import.
        ITEMS = ["system=a_sys&id=0", "id=%22q14%22", "system=b_sys&id=%22q29%22"]
        items_before = {q: raw(base, token, "item", f"run={run2['run_id']}&{q}") for q in ITEMS}
        q14 = json.loads(items_before["id=%22q14%22"])
        check(api(base, token, "info").get("importing") == run2["run_id"] and store(os.path.join(work, "h3"))[1] == 0
              and q14["system"] == "a_sys" and len(q14["scores"]) == 3 and len(q14["others"]) == 2 and q14["across"],
              "item pages are answered while the run is not in the store (q14: 3 scores, 2 systems, this run across runs)")
        check(first_ids[0] == ("a_sys", 0) and first_ids[-1] == ("b_sys", "q29"),
              f"its items in the table's order (system, then integer ids before text ones): {first_ids[:2]} .. {first_ids[-1:]}")
        # A word search right away: the run's index is built on a thread of its own (this search starts it);
        # meanwhile words of letters and digits alone are answered by the scan at once, with the items that have
        # both words' starts (computed here, as unicode61 cuts words), and a phrase word ("key-4": "key" then a
        # word that starts with "4") waits for the index, answered 503 with `building` until it is there.
        def words(it):
            row = it["row"]
            return re.findall(r"[^\W_]+", " ".join([str(it["id"]), row["query"], row["answer"], *row["contexts"]]).lower())
        decoded = json.load(open(report2))["items"]
        want = sorted((it["system"], json.dumps(it["id"])) for it in decoded
                      if all(any(w.startswith(q) for w in words(it)) for q in ("rotat", "4")))
        status, body = get_status(base, token, "items", f"run={run2['run_id']}&q=rotat+4&per=500")
        check(status == 200 and sorted((r["system"], json.dumps(r["item"])) for r in body["rows"]) == want
              and len(want) == 12,
              f"a search of words while the index is built answers at once, the items with both words: {want} ({status})")
        # "key 4": the query "rotate key 4" and the answers "rotate the key 4" of items 4, 9, 14, 19, 24, 29: 6 per system
        def phrase(it):
            ws = words(it)
            return any(a == "key" and b.startswith("4") for a, b in zip(ws, ws[1:]))
        want = sorted(((it["system"], json.dumps(it["id"])) for it in decoded if phrase(it)))
        seen = []
        for _ in range(100):
            status, body = get_status(base, token, "items", f"run={run2['run_id']}&q=key-4&per=500")
            seen.append(status)
            if status == 200:
                break
            check(status == 503 and isinstance(body.get("building"), float) and "being built" in body["error"],
                  f"a phrase search while the index is built says so: {status} {body}")
            time.sleep(0.2)
        check(sorted((r["system"], json.dumps(r["item"])) for r in body["rows"]) == want and len(want) == 12,
              f"then the phrase search answers its items: {len(want)} (answers seen: {seen})")
        wait_imported(base, token)
        for q, body in before.items():
            check(raw(base, token, "items", f"run={run2['run_id']}&{q}") == body,
                  f"two systems: items?{q or '(first page)'} before the import is byte for byte the one after it")
        check(summary(base, token, run2["run_id"]) == summary_before,
              "two systems: the run's summary before the import is the one after it")
        for q, body in items_before.items():
            check(raw(base, token, "item", f"run={run2['run_id']}&{q}") == body,
                  f"two systems: item?{q} before the import is byte for byte the one after it")
        p.terminate()
        p.wait()

        # kill -9 before the import, then during it: nothing of the run in the store; the next start imports it whole.
        hist = os.path.join(work, "h2")
        for pause in (0, 1.2):
            p, base, token = start(report, hist, env)
            procs.append(p)
            api(base, token, "items", "run=" + api(base, token, "run")["run_id"])
            time.sleep(pause)
            p.kill()
            p.wait()
            got = store(hist)
            check(got[0] == "ok" and got[1:] in ((0, 0, 0), (1, len(items), n_scores)),
                  f"kill -9 {pause} s after the first page leaves a whole store, the run in it whole or not at all: {got}")
        p, base, token = start(report, hist, env)
        procs.append(p)
        wait_imported(base, token)
        check(store(hist) == ("ok", 1, len(items), n_scores), "the next start imports the run whole, once")
        p.terminate()
        p.wait()
        print(f"passed: {len(CHECKS)} checks")
        return 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
