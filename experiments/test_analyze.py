# SPDX-License-Identifier: GPL-2.0
"""experiments/analyze.py on synthetic captures written with dpkt."""
import json
import os
import socket
import struct
import sys

import dpkt
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import analyze  # noqa: E402

SRV, CLI = "10.90.0.1", "10.90.0.2"


def frame(src, dst, sport, dport, seq, flags, payload=b"", snaplen=0):
    """An Ethernet frame; with snaplen, cut as tcpdump -s cuts it (the IP
    header keeps the full length)."""
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq % (1 << 32), flags=flags, data=payload)
    ip = dpkt.ip.IP(src=socket.inet_aton(src), dst=socket.inet_aton(dst),
                    p=dpkt.ip.IP_PROTO_TCP, data=tcp)
    ip.len = len(ip)
    b = bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, data=ip))
    return b[:snaplen] if snaplen else b


def transfer(w, start, cport, pport, size, rate_bps, isn=1000, chunk=1448, synack=True,
             snaplen=0):
    """A data connection: client SYN at start, server sends size bytes at rate."""
    w.writepkt(frame(CLI, SRV, cport, pport, 5, dpkt.tcp.TH_SYN), start)
    if synack:
        w.writepkt(frame(SRV, CLI, pport, cport, isn, dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK), start + 0.001)
    t, sent = start + 0.002, 0
    while sent < size:
        n = min(chunk, size - sent)
        w.writepkt(frame(SRV, CLI, pport, cport, isn + 1 + sent, dpkt.tcp.TH_ACK, b"x" * n,
                          snaplen), t)
        sent += n
        t += n * 8 / rate_bps
    return t - n * 8 / rate_bps  # time of the last data packet


@pytest.fixture
def run(tmp_path):
    files = {"F3": 300000, "F2": 120000, "F1": 20000}
    params = {"files": files, "rate_bps": 8e6, "rate": "8mbit", "trials": 2,
              "policies": ["alone", "unmarked", "srff-default"], "kernel": "test",
              "fetch": {"alone": ["F1"]}}
    (tmp_path / "pcap").mkdir()
    (tmp_path / "params.json").write_text(json.dumps(params))
    expect = {}
    for policy, f1_rate in (("unmarked", 1e6), ("srff-default", 4e6)):
        for trial in (1, 2):
            with open(tmp_path / "pcap" / ("%s-%d.pcap" % (policy, trial)), "wb") as fh:
                w = dpkt.pcap.Writer(fh)
                # Unrelated control-connection traffic must be ignored.
                w.writepkt(frame(SRV, CLI, 21, 40000, 1, dpkt.tcp.TH_ACK, b"220 hi\r\n"), 0.0)
                l3 = transfer(w, 0.0, 41000, 30001, files["F3"], 2e6)
                # The SYN-ACK of F2 is lost to the capture in trial 2.
                l2 = transfer(w, 2.0, 41001, 30002, files["F2"], 2e6, isn=2**32 - 10,
                              synack=trial == 1)
                # F1 comes as GSO super-packets, captured at 96 bytes
                # each (ftp-guest.sh captures with -s 96).
                l1 = transfer(w, 4.0, 41002, 30003, files["F1"], f1_rate, chunk=5000,
                              snaplen=96)
            expect[(policy, trial)] = {"F3": l3, "F2": l2 - 2.0, "F1": l1 - 4.0}
    # F1 alone on the idle link, at 8 Mbit/s: the policy fetches F1 only.
    for trial in (1, 2):
        with open(tmp_path / "pcap" / ("alone-%d.pcap" % trial), "wb") as fh:
            w = dpkt.pcap.Writer(fh)
            expect[("alone", trial)] = {"F1": transfer(w, 1.0, 41002, 30003, files["F1"], 8e6) - 1.0}
    return tmp_path, expect


