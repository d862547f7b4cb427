# SPDX-License-Identifier: GPL-2.0
"""experiments/fct.py on synthetic requests with known answers."""
import collections
import csv
import gzip
import io
import json
import lzma
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import fct  # noqa: E402


def row(policy, rnd, f, size=5000, nth=0, hdr=0, load="0.5", kind="short", run="r", stall=None,
        clock="client"):
    return {"run": run, "round": rnd, "policy": policy, "load": load, "kind": kind, "nth": nth,
            "size": size, "hdr": hdr, "sched": None, "start": 0.0, "fct": f, "clock": clock,
            "stall": stall}


def group(s, policy, bin_="all", load="0.5"):
    return next(e for e in s["groups"]
                if (e["policy"], e["bin"], e["load"]) == (policy, bin_, load))


def test_ideal_fct_by_hand():
    # 10 000 B in 7 segments: 10 000 + 7 * 66 = 10 462 B; at 8 Mbit/s
    # (a byte a microsecond) 10.462 ms, plus 2 RTTs of 10 ms to open.
    assert fct.ideal_fct(10000, 0, 0, 8e6, 0.010) == pytest.approx(0.030462)
    # Kept alive: one RTT. The header counts as payload: 9 000 + 1 000.
    assert fct.ideal_fct(9000, 1000, 3, 8e6, 0.010) == pytest.approx(0.020462)
    # A physical link: preamble, FCS and gap too (90 B a frame).
    assert fct.ideal_fct(10000, 0, 1, 8e6, 0, overhead=90) == pytest.approx(0.010630)


def test_known_slowdown():
    rows = [row("a", r, 2 * 0.030462, size=10000) for r in (1, 2, 3)]
    s = fct.summarise(rows, [], 8e6, 0.010, ref="none", boot=50)
    g = group(s, "a")
    assert g["slowdown_mean"] == pytest.approx(2.0)
    assert g["slowdown_p99"] == pytest.approx(2.0)
    assert g["n"] == 3 and g["rounds"] == 3


def test_bins_and_their_edges():
    e = fct.EDGES
    assert [fct.size_bin(x, e) for x in (1, 99999, 100000, 999999, 1000000, 10 ** 9)] == \
        [0, 0, 1, 1, 2, 2]
    assert fct.bin_label(e) == ["< 100 KB", "100 KB - 1 MB", ">= 1 MB"]
    assert fct.bin_label([1000, 10000]) == ["< 1 KB", "1 KB - 10 KB", ">= 10 KB"]
    rows = [row("a", 1, 1.0, size=x) for x in (99999, 100000, 1000000)]
    s = fct.summarise(rows, [], 1e6, 0, boot=10)
    assert [group(s, "a", b)["n"] for b in s["bins"]] == [1, 1, 1, 3]


def test_constant_fct_has_a_ci_of_zero_width():
    rows = [row("a", r, 0.25) for r in (1, 2, 3, 4) for _ in range(50)]
    g = group(fct.summarise(rows, [], 1e6, 0, boot=200), "a")
    assert g["fct_mean"] == g["fct_p99"] == 0.25
    assert g["fct_mean_ci"] == [0.25, 0.25] and g["fct_p99_ci"] == [0.25, 0.25]


def test_bootstrap_resamples_whole_rounds():
    # Round 1 all 1 s, round 2 all 3 s. A resample is {1,1}, {1,2} or
    # {2,2} with chances 1/4, 1/2, 1/4: mean 1, 2 or 3, never anything else.
    by_round = {1: [1.0] * 10, 2: [3.0] * 10}
    rd = fct.Rounds(by_round)
    assert rd.mean() == 2.0 and rd.quantile(0.99) == 3.0 and rd.quantile(0.5) == 1.0
    rng = random.Random(1)
    means = []
    for _ in range(4000):
        m = collections.Counter(rng.choice(rd.keys) for _ in rd.keys)
        means.append(rd.mean(m))
    c = collections.Counter(means)
    assert set(c) == {1.0, 2.0, 3.0}
    assert c[2.0] / 4000 == pytest.approx(0.5, abs=0.03)
    assert fct.bootstrap(rd, "mean", 2000, random.Random(2)) == [1.0, 3.0]
    # Resampling requests instead would give a CI of about 2 +- 0.45.
    assert fct.bootstrap(fct.Rounds({1: [1.0]}), "mean", 100, random.Random(2)) is None


def test_pooled_quantile_with_multiplicities_is_brute_force():
    rng = random.Random(5)
    by_round = {k: [rng.expovariate(1) for _ in range(rng.randrange(1, 40))] for k in range(6)}
    rd = fct.Rounds(by_round)
    for _ in range(200):
        m = collections.Counter(rng.choice(rd.keys) for _ in rd.keys)
        pool = sorted(v for k, n in m.items() for _ in range(n) for v in by_round[k])
        for q in (0.01, 0.5, 0.99, 1.0):
            assert rd.quantile(q, m) == fct.quantile(pool, q)
        assert rd.mean(m) == pytest.approx(sum(pool) / len(pool))


