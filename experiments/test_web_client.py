# SPDX-License-Identifier: GPL-2.0
"""experiments/web_client.py: Poisson arrivals, and both modes against a
small HTTP server on the loopback (no VM, no nginx)."""
import http.server
import json
import math
import os
import random
import statistics
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import web_client  # noqa: E402

BLOB = bytes(range(256)) * 4096  # 1 MiB


def test_poisson_rate_and_cv():
    t = web_client.poisson_arrivals(200.0, 100.0, random.Random(3))
    assert len(t) == pytest.approx(20000, rel=0.03)  # 3 sd = 2.1 %
    gaps = [b - a for a, b in zip([0.0] + t, t)]
    cv = statistics.pstdev(gaps) / statistics.fmean(gaps)
    assert cv == pytest.approx(1.0, abs=0.03)
    # Counts per second: Poisson, so their variance equals their mean.
    counts = [0] * 100
    for x in t:
        counts[int(x)] += 1
    assert statistics.pvariance(counts) / statistics.fmean(counts) == pytest.approx(1, abs=0.35)
    assert all(0 <= x < 100 for x in t) and t == sorted(t)


def test_schedule_is_the_same_for_every_policy():
    draw = lambda rng: rng.randrange(1000)  # noqa: E731
    a = web_client.schedule(7, 50.0, 10.0, draw)
    assert a == web_client.schedule(7, 50.0, 10.0, draw)
    assert a != web_client.schedule(8, 50.0, 10.0, draw)
    # A longer run starts with the shorter one's arrivals.
    assert web_client.schedule(7, 50.0, 20.0, draw)[:len(a)] == a


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    peers = set()   # every client address seen

    def do_GET(self):  # noqa: N802 - http.server's name
        Handler.peers.add(self.client_address[0])
        body = BLOB
        if self.path.startswith("/f/"):
            body = BLOB[:int(self.path[3:])]
        rng = self.headers.get("Range")
        if rng:
            lo, hi = rng.split("=")[1].split("-")
            body = body[int(lo):int(hi) + 1]
            self.send_response(206)
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


@pytest.fixture
def server(tmp_path):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    m = tmp_path / "manifest.txt"
    m.write_text("/f/1000 1000\n/f/20000 20000\n/bulk/b0 %d\n" % len(BLOB))
    yield srv.server_address[1], m
    srv.shutdown()


def run(tmp_path, port, manifest, *args):
    out = tmp_path / "out.jsonl"
    web_client.main(["127.0.0.1", str(manifest), str(out), "--port", str(port)] + list(args))
    return [json.loads(x) for x in open(out)], out


def test_closed_loop_as_web_guest_runs_it(tmp_path, server):
    port, m = server
    rows, _ = run(tmp_path, port, m, "--seconds", "1", "--seed", "1", "--short", "2",
                  "--keepalive", "1", "--bulk", "1", "--think", "0.02")
    kinds = {r["kind"] for r in rows}
    assert kinds == {"short", "keepalive", "bulk"}
    for r in rows:
        assert r["end"] >= r["start"] and r["hdr"] > 0
        assert r["bytes"] == {"/f/1000": 1000, "/f/20000": 20000}.get(r["path"], len(BLOB))
    ka = sorted(r["nth"] for r in rows if r["kind"] == "keepalive")
    assert ka == list(range(len(ka)))
    bulk = [r for r in rows if r["kind"] == "bulk"][0]
    assert bulk["progress"][-1][1] == len(BLOB) and bulk["max_gap"] >= 0


