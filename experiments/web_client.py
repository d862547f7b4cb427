#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Load for the busy-web-server experiment (experiments/web-guest.sh).

  web_client.py HOST MANIFEST OUT.jsonl --seconds S --seed N [--port P]
                [--short C] [--keepalive K] [--bulk B] [--think S]
  web_client.py HOST MANIFEST OUT.jsonl --seconds S --seed N --mode open
                --load F --rate RATE [--dist D --scale X --blob PATH]
                [--conn new|pool] [--workers W] [--bulk B] [--drain S]
                [--sources ADDR=LABEL,...]
  web_client.py HOST MANIFEST OUT.jsonl --seconds S --seed N --mode idle
                --dist D --scale X --blob PATH [--conn new|pool]
                [--sizes K] [--reps R] [--gap S] [--sources ADDR=LABEL,...]

Closed loop (the default, what web-guest.sh runs): MANIFEST lists "path
size" lines of the heavy-tailed file set; the bulk files are the lines
whose path starts with /bulk/. Three kinds of client run for S seconds,
each in its own thread with its own seeded generator:
  short      C clients: a new connection per request, a random file, then
             an exponential think time (mean --think)
  keepalive  K clients: one persistent connection carrying request after
             request the same way
  bulk       B clients: download bulk files back to back
Every completed request is one JSON line: kind, path, bytes, start and end
(CLOCK_MONOTONIC seconds; start before connect for a new connection, before
sending the request on a kept-alive one; end at the last body byte), and
port and nth: the connection's local port and the request's place on it
(0, 1, ...), by which web_analyze.py finds it in the client-side capture,
and hdr, the response header's bytes. A bulk line also has progress,
[seconds since start, body bytes] every 10 ms or more, and max_gap, the
longest time (s) the socket gave nothing. Exits non-zero if a request
fails or returns short.

Open loop (--mode open): requests arrive as a Poisson process whatever
the server's pace, as in pFabric's, PIAS's and Homa's workloads. The rate
is lambda = F * RATE / (8 * mean wire bytes of a response): a response is
its body (sizes from --dist, scaled by --scale; see sizes.py) plus
--header-bytes of HTTP header (nginx's 206 is ~283 B), in MSS segments of
1448 B each charged 66 B of Ethernet/IP/TCP header, as tbf on the veth
counts them (no preamble or inter-frame gap: wire.py). Arrival times and
sizes are drawn before the run from the seed, so every policy of a round
sees the same requests. A body of N bytes is "GET --blob" with "Range:
bytes=0-(N-1)", so one file serves every size (it must be as large as the
largest); --dist manifest picks MANIFEST's non-bulk files instead, as the
closed loop does. Each request takes a worker from a pool of --workers
threads and a new connection (--conn new, kind "short") or an idle
kept-alive one (--conn pool, kind "keepalive"; opened when none is idle).
A line also has i (the arrival's index) and sched (when it was due; start
is when a worker began it). --bulk B adds B bulk clients as in the closed
loop, on top of the offered load. After --seconds of arrivals the client
waits up to --drain seconds for requests in flight. OUT.load.json (OUT
without .jsonl) records the arrivals, how many started later than --late
seconds after they were due or found no idle worker, failures, requests
unfinished at the end, and the load: target, offered (the arrivals' wire
bytes over the seconds and the rate), achieved (response bytes received
during the arrival window, framed, over the seconds and the rate; bulk
apart), and served (all completed responses' wire bytes over the time to
the last completion). Exits non-zero if a request fails.

Idle (--mode idle): the baseline the open loop's delays are judged
against, what each size takes alone on the idle link. K sizes spaced
evenly in log(size) from the smallest to the largest of --dist (scaled),
each requested R times, in an order shuffled by the seed, one at a time,
--gap seconds apart (longer than an RTO: a kept-alive connection restarts
from its initial window, as an idle one does). --conn new: each on a new
connection (nth 0); pool: all on one kept-alive connection (its first
request, nth 0, too). Rows as the open loop's, of kind "idle"; stops
after --seconds even if sizes are left.