def test_ratio_pairs_interleaved_rounds():
    # The policy takes exactly twice the reference's time in every round,
    # while rounds differ from each other by a factor of up to 5.
    rows = []
    for r, base in ((1, 0.1), (2, 0.5), (3, 0.2), (4, 0.3)):
        rows += [row("ref", r, base * k) for k in (1, 2, 3)]
        rows += [row("new", r, 2 * base * k) for k in (1, 2, 3)]
    s = fct.summarise(rows, [], 1e6, 0, ref="ref", boot=500)
    e = next(x for x in s["ratios"] if x["bin"] == "all")
    assert e["paired"] and e["fct_mean_ratio"] == pytest.approx(2.0)
    assert e["fct_mean_ratio_ci"] == pytest.approx([2.0, 2.0])
    assert e["fct_p99_ratio_ci"] == pytest.approx([2.0, 2.0])
    # The same data from rounds that were not interleaved: wide.
    for x in rows:
        if x["policy"] == "new":
            x["run"] = "other"
    e = next(x for x in fct.summarise(rows, [], 1e6, 0, ref="ref", boot=500)["ratios"]
             if x["bin"] == "all")
    assert not e["paired"] and e["fct_mean_ratio"] == pytest.approx(2.0)
    lo, hi = e["fct_mean_ratio_ci"]
    assert lo < 1.5 and hi > 2.5


def test_per_second_goodput_and_stall():
    # 1 MB/s for 5.5 s, then nothing: 8 Mbit/s in seconds 0-4 (5 is partial).
    prog = [{"policy": "a", "load": "0.5", "run": "r", "round": 1, "req": 0, "t": t / 10,
             "bytes": t * 100000} for t in range(0, 56)]
    # A second transfer in the same round: 0.5 MB at t 2.0, all in second 2.
    prog += [{"policy": "a", "load": "0.5", "run": "r", "round": 1, "req": 1, "t": t,
              "bytes": b} for t, b in ((2.0, 0), (2.5, 500000))]
    ps = fct.per_second_goodput(prog)
    assert ps[("a", "0.5", ("r", 1))] == pytest.approx([8, 8, 12, 8, 8])
    rows = [row("a", 1, 5.5, size=5500000, kind="bulk", stall=0.3),
            row("a", 1, 0.5, size=500000, kind="bulk", stall=0.1), row("a", 1, 0.1)]
    b = fct.summarise(rows, prog, 1e6, 0, boot=10)["bulk"][0]
    assert b["n"] == 2 and b["goodput_mean"] == pytest.approx(8.0)
    assert b["longest_stall"] == 0.3
    assert b["persec_p5"] == pytest.approx(8) and b["persec_zero"] == 0 and b["seconds"] == 5


def write_run(d, policies=("fq_codel", "srff"), rounds=(1, 2), loads=(None,)):
    (d / "requests").mkdir(parents=True)
    (d / "params.json").write_text(json.dumps({"rate": "8mbit", "policies": list(policies)}))
    for p in policies:
        for ld in loads:
            for r in rounds:
                base = "%s%s-%d" % (p, "@%s" % ld if ld else "", r)
                t0 = 100.0 * r
                slow = 2.0 if p == "fq_codel" else 1.0
                with open(d / "requests" / (base + ".jsonl"), "w") as f:
                    for i, size in enumerate((1000, 200000, 2000000)):
                        f.write(json.dumps({"kind": "short", "path": "/blob", "bytes": size,
                                            "hdr": 283, "start": t0 + i + 0.001,
                                            "sched": t0 + i, "end": t0 + i + 0.001 + slow * 0.1,
                                            "port": 40000 + i, "nth": 0, "i": i}) + "\n")
                    f.write(json.dumps({"kind": "bulk", "path": "/bulk/b0", "bytes": 3000000,
                                        "hdr": 255, "start": t0, "end": t0 + 3.0, "port": 41000,
                                        "nth": 0, "max_gap": 0.2 * slow,
                                        "progress": [[0.5, 0], [3.0, 3000000]]}) + "\n")
                if ld:
                    (d / "requests" / (base + ".load.json")).write_text(json.dumps({
                        "target_load": float(ld), "offered_load": 0.5, "achieved_load": 0.49,
                        "served_load": 0.48, "bulk_load": 0.3, "arrivals": 3, "late": 0,
                        "no_idle_worker": 0, "failed": 0, "unfinished": 0}))