def test_response_times_from_capture(run):
    path, expect = run
    params, oracle, results, series = analyze.analyze(str(path))
    for (policy, trial), files in expect.items():
        for f, want in files.items():
            assert results[policy][f][trial - 1] == pytest.approx(want, abs=1e-6)
    # 20 000 B in 14 segments of 1448 B, each charged 66 B of headers.
    assert oracle["F1"] == pytest.approx((20000 + 14 * 66) * 8 / 8e6)
    # A sequence number wrapping past 2^32 still counts the right bytes.
    assert results["unmarked"]["F2"][0] > 0


def test_report_and_plots(run, capsys):
    path, expect = run
    analyze.main([str(path)])
    out = capsys.readouterr().out
    assert "| srff-default | F1 (0.0 MB)" in out
    # F1 at 4 Mbit/s instead of 1 Mbit/s: the improvement over unmarked.
    base, srff = expect[("unmarked", 1)]["F1"], expect[("srff-default", 1)]["F1"]
    row = [l for l in out.splitlines() if l.startswith("| srff-default | F1")][0]
    assert "%+.0f %%" % ((base - srff) / base * 100) in row
    assert (base - srff) / base > 0.7
    # F1's mean against F1 alone (8 Mbit/s, not 1 Mbit/s): the ratio of means.
    alone = sum(expect[("alone", t)]["F1"] for t in (1, 2)) / 2
    mean = sum(expect[("unmarked", t)]["F1"] for t in (1, 2)) / 2
    urow = [l for l in out.splitlines() if l.startswith("| unmarked | F1")][0]
    assert urow.split("|")[7].strip() == "%.2f" % (mean / alone)
    assert mean / alone > 4
    # alone has an F1 row only, and no change against unmarked.
    arows = [l for l in out.splitlines() if l.startswith("| alone |")]
    assert len(arows) == 1 and "F1" in arows[0] and arows[0].split("|")[6].strip() == ""
    for name in ("report.md", "table.md", "results.json", "response_times.png",
                 "throughput.png", "transfers.csv", "series.csv.gz"):
        assert (path / name).stat().st_size > 0
    assert json.loads((path / "results.json").read_text())["response_s"]["unmarked"]["F3"]


def test_tables_regenerate_the_report_without_captures(run, capsys):
    """What is committed (transfers.csv, series.csv.gz, params.json) makes
    the same table and results again, with the captures gone."""
    path, _ = run
    analyze.main([str(path)])
    first = capsys.readouterr().out
    saved = {n: (path / n).read_bytes() for n in ("table.md", "results.json", "report.md")}
    for f in (path / "pcap").iterdir():
        f.unlink()
    (path / "pcap").rmdir()
    analyze.main(["--tables", str(path)])
    assert capsys.readouterr().out == first
    for n, b in saved.items():
        assert (path / n).read_bytes() == b, n
    # The throughput series kept every byte of trial 1's F1.
    import gzip
    with gzip.open(path / "series.csv.gz", "rt") as f:
        rows = [l.split(",") for l in f.read().splitlines()[1:]]
    assert sum(int(r[3]) for r in rows if r[0] == "unmarked" and r[1] == "F1") == 20000


def test_alone_needs_only_its_file(run):
    path, _ = run
    params, _, results, _ = analyze.analyze(str(path))
    assert set(results["alone"]) == {"F1"}
    assert set(results["unmarked"]) == {"F1", "F2", "F3"}


def test_incomplete_transfer_is_an_error(run):
    path, _ = run
    with open(path / "pcap" / "unmarked-1.pcap", "wb") as fh:
        w = dpkt.pcap.Writer(fh)
        transfer(w, 0.0, 41000, 30001, 1000, 1e6)  # no file of that size
    with pytest.raises(SystemExit):
        analyze.analyze(str(path))


def test_no_plots_writes_the_same_tables_and_no_png(run, capsys):
    """--no-plots (the guest smoke's second pass): the same table and
    results, no PNG drawn."""
    path, _ = run
    analyze.main([str(path), "--no-plots"])
    first = capsys.readouterr().out
    assert not list(path.glob("*.png"))
    results = (path / "results.json").read_bytes()
    analyze.main([str(path)])
    assert capsys.readouterr().out == first
    assert (path / "results.json").read_bytes() == results
    assert (path / "response_times.png").stat().st_size > 0
