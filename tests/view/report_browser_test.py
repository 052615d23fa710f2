#!/usr/bin/env python3
"""The HTML report, the side-by-side view and the viewer's judge calls in
a real browser at 1920x1080 (Debian's chromium over WebDriver; the driver
of tests/view/browser_test.py).

- Two nightly runs judged by the tests' mock OpenAI server (a real HTTP
  process) with a judge cache: the newest run's HTML report has the "What
  changed" forest plot at the top, visible without a click, and each line's
  interval ends are the JSON report's comparison intervals, drawn where the
  axis puts them; the first run's report (nothing to compare with) says so
  and draws the means with the JSON report's intervals.
- scripts/prompt_matrix.lua's side-by-side view is wider than 1800 px in a
  1920 px window and shows each prompt file's text.
- evalua view on that history: the item page shows, per judged metric, the
  prompt and raw answer of each call as the cache entry holds them (read
  here from the entry files), and "not in the cache" with the reason for an
  entry removed; on a run of the offline judge it says no prompt was sent.

Environment: EVALUA (the binary), EVALUA_SRC (the source tree).
Exit status 0: passed; 77: skipped (no chromium or chromedriver); else failed.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import check, start_driver, stop  # noqa: E402  the same WebDriver client

EVALUA = os.environ.get("EVALUA", "build/evalua")
SRC = os.environ.get("EVALUA_SRC", ".")


def start(procs, args, **kw):
    p = subprocess.Popen(args, **kw)
    procs.append(p)
    return p


def wait_file(path, what):
    for _ in range(150):
        if os.path.exists(path) and open(path).read().strip():
            return open(path).read().strip()
        time.sleep(0.1)
    raise AssertionError(f"{what} did not start")


def nightly(work, out, label, variant, env):
    subprocess.run([EVALUA, "run", os.path.join(SRC, "scripts/nightly.lua"), "--out", out, "--label", label,
                    "--variant", variant, "--quiet"], stdout=subprocess.DEVNULL, cwd=work, env=env)  # exit 1: a gate failed
    return sorted(glob.glob(os.path.join(out, "reports", "*", "nightly.json")), key=os.path.getmtime)


def view_url(procs, hist, work):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "xdg"))
    p = start(procs, [EVALUA, "view", hist, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
              text=True, cwd=work, env=env)
    for _ in range(3):
        line = p.stdout.readline()
        if "http://" in line:
            return line.strip()
    raise AssertionError("evalua view printed no URL")


def forest_rows(d):
    return d.js("""return [...document.querySelectorAll('#what-changed g.row')].map(g => {
        const w = g.querySelector('path.whisker'), b = w && w.getBBox();
        return {label: g.querySelector('text.label').textContent, point: +g.dataset.point,
                lo: g.dataset.lo === undefined ? null : +g.dataset.lo, hi: g.dataset.hi === undefined ? null : +g.dataset.hi,
                x0: b ? b.x : null, x1: b ? b.x + b.width : null}; })""")


def report_page(d, reports):
    newest, first = reports[-1], reports[0]
    rep = json.load(open(newest))
    d.go("file://" + newest[:-len(".json")] + ".html")
    d.wait("return document.getElementById('what-changed')", "the report")
    size = d.js("return [innerWidth, innerHeight]")
    check(size[0] == 1920, f"the window is 1920 px wide: {size}")
    top = d.js("""const s = document.getElementById('what-changed'), svg = s.querySelector('svg.forest'),
        r = svg.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, w: r.width, folded: !!s.closest('details'),
                visible: getComputedStyle(svg).visibility === 'visible' && r.height > 0}""")
    check(top["visible"] and not top["folded"] and top["top"] < 1080,
          f"the forest plot is on the page without a click, its top {top['top']:.0f} px within the first screen")
    # The JSON report's whole-run comparison rows: each line's interval, and where the axis draws it.
    want = {f"{r['system']} · {r['metric']}": r for r in rep["comparison"]["rows"] if r["dim"] == "all" and r.get("delta") is not None}
    rows = forest_rows(d)
    check(len(rows) == len(want) > 0, f"one line per system and metric: {len(rows)} lines, {len(want)} JSON rows")
    ends = [v for r in want.values() if r.get("ci") for v in (r["ci"]["lo"], r["ci"]["hi"], r["ci"].get("delta", r["delta"]))]
    m = max([abs(v) for v in ends] + [0.01])
    for row in rows:
        r = want[row["label"]]
        ci = r.get("ci")
        if ci is None or ci["method"] == "constant":
            check(row["lo"] is None or row["lo"] == row["hi"], f"{row['label']}: no spread, no interval drawn")
            continue
        check(row["lo"] == ci["lo"] and row["hi"] == ci["hi"],
              f"{row['label']}: interval [{row['lo']}, {row['hi']}] is the JSON report's [{ci['lo']}, {ci['hi']}]")
        x = lambda v: 300 + (v + m) / (2 * m) * 560  # noqa: E731  the axis: -m..m over 560 px from x = 300
        check(abs(row["x0"] - x(ci["lo"])) < 0.6 and abs(row["x1"] - x(ci["hi"])) < 0.6,
              f"{row['label']}: the whisker spans x {row['x0']:.1f}..{row['x1']:.1f}, the axis puts the ends at "
              f"{x(ci['lo']):.1f}..{x(ci['hi']):.1f}")

    # The first run: no baseline, one system; the page says so and draws the means with their intervals.
    rep = json.load(open(first))
    d.go("file://" + first[:-len(".json")] + ".html")
    d.wait("return document.getElementById('what-changed')", "the first report")
    said = d.js("return document.getElementById('what-changed').innerText")
    check("Nothing to compare with: no baseline run and no second system." in said, "the first run's report says there is nothing to compare with")
    aggs = rep["aggregates"][rep["systems"][0]]["all"]["all"]  # system -> dim -> value -> metric
    rows = forest_rows(d)
    check(len(rows) == len(aggs), f"one line per metric: {[r['label'] for r in rows]}")
    for row in rows:
        a = aggs[row["label"]]
        check(row["point"] == a["mean"] and row["lo"] == a.get("lo") and row["hi"] == a.get("hi"),
              f"{row['label']}: mean {row['point']} [{row['lo']}, {row['hi']}] as the JSON report has it")


def matrix_page(d, work):
    out = os.path.join(work, "matrix")
    subprocess.run([EVALUA, "run", os.path.join(SRC, "scripts/prompt_matrix.lua"), "--out", out, "--quiet"],
                   stdout=subprocess.DEVNULL, cwd=work, check=False)
    page = os.path.join(out, "prompt_matrix_side_by_side.html")
    d.go("file://" + page)
    d.wait("return document.querySelector('table.matrix')", "the side-by-side view")
    width = d.js("return document.querySelector('table.matrix').getBoundingClientRect().width")
    check(width > 1800, f"the side-by-side table uses the 1920 px window: {width:.0f} px wide")
    heads = d.js("return [...document.querySelectorAll('th.prompt')].slice(1).map(t => [t.querySelector('b').textContent, t.textContent, t.innerText])")
    names = sorted(os.path.basename(f)[:-4] for f in glob.glob(os.path.join(SRC, "scripts/prompts/*.txt")))
    norm = lambda s: " ".join(s.split())  # noqa: E731
    cols = d.js("return document.querySelectorAll('table.matrix thead tr:first-child th').length - 1")
    check(len(heads) == cols and sorted(set(h[0] for h in heads)) == names,
          f"a prompt heading over each of the {cols} columns, naming every prompt file: {[h[0] for h in heads]}")
    for name, text, shown in heads:
        body = open(os.path.join(SRC, "scripts/prompts", name + ".txt")).read()
        check(norm(body) in norm(text), f"column {name} holds its prompt's text")
        check(norm(body.splitlines()[0])[:60] in norm(shown), f"column {name} shows its prompt's first line without a click")


def item_page(d, url, hist_out, report):
    rep = json.load(open(report))
    it = next(i for i in rep["items"] if "faithfulness" in i["details"] and i["details"]["faithfulness"].get("judge_calls"))
    calls = it["details"]["faithfulness"]["judge_calls"]
    cache = os.path.join(hist_out, "cache")

    def entry(key):
        with open(os.path.join(cache, key[:2], key + ".json")) as f:
            meta = json.loads(f.readline())
            return meta, json.loads(f.read())

    gone = calls[-1]["key"]
    os.remove(os.path.join(cache, gone[:2], gone + ".json"))  # evicted: the page must say so
    args = urllib.parse.urlencode({"system": it["system"], "id": json.dumps(it["id"])})
    d.go(url + "#/item?" + args)
    d.wait("return document.getElementById('judge')", "the item's judge calls")
    panel = d.js("""return [...document.querySelectorAll('#judge .judge-metric')].map(p => ({metric: p.querySelector('b').textContent,
        calls: [...p.querySelectorAll('.judge-call')].map(c => ({prompt: [...c.querySelectorAll('pre.judge-prompt')].map(e => e.textContent),
          answer: (c.querySelector('pre.judge-answer') || {}).textContent, missing: (c.querySelector('.not-cached') || {}).textContent,
          visible: !!(c.querySelector('pre.judge-prompt') || c.querySelector('.not-cached') || {}).offsetHeight}))}))""")
    faith = next(p for p in panel if p["metric"] == "faithfulness")
    check(len(faith["calls"]) == len(calls), f"the item page lists faithfulness's {len(calls)} judge calls")
    for c, shown in zip(calls[:-1], faith["calls"]):
        meta, resp = entry(c["key"])
        check(shown["prompt"] == [m["content"] for m in meta["request"]["messages"]] and shown["visible"],
              f"call {c['operation']}: the page shows the prompt the cache entry holds ({len(shown['prompt'])} messages)")
        check(shown["answer"] == resp["choices"][0]["message"]["content"],
              f"call {c['operation']}: and the judge's raw answer: {shown['answer'][:60]}")
    missing = faith["calls"][-1]["missing"] or ""
    check(missing.startswith(f"not in the cache: no entry {gone[:12]} in {cache}: evicted"),
          f"the call whose entry was removed says why: {missing}")


def offline_item_page(d, url, report):
    rep = json.load(open(report))
    it = next(i for i in rep["items"] if i["details"].get("faithfulness", {}).get("judge_calls"))
    d.go(url + "#/item?" + urllib.parse.urlencode({"system": it["system"], "id": json.dumps(it["id"])}))
    d.wait("return document.getElementById('judge')", "the offline item's judge calls")
    said = d.js("return document.getElementById('judge').innerText")
    check("not in the cache: the offline judge answered with its heuristic: no prompt was sent" in said,
          "an offline judge's call says there is no prompt to show, and why")


def run(work, procs):
    port_file = os.path.join(work, "mock.port")
    start(procs, [sys.executable, os.path.join(SRC, "tests/mock/mock_openai.py"), "--port-file", port_file,
                  "--watch-pid", str(os.getpid())], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = wait_file(port_file, "the mock judge")
    env = dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", EVALUA_MODEL="mock", OPENAI_API_KEY="x")
    out = os.path.join(work, "nightly")
    nightly(work, out, "v1", "hybrid", env)
    reports = nightly(work, out, "v2", "hybrid_rerank", env)
    offline_env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "EVALUA_MODEL")}
    offline = nightly(work, os.path.join(work, "offline"), "v1", "hybrid", offline_env)

    d = start_driver(procs, "1920,1080")
    try:
        report_page(d, reports)
        matrix_page(d, work)
        item_page(d, view_url(procs, os.path.join(out, "history"), work), out, reports[-1])
        offline_item_page(d, view_url(procs, os.path.join(work, "offline", "history"), work), offline[-1])
    finally:
        d.quit()
    print("passed")
    return 0


def main():
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        print("SKIPPED: needs chromium and chromedriver (Debian chromium, chromium-driver)")
        return 77
    work = tempfile.mkdtemp(prefix="evalua_report_view_")
    procs = []
    try:
        return run(work, procs)
    finally:
        stop(procs)  # only the processes this test started, by their handle
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
