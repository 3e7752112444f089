#!/usr/bin/env python3
"""Hold N idle connections to HOST:PORT (t1142): half send nothing, half
half a request. Writes DIR/opened (how many connected) once all are tried,
then DIR/closed (how many the server closed) once it closed them all, or
after 50 seconds."""
import os
import select
import socket
import sys
import time

host, port, n, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
socks = []
for i in range(n):
    try:
        s = socket.create_connection((host, port), timeout=2)
        if i % 2:
            s.sendall(b"GET / HTTP/1.1\r\nHost: %s:%d\r\n" % (host.encode(), port))
        socks.append(s)
    except OSError as e:
        print("connection %d: %s" % (i, e), flush=True)


def put(name, value):
    with open(os.path.join(out, name + ".tmp"), "w") as f:
        f.write("%d\n" % value)
    os.rename(os.path.join(out, name + ".tmp"), os.path.join(out, name))


put("opened", len(socks))
open_ = set(socks)
end = time.monotonic() + 50
while open_ and time.monotonic() < end:
    ready, _, _ = select.select(list(open_), [], [], 1)
    for s in ready:
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:
            open_.discard(s)
            s.close()
put("closed", len(socks) - len(open_))