def test_table_timed_by_the_router_capture(tmp_path):
    """A run whose meta says where its capture was (capture_dev, the
    open-loop guest's router) has the responses the capture holds timed by
    it, clock "router"; the others keep the client's clock."""
    import dpkt
    from test_analyze import CLI, SRV, frame

    run = tmp_path / "web-r"
    write_run(run, policies=("srff",), rounds=(1,))
    (run / "params.json").unlink()
    (run / "meta.json").write_text(json.dumps({"params": {"rate": "8mbit", "policies": ["srff"],
                                                          "capture_dev": "r1"}}))
    (run / "pcap").mkdir()
    with open(run / "pcap" / "srff-1.pcap", "wb") as fh:
        w = dpkt.pcap.Writer(fh)
        w.writepkt(frame(CLI, SRV, 40001, 80, 1, 0x02), 5.0)
        w.writepkt(frame(CLI, SRV, 40001, 80, 2, 0x10, b"G" * 80), 5.02)
        w.writepkt(frame(SRV, CLI, 80, 40001, 1, 0x10, b"x" * 1448, snaplen=96), 5.07)
    rows, _, _ = fct.build_table(str(run))
    by = {r["size"]: r for r in rows}
    assert by[200000]["clock"] == "router" and by[200000]["fct"] == pytest.approx(0.07)
    assert by[1000]["clock"] == "client" and by[1000]["fct"] == pytest.approx(0.1)
    # The table keeps the client's clock beside the router's, and the
    # report can be made on either.
    fct.main(["table", str(run)])
    back = {r["size"]: r for r in fct.read_csv(str(run / "requests.csv.xz"))}
    assert back[200000]["fct"] == pytest.approx(0.07)
    assert back[200000]["fct_client"] == pytest.approx(0.1)
    assert back[1000]["fct_client"] is None
    rows_, _, _, _ = fct.load_input(str(run))
    fct.main(["report", str(run), "--clock", "client", "--boot", "5", "--ref", "srff",
              "--out", str(tmp_path / "cc")])
    s = json.load(open(tmp_path / "cc" / "summary.json"))["summary"]
    assert s["clocks"] == {"client": 3}
    # compact: the router's clock alone, every other column as it was;
    # twice is once.
    before = fct.read_csv(str(run / "requests.csv.xz"))
    for _ in range(2):
        fct.main(["compact", str(run)])
    after = fct.read_csv(str(run / "requests.csv.xz"))
    assert [dict(r, fct_client=None) for r in before] == [dict(r, fct_client=None) for r in after]
    assert all("fct_client" not in r for r in after)
    # Without capture_dev the same capture is a client-side one.
    (run / "meta.json").write_text(json.dumps({"params": {"rate": "8mbit"}}))
    rows, _, _ = fct.build_table(str(run))
    assert {r["size"]: r["clock"] for r in rows}[200000] == "pcap"


def test_table_is_compact_and_reproducible(tmp_path):
    run = tmp_path / "web-x"
    write_run(run, loads=("0.5", "0.8"))
    rows, prog, loads = fct.build_table(str(run))
    assert len(rows) == 2 * 2 * 2 * 4 and len(loads) == 8
    r = next(x for x in rows if x["policy"] == "srff" and x["load"] == "0.8" and x["round"] == 2
             and x["size"] == 200000)
    assert r["run"] == "web-x" and r["sched"] == pytest.approx(1.0)
    assert r["start"] == pytest.approx(1.001) and r["fct"] == pytest.approx(0.1)
    assert r["clock"] == "client" and r["hdr"] == 283
    assert {x["t"] for x in prog if x["round"] == 1} == {0.5, 3.0}
    fct.main(["table", str(run)])
    one = (run / "requests.csv.xz").read_bytes()
    fct.main(["table", str(run)])
    assert (run / "requests.csv.xz").read_bytes() == one
    # xz, and without the logs' sched and start (nothing reads them)
    with lzma.open(run / "requests.csv.xz", "rt") as f:
        assert f.readline().strip().split(",") == fct.TABLE_COLUMNS
    assert "sched" not in fct.TABLE_COLUMNS and "start" not in fct.TABLE_COLUMNS
    back = fct.read_csv(str(run / "requests.csv.xz"))
    assert len(back) == len(rows)
    for a, b in zip(back, rows):
        assert set(a) == set(fct.TABLE_COLUMNS)
        for k in fct.TABLE_COLUMNS:
            if isinstance(b[k], float):
                assert a[k] == pytest.approx(b[k], abs=1e-6)
            else:
                assert a[k] == b[k]
    assert json.loads(lzma.open(run / "loads.json.xz", "rt").read()) == loads
    assert not any((run / n).exists() for n in ("requests.csv.gz", "bulk.csv.gz", "loads.json"))


def progress_log(d, seed=7):
    """A run whose bulk downloads report progress every 7-13 ms (as
    web_client.py does), two transfers per round, overlapping."""
    rng = random.Random(seed)
    (d / "requests").mkdir(parents=True)
    (d / "params.json").write_text(json.dumps({"rate": "8mbit"}))
    for p in ("fq_codel", "srff"):
        for r in (1, 2):
            with open(d / "requests" / ("%s@0.5-%d.jsonl" % (p, r)), "w") as f:
                f.write(json.dumps({"kind": "short", "bytes": 1000, "hdr": 283, "start": 0.0,
                                    "sched": 0.0, "end": 0.05, "nth": 0}) + "\n")
                for start in (0.0, 2.5):
                    t, n, prog = 0.0, 0, []
                    while t < 6.0:
                        t += rng.uniform(0.007, 0.013)
                        n += rng.choice((0, 0, 1448, 2896, 14480))
                        prog.append([round(t, 7), n])
                    f.write(json.dumps({"kind": "bulk", "bytes": n, "hdr": 255, "start": start,
                                        "end": start + t, "nth": 0, "max_gap": 0.1,
                                        "progress": prog}) + "\n")


def test_bulk_table_keeps_what_the_goodput_reads(tmp_path):
    # bulk.csv.xz keeps a few samples a second of each transfer, and every
    # per-second figure from it is the one from all the samples, to the bit.
    run = tmp_path / "web-p"
    progress_log(run)
    rows, prog, _ = fct.build_table(str(run))
    fct.main(["table", str(run)])
    with lzma.open(run / "bulk.csv.xz", "rt") as f:
        assert f.readline().strip().split(",") == fct.BULK_COLUMNS
    kept = fct.read_csv(str(run / "bulk.csv.xz"))
    assert 0 < len(kept) < len(prog) / 10
    # Every sample, as the old writer kept them (a gzip'd CSV of them all).
    full = tmp_path / "full"
    full.mkdir()
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(fct.BULK_COLUMNS)
    for r in prog:
        w.writerow([fct._num(r[c]) if isinstance(r[c], float) else r[c]
                    for c in fct.BULK_COLUMNS])
    with gzip.open(full / "bulk.csv.gz", "wt") as f:
        f.write(buf.getvalue())
    every = fct.read_csv(str(full / "bulk.csv.gz"))
    assert len(every) == len(prog)
    assert fct.per_second_goodput(kept) == fct.per_second_goodput(every)
    a = fct.summarise(rows, kept, 8e6, 0.0, boot=50)["bulk"]
    b = fct.summarise(rows, every, 8e6, 0.0, boot=50)["bulk"]
    assert json.dumps(a) == json.dumps(b) and a[0]["seconds"] > 0


