#!/usr/bin/env python3
"""kill -9 against the judge cache: how many paid answers a killed run loses.

A fast mock judge (0 ms latency) answers a run of many requests
(bench/judge/kill.lua: ev.map over judge:chat with a cache); the run is
killed with SIGKILL at a random moment; the mock logs when it sent each
answer. The same run is then started again on the same cache, and every
request the mock sees again is an answer the cache did not keep. Counted
per trial: answers sent before the kill, those sent more than --margin-ms
(10) before it, and how many of each were asked for again. The goal: none
sent more than 10 ms before a kill is asked for again.

    bench/judge/kill.sh [BUILD_DIR] [--trials N] [--items N] [--concurrency N] [--seed N]
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def control(url, path, data):
    req = urllib.request.Request(url + path, data=json.dumps(data).encode(), method="POST")
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def sent_times(path):
    """request hash -> first send time, from a send log."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                t, h = line.split()
                out.setdefault(h, float(t))
    except FileNotFoundError:
        pass
    return out


def wait_for(pred, timeout=30):
    end = time.time() + timeout
    while not pred():
        if time.time() > end:
            raise SystemExit("kill.py: timed out")
        time.sleep(0.005)


def trial(a, rng, root, url, tmp, n):
    cache, log1, log2 = ("%s/%s-%d" % (tmp, name, n) for name in ("cache", "sent", "again"))
    tag = "t%d-%d" % (a.seed, n)
    cmd = (["nice", "-n", str(a.nice)] if a.nice else []) + [a.bin, "run", os.path.join(ROOT, "bench/judge/kill.lua"), url + "/v1", cache, str(a.items),
           str(a.concurrency), tag]
    control(url, "/_mock/config", {"send_log": log1})
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: os.path.exists(log1) and os.path.getsize(log1) > 0)
    time.sleep(rng.uniform(a.min_s, a.max_s))
    if p.poll() is not None:
        raise SystemExit("kill.py: the run ended before the kill; give more --items")
    t_kill = time.time()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    time.sleep(0.2)  # answers on the wire at the kill are logged too
    sent = sent_times(log1)
    control(url, "/_mock/config", {"send_log": log2})
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit("kill.py: the rerun failed: " + r.stderr)
    again = set(sent_times(log2))
    before = {h for h, t in sent.items() if t < t_kill}
    old = {h for h, t in sent.items() if t < t_kill - a.margin_ms / 1000.0}
    lost_old = old & again
    oldest = max((t_kill - sent[h]) * 1000 for h in before & again) if before & again else 0
    recovered = r.stderr.split(" answer")[0].split()[-1] if "recovered" in r.stderr else "0"
    return len(before), len(old), len(before & again), len(lost_old), oldest, recovered


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/evalua"))
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--items", type=int, default=30000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--margin-ms", type=float, default=10)
    ap.add_argument("--nice", type=int, default=0,
                    help="run evalua under nice -n N (negative, as root: the scheduler out of the way)")
    ap.add_argument("--min-s", type=float, default=0.3, help="earliest kill, after the first answer")
    ap.add_argument("--max-s", type=float, default=2.0, help="latest kill")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        port_file = tmp + "/port"
        mock = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests/mock/mock_openai.py"), "--port-file",
                                 port_file, "--latency-ms", "0", "--no-record", "--watch-pid", str(os.getpid())],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: os.path.exists(port_file))
            url = "http://127.0.0.1:%d" % int(open(port_file).read())
            print("kill -9 at a random moment %.1f-%.1f s into a run of %d requests (0 ms judge, concurrency %d), "
                  "%d trials; binary %s%s" % (a.min_s, a.max_s, a.items, a.concurrency, a.trials, a.bin,
                                        " under nice -n %d" % a.nice if a.nice else ""))
            tot = [0, 0, 0, 0]
            worst = 0
            for n in range(a.trials):
                before, old, lost, lost_old, oldest, recovered = trial(a, rng, ROOT, url, tmp, n)
                for i, v in enumerate((before, old, lost, lost_old)):
                    tot[i] += v
                worst = max(worst, oldest)
                print("trial %2d: %6d answers sent before the kill, %6d of them > %g ms before; asked again after "
                      "the restart: %5d (%d of those > %g ms; oldest %.1f ms before the kill); recovered from the "
                      "journal: %s" % (n + 1, before, old, a.margin_ms, lost, lost_old, a.margin_ms, oldest, recovered))
            print("total: %d answers sent before %d kills, %d more than %g ms before; lost %d (%d more than %g ms "
                  "before the kill, goal 0); the oldest lost answer was sent %.1f ms before its kill"
                  % (tot[0], a.trials, tot[1], a.margin_ms, tot[2], tot[3], a.margin_ms, worst))
        finally:
            mock.kill()


if __name__ == "__main__":
    main()
