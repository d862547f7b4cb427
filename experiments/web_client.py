#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Load for the busy-web-server experiment (experiments/web-guest.sh).

  web_client.py HOST MANIFEST OUT.jsonl --seconds S --seed N
                [--short C] [--keepalive K] [--bulk B] [--think S]

MANIFEST lists "path size" lines of the heavy-tailed file set; the bulk
files are the lines whose path starts with /bulk/. Three kinds of client
run for S seconds, each in its own thread with its own seeded generator:
  short      C clients: a new connection per request, a random file, then
             an exponential think time (mean --think)
  keepalive  K clients: one persistent connection carrying request after
             request the same way
  bulk       B clients: download bulk files back to back
Every completed request is one JSON line: kind, path, bytes, start and end
(CLOCK_MONOTONIC seconds; start before connect for a new connection, before
sending the request on a kept-alive one; end at the last body byte), and
port and nth: the connection's local port and the request's place on it
(0, 1, ...), by which web_analyze.py finds it in the client-side capture.
Exits non-zero if a request fails or returns short.
"""
import argparse
import http.client
import json
import random
import sys
import threading
import time

CHUNK = 1 << 16


def read_all(resp):
    n = 0
    while True:
        b = resp.read(CHUNK)
        if not b:
            return n
        n += len(b)


class Client(threading.Thread):
    def __init__(self, kind, host, files, deadline, seed, think, out, lock, errors):
        super().__init__(daemon=True)
        self.kind, self.host, self.files = kind, host, files
        self.deadline, self.rng, self.think = deadline, random.Random(seed), think
        self.out, self.lock, self.errors = out, lock, errors

    def one(self, conn, nth, path, size):
        start = time.monotonic()
        if conn is None:
            c = http.client.HTTPConnection(self.host, 80, timeout=120)
            c.request("GET", path, headers={"Connection": "close"})
        else:
            c = conn
            c.request("GET", path)
        port = c.sock.getsockname()[1]
        resp = c.getresponse()
        n = read_all(resp)
        end = time.monotonic()
        if conn is None:
            c.close()
        if resp.status != 200 or n != size:
            raise RuntimeError("%s: status %d, %d of %d bytes" % (path, resp.status, n, size))
        with self.lock:
            self.out.write(json.dumps({"kind": self.kind, "path": path, "bytes": n,
                                       "start": start, "end": end, "port": port,
                                       "nth": nth}) + "\n")

    def run(self):
        conn = None
        try:
            if self.kind == "keepalive":
                conn = http.client.HTTPConnection(self.host, 80, timeout=120)
            nth = 0
            while time.monotonic() < self.deadline:
                path, size = self.rng.choice(self.files)
                self.one(conn, nth if conn else 0, path, size)
                nth += 1
                if self.think:
                    time.sleep(self.rng.expovariate(1 / self.think))
        except Exception as e:  # noqa: BLE001 - reported, then the run fails
            with self.lock:
                self.errors.append("%s client: %s" % (self.kind, e))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("manifest")
    p.add_argument("out")
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--short", type=int, default=8)
    p.add_argument("--keepalive", type=int, default=4)
    p.add_argument("--bulk", type=int, default=2)
    p.add_argument("--think", type=float, default=0.2)
    a = p.parse_args()
    files, bulk = [], []
    for line in open(a.manifest):
        path, size = line.split()
        (bulk if path.startswith("/bulk/") else files).append((path, int(size)))
    deadline = time.monotonic() + a.seconds
    lock, errors = threading.Lock(), []
    with open(a.out, "w") as out:
        clients = []
        seed = a.seed
        for kind, n, fs, think in (("bulk", a.bulk, bulk, 0), ("short", a.short, files, a.think),
                                   ("keepalive", a.keepalive, files, a.think)):
            for _ in range(n):
                seed += 1
                clients.append(Client(kind, a.host, fs, deadline, seed, think, out, lock, errors))
        for c in clients:
            c.start()
        for c in clients:
            c.join(a.seconds + 180)
            if c.is_alive():
                errors.append("%s client still running long after the deadline" % c.kind)
    if errors:
        sys.exit("web_client: " + "; ".join(errors[:5]))


if __name__ == "__main__":
    main()