def test_report_reads_an_older_gzip_run(tmp_path, capsys):
    # A results folder from before the xz tables (requests.csv.gz with sched
    # and start, every bulk sample, loads.json) gives the same tables.
    run = tmp_path / "web-x"
    write_run(run, loads=("0.5",))
    fct.main(["table", str(run)])
    capsys.readouterr()
    fct.main(["report", str(run), "--rtt", "0", "--boot", "100"])
    new = capsys.readouterr().out
    rows, prog, loads = fct.build_table(str(run))
    old = tmp_path / "old" / "web-x"
    old.mkdir(parents=True)
    (old / "params.json").write_text((run / "params.json").read_text())
    for name, cols, rs in (("requests", fct.COLUMNS, rows), ("bulk", fct.BULK_COLUMNS, prog)):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for r in rs:
            w.writerow([fct._num(r[c]) if isinstance(r[c], float) or r[c] is None else r[c]
                        for c in cols])
        with gzip.open(old / (name + ".csv.gz"), "wt") as f:
            f.write(buf.getvalue())
    (old / "loads.json").write_text(json.dumps(loads, indent=1, sort_keys=True))
    fct.main(["report", str(old), "--rtt", "0", "--boot", "100"])
    assert capsys.readouterr().out == new


def test_closed_loop_logs_have_load_closed(tmp_path):
    run = tmp_path / "web-closed"
    write_run(run)
    rows, _, loads = fct.build_table(str(run))
    assert {r["load"] for r in rows} == {"closed"} and loads == {}


