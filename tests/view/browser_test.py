#!/usr/bin/env python3
"""evalua view in a real browser: Debian's chromium driven over WebDriver
(chromedriver, HTTP; Python 3 standard library only).

Makes a history of two nightly runs (offline judge), starts `evalua view` on
a free port, filters the items by a text search, opens an item, labels three
items with the keyboard (one with a note), reloads and finds the labels,
exports them and runs calibrate on them; checks that the page asked no host
but 127.0.0.1 and that a POST without the token is refused. Expected values
come from the run's own JSON report, read here independently.

Environment: EVALUA (the binary), EVALUA_SRC (the source tree);
VIEW_SCREENSHOT=path saves a screenshot of the items page (README image).
Exit status 0: passed; 77: skipped (no chromium or chromedriver); else failed.
"""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

EVALUA = os.environ.get("EVALUA", "build/evalua")
SRC = os.environ.get("EVALUA_SRC", ".")
CHECKS = []


# ev.stats.paired_ci of the pairs in $PAIRS ([[a, b], ...]), as JSON.
PAIRED_CI = """
local ev = require "evalua"
local xs, ys = {}, {}
for i, p in ipairs(require("cjson").decode(os.getenv("PAIRS"))) do xs[i], ys[i] = p[1], p[2] end
local ci = ev.stats.paired_ci(xs, ys)
print(require("cjson").encode { lo = ci.lo, hi = ci.hi, method = ci.method })
"""


def check(cond, what):
    CHECKS.append(what)
    if not cond:
        raise AssertionError(what)
    print("ok -", what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Driver:
    """The few WebDriver commands the test needs."""

    def __init__(self, port, window="1600,1000"):
        self.base = f"http://127.0.0.1:{port}"
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"performance": "ALL"},
            "goog:chromeOptions": {"binary": shutil.which("chromium"),
                                   "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                            f"--window-size={window}", "--no-first-run",
                                            "--disable-background-networking", "--disable-component-update",
                                            "--disable-sync", "--disable-default-apps"]}}}}
        self.sid = self.cmd("POST", "/session", caps)["sessionId"]

    def cmd(self, method, path, body=None):
        data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        status, out = http(method, self.base + path, data, {"Content-Type": "application/json"})
        val = json.loads(out or b"{}").get("value")
        if status != 200:
            raise RuntimeError(f"webdriver {method} {path}: {status} {val}")
        return val

    def s(self, method, path, body=None):
        return self.cmd(method, f"/session/{self.sid}{path}", body)

    def go(self, url):
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait(self, script, what, timeout=15):
        end = time.time() + timeout
        while time.time() < end:
            v = self.js(script)
            if v:
                return v
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; page says: {self.js('return document.body.innerText')[:500]}")

    def keys(self, text):
        acts = []
        for ch in text:
            acts += [{"type": "keyDown", "value": ch}, {"type": "keyUp", "value": ch}]
        self.s("POST", "/actions", {"actions": [{"type": "key", "id": "kb", "actions": acts}]})

    def type_into(self, css, text):
        el = self.s("POST", "/element", {"using": "css selector", "value": css})
        self.s("POST", f"/element/{list(el.values())[0]}/value", {"text": text})

    def perf_log(self):
        return self.s("POST", "/se/log", {"type": "performance"})

    def screenshot(self, path):
        import base64
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.s("GET", "/screenshot")))

    def quit(self):
        try:
            self.s("DELETE", "")
        except Exception:
            pass


def stop(procs):
    """Ends the processes a test started, by their handles."""
    for p in procs:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


