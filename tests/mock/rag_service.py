"""A small RAG service for the tests of ev.provider.http: POST /answer with
{"question": ..., "prompt": ...} answers {"result": {"text": ..., "docs": [...]}}
(a shape of its own, so the provider's extract function is exercised).
A question holding "flaky" gets 503 on its first attempt; "broken" always 500.
GET-free: /stats (POST) returns {"requests": n, "bodies": [...]}. Exits with
the process named by --watch-pid."""
import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"requests": 0, "bodies": [], "seen": set()}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        if self.path == "/stats":
            with LOCK:
                return self.reply(200, {"requests": STATE["requests"], "bodies": STATE["bodies"]})
        if self.path == "/reset":
            with LOCK:
                STATE.update(requests=0, bodies=[], seen=set())
            return self.reply(200, {})
        with LOCK:
            STATE["requests"] += 1
            STATE["bodies"].append(body)
        req = json.loads(body)
        q = req.get("question", "")
        time.sleep(self.server.latency)
        if "broken" in q:
            return self.reply(500, {"error": "broken on purpose"})
        if "flaky" in q:
            with LOCK:
                first = q not in STATE["seen"]
                STATE["seen"].add(q)
            if first:
                return self.reply(503, {"error": "try again"})
        if self.headers.get("X-Team") != "search":
            return self.reply(401, {"error": "missing X-Team header"})
        words = q.split()
        self.reply(200, {"result": {"text": "service answer: " + " ".join(words[:6]),
                                    "docs": [{"id": "d%d" % (len(words)), "text": "about " + q}]}})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--watch-pid", type=int, default=0)
    p.add_argument("--latency-ms", type=float, default=0)
    a = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.latency = a.latency_ms / 1000
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    deadline = time.time() + 900
    while time.time() < deadline:
        if a.watch_pid:
            try:
                os.kill(a.watch_pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.2)


if __name__ == "__main__":
    main()