def test_report(tmp_path, capsys):
    run = tmp_path / "web-x"
    write_run(run, loads=("0.5",))
    fct.main(["table", str(run)])
    out = tmp_path / "report"
    fct.main(["report", str(run), "--rtt", "0", "--boot", "100", "--out", str(out)])
    text = capsys.readouterr().out
    # fq_codel took 0.2 s per request, srff 0.1: ratio 0.5 in every bin.
    assert "| srff | 0.5 | < 100 KB | 0.5 [0.5, 0.5] |" in text
    assert "| fq_codel | 0.5 | < 100 KB | 2 | 2 | 200 [200, 200] |" in text
    assert "| srff@0.5-1 | 0.50 | 0.50 | 0.49 | 0.48 | 0.30 | 3 | 0 | 0 | 0 | 0 |" in text
    s = json.load(open(out / "summary.json"))["summary"]
    assert s["policies"] == ["fq_codel", "srff"] and s["rate_bps"] == 8e6
    b = {e["policy"]: e for e in s["bulk"]}
    assert b["fq_codel"]["goodput_mean"] == pytest.approx(8.0)
    assert b["fq_codel"]["longest_stall"] == pytest.approx(0.4)
    assert (out / "tables.md").read_text() in text
    head = (out / "headline.md").read_text()
    # srff: slowdown ratio 0.5 to fq_codel in every bin, bulk 8 / 2 Mbit/s.
    line = next(x for x in head.splitlines() if x.startswith("| 0.5 | srff |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert all(c.endswith("(0.50)") for c in cells[2:-2] if c != "-")
    fq = next(x for x in head.splitlines() if x.startswith("| 0.5 | fq_codel |"))
    assert "(" not in fq and fq.endswith("| 8.00 | 0.40 |")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (out / "fct_cdf.png").stat().st_size > 0
    assert (out / "bulk_goodput.png").stat().st_size > 0


def test_targets_known_answers():
    # Two rounds, one load of 0.8. Small responses: the reference takes
    # 0.4 s, srff 0.1 s (ratio 0.25: met) and 0.2 s at p99 (all equal
    # inside a round); large: ref 1 s, srff 1.2 s (1.2 > 1.1: missed).
    rows = []
    for r in (1, 2):
        for pol, small, large in (("fq_codel", 0.4, 1.0), ("srff-x", 0.1, 1.2)):
            rows += [row(pol, r, small, size=1000, load="0.8") for _ in range(10)]
            rows += [row(pol, r, large, size=2000000, load="0.8") for _ in range(3)]
        rows.append(row("fq_codel", r, 8.0, size=8000000, load="0.8", kind="bulk", stall=0.3))
        rows.append(row("srff-x", r, 10.0, size=8000000, load="0.8", kind="bulk", stall=0.5))
    s = fct.summarise(rows, [], 1e6, 0.0, ref="fq_codel", boot=50)
    t = fct.targets(s)
    assert t.startswith("srff-x against fq_codel")
    lines = {x.split("|")[1].strip(): x.split("|")[2].strip() for x in t.splitlines()
             if x.startswith("| ") and "target" not in x}
    assert lines["small: mean FCT ≤ 0.5×"] == "0.25 [0.25, 0.25], met"
    assert lines["large: mean FCT ≤ 1.1×"] == "1.20 [1.20, 1.20], **missed**"
    # Slowdown of a 1000 B response (1066 B on the wire) at 1 Mbit/s, no
    # RTT: 8.528 ms ideal; 0.1 s is 11.7 times that: above 1.5 at 0.8.
    assert lines["small: mean slowdown ≤ 1.25 (1.5 above 60 %)"].endswith("**missed**")
    # Bulk: 8 MB in 10 s against 8 s: 0.8 of the reference's goodput.
    assert lines["bulk: goodput ≥ 0.85×"] == "0.80, **missed**"
    assert lines["bulk: longest stall ≤ fq_codel's"] == "0.50 s (fq_codel 0.30 s), **missed**"
    assert fct.slowdown_bound("0.6") == 1.25 and fct.slowdown_bound("0.8") == 1.5
    # Only the policies asked for; none when nothing matches.
    assert fct.targets(s, policies=[]) == ""


def test_report_needs_a_rate(tmp_path):
    run = tmp_path / "web-x"
    write_run(run)
    (run / "params.json").write_text("{}")
    with pytest.raises(SystemExit):
        fct.main(["report", str(run)])


def test_bins_follow_the_clients_scale(tmp_path, capsys):
    run = tmp_path / "web-s"
    write_run(run, loads=("0.5",))
    for f in (run / "requests").glob("*.load.json"):
        m = json.loads(f.read_text())
        m["scale"] = 0.01
        f.write_text(json.dumps(m))
    fct.main(["report", str(run), "--boot", "10"])
    text = capsys.readouterr().out
    # Edges 1 000 and 10 000 B: 1 000 B is in the middle bin, 200 000 and
    # 2 000 000 B in the top one.
    assert "edges x 0.01" in text
    assert "| srff | 0.5 | 1 KB - 10 KB | 2 | 2 |" in text
    assert "| srff | 0.5 | >= 10 KB | 4 | 2 |" in text
    fct.main(["report", str(run), "--boot", "10", "--edge-scale", "1"])
    assert "| srff | 0.5 | < 100 KB | 2 | 2 |" in capsys.readouterr().out


# --- the idle baseline and the delay in excess of it ---------------------------

def idle_rows(curve, nth=0, reps=(1.0,), clock="client"):
    """Idle requests: for each (size, fct) of curve, one per factor in reps."""
    return [row("idle", 1, f * k, size=x, nth=nth, kind="idle", load="closed", clock=clock)
            for x, f in curve for k in reps]


def test_router_clock_judged_against_its_own_baseline():
    """The router's capture sees a request one client-side delay after it
    left: a response it timed is judged against the idle responses it
    timed, and its ideal FCT has one round trip less; the caption says
    what timed how many."""
    rows = idle_rows([(1000, 0.040)]) + idle_rows([(1000, 0.020)], clock="router")
    for r in (1, 2, 3):
        rows += [row("a", r, 0.050, size=1000), row("a", r, 0.030, size=1000, clock="router"),
                 row("ref", r, 0.060, size=1000), row("ref", r, 0.040, size=1000, clock="router")]
    s = fct.summarise(rows, [], 8e6, 0.02, ref="ref", boot=20)
    x = {(e["policy"], e["bin"]): e for e in s["excess"]}
    assert x[("a", "< 10 KB")]["mean"] == pytest.approx(0.010)      # 10 ms on either clock
    assert x[("ref", "< 10 KB")]["mean"] == pytest.approx(0.020)
    assert s["clocks"] == {"client": 6, "router": 6}
    t = fct.excess_table(s)
    assert "1 size on new connections, timed by the router's capture" in t
    assert "Timed by the client's clock (6 responses), the router's capture" in t
    g = {(e["policy"], e["bin"]): e for e in s["groups"]}
    ideal_client = fct.ideal_fct(1000, 0, 0, 8e6, 0.02)
    assert fct.ideal_fct(1000, 0, 0, 8e6, 0.02, clock="router") == pytest.approx(ideal_client - 0.02)
    assert g[("a", "all")]["slowdown_mean"] == pytest.approx(
        (0.050 / ideal_client + 0.030 / (ideal_client - 0.02)) / 2)
    # All on the client's clock: the caption as before, no "Timed by".
    s = fct.summarise([r for r in rows if r["clock"] == "client"], [], 8e6, 0.02, ref="ref",
                      boot=20)
    assert "Timed by" not in fct.excess_table(s)


def test_idle_baseline_median_interpolation_and_ends():
    # Three reps per size, the median kept (an outlier does not move it).
    b = fct.IdleBaseline(idle_rows([(1000, 0.04), (11000, 0.09)], reps=(1.0, 1.0, 5.0)))
    assert b(1000, 0) == pytest.approx(0.04)
    assert b(6000, 0) == pytest.approx(0.065)       # halfway in size
    assert b(10, 0) == pytest.approx(0.04)          # below: the nearest
    assert b(10 ** 7, 0) == pytest.approx(0.09)     # above: the nearest
    assert b(6000, 2) is None                       # no kept-alive baseline
    k = fct.IdleBaseline(idle_rows([(1000, 0.04)]) + idle_rows([(1000, 0.02)], nth=1))
    assert (k(1000, 0), k(1000, 5)) == (pytest.approx(0.04), pytest.approx(0.02))


def test_excess_known_answers_and_ratio():
    # Idle: 1 KB takes 40 ms, 200 KB 100 ms (new connections).
    idle = idle_rows([(1000, 0.040), (200000, 0.100)])
    rows = idle[:]
    for r in (1, 2, 3, 4):
        # "a" waits 10 ms beyond the idle link's, "ref" 40 ms; 200 KB: 20 and 80 ms.
        rows += [row("a", r, 0.050, size=1000), row("ref", r, 0.080, size=1000),
                 row("a", r, 0.120, size=200000), row("ref", r, 0.180, size=200000)]
    s = fct.summarise(rows, [], 8e6, 0.01, ref="ref", boot=50)
    assert "idle" not in s["policies"]
    assert s["excess_bins"] == ["< 10 KB", "10 KB - 100 KB", "100 KB - 1 MB", ">= 1 MB",
                                "< 100 KB", "all"]
    x = {(e["policy"], e["bin"]): e for e in s["excess"]}
    assert x[("a", "< 10 KB")]["mean"] == pytest.approx(0.010)
    assert x[("a", "< 100 KB")]["n"] == 4
    assert x[("a", "100 KB - 1 MB")]["p50"] == pytest.approx(0.020)
    assert x[("ref", "100 KB - 1 MB")]["p99"] == pytest.approx(0.080)
    assert x[("a", "all")]["n"] == 8
    r = {e["bin"]: e for e in s["excess_ratios"] if e["policy"] == "a"}
    assert r["< 10 KB"]["mean_ratio"] == pytest.approx(0.25)
    assert r["100 KB - 1 MB"]["mean_ratio"] == pytest.approx(0.25)
    assert r["< 10 KB"]["mean_ratio_ci"] == [pytest.approx(0.25), pytest.approx(0.25)]
    t = fct.excess_table(s)
    rows_ = [ln for ln in t.splitlines() if ln.startswith("| 0.5 | a |")]
    assert len(rows_) == 4 and all("0.25 [0.25, 0.25] |" in ln for ln in rows_)
    assert not any("no difference" in ln for ln in rows_)
    assert "2 requests, of 2 sizes on new connections;" in t


def test_excess_says_no_difference_and_leaves_no_baseline_alone():
    rows = idle_rows([(1000, 0.040)])
    for r in (1, 2, 3, 4, 5, 6):
        rows += [row("a", r, 0.040 + 0.01 * r, size=1000), row("ref", r, 0.040 + 0.01 * (7 - r),
                                                                size=1000)]
    s = fct.summarise(rows, [], 8e6, 0.01, ref="ref", boot=400)
    r = next(e for e in s["excess_ratios"] if e["bin"] == "< 10 KB")
    assert r["mean_ratio"] == pytest.approx(1.0)
    assert "no difference |" in fct.excess_table(s)
    # No idle rows: no excess, no table, no targets.
    s = fct.summarise([x for x in rows if x["kind"] != "idle"], [], 8e6, 0.01, ref="ref", boot=10)
    assert s["excess"] == [] and s["idle"] is None
    assert fct.excess_table(s) == "" and fct.defaults_targets(s) == ""


def test_pooled_boots_own_baselines_strata_and_disagreement():
    """Two boots pooled (fct.py report RUN RUN): each response is judged
    against its own boot's idle baseline, a resample keeps each boot's
    rounds, every boot's ratio is shown, and a ratio whose CI excludes 1
    but one boot does not share is "boots disagree", not a win."""
    def idle(run, f):
        return [dict(r, run=run) for r in idle_rows([(1000, f)])]
    rows = idle("b1", 0.040) + idle("b2", 0.080)
    for r in (1, 2, 3, 4):
        # Boot 1: "a" waits 10 ms beyond its idle link, "ref" 40 ms (0.25x).
        # Boot 2, idle 80 ms: "a" waits 30 ms, "ref" 20 ms (1.5x).
        rows += [row("a", r, 0.050, size=1000, run="b1"), row("ref", r, 0.080, size=1000, run="b1"),
                 row("a", r, 0.110, size=1000, run="b2"), row("ref", r, 0.100, size=1000, run="b2")]
    s = fct.summarise(rows, [], 8e6, 0.01, ref="ref", boot=200)
    assert s["boots"] == ["b1", "b2"]
    x = {(e["policy"], e["bin"]): e for e in s["excess"]}
    # Against each boot's own baseline: (10 + 30) / 2 and (40 + 20) / 2 ms.
    assert x[("a", "< 10 KB")]["mean"] == pytest.approx(0.020)
    assert x[("ref", "< 10 KB")]["mean"] == pytest.approx(0.030)
    r = next(e for e in s["excess_ratios"] if e["bin"] == "< 10 KB")
    assert r["mean_ratio_boots"] == [pytest.approx(0.25), pytest.approx(1.5)]
    # Every round alike within a boot, drawn within its boot: no spread.
    assert r["mean_ratio_ci"] == [pytest.approx(2 / 3), pytest.approx(2 / 3)]
    line = next(ln for ln in fct.excess_table(s).splitlines()
                if ln.startswith("| 0.5 | a | < 10 KB |"))
    assert "0.67 [0.67, 0.67] (boots 0.25, 1.50) boots disagree" in line
    assert "Pooled over 2 boots (b1, b2)" in fct.excess_table(s)
    # The defaults' targets say the same of the same cell, and give each
    # boot's FCT ratio too (p99: 50 / 80 ms in boot 1, 110 / 100 in boot 2).
    t = fct.defaults_targets(s, policies=["a"]).splitlines()
    small = next(ln for ln in t if ln.startswith("| small ("))
    assert "0.67 [0.67, 0.67] (boots 0.25, 1.50) boots disagree, **missed**" in small
    p99 = next(ln for ln in t if ln.startswith("| small: p99"))
    assert "(boots 0.62, 1.10) boots disagree" in p99
    # Strata: a resample of 4 + 2 rounds keeps 4 of one and 2 of the other.
    keys = [("b1", k) for k in range(4)] + [("b2", k) for k in range(2)]
    rng = random.Random(3)
    for _ in range(50):
        m = fct._draw(rng, fct._strata(keys))
        assert sum(n for k, n in m.items() if k[0] == "b1") == 4
        assert sum(n for k, n in m.items() if k[0] == "b2") == 2
    # Boots that agree: the claim stands.
    assert fct._ratio_cell(0.5, [0.4, 0.6], [0.45, 0.55]) == "0.50 [0.40, 0.60] (boots 0.45, 0.55)"
    assert fct._ratio_cell(0.9, [0.8, 1.1], [0.7, 1.2]).endswith("no difference")


def test_excess_ratio_needs_two_delays():
    """A policy whose responses beat the idle baseline on average (kept-alive
    connections under load keep their window, the baseline's restarts) has a
    negative mean excess: no ratio, so no target is met by it."""
    rows = idle_rows([(1000, 0.040)])
    for r in (1, 2, 3):
        rows += [row("srff", r, 0.030, size=1000), row("fq_codel", r, 0.060, size=1000)]
    s = fct.summarise(rows, [], 8e6, 0.01, ref="fq_codel", boot=50)
    r = next(e for e in s["excess_ratios"] if e["bin"] == "< 10 KB")
    assert r["mean_ratio"] is None and r["mean_ratio_ci"] is None
    small = [ln for ln in fct.defaults_targets(s).splitlines() if ln.startswith("| small (")]
    assert small and small[0].endswith("| - |")


def test_defaults_targets_known_answers():
    idle = idle_rows([(1000, 0.040), (200000, 0.100), (2000000, 1.0)])
    rows = idle[:]
    for r in (1, 2, 3):
        rows += [row("srff", r, 0.050, size=1000), row("fq_codel", r, 0.080, size=1000),
                 row("srff", r, 0.140, size=200000), row("fq_codel", r, 0.180, size=200000),
                 row("srff", r, 1.2, size=2000000), row("fq_codel", r, 1.0, size=2000000),
                 row("srff", r, 10.0, size=8 << 20, kind="bulk", stall=0.5),
                 row("fq_codel", r, 8.0, size=8 << 20, kind="bulk", stall=0.2)]
    s = fct.summarise(rows, [], 8e6, 0.01, ref="fq_codel", boot=50)
    t = fct.defaults_targets(s)
    lines = {ln.split(" | ")[0][2:]: ln for ln in t.splitlines() if ln.startswith("| ")}
    # 100 KB-1 MB: 40 ms against 80 ms of excess: 0.5, met (at most).
    assert "0.50 [0.50, 0.50], met" in lines["100 KB-1 MB: mean excess ≤ 0.5×"]
    # Small: 10 against 40 ms: 0.25 ≤ 0.3 on new connections.
    assert "0.25 [0.25, 0.25], met" in lines["small (< 100 KB): mean excess ≤ 0.3×"]
    # >= 1 MB FCT 1.2×: missed. Goodput 0.8×: missed. Stall 0.5 s > 2 x 0.2 s: missed.
    assert "1.20 [1.20, 1.20], **missed**" in lines[">= 1 MB: mean FCT ≤ 1.1×"]
    assert "0.80, **missed**" in lines["bulk: goodput ≥ 0.85×"]
    assert "0.50 s (fq_codel 0.20 s), **missed**" in lines["bulk: longest stall ≤ 2× and < 1 s"]


def test_report_with_an_idle_baseline(tmp_path, capsys):
    # write_run's requests: 200 KB and others at 0.1 s (srff) and 0.2 s (fq_codel).
    run = tmp_path / "web-x"
    write_run(run, loads=("0.5",))
    sizes = sorted({r["size"] for r in fct.build_table(str(run))[0]})
    with open(run / "requests" / "idle-1.jsonl", "w") as f:
        for x in sizes:
            for k in (0.05, 0.05, 0.07):
                f.write(json.dumps({"kind": "idle", "bytes": x, "hdr": 283, "start": 0.0,
                                    "end": k, "nth": 0, "port": 1000}) + "\n")
    fct.main(["table", str(run)])
    rows = fct.read_csv(str(run / "requests.csv.xz"))
    idle = [r for r in rows if r["kind"] == "idle"]
    assert len(idle) == 3 * len(sizes) and {r["policy"] for r in idle} == {"idle"}
    out = tmp_path / "report"
    fct.main(["report", str(run), "--rtt", "0", "--boot", "100", "--out", str(out)])
    capsys.readouterr()
    s = json.load(open(out / "summary.json"))["summary"]
    assert s["policies"] == ["fq_codel", "srff"]
    # Excess: 0.1 - 0.05 and 0.2 - 0.05 s: srff's is a third of fq_codel's.
    x = (out / "excess.md").read_text()
    assert "| 0.5 | srff | all |" in x and "0.33 [0.33, 0.33]" in x
    assert "srff against fq_codel: the defaults issue's targets" in \
        (out / "defaults.md").read_text()
    # What the link carried: write_run's .load.json (offered 0.5, achieved 0.49, bulk 0.3).
    assert "| 0.5 | srff | 2 | 0.50 [0.50, 0.50] | 0.49 [0.49, 0.49] | 0.30 [0.30, 0.30] " \
        "| 0.79 [0.79, 0.79] |" in x


# --- clients at several round trips (web_client.py --sources) ---------------

def rtt_row(policy, rnd, f, rtt, size=1000, kind="short", nth=0, load="0.5"):
    r = row(policy, rnd, f, size=size, kind=kind, nth=nth, load=load)
    r["rtt"] = rtt
    return r


def test_rtt_seconds():
    assert fct.rtt_seconds("2ms") == pytest.approx(0.002)
    assert fct.rtt_seconds("80ms") == pytest.approx(0.080)
    assert fct.rtt_seconds("1s") == 1.0 and fct.rtt_seconds("500us") == pytest.approx(5e-4)
    with pytest.raises(ValueError):
        fct.rtt_seconds("fast")


def test_excess_per_round_trip():
    """Each response is judged against its own round trip's idle baseline;
    the pooled bins hold every round trip, and each round trip has its own
    bins after them; the ideal FCT takes the row's round trip plus the
    stack's share (measured less nominal)."""
    idle = []
    for rtt, alone in (("2ms", 0.010), ("80ms", 0.170)):
        idle += [dict(r, rtt=rtt) for r in idle_rows([(1000, alone)])]
    rows = idle[:]
    for rnd in (1, 2, 3):
        # 5 ms more than alone at 2 ms, 40 ms more at 80 ms; ref twice that.
        rows += [rtt_row("a", rnd, 0.015, "2ms"), rtt_row("ref", rnd, 0.020, "2ms"),
                 rtt_row("a", rnd, 0.210, "80ms"), rtt_row("ref", rnd, 0.250, "80ms")]
    s = fct.summarise(rows, [], 8e6, 0.021, ref="ref", boot=50, nominal_rtt=0.020)
    base = ["< 10 KB", "10 KB - 100 KB", "100 KB - 1 MB", ">= 1 MB", "< 100 KB", "all"]
    assert s["excess_bins"] == base + ["%s @ 2ms" % b for b in base] + \
        ["%s @ 80ms" % b for b in base]
    x = {(e["policy"], e["bin"]): e for e in s["excess"]}
    assert x[("a", "all @ 2ms")]["mean"] == pytest.approx(0.005)
    assert x[("a", "all @ 80ms")]["mean"] == pytest.approx(0.040)
    assert x[("a", "all")]["n"] == 6 and x[("a", "all")]["mean"] == pytest.approx(0.0225)
    r = {e["bin"]: e for e in s["excess_ratios"] if e["policy"] == "a"}
    assert r["< 10 KB @ 2ms"]["mean_ratio"] == pytest.approx(0.5)
    assert r["< 10 KB @ 80ms"]["mean_ratio"] == pytest.approx(0.5)
    assert s["rtts"] == {"2ms": pytest.approx(0.003), "80ms": pytest.approx(0.081)}
    # The ideal: two round trips of the row's own (+1 ms of stack) and the bytes.
    wire = fct.wire.wire_bytes(1000) * 8 / 8e6
    assert group(s, "a", "all")["fct_mean"] == pytest.approx((0.015 + 0.210) / 2)
    sl = sorted(v for e in s["groups"] if e["policy"] == "a" and e["bin"] == "all"
                for v in [e["slowdown_mean"]])
    assert sl[0] == pytest.approx((0.015 / (2 * 0.003 + wire) + 0.210 / (2 * 0.081 + wire)) / 2)
    # The table says whose baseline is whose; the targets still read the
    # pooled "< 100 KB" bin.
    t = fct.excess_table(s)
    assert "1 size on new connections at 2ms and 1 size on new connections at 80ms" in t
    assert "| 0.5 | a | all @ 80ms | 3 |" in t
    small = [ln for ln in fct.defaults_targets(s, ["a"]).splitlines()
             if ln.startswith("| small (")]
    assert small and "0.50 [0.50, 0.50]" in small[0]


def test_table_keeps_rtt_only_when_there(tmp_path):
    run = tmp_path / "web-rtt"
    write_run(run, loads=("0.5",))
    # One log with round trips: the column appears, and reads back.
    p = run / "requests" / "srff@0.5-1.jsonl"
    logs = [json.loads(x) for x in open(p)]
    for i, r in enumerate(logs):
        if r["kind"] != "bulk":
            r.update({"src": "10.92.2.3", "rtt": "80ms"})
    p.write_text("".join(json.dumps(r) + "\n" for r in logs))
    fct.main(["table", str(run)])
    with lzma.open(run / "requests.csv.xz", "rt") as f:
        assert f.readline().strip().split(",") == fct.TABLE_COLUMNS + ["rtt"]
    back = fct.read_csv(str(run / "requests.csv.xz"))
    assert {r["rtt"] for r in back} == {"80ms", None}
    assert all(r["rtt"] is None for r in back if r["policy"] == "fq_codel")
