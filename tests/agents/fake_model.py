#!/usr/bin/env python3
"""A fake model server on loopback for the agent CLI tests (t0960-t0962).

It stands in for a model provider's API so that the real agent CLIs
(Claude Code, codex, Gemini CLI) can run unattended here without a network.
Each protocol is a module beside this file (anthropic.py: Anthropic
Messages with SSE; openai_responses.py: OpenAI Responses with SSE;
gemini.py: Gemini generateContent / streamGenerateContent), which exposes

    handle(req) -> bool    # True when it answered the request

where `req` is a Request (below). The script of a conversation is the
same for every protocol: the first turn answers with a tool call that
writes FILE with CONTENT in the agent's working directory (--edit); when
the request carries that tool call's result, the next turn answers with
the final text (--final), which the preset keeps as the run's summary.

Every request is recorded as JSON in --record DIR (method, path, headers
less credentials, body), with, for every process whose environment holds
SLUICE_RUN_ID= (the builder and the CLI under it), whether the value of
--secret-env's variable appears in that environment: the reviewer token
must never be there.

    fake_model.py --port 0 --port-file F --record DIR \
        --edit hello.txt='hello from the agent' --final 'wrote hello.txt' \
        [--secret VALUE]
"""
import argparse
import importlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
PROTOCOLS = ["anthropic", "openai_responses", "gemini"]


class Request:
    def __init__(self, handler, body, opts):
        self.handler = handler
        self.method = handler.command
        self.path = handler.path
        self.headers = handler.headers
        self.raw = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None
        self.edit_path, _, self.edit_content = opts.edit.partition("=")
        self.final = opts.final

    def send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        h = self.handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def start_sse(self, content_type="text/event-stream"):
        h = self.handler
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True

    def sse(self, data, event=None):
        out = ""
        if event:
            out += "event: %s\n" % event
        out += "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))
        self.handler.wfile.write(out.encode())
        self.handler.wfile.flush()


def environments_with_secret(secret):
    """[(pid, cmdline, has_secret)] for processes under a sluice builder."""
    seen = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read()
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
        except OSError:
            continue
        if b"SLUICE_RUN_ID=" in env:
            seen.append({"pid": int(pid), "cmdline": cmd,
                         "has_secret": bool(secret) and secret.encode() in env})
    return seen


def make_handler(opts, counter):
    modules = [importlib.import_module(p) for p in PROTOCOLS]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write("fake_model: " + (fmt % args) + "\n")

        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            req = Request(self, body, opts)
            with counter["lock"]:
                counter["n"] += 1
                k = counter["n"]
            rec = {
                "n": k, "method": self.command, "path": self.path,
                "headers": {a: b for a, b in self.headers.items()
                            if a.lower() not in ("authorization", "x-api-key", "x-goog-api-key")},
                "body": req.json if req.json is not None else body.decode(errors="replace"),
                "processes": environments_with_secret(opts.secret),
            }
            with open(os.path.join(opts.record, "%04d.json" % k), "w") as f:
                json.dump(rec, f, indent=1)
            for m in modules:
                if m.handle(req):
                    return
            req.send_json({"error": {"message": "fake_model: no protocol answers %s %s"
                                     % (self.command, self.path)}}, 404)

        do_GET = do_POST = do_PUT = do_DELETE = handle_any

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--edit", default="agent.txt=written by the agent")
    ap.add_argument("--final", default="I wrote agent.txt.")
    ap.add_argument("--secret", default="")
    opts = ap.parse_args()
    os.makedirs(opts.record, exist_ok=True)
    srv = ThreadingHTTPServer(("127.0.0.1", opts.port),
                              make_handler(opts, {"n": 0, "lock": threading.Lock()}))
    tmp = opts.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, opts.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