Several round trips in one run (--sources ADDR=LABEL,..., open and idle
modes): the client has an address per round trip (openloop-guest.sh's
WEB_RTTS delays each address's packets by its own netem). Arrival i is
requested from address i mod n, whatever its size; the bulk clients use
the default address. Each row then has src and rtt (the label). The idle
baseline runs its plan from each address in turn.
"""
import argparse
import http.client
import json
import os
import queue
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sizes  # noqa: E402
import wire  # noqa: E402

CHUNK = 1 << 16
PROGRESS_EVERY = 0.01
HEADER_ESTIMATE = 283  # nginx 1.22's 206 response header for a 1 MB file


def read_all(resp, counter=None):
    n = 0
    while True:
        b = resp.read(CHUNK)
        if not b:
            return n
        n += len(b)
        if counter:
            counter.add(len(b))


def read_progress(resp, start, counter=None):
    """Read a body as it comes: (bytes, [[t, bytes], ...] every
    PROGRESS_EVERY s or more, longest wait for data in s)."""
    n, last, gap, prog = 0, start, 0.0, []
    while True:
        b = resp.read1(CHUNK)
        now = time.monotonic()
        if not b:
            prog.append([round(now - start, 4), n])
            return n, prog, max(gap, now - last)
        gap = max(gap, now - last)
        last = now
        n += len(b)
        if counter:
            counter.add(len(b))
        if not prog or now - start - prog[-1][0] >= PROGRESS_EVERY:
            prog.append([round(now - start, 4), n])


def header_bytes(resp):
    """The response header's length, as nginx writes it ("Key: value")."""
    return (len("HTTP/1.1 %d %s\r\n" % (resp.status, resp.reason))
            + sum(len(k) + len(v) + 4 for k, v in resp.getheaders()) + 2)


class Counter:
    """Body bytes received before a deadline."""

    def __init__(self, deadline):
        self.deadline, self.n, self.lock = deadline, 0, threading.Lock()

    def add(self, n):
        if time.monotonic() <= self.deadline:
            with self.lock:
                self.n += n


class Log:
    """The request log: one JSON line per request, until closed."""

    def __init__(self, f):
        self.f, self.lock, self.closed, self.errors = f, threading.Lock(), False, []

    def write(self, row):
        with self.lock:
            if not self.closed:
                self.f.write(json.dumps(row) + "\n")

    def error(self, msg):
        with self.lock:
            self.errors.append(msg)

    def close(self):
        with self.lock:
            self.closed = True


def get(conn, path, headers, want, status, bulk=False, counter=None, conns=None):
    """One request on conn; the response's row (without its kind). conns, a
    list, gets [local port, start] as soon as the connection has a port."""
    start = time.monotonic()
    conn.request("GET", path, headers=headers)
    port = conn.sock.getsockname()[1]
    if conns is not None:
        conns.append([port, start])
    resp = conn.getresponse()
    row = {"path": path}
    if bulk:
        n, row["progress"], row["max_gap"] = read_progress(resp, start, counter)
    else:
        n = read_all(resp, counter)
    end = time.monotonic()
    if resp.status not in status or n != want:
        raise RuntimeError("%s: status %d, %d of %d bytes" % (path, resp.status, n, want))
    row.update({"bytes": n, "hdr": header_bytes(resp), "start": start, "end": end,
                "port": port})
    return row


def connect(host, port, src=None):
    """An HTTP connection, from the client address src if given (each of
    --sources has its own round trip: openloop-guest.sh's WEB_RTTS)."""
    return http.client.HTTPConnection(host, port, timeout=120,
                                      source_address=(src, 0) if src else None)


class Client(threading.Thread):
    """A closed-loop client: a request, a think time, the next request."""

    def __init__(self, kind, host, port, files, deadline, seed, think, log, counter=None):
        super().__init__(daemon=True)
        self.kind, self.host, self.port, self.files = kind, host, port, files
        self.deadline, self.rng, self.think = deadline, random.Random(seed), think
        self.log, self.counter = log, counter
        self.conns = []  # every connection's [local port, start], finished or not

    def run(self):
        conn = None
        try:
            if self.kind == "keepalive":
                conn = connect(self.host, self.port)
            nth = 0
            while time.monotonic() < self.deadline:
                path, size = self.rng.choice(self.files)
                if conn is None:
                    c = connect(self.host, self.port)
                    row = get(c, path, {"Connection": "close"}, size, (200,),
                              self.kind == "bulk", self.counter, self.conns)
                    c.close()
                else:
                    row = get(conn, path, {}, size, (200,))
                row.update({"kind": self.kind, "nth": nth if conn else 0})
                self.log.write(row)
                nth += 1
                if self.think:
                    time.sleep(self.rng.expovariate(1 / self.think))
        except Exception as e:  # noqa: BLE001 - reported, then the run fails
            self.log.error("%s client: %s" % (self.kind, e))


def poisson_arrivals(lam, seconds, rng):
    """Arrival times in [0, seconds) of a Poisson process of rate lam."""
    t, out = 0.0, []
    while True:
        t += rng.expovariate(lam)
        if t >= seconds:
            return out
        out.append(t)


def schedule(seed, lam, seconds, draw):
    """[(due time, size)]: arrivals and sizes from two streams of seed, so
    a longer run keeps a shorter one's arrivals and the sizes do not depend
    on the rate."""
    times = poisson_arrivals(lam, seconds, random.Random("%d/arrivals" % seed))
    rng = random.Random("%d/sizes" % seed)
    return [(t, draw(rng)) for t in times]


def parse_sources(text):
    """--sources "ADDR=LABEL,...": [(address, label)] (the label names the
    address's round trip: 2ms); None for none."""
    if not text:
        return None
    out = []
    for item in text.split(","):
        addr, sep, label = item.partition("=")
        if not sep or not addr or not label:
            raise ValueError("--sources: %r is not ADDR=LABEL" % item)
        out.append((addr, label))
    return out


class Pool:
    """Idle kept-alive connections, each with the count of requests it
    carried (its next request's nth)."""

    def __init__(self, host, port, src=None):
        self.host, self.port, self.src = host, port, src
        self.idle, self.lock = [], threading.Lock()

    def take(self):
        with self.lock:
            if self.idle:
                return self.idle.pop()
        return [connect(self.host, self.port, self.src), 0]

    def give(self, pc):
        with self.lock:
            self.idle.append(pc)


class OpenLoop:
    """Poisson arrivals served by a pool of worker threads."""

    def __init__(self, a, log, t0, plan, request_for):
        self.a, self.log, self.t0, self.plan, self.request_for = a, log, t0, plan, request_for
        self.jobs = queue.Queue()
        self.lock = threading.Lock()
        self.idle_workers = 0
        self.no_worker = 0
        self.done, self.failed = [], []
        # Request i comes from sources[i % len(sources)]: each round trip
        # gets every n-th arrival, whatever its size.
        self.sources = a.sources or [(None, None)]
        self.pools = ({src: Pool(a.host, a.port, src) for src, _ in self.sources}
                      if a.conn == "pool" else None)
        self.counter = Counter(t0 + a.seconds)

    def worker(self):
        while True:
            with self.lock:
                self.idle_workers += 1
            job = self.jobs.get()
            with self.lock:
                self.idle_workers -= 1
            if job is None:
                return
            i, due, size = job
            path, headers, want, status = self.request_for(size)
            src, label = self.sources[i % len(self.sources)]
            pc = None
            try:
                if self.pools:
                    pool = self.pools[src]
                    pc = pool.take()
                    row = get(pc[0], path, headers, want, status, counter=self.counter)
                    row.update({"kind": "keepalive", "nth": pc[1]})
                    pc[1] += 1
                    pool.give(pc)
                else:
                    c = connect(self.a.host, self.a.port, src)
                    try:
                        row = get(c, path, dict(headers, Connection="close"), want, status,
                                  counter=self.counter)
                    finally:
                        c.close()
                    row.update({"kind": "short", "nth": 0})
                row.update({"i": i, "sched": due})
                if label:
                    row.update({"src": src, "rtt": label})
                self.log.write(row)
                with self.lock:
                    self.done.append(row)
            except Exception as e:  # noqa: BLE001 - counted and reported
                if pc:
                    pc[0].close()
                with self.lock:
                    self.failed.append({"i": i, "sched": due, "size": size, "error": str(e)})

    def run(self):
        workers = [threading.Thread(target=self.worker, daemon=True)
                   for _ in range(self.a.workers)]
        for w in workers:
            w.start()
        dispatch_late = 0.0
        for i, (t, size) in enumerate(self.plan):
            due = self.t0 + t
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            dispatch_late = max(dispatch_late, time.monotonic() - due)
            with self.lock:
                if self.idle_workers <= self.jobs.qsize():
                    self.no_worker += 1
            self.jobs.put((i, due, size))
        for _ in workers:
            self.jobs.put(None)
        end = self.t0 + self.a.seconds + self.a.drain
        for w in workers:
            w.join(max(0.0, end - time.monotonic()))
        return dispatch_late


def summary(a, lam, mean_wire, plan, ol, dispatch_late, bulk_counter, t0):
    """OUT.load.json: the arrivals and the load they offered and got."""
    rate = wire.parse_rate(a.rate)
    fr = lambda n: wire.wire_bytes(n, a.mss, a.overhead)  # noqa: E731
    with ol.lock:
        done, failed = list(ol.done), list(ol.failed)
    late = [r["start"] - r["sched"] for r in done]
    ends = [r["end"] for r in done]
    offered = sum(fr(size + a.header_bytes) for _, size in plan)
    served = sum(fr(r["bytes"] + r["hdr"]) for r in done)
    framing = 1 + a.overhead / a.mss
    received = ol.counter.n * framing + a.header_bytes * sum(1 for e in ends
                                                             if e <= t0 + a.seconds)
    return {
        "mode": "open", "dist": a.dist, "scale": a.scale, "seed": a.seed, "rate": a.rate,
        "rate_bps": rate, "target_load": a.load, "header_bytes": a.header_bytes,
        "mss": a.mss, "overhead": a.overhead, "mean_wire_bytes": mean_wire,
        "lambda": lam, "seconds": a.seconds, "drain": a.drain, "workers": a.workers,
        "conn": a.conn, "bulk": a.bulk, "blob": a.blob,
        "arrivals": len(plan), "completed": len(done), "failed": len(failed),
        "unfinished": len(plan) - len(done) - len(failed),
        "late_threshold": a.late, "late": sum(1 for x in late if x > a.late),
        "max_late": max(late, default=0.0), "dispatch_late": dispatch_late,
        "no_idle_worker": ol.no_worker,
        "offered_load": offered * 8 / a.seconds / rate,
        "achieved_load": received * 8 / a.seconds / rate,
        "served_load": served * 8 / max(1e-9, max(ends, default=t0) - t0) / rate,
        "bulk_load": bulk_counter.n * framing * 8 / a.seconds / rate,
        "failures": failed[:20],
    }


def open_loop(a, files, bulk, log):
    if a.dist == "manifest":
        dist = None
        if not files:
            sys.exit("web_client: no files in the manifest")
        draw = lambda rng: rng.randrange(len(files))  # noqa: E731
        request_for = lambda k: (files[k][0], {}, files[k][1], (200,))  # noqa: E731
        mean = sum(wire.wire_bytes(s + a.header_bytes, a.mss, a.overhead)
                   for _, s in files) / len(files)
    else:
        if not a.blob:
            sys.exit("web_client: --dist %s needs --blob PATH" % a.dist)
        dist = sizes.load(a.dist, a.scale)
        draw = dist.sample
        request_for = lambda n: (a.blob, {"Range": "bytes=0-%d" % (n - 1)}, n,  # noqa: E731
                                 (200, 206))
        mean = sizes.mean_wire(dist, a.header_bytes, a.mss, a.overhead)
    lam = a.load * wire.parse_rate(a.rate) / (8 * mean)
    plan = schedule(a.seed, lam, a.seconds, draw)
    t0 = time.monotonic() + 0.05  # a moment to start the threads
    bulk_counter = Counter(t0 + a.seconds)
    ol = OpenLoop(a, log, t0, plan, request_for)
    clients = [Client("bulk", a.host, a.port, bulk, t0 + a.seconds, a.seed + 1 + k, 0, log,
                      bulk_counter) for k in range(a.bulk)]
    for c in clients:
        c.start()
    dispatch_late = ol.run()
    for c in clients:
        c.join(max(0.0, t0 + a.seconds + a.drain - time.monotonic()))
    log.close()
    s = summary(a, lam, mean, plan, ol, dispatch_late, bulk_counter, t0)
    s["bulk_unfinished"] = sum(1 for c in clients if c.is_alive())
    # A download still running at the end has no row: its port and start
    # are here (a port is reused once its connection is gone: the start
    # tells whose a timeout on it was).
    s["bulk_conns"] = sorted(pt for c in clients for pt in c.conns)
    s["bulk_ports"] = sorted({p for p, _ in s["bulk_conns"]})
    base = a.out[:-len(".jsonl")] if a.out.endswith(".jsonl") else a.out
    with open(base + ".load.json", "w") as f:
        json.dump(s, f, indent=1)
    if s["failed"]:
        log.error("%d of %d requests failed, first: %s" % (s["failed"], s["arrivals"],
                                                            s["failures"][0]["error"]))
    return s


def idle_sizes(dist, k):
    """k sizes spaced evenly in log(size) over dist's range, whole bytes,
    without repeats."""
    knots = [b for b, _ in dist.knots() if b >= 1]
    lo, hi = min(knots), max(knots)
    if k < 2 or hi <= lo:
        return [hi]
    return sorted({max(1, round(lo * (hi / lo) ** (i / (k - 1)))) for i in range(k)})


def idle(a, log):
    """One request at a time on the idle link (the baseline of --mode idle)."""
    if not a.blob:
        sys.exit("web_client: --mode idle needs --blob PATH")
    dist = sizes.load(a.dist, a.scale)
    plan = [n for n in idle_sizes(dist, a.sizes) for _ in range(a.reps)]
    random.Random(a.seed).shuffle(plan)
    deadline = time.monotonic() + a.seconds
    # With --sources, the same plan from each address in turn: a baseline
    # per round trip.
    for src, label in a.sources or [(None, None)]:
        conn, nth = None, 0
        try:
            for n in plan:
                if time.monotonic() >= deadline:
                    break
                headers = {"Range": "bytes=0-%d" % (n - 1)}
                if a.conn == "pool":
                    if conn is None:
                        conn = connect(a.host, a.port, src)
                    row = get(conn, a.blob, headers, n, (200, 206))
                else:
                    c = connect(a.host, a.port, src)
                    headers["Connection"] = "close"
                    row = get(c, a.blob, headers, n, (200, 206))
                    c.close()
                row.update({"kind": "idle", "nth": nth})
                if label:
                    row.update({"src": src, "rtt": label})
                log.write(row)
                if a.conn == "pool":
                    nth += 1
                time.sleep(a.gap)
        except Exception as e:  # noqa: BLE001 - reported, then the run fails
            log.error("idle%s: %s" % (" from %s" % src if src else "", e))
        finally:
            if conn is not None:
                conn.close()
    log.close()


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("manifest")
    p.add_argument("out")
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--port", type=int, default=80)
    p.add_argument("--mode", choices=("closed", "open", "idle"), default="closed")
    p.add_argument("--bulk", type=int, default=None,
                   help="bulk clients (default: 2 closed loop, 0 open loop)")
    g = p.add_argument_group("closed loop")
    g.add_argument("--short", type=int, default=8)
    g.add_argument("--keepalive", type=int, default=4)
    g.add_argument("--think", type=float, default=0.2)
    g = p.add_argument_group("open loop")
    g.add_argument("--load", type=float, help="target fraction of --rate")
    g.add_argument("--rate", help="the bottleneck, as tc writes it: 20mbit")
    g.add_argument("--dist", default="manifest",
                   help="websearch, datamining, fb_hadoop, pareto, a .cdf file, or manifest")
    g.add_argument("--scale", type=float, default=1.0)
    g.add_argument("--blob", help="URL path of a file at least as large as any size")
    g.add_argument("--conn", choices=("new", "pool"), default="new")
    g.add_argument("--workers", type=int, default=128)
    g.add_argument("--sources", type=parse_sources, default=None,
                   help="ADDR=LABEL,...: request i comes from the i %% n-th address "
                        "(the bulk download from the default one); rows say which")
    g.add_argument("--drain", type=float, default=60.0)
    g.add_argument("--late", type=float, default=0.01,
                   help="a request started this much after it was due is late (s)")
    g.add_argument("--header-bytes", type=int, default=HEADER_ESTIMATE)
    g.add_argument("--mss", type=int, default=wire.MSS)
    g.add_argument("--overhead", type=int, default=wire.OVERHEAD)
    g = p.add_argument_group("idle (also --dist, --scale, --blob, --conn)")
    g.add_argument("--sizes", type=int, default=40, help="sizes, spaced in log(size)")
    g.add_argument("--reps", type=int, default=3, help="requests of each size")
    g.add_argument("--gap", type=float, default=0.25, help="seconds between requests")
    a = p.parse_args(argv)
    if a.bulk is None:
        a.bulk = 2 if a.mode == "closed" else 0
    if a.mode == "open" and (a.load is None or a.rate is None):
        p.error("--mode open needs --load and --rate")
    files, bulk = [], []
    for line in open(a.manifest):
        path, size = line.split()
        (bulk if path.startswith("/bulk/") else files).append((path, int(size)))
    if a.bulk and not bulk:
        p.error("--bulk needs /bulk/ files in the manifest")
    with open(a.out, "w") as out:
        log = Log(out)
        if a.mode == "open":
            open_loop(a, files, bulk, log)
        elif a.mode == "idle":
            idle(a, log)
        else:
            deadline = time.monotonic() + a.seconds
            clients = []
            seed = a.seed
            for kind, n, fs, think in (("bulk", a.bulk, bulk, 0),
                                       ("short", a.short, files, a.think),
                                       ("keepalive", a.keepalive, files, a.think)):
                for _ in range(n):
                    seed += 1
                    clients.append(Client(kind, a.host, a.port, fs, deadline, seed, think, log))
            for c in clients:
                c.start()
            for c in clients:
                c.join(a.seconds + 180)
                if c.is_alive():
                    log.error("%s client still running long after the deadline" % c.kind)
            log.close()
    if log.errors:
        sys.exit("web_client: " + "; ".join(log.errors[:5]))


if __name__ == "__main__":
    main()