def start_driver(procs, window="1600,1000"):
    """chromedriver on a free port (added to procs) and a session with a window of that size."""
    dport = free_port()
    procs.append(subprocess.Popen([shutil.which("chromedriver"), f"--port={dport}"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL))
    for _ in range(100):
        try:
            if http("GET", f"http://127.0.0.1:{dport}/status")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    return Driver(dport, window)


def main():
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not chromedriver:
        print("SKIPPED: needs chromium and chromedriver (Debian chromium, chromium-driver)")
        return 77
    work = tempfile.mkdtemp(prefix="evalua_view_")
    procs = []
    status = 1
    try:
        status = run(work, procs)
    finally:
        stop(procs)
        shutil.rmtree(work, ignore_errors=True)
    # The server's own stderr: under ASan/UBSan (the :san flavour) a report there fails the test.
    err = procs[0].stderr.read() if procs and procs[0].stderr else ""
    if any(k in err for k in ("AddressSanitizer", "LeakSanitizer", "runtime error:")):
        print("evalua view's stderr:\n" + err)
        return 1
    return status


def run(work, procs):
    WORK.append(work)
    out = os.path.join(work, "nightly")
    # v1 the hybrid pipeline, v2 hybrid with reranking: the run page has something to show as changed
    for label, variant in (("v1", "hybrid"), ("v2", "hybrid_rerank")):
        subprocess.run([EVALUA, "run", os.path.join(SRC, "scripts/nightly.lua"), "--out", out, "--label", label,
                        "--variant", variant, "--quiet"], stdout=subprocess.DEVNULL, cwd=work)
    hist = os.path.join(out, "history")
    report = max(glob.glob(os.path.join(out, "reports", "*", "nightly.json")), key=os.path.getmtime)  # the newest run's
    items = json.load(open(report))["items"]

    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))  # the viewer's cache: here, not in ~/.cache
    os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
    view = subprocess.Popen([EVALUA, "view", hist, "--port", "0", "--rater", "ana"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=work, env=env)
    procs.append(view)
    line = ""
    for _ in range(3):
        line = view.stdout.readline()
        if "http://" in line:
            break
    url = line.strip()
    check(url.startswith("http://127.0.0.1:") and "/?token=" in url, f"evalua view prints a URL with a token: {url}")
    base, token = url.split("/?token=")

    # The run's table is built on its first opening and kept in the cache for the next start.
    first = json.loads(http("GET", base + "/api/run", headers={"X-Evalua-Token": token})[1])
    cached = glob.glob(os.path.join(env["XDG_CACHE_HOME"], "evalua", "view", "*.db"))
    check(first["built"] > 0 and len(cached) == 1, f"the first opening builds the run's table into the cache: {cached}")
    check(first["search_index"] is False, "the first opening leaves the full-text index to the run's first search")

    # "What changed": the paired delta of every metric against v1, paired here from the two reports, its
    # interval the one evalua diff gives for those pairs (ev.stats.paired_ci, whose coverage docs/stats.md measures).
    older = min(glob.glob(os.path.join(out, "reports", "*", "nightly.json")), key=os.path.getmtime)
    before = {(it["system"], it["id"]): it["scores"] for it in json.load(open(older))["items"]}
    for d in first["deltas"]:
        pairs = [(before[(it["system"], it["id"])][d["metric"]], it["scores"][d["metric"]]) for it in items
                 if d["metric"] in it["scores"] and d["metric"] in before.get((it["system"], it["id"]), {})]
        mean = sum(y - x for x, y in pairs) / len(pairs)
        ref = json.loads(subprocess.run([EVALUA, "run", "/dev/stdin"], input=PAIRED_CI, text=True, check=True,
                                        capture_output=True, env=dict(os.environ, PAIRS=json.dumps(pairs))).stdout)
        check(d["n"] == len(pairs) and abs(d["delta"] - mean) < 1e-9 and d["method"] == ref["method"]
              and abs(d["lo"] - ref["lo"]) < 1e-12 and abs(d["hi"] - ref["hi"]) < 1e-12,
              f"the run page's paired delta of {d['metric']}: {d['delta']:.4f} [{d['lo']:.4f}, {d['hi']:.4f}] "
              f"({d['method']}) on {d['n']} items")

    # The server's own rules, without a browser.
    check(http("GET", base + "/")[0] == 403, "a page asked for without the token is refused (403)")
    check(http("GET", base + "/api/runs")[0] == 403, "the API without the token is refused (403)")
    status, _ = http("POST", base + "/api/label?token=" + token, b'{"item":"q03"}')
    check(status == 403, "a POST with the token in the URL but not in X-Evalua-Token is refused (403)")
    status, _ = http("GET", base + "/api/info", headers={"X-Evalua-Token": token, "Host": "evil.example:80"})
    check(status == 403, "a request naming another host (DNS rebinding) is refused (403)")

    d = start_driver(procs)
    try:
        browse(d, url, base, token, items)
        exported_page(d, hist, work, items)
    finally:
        d.quit()

    # Export the labels and calibrate on them: the labels made in the page change its output.
    exported = os.path.join(work, "labels.jsonl")
    cal = subprocess.run([EVALUA, "run", os.path.join(SRC, "scripts/calibrate.lua"), "--history", hist,
                          "--metric", "faithfulness", "--field", "faithfulness", "--export-labels", exported,
                          "--out", os.path.join(work, "cal"), "--quiet"], capture_output=True, text=True, cwd=work)
    got = [json.loads(x) for x in open(exported)]
    check(sorted((g["item"], g["value"], g["rater"]) for g in got) == sorted(LABELLED + IMPORTED),
          f"the exported labels are the three made with the keyboard and the one imported: {got}")
    check(any(g.get("note") == "cites the manual" for g in got), "the note typed after n is exported with its label")
    check("4 labelled items" in cal.stdout and "only 4 labelled items; 50 or more are needed" in cal.stdout,
          "calibrate counts the four labels and warns that 50 are needed:\n" + cal.stdout)
    # Its confusion table, computed here: label value against the judge's score mapped to 1..5.
    scores = {it["id"]: it["scores"].get("faithfulness") for it in items}
    table = {v: [0] * 5 for v in range(1, 6)}
    for item, value, _ in LABELLED + IMPORTED:
        table[value][int(1 + scores[item] * 4 + 0.5) - 1] += 1
    for v, counts in table.items():
        line = f"{v:>6}" + "".join(f"{c:>5}" for c in counts)
        check(line in cal.stdout.splitlines(), f"calibrate's confusion row for label {v}: '{line}'")
    print(f"passed: {len(CHECKS)} checks")
    return 0


LABELLED = []
IMPORTED = []
WORK = []


def hay(it):
    """The texts the search reads, as this test reads them from the report: the row (query, answer, contexts...)."""
    return json.dumps(it.get("row", {}), ensure_ascii=False).lower()


def word_starts(it, word):
    """The server's search, as docs/view.md says it: word starts a word of the id, query, answer or contexts."""
    row = it.get("row", {})
    texts = [str(it["id"]), row.get("query", ""), row.get("answer", "")] + list(row.get("contexts", []))
    return any(re.search(r"(?:^|[^0-9a-z])" + re.escape(word), str(t).lower()) for t in texts)


def exported_page(d, hist, work, items):
    """evalua view --export: one read-only file that opens with no server and asks for nothing."""
    out = os.path.join(work, "export")
    said = subprocess.run([EVALUA, "view", hist, "--export", out], capture_output=True, text=True, check=True).stdout
    check(f"{len(items)} of the newest run's {len(items)} items" in said, f"--export says what it embedded: {said.strip()}")
    d.perf_log()  # empties the log: what follows is the export's
    d.go("file://" + os.path.join(out, "index.html") + "#/items")
    d.wait("return document.querySelectorAll('#items tr.row').length", "the exported items table")
    check(d.js("return document.getElementById('status').textContent").endswith("read-only"),
          "the exported page says it is read-only")
    total = d.js("return document.getElementById('total').textContent")
    check(total.startswith(f"{len(items)} items"), f"the export holds every item: {total}")
    # The export searches as the server does: a word's start ("ucket" is inside words only), not a substring.
    for word in ("bucket", "ucket"):
        d.js(f"const q = document.getElementById('f-q'); q.value = '{word}'; q.dispatchEvent(new Event('change'));")
        want = sum(word_starts(it, word) for it in items)
        d.wait(f"return document.getElementById('total').textContent.startsWith('{want} items')",
               f"the export's search of {word!r}: {want} items")
    check(sum(word_starts(it, "bucket") for it in items) > 0 and sum("ucket" in hay(it) for it in items) > 0,
          "the export's search was asked words that the rows hold, as a word's start and inside words")
    d.js("const q = document.getElementById('f-q'); q.value = ''; q.dispatchEvent(new Event('change'));")
    labs = d.js("const s = document.getElementById('label-metric'); s.value = 'faithfulness'; "
                "s.dispatchEvent(new Event('change')); return 1")
    d.js("document.activeElement.blur()")
    d.keys("3")
    d.wait("return document.getElementById('status').textContent.startsWith('label not saved')", "the refusal")
    check("read-only" in d.js("return document.getElementById('status').textContent"),
          "a label key in the export is refused as read-only")
    d.js("document.querySelector('#items tr.row a').click()")
    d.wait("return document.querySelector('h1').textContent.startsWith('Item ')", "the exported item page")
    schemes = set()
    for entry in d.perf_log():
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            schemes.add(msg["params"]["request"]["url"].split(":")[0])
    check(schemes <= {"file", "data"}, f"the export asked for nothing but its own file: {sorted(schemes)}")


def browse(d, url, base, token, items):
    d.go(url + "#/items")
    d.wait("return document.querySelectorAll('#items tr.row').length", "the items table")
    total = d.js("return document.getElementById('total').textContent")
    check(total.startswith(f"{len(items)} items"), f"the items page counts every item of the run: {total}")

    # Filter: a text search over query, answer and contexts, counted here from the report.
    want = sorted(it["id"] for it in items if word_starts(it, "bucket"))
    d.js("const q = document.getElementById('f-q'); q.value = 'bucket'; q.dispatchEvent(new Event('change'));")
    d.wait(f"return document.getElementById('total') && document.getElementById('total').textContent.startsWith('{len(want)} items')",
           "the search's count")
    shown = sorted(d.js("return [...document.querySelectorAll('#items tr.row')].map(r => JSON.parse(r.dataset.id))"))
    check(shown == want and len(want) > 0, f"searching 'bucket' keeps the {len(want)} items with a word that starts with it: {shown}")
    said = d.js("return document.getElementById('status').textContent")
    check(said.startswith("built the run's search index in "), f"the run's first search says it built the index: {said}")

    # Open an item: its query as the report has it, and its scores with reasons.
    first = want[0]
    d.js("document.querySelector('#items tr.row a').click()")
    d.wait("return document.querySelector('h1') && document.querySelector('h1').textContent.startsWith('Item ')", "the item page")
    row = next(it for it in items if it["id"] == first)
    page = d.js("return document.getElementById('main').innerText")
    check(row["row"]["query"] in page, f"the item page shows the query of {first}")
    reason = row["reasons"].get("faithfulness")
    check(reason and reason in page, f"the item page shows faithfulness's reason: {reason}")

    # Label three items with the keyboard: 4, 2, then a note and 5 (on the faithfulness criterion).
    d.go(url + "#/items")
    d.wait("return document.querySelectorAll('#items tr.row').length > 3", "the items table")
    d.js("const s = document.getElementById('label-metric'); s.value = 'faithfulness'; s.dispatchEvent(new Event('change'));")
    ids = d.js("return [...document.querySelectorAll('#items tr.row')].slice(0, 3).map(r => JSON.parse(r.dataset.id))")
    d.js("document.activeElement.blur()")
    d.keys("4")
    d.wait("return document.getElementById('status').textContent.startsWith('labelled')", "the first label saved")
    d.keys("2")
    d.wait(f"return document.getElementById('status').textContent.startsWith('labelled {ids[1]}')", "the second label saved")
    d.keys("n")
    d.wait("return document.activeElement && document.activeElement.id === 'note'", "the note box")
    d.keys("cites the manual\n")
    d.keys("5")
    d.wait(f"return document.getElementById('status').textContent.startsWith('labelled {ids[2]}')", "the third label saved")
    LABELLED.extend([(ids[0], 4, "ana"), (ids[1], 2, "ana"), (ids[2], 5, "ana")])

    d.js("location.reload()")
    d.wait("return document.querySelectorAll('#items tr.row').length > 3", "the items table after reload")
    d.js("const s = document.getElementById('label-metric'); s.value = 'faithfulness'; s.dispatchEvent(new Event('change'));")
    d.js("location.hash = '#/items?x=1'")
    d.wait("return document.querySelector('th:last-child').textContent.includes('faithfulness')", "the faithfulness column")
    labs = d.js("return [...document.querySelectorAll('#items tr.row')].slice(0, 3).map(r => r.querySelector('.lab').textContent)")
    check(labs == ["4", "2", "5 ✎"], f"after a reload the page shows the three labels from the store: {labs}")

    # The queue says how many labels the rule still needs.
    d.go(url + "#/queue?metric=faithfulness")
    needed = d.wait("const e = document.getElementById('needed'); return e && e.textContent", "the queue")
    check("needs 47 more" in needed, f"the label queue counts the labels the calibration rule needs: {needed}")

    # Labels made elsewhere, imported through the page: a bad line refuses the file whole, naming the line.
    bad_file, good_file = os.path.join(WORK[0], "bad.jsonl"), os.path.join(WORK[0], "team.jsonl")
    other = next(it["id"] for it in items if it["id"] not in {x[0] for x in LABELLED})
    line = {"item": other, "system": "all", "metric": "faithfulness", "value": 3, "scale": "1..5", "rater": "bo",
            "time": "2026-12-01T10:00:00Z"}
    with open(bad_file, "w") as f:
        f.write(json.dumps(line) + "\n" + json.dumps(dict(line, value=7)) + "\n")
    with open(good_file, "w") as f:
        f.write(json.dumps(line) + "\n")
    d.type_into("#import", bad_file)
    said = d.wait("const t = document.getElementById('status').textContent; return t.startsWith('import') && t", "the refusal")
    check("body:2: field 'value'" in said, f"a file with a bad line is refused, naming the line: {said}")
    d.go(url + "#/queue?metric=faithfulness&again=1")
    d.wait("return document.getElementById('main').dataset.page === '#/queue?metric=faithfulness&again=1'", "the queue")
    d.type_into("#import", good_file)
    said = d.wait("const t = document.getElementById('status').textContent; return t.startsWith('imported') && t", "the import")
    check(said == "imported 1 labels (0 there already)", f"a good file is imported: {said}")
    d.go(url + "#/queue?metric=faithfulness&again=2")
    d.wait("return document.getElementById('main').dataset.page === '#/queue?metric=faithfulness&again=2'", "the queue")
    needed = d.js("return document.getElementById('needed').textContent")
    check("needs 46 more" in needed, f"the imported label counts: {needed}")
    IMPORTED.append((other, 3, "bo"))

    # A POST from the page without the token header is refused.
    status = d.s("POST", "/execute/async", {"script": "const done = arguments[0]; fetch('/api/label', {method: 'POST', "
                 "body: '{}'}).then(r => done(r.status), e => done(String(e)))", "args": []})
    check(status == 403, f"a POST from the page without X-Evalua-Token is refused: {status}")

    if os.environ.get("VIEW_SCREENSHOT"):
        d.go(url + "#/run")
        d.wait("return document.querySelector('#slices')", "the run page")
        d.screenshot(os.environ["VIEW_SCREENSHOT"])

    # Every request the page made went to this server.
    hosts = set()
    for entry in d.perf_log():
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            u = msg["params"]["request"]["url"]
            if not u.startswith("data:"):
                hosts.add(u.split("/")[2] if "://" in u else u)
    port = base.rsplit(":", 1)[1]
    check(hosts == {f"127.0.0.1:{port}"}, f"the page asked no host but 127.0.0.1:{port}: {sorted(hosts)}")


if __name__ == "__main__":
    sys.exit(main())
