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
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
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


def api(base, token, name, params="", body=None):
    req = urllib.request.Request(f"{base}/api/{name}?{params}", data=body, method="POST" if body else "GET",
                                 headers={"X-Evalua-Token": token})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


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
