#!/usr/bin/env python3
"""bench/view: open and filter times of evalua view on a generated run
(see run.sh). Python 3 standard library only."""
import glob
import hashlib
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

BIN, ROWS = sys.argv[1], int(sys.argv[2])


def report(tmp):
    """evalua's own JSON report of ROWS generated rows (bench/dataplane/gen.lua, two systems)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rows = os.path.join(tmp, "rows.jsonl")
    subprocess.run([BIN, "run", os.path.join(root, "bench/dataplane/gen.lua"), rows, str(ROWS), "2"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([BIN, "run", os.path.join(root, "bench/view/make_run.lua"), rows, tmp], check=True)
    return os.path.join(tmp, "run.json")


def get(base, token, name, params):
    url = f"{base}/api/{name}?{urllib.parse.urlencode(params)}"
    req = urllib.request.Request(url, headers={"X-Evalua-Token": token})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        body = r.read()
    return time.perf_counter() - t, json.loads(body)


def ref_time(db, sql, args):
    t = time.perf_counter()
    db.execute(sql, args).fetchall()
    return time.perf_counter() - t


FILTERS = [  # name, API arguments, the reference SQL (the same condition, straight on the store)
    ("first page, by id", {}, "SELECT count(*) FROM items WHERE run = ?1", None),
    ("token_f1 below 0.2", {"metric": "token_f1", "below": "0.2"},
     "SELECT count(*) FROM items i WHERE run = ?1 AND EXISTS (SELECT 1 FROM scores s WHERE s.run = i.run AND "
     "s.system = i.system AND s.item = i.item AND s.metric = 'token_f1' AND s.value < 0.2)", None),
    ("unmeasured (any metric)", {"unmeasured": "1"},
     "SELECT count(*) FROM items i WHERE run = ?1 AND EXISTS (SELECT 1 FROM scores s WHERE s.run = i.run AND "
     "s.system = i.system AND s.item = i.item AND s.value IS NULL)", None),
    ("slice query_class = how-to", {"slice.query_class": "how-to"},
     "SELECT count(*) FROM items i WHERE run = ?1 AND json_extract(slices, '$.\"query_class\"') = 'how-to'", None),
    ("sorted by mrr", {"sort": "mrr"}, "SELECT i.item FROM items i LEFT JOIN scores o ON o.run = i.run AND "
     "o.system = i.system AND o.item = i.item AND o.metric = 'mrr' WHERE i.run = ?1 ORDER BY o.value LIMIT 50", None),
    ("systems disagree on mrr", {"disagree": "1", "metric": "mrr"},
     "SELECT count(*) FROM items i WHERE run = ?1 AND EXISTS (SELECT 1 FROM scores a JOIN scores b ON b.run = a.run "
     "AND b.item = a.item AND b.metric = a.metric AND b.system <> a.system WHERE a.run = i.run AND a.system = i.system "
     "AND a.item = i.item AND a.metric = 'mrr' AND (a.value >= 0.5) <> (b.value >= 0.5))", None),
    ("text search 'audit key'", {"q": "audit key"}, None, None),
    ("text search '上传' (a scan)", {"q": "上传"}, None, None),
    ("text search 'up' (two letters)", {"q": "up"}, None, None),
    ("text search 's' (one letter)", {"q": "s"}, None, None),
]
# The searches' references, on the viewer's cache: the same MATCH straight on its index; for the scan,
# the same rows (the places the cache records in the report) searched by Python's `in`.
# The scan's words (one or two letters: the start of a word) against Python over the same texts in memory
# (each row's id, query, answer and contexts, decoded and case folded once, before the clock starts), and
# against the same word's MATCH on the index, which must count the same rows.
SEARCH_SQL = {"audit key": "SELECT count(*) FROM {t}_fts WHERE {t}_fts MATCH '\"audit\"* AND \"key\"*'"}
FTS_CHECK = {"up": "SELECT count(*) FROM {t}_fts WHERE {t}_fts MATCH '\"up\"*'",
             "s": "SELECT count(*) FROM {t}_fts WHERE {t}_fts MATCH '\"s\"*'"}


def row_texts(cache, table, path):
    with open(path, "rb") as f:
        data = f.read()
    out = []
    for off, ln, item in cache.execute(f"SELECT x.off, x.len, t.item FROM {table}_text x JOIN {table} t ON t.k = x.k"):
        row = json.loads(data[off - 1:off - 1 + ln])
        c = row.get("contexts") or []
        out.append([t.casefold() for t in [str(item), row.get("query") or "", row.get("answer") or ""]
                    + ([c] if isinstance(c, str) else c)])
    return out


def scan_ref(texts, word):
    w = word.casefold()
    t = time.perf_counter()
    if len(word) <= 2 and word.isascii() and word.isalnum():  # the start of a word
        pat = re.compile(r"(?<![^\W_])" + re.escape(w))
        n = sum(1 for ts in texts if any(pat.search(x) for x in ts))
    else:
        n = sum(1 for ts in texts if any(w in x for x in ts))
    return time.perf_counter() - t, n


def main():
    tmp = tempfile.mkdtemp(prefix="evalua_bench_view_")
    t = time.perf_counter()
    path = report(tmp)
    print(f"generated {ROWS} items ({os.path.getsize(path) / 1e6:.0f} MB of JSON report) in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    with open(path, "rb") as f:
        f.read()
    read = time.perf_counter() - t
    print(f"reference: read() of the report {read:.2f} s")
    hist = os.path.join(tmp, "h")
    os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")  # the viewer's cache of run tables: in the bench's folder
    for attempt in ("first start (builds the run's table; the store's import follows the first page)",
                    "second start (the store and the cache have them)"):
        t = time.perf_counter()
        p = subprocess.Popen([BIN, "view", path, "--history", hist], stdout=subprocess.PIPE, text=True)
        line = ""
        while "http://" not in line:
            line = p.stdout.readline()
            if not line and p.poll() is not None:
                sys.exit(f"evalua view exited ({p.returncode}) before serving")
        started = time.perf_counter() - t
        base, token = line.strip().split("/?token=")
        t_run, run = get(base, token, "run", {})
        t_items, page = get(base, token, "items", {"run": run["run_id"]})
        t_again, _ = get(base, token, "items", {"run": run["run_id"], "page": 2})
        print(f"{attempt}: serving after {started:.2f} s; opening the run: summary {t_run:.3f} s (of which "
              f"{run['built']:.2f} s building its table) + first page {t_items:.3f} s = {t_run + t_items:.2f} s "
              f"for {page['total']} items; the next page {t_again * 1000:.0f} ms; start to first page "
              f"{started + t_run + t_items:.2f} s = {(started + t_run + t_items) / read:.1f}x the read()")
        if attempt.startswith("first"):  # the run's table, then the store's import, follow the first page
            t = time.perf_counter()
            time.sleep(1.5)  # a quiet second lets them start; then requests come as a user's would
            waits, first_row = {"items page 2": [], "an item page": []}, page["rows"][0]
            item_args = {"run": run["run_id"], "system": first_row["system"], "id": json.dumps(first_row["item"])}
            while get(base, token, "info", {})[1].get("importing"):
                waits["items page 2"].append(get(base, token, "items", {"run": run["run_id"], "page": 2})[0])
                waits["an item page"].append(get(base, token, "item", item_args)[0])
                time.sleep(0.5)
            print(f"  the run in the store {time.perf_counter() - t:.2f} s after the first page; requests meanwhile: "
                  + "; ".join(f"{k} {len(v)} times, longest {max(v, default=0) * 1000:.0f} ms, median "
                              f"{statistics.median(v) * 1000 if v else 0:.0f} ms" for k, v in waits.items()))
            p.terminate()
            p.wait()
    # The run's first word search starts its full-text index on a thread of its own (unless the viewer's idle
    # second did): it answers 503 with `building` meanwhile, and is asked again every 0.2 s as the app does.
    t, answers = time.perf_counter(), 0
    while True:
        answers += 1
        try:
            dt, res = get(base, token, "items", {"run": run["run_id"], "q": "audit key"})
            break
        except urllib.error.HTTPError as e:
            if e.code != 503:
                raise
            building = json.loads(e.read()).get("building")
            time.sleep(0.2)
    print(f"first search 'audit key': answered {time.perf_counter() - t:.2f} s after it was first asked ({answers} "
          f"asks; the index built in {res.get('indexed', 0):.2f} s), {res['total']} items; each ask answered at once: "
          f"the last in {dt * 1000:.0f} ms")
    db = sqlite3.connect(os.path.join(hist, "history.db"))
    cache = sqlite3.connect(glob.glob(os.path.join(tmp, "cache", "evalua", "view", "*.db"))[0])
    seq, run_id = db.execute("SELECT seq, run_id FROM runs ORDER BY seq DESC LIMIT 1").fetchone()
    table = "run_" + hashlib.sha256(run_id.encode()).hexdigest()[:16]  # the cache's table of the run (view/index.lua)
    dt, res = get(base, token, "items", {"run": run["run_id"], "q": "上传"})
    print(f"first scan search '上传': {dt:.2f} s, of which {res.get('indexed', 0):.2f} s building the scan's texts "
          f"(once; the cache keeps it), {res['total']} items")
    texts = row_texts(cache, table, path)
    print(f"\n{'filter (median of 5)':32} {'evalua view':>12} {'reference':>14} {'ratio':>7}  matches")
    print(f"{'':32} {'(HTTP + JSON)':>12} {'sqlite3 on store':>14}")
    for name, args, sql, _ in FILTERS:
        times = []
        for _ in range(5):
            dt, res = get(base, token, "items", dict(args, run=run["run_id"]))
            times.append(dt)
        ours = statistics.median(times)
        if sql:
            ref = statistics.median(ref_time(db, sql, (seq,)) for _ in range(5))
            print(f"{name:32} {ours * 1000:9.1f} ms {ref * 1000:11.1f} ms {ours / ref:6.2f}x  {res['total']}")
        elif args["q"] in SEARCH_SQL:  # the reference: the same search straight on the cache's index
            sql = SEARCH_SQL[args["q"]].format(t=table)
            ref = statistics.median(ref_time(cache, sql, ()) for _ in range(5))
            print(f"{name:32} {ours * 1000:9.1f} ms {ref * 1000:8.1f} ms (cache) {ours / ref:6.2f}x  {res['total']}")
        else:  # a scan: the same rows searched by Python
            ref, n = min(scan_ref(texts, args["q"]) for _ in range(5))
            fts = FTS_CHECK.get(args["q"])
            fts = f", FTS5: {cache.execute(fts.format(t=table)).fetchone()[0]}" if fts else ""
            print(f"{name:32} {ours * 1000:9.1f} ms {ref * 1000:8.1f} ms (Python) {ours / ref:5.2f}x  {res['total']}"
                  f" (Python: {n}{fts})")
    p.terminate()
    p.wait()
    subprocess.run(["rm", "-rf", tmp])


main()
