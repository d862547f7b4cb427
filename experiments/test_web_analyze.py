# SPDX-License-Identifier: GPL-2.0
"""experiments/web_analyze.py on synthetic request logs with known answers."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import web_analyze  # noqa: E402


def write(run, policy, rnd, reqs):
    with open(run / "requests" / ("%s-%d.jsonl" % (policy, rnd)), "w") as f:
        for kind, size, d in reqs:
            f.write(json.dumps({"kind": kind, "path": "/x", "bytes": size,
                                "start": 10.0, "end": 10.0 + d}) + "\n")


@pytest.fixture
def run(tmp_path):
    (tmp_path / "requests").mkdir()
    (tmp_path / "params.json").write_text(json.dumps(
        {"policies": ["unmarked", "srff-default"], "small_limit": 100000, "rate": "20mbit",
         "rounds": 2, "seconds": 5, "kernel": "test"}))
    # unmarked: small responses take 1.0 s, one outlier 5 s; srff: 0.25 s.
    for rnd in (1, 2):
        write(tmp_path, "unmarked", rnd,
              [("short", 5000, 1.0)] * 49 + [("keepalive", 99999, 5.0 if rnd == 1 else 1.0)]
              + [("short", 100000, 2.0), ("bulk", 8 << 20, 9.0)])
        write(tmp_path, "srff-default", rnd,
              [("short", 5000, 0.25)] * 50 + [("short", 200000, 3.0), ("bulk", 8 << 20, 9.5)])
    return tmp_path


def test_p99_nearest_rank():
    assert web_analyze.p99(list(range(1, 101))) == 99
    assert web_analyze.p99([3.0]) == 3.0
    assert web_analyze.p99(list(range(1, 201))) == 198


def test_classes_and_improvement(run):
    params, times = web_analyze.load(str(run))
    order, res = web_analyze.summarise(params, times)
    assert order == ["unmarked", "srff-default"]
    u, s = res["unmarked"], res["srff-default"]
    # 100000 B is large (the limit is exclusive); bulk is apart.
    assert u["small"]["n"] == 100 and u["large"]["n"] == 2 and u["bulk"]["n"] == 2
    assert u["small_keepalive"]["n"] == 2
    assert u["small"]["mean"] == pytest.approx((98 * 1.0 + 5.0 + 1.0) / 100)
    assert u["small"]["p99"] == pytest.approx(1.0)
    assert s["small"]["mean"] == pytest.approx(0.25)
    assert s["small"]["mean_vs_base"] == pytest.approx((1.04 - 0.25) / 1.04 * 100)
    # Slower is negative.
    assert s["large"]["mean_vs_base"] == pytest.approx(-50.0)


def test_report(run, capsys):
    sys.argv = ["web_analyze.py", str(run)]
    web_analyze.main()
    out = capsys.readouterr().out
    assert "| srff-default | small < 100 KB | 100 | 0.250 (+76 %) |" in out
    for name in ("report.md", "results.json", "cdf.png"):
        assert (run / name).stat().st_size > 0


def test_no_plots(run, capsys):
    """--no-plots: the same table and report but for the plot, no cdf.png."""
    sys.argv = ["web_analyze.py", "--no-plots", str(run)]
    web_analyze.main()
    out = capsys.readouterr().out
    assert "| srff-default | small < 100 KB | 100 | 0.250 (+76 %) |" in out
    assert not (run / "cdf.png").exists()
    assert "cdf.png" not in (run / "report.md").read_text()
    assert (run / "results.json").stat().st_size > 0
    sys.argv = ["web_analyze.py", "--no-plots"]
    with pytest.raises(SystemExit):
        web_analyze.main()


def test_no_small_responses_is_an_error(run):
    write(run, "srff-default", 1, [("bulk", 8 << 20, 9.5)])
    write(run, "srff-default", 2, [("bulk", 8 << 20, 9.5)])
    sys.argv = ["web_analyze.py", str(run)]
    with pytest.raises(SystemExit):
        web_analyze.main()


def capture(path, conns):
    """Write a client-side capture: conns is a list of (port, [(t, who,
    flags, payload_len)...]) with who "c" (client to server) or "s"."""
    import dpkt
    from test_analyze import CLI, SRV, frame

    pkts = []
    for port, events in conns:
        for t, who, flags, n in events:
            if who == "c":
                pkts.append((t, frame(CLI, SRV, port, 80, 1, flags, b"G" * n)))
            else:
                pkts.append((t, frame(SRV, CLI, 80, port, 1, flags, b"x" * n, snaplen=96)))
    with open(path, "wb") as fh:
        w = dpkt.pcap.Writer(fh)
        for t, b in sorted(pkts, key=lambda p: p[0]):
            w.writepkt(b, t)


SYN, ACK = 0x02, 0x10


def test_pcap_responses(tmp_path):
    capture(tmp_path / "x.pcap", [
        # A new connection: retransmitted SYN, a pure ACK, request, two data.
        (40001, [(1.0, "c", SYN, 0), (2.0, "c", SYN, 0), (2.05, "c", ACK, 0),
                 (2.1, "c", ACK, 80), (2.2, "s", ACK, 1000), (2.5, "s", ACK, 500),
                 (2.6, "c", ACK, 0)]),
        # Kept alive: two responses; the second request is retransmitted.
        (40002, [(1.0, "c", SYN, 0), (1.1, "c", ACK, 80), (1.2, "s", ACK, 1448),
                 (1.3, "s", ACK, 100), (2.0, "c", ACK, 80), (2.05, "c", ACK, 80),
                 (2.4, "s", ACK, 700)]),
        # One port, two connections one after the other.
        (40003, [(1.0, "c", SYN, 0), (1.1, "c", ACK, 80), (1.2, "s", ACK, 10),
                 (3.0, "c", SYN, 0), (3.1, "c", ACK, 80), (3.4, "s", ACK, 10)]),
    ])
    r = web_analyze.pcap_responses(str(tmp_path / "x.pcap"))
    assert set(r) == {("10.90.0.2", 40001), ("10.90.0.2", 40002), ("10.90.0.2", 40003)}
    assert r[("10.90.0.2", 40001)] == [[pytest.approx((1.0, 2.5))]]
    assert r[("10.90.0.2", 40002)] == [[pytest.approx((1.0, 1.3)), pytest.approx((2.0, 2.4))]]
    assert r[("10.90.0.2", 40003)] == [[pytest.approx((1.0, 1.2))], [pytest.approx((3.0, 3.4))]]


def test_connection_ordinals():
    rows = [{"port": 7, "nth": 0, "start": 5.0}, {"port": 7, "nth": 0, "start": 1.0},
            {"port": 8, "nth": 1, "start": 3.0}, {"port": 8, "nth": 0, "start": 2.0},
            {"port": 7, "nth": 1, "start": 6.0},
            # the same port from another address: a connection of its own
            {"port": 7, "nth": 0, "start": 5.5, "src": "10.90.0.3"}]
    assert web_analyze.connection_ordinals(rows) == {0: 1, 1: 0, 2: 0, 3: 0, 4: 1, 5: 0}


def test_match_responses_by_address_and_port(tmp_path):
    """A client with several addresses (several round trips in one run)
    may use one port from two of them at once: each row finds its own
    address's connection; a row naming no address finds a port one
    address alone used, and no other."""
    import dpkt
    from test_analyze import SRV, frame

    a, b = "10.90.0.2", "10.90.0.3"
    pkts = []
    for t, src, port, who, flags, n in [
            (1.0, a, 40001, "c", SYN, 0), (1.1, a, 40001, "c", ACK, 80),
            (1.05, b, 40001, "c", SYN, 0), (1.15, b, 40001, "c", ACK, 80),
            (1.2, b, 40001, "s", ACK, 500), (1.6, a, 40001, "s", ACK, 900),
            (2.0, a, 40002, "c", SYN, 0), (2.1, a, 40002, "c", ACK, 80),
            (2.3, a, 40002, "s", ACK, 100)]:
        if who == "c":
            pkts.append((t, frame(src, SRV, port, 80, 1, flags, b"G" * n)))
        else:
            pkts.append((t, frame(SRV, src, 80, port, 1, flags, b"x" * n, snaplen=96)))
    with open(tmp_path / "x.pcap", "wb") as fh:
        w = dpkt.pcap.Writer(fh)
        for t, f in sorted(pkts, key=lambda p: p[0]):
            w.writepkt(f, t)
    resp = web_analyze.pcap_responses(str(tmp_path / "x.pcap"))
    rows = [{"port": 40001, "nth": 0, "start": 1.0, "src": a},
            {"port": 40001, "nth": 0, "start": 1.0, "src": b},
            {"port": 40002, "nth": 0, "start": 2.0},
            {"port": 40001, "nth": 0, "start": 1.0},    # two addresses used it
            {"port": 40002, "nth": 1, "start": 2.5}]    # no second response
    m = web_analyze.match_responses(resp, rows)
    assert m[0] == pytest.approx((1.0, 1.6)) and m[1] == pytest.approx((1.05, 1.2))
    assert m[2] == pytest.approx((2.0, 2.3))
    assert set(m) == {0, 1, 2}


def test_load_prefers_the_capture(run):
    (run / "pcap").mkdir()
    capture(run / "pcap" / "unmarked-1.pcap",
            [(40001, [(1.0, "c", SYN, 0), (1.1, "c", ACK, 80), (1.7, "s", ACK, 5000)])])
    with open(run / "requests" / "unmarked-1.jsonl", "w") as f:
        for port, d in ((40001, 9.0), (40009, 2.0)):  # 40009 is not in the capture
            f.write(json.dumps({"kind": "short", "path": "/x", "bytes": 5000, "start": 10.0,
                                "end": 10.0 + d, "port": port, "nth": 0}) + "\n")
    params, times = web_analyze.load(str(run))
    assert params["timing"]["unmarked"] == {"pcap": 1, "client": 1 + 52}
    # 0.7 s from the capture, 2.0 s by the client's clock (plus round 2's).
    assert sorted(times["unmarked"]["small"])[:2] == [pytest.approx(0.7), 1.0]
    assert 9.0 in times["unmarked"]["small_client"]
