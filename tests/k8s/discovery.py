#!/usr/bin/env python3
"""A loopback stub of the Kubernetes API's discovery documents, no more.

`kubectl create --dry-run=client -f job.yaml` is not offline: before it prints
anything, kubectl asks the server which resources exist (GET /api, /apis,
/apis/batch/v1) to map the manifest's kind to a resource. This answers those
documents for batch/v1 Jobs (written by hand from the discovery format), and
404 to everything else: schema validation (/openapi/v2, /openapi/v3) is not
served, so kubectl runs with --validate=false against it. Prints its port on
stdout, serves until killed. No job is ever created: nothing here accepts a
POST.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

DOCS = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": []},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1",
              "groups": [{"name": "batch",
                          "versions": [{"groupVersion": "batch/v1", "version": "v1"}],
                          "preferredVersion": {"groupVersion": "batch/v1", "version": "v1"}}]},
    "/apis/batch/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "batch/v1",
                       "resources": [{"name": "jobs", "singularName": "job", "namespaced": True,
                                      "kind": "Job",
                                      "verbs": ["create", "delete", "get", "list", "watch"]}]},
}
NOT_FOUND = {"kind": "Status", "apiVersion": "v1", "status": "Failure",
             "reason": "NotFound", "code": 404}


class Handler(BaseHTTPRequestHandler):
    def reply(self, code, doc):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        doc = DOCS.get(self.path.split("?")[0])
        self.reply(200 if doc else 404, doc or NOT_FOUND)

    def do_POST(self):
        self.reply(405, dict(NOT_FOUND, reason="MethodNotAllowed", code=405))

    def log_message(self, fmt, *args):
        sys.stderr.write("discovery: " + fmt % args + "\n")


server = HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