@pytest.mark.parametrize("conn", ["new", "pool"])
def test_open_loop(tmp_path, server, conn):
    port, m = server
    rows, out = run(tmp_path, port, m, "--seconds", "1", "--seed", "3", "--mode", "open",
                    "--load", "0.5", "--rate", "20mbit", "--dist", "websearch", "--scale",
                    "0.01", "--blob", "/blob", "--conn", conn, "--workers", "16",
                    "--drain", "10")
    s = json.load(open(str(out)[:-len(".jsonl")] + ".load.json"))
    assert s["arrivals"] == s["completed"] == len(rows) > 20
    assert s["failed"] == s["unfinished"] == 0
    assert s["lambda"] == pytest.approx(0.5 * 20e6 / 8 / s["mean_wire_bytes"])
    assert s["offered_load"] > 0 and s["served_load"] > 0
    # The arrivals are the schedule's, whatever the server did.
    import sizes
    d = sizes.load("websearch", 0.01)
    plan = web_client.schedule(3, s["lambda"], 1.0, d.sample)
    assert sorted((r["i"], r["bytes"]) for r in rows) == [(i, n) for i, (_, n)
                                                          in enumerate(plan)]
    t0 = min(r["sched"] - plan[r["i"]][0] for r in rows)
    for r in rows:
        assert r["sched"] - t0 == pytest.approx(plan[r["i"]][0], abs=1e-6)
        assert r["start"] >= r["sched"] - 1e-3
    assert {r["kind"] for r in rows} == {"short" if conn == "new" else "keepalive"}
    if conn == "pool":
        # Connections are reused: fewer ports than requests, nth counts up.
        by_port = {}
        for r in sorted(rows, key=lambda r: r["start"]):
            by_port.setdefault(r["port"], []).append(r["nth"])
        assert len(by_port) < len(rows)
        assert all(v == list(range(len(v))) for v in by_port.values())


def test_open_loop_names_every_bulk_connection(tmp_path, server):
    # The downloads' ports, finished or not, are in load.json: tcpstats.py
    # attributes a timeout to the bulk download by them.
    port, m = server
    rows, out = run(tmp_path, port, m, "--seconds", "1", "--seed", "3", "--mode", "open",
                    "--load", "0.1", "--rate", "20mbit", "--dist", "websearch", "--scale",
                    "0.01", "--blob", "/blob", "--bulk", "1", "--drain", "10")
    # A port is reused once its connection is gone (the server closes
    # first), so a connection is its port and its start.
    s = json.load(open(str(out)[:-len(".jsonl")] + ".load.json"))
    bulk = {tuple(pt) for pt in s["bulk_conns"]}
    done = {(r["port"], r["start"]) for r in rows if r["kind"] == "bulk"}
    assert done and done <= bulk
    assert not bulk & {(r["port"], r["start"]) for r in rows if r["kind"] != "bulk"}
    assert s["bulk_ports"] == sorted({p for p, _ in bulk})


def test_open_loop_counts_what_it_could_not_start(tmp_path, server):
    # One worker, 2000 arrivals a second: most start late.
    port, m = server
    rows, out = run(tmp_path, port, m, "--seconds", "0.3", "--seed", "3", "--mode", "open",
                    "--load", "1", "--rate", "1gbit", "--dist", "manifest",
                    "--workers", "1", "--late", "0.001", "--header-bytes", "100")
    s = json.load(open(str(out)[:-len(".jsonl")] + ".load.json"))
    assert s["arrivals"] > 50
    assert s["late"] > 0 and s["no_idle_worker"] > 0 and s["max_late"] > 0.001
    assert len(rows) == s["completed"]


def test_open_loop_needs_load_and_rate(tmp_path, server):
    port, m = server
    with pytest.raises(SystemExit):
        run(tmp_path, port, m, "--seconds", "1", "--seed", "1", "--mode", "open")


def test_failures_fail_the_run(tmp_path, server):
    port, m = server
    with pytest.raises(SystemExit):  # the blob is 1 MiB; 10x sizes exceed it
        run(tmp_path, port, m, "--seconds", "0.3", "--seed", "1", "--mode", "open",
            "--load", "0.5", "--rate", "2gbit", "--dist", "websearch", "--blob", "/blob",
            "--drain", "5")
    s = json.load(open(tmp_path / "out.load.json"))
    assert s["failed"] > 0 and s["failures"][0]["error"]
    assert math.isfinite(s["offered_load"])


@pytest.mark.parametrize("conn", ["new", "pool"])
def test_idle_one_request_at_a_time(tmp_path, server, conn):
    port, m = server
    rows, _ = run(tmp_path, port, m, "--seconds", "30", "--seed", "5", "--mode", "idle",
                  "--dist", "websearch", "--scale", "0.01", "--blob", "/blob", "--conn", conn,
                  "--sizes", "6", "--reps", "2", "--gap", "0")
    import sizes
    want = web_client.idle_sizes(sizes.load("websearch", 0.01), 6)
    assert len(want) == 6 and want == sorted(want)
    # Ends of the distribution's range, evenly in log(size) between.
    assert want[0] == min(b for b, _ in sizes.load("websearch", 0.01).knots())
    assert sorted(r["bytes"] for r in rows) == sorted(want * 2)
    assert {r["kind"] for r in rows} == {"idle"}
    rows.sort(key=lambda r: r["start"])
    for a, b in zip(rows, rows[1:]):
        assert b["start"] >= a["end"]           # one at a time
    if conn == "new":
        assert all(r["nth"] == 0 for r in rows) and len({r["port"] for r in rows}) == len(rows)
    else:
        assert [r["nth"] for r in rows] == list(range(len(rows)))
        assert len({r["port"] for r in rows}) == 1
    # The seed shuffles the order, the same way each time.
    again, _ = run(tmp_path, port, m, "--seconds", "30", "--seed", "5", "--mode", "idle",
                   "--dist", "websearch", "--scale", "0.01", "--blob", "/blob", "--conn", conn,
                   "--sizes", "6", "--reps", "2", "--gap", "0")
    assert [r["bytes"] for r in sorted(again, key=lambda r: r["start"])] == \
        [r["bytes"] for r in rows]


@pytest.mark.parametrize("conn", ["new", "pool"])
def test_open_loop_sources(tmp_path, server, conn):
    """--sources: arrival i from address i mod n, each row naming its
    address and round trip; the bulk download from the default one."""
    port, m = server
    Handler.peers.clear()
    rows, _ = run(tmp_path, port, m, "--seconds", "1", "--seed", "3", "--mode", "open",
                  "--load", "0.5", "--rate", "20mbit", "--dist", "websearch", "--scale",
                  "0.01", "--blob", "/blob", "--conn", conn, "--workers", "16",
                  "--drain", "10", "--sources", "127.0.0.2=2ms,127.0.0.3=80ms")
    assert len(rows) > 20
    for r in rows:
        assert (r["src"], r["rtt"]) == [("127.0.0.2", "2ms"), ("127.0.0.3", "80ms")][r["i"] % 2]
    assert Handler.peers == {"127.0.0.2", "127.0.0.3"}
    if conn == "pool":
        # A kept-alive connection carries one address's requests only.
        by_port = {}
        for r in rows:
            by_port.setdefault(r["port"], set()).add(r["src"])
        assert all(len(v) == 1 for v in by_port.values())


def test_idle_sources(tmp_path, server):
    """The idle baseline's plan from each address in turn."""
    port, m = server
    Handler.peers.clear()
    rows, _ = run(tmp_path, port, m, "--seconds", "30", "--seed", "5", "--mode", "idle",
                  "--dist", "websearch", "--scale", "0.01", "--blob", "/blob",
                  "--sizes", "4", "--reps", "1", "--gap", "0",
                  "--sources", "127.0.0.2=2ms,127.0.0.3=80ms")
    by = {}
    for r in rows:
        by.setdefault(r["rtt"], []).append(r["bytes"])
    assert set(by) == {"2ms", "80ms"} and by["2ms"] == by["80ms"] and len(by["2ms"]) == 4
    assert Handler.peers == {"127.0.0.2", "127.0.0.3"}


@pytest.mark.parametrize("bad", ["127.0.0.2", "=2ms", "127.0.0.2=", "a=1,b"])
def test_sources_refused(bad):
    with pytest.raises(ValueError):
        web_client.parse_sources(bad)
