# SPDX-License-Identifier: GPL-2.0
"""tcpstats.py: per-run growth of TCP's retransmission counters."""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tcpstats  # noqa: E402


def counters(t, r, p):
    return {"TCPTimeouts": t, "RetransSegs": r, "TCPLossProbes": p}


def write_runs(path, runs):
    with gzip.open(path / "srff.json.gz", "wt") as f:
        json.dump(runs, f)


def test_growth_per_policy_and_load(tmp_path, capsys):
    runs = {
        # fq_codel: 2 and 4 timeouts in its two rounds.
        "fq_codel@0.8-1": {"tcp_before": counters(10, 100, 1), "tcp_after": counters(12, 150, 3)},
        "fq_codel@0.8-2": {"tcp_before": counters(12, 150, 3), "tcp_after": counters(16, 170, 3)},
        "srff-ets@0.8-1": {"tcp_before": counters(0, 0, 0), "tcp_after": counters(0, 7, 1)},
        "srff-ets@0.6-1": {"tcp_before": counters(0, 0, 0), "tcp_after": counters(1, 2, 0)},
        # Recorded before the counters were: left out.
        "cake@0.8-1": {"show": {}, "stats": {}},
    }
    write_runs(tmp_path, runs)
    (tmp_path / "meta.json").write_text(json.dumps({"params": {"policies": ["srff-ets", "fq_codel"]}}))
    tcpstats.main([str(tmp_path), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    # The meta.json's policy order, then the load.
    assert rows == [
        "| srff-ets | 0.6 | 1 | 1.0 [1, 1] | 2.0 [2, 2] | 0.0 [0, 0] |",
        "| srff-ets | 0.8 | 1 | 0.0 [0, 0] | 7.0 [7, 7] | 1.0 [1, 1] |",
        "| fq_codel | 0.8 | 2 | 3.0 [2, 4] | 35.0 [20, 50] | 1.0 [0, 2] |",
    ]
    assert "cake" not in out
    assert (tmp_path / "tcp.md").read_text() == out


def test_no_counters_says_so(tmp_path, capsys):
    write_runs(tmp_path, {"fifo@0.4-1": {"show": {}, "stats": {}}})
    tcpstats.main([str(tmp_path), "--out", str(tmp_path)])
    assert capsys.readouterr().out == "No run of this folder recorded TCP's counters.\n"
    assert not (tmp_path / "tcp.md").exists()


def test_raw_logs_read_while_kept(tmp_path, capsys):
    d = tmp_path / "srff"
    d.mkdir()
    (d / "fifo@0.4-1.json").write_text(json.dumps(
        {"tcp_before": counters(0, 0, 0), "tcp_after": counters(3, 9, 2)}))
    tcpstats.main([str(tmp_path)])
    assert "| fifo | 0.4 | 1 | 3.0 [3, 3] | 9.0 [9, 9] | 2.0 [2, 2] |" in capsys.readouterr().out


# tracefs lines as the guest's instance prints them (mono clock); rport is
# skc_dport read as a host u16: port 40000 (0x9c40) reads 0x409c = 16540.
TRACE = """# tracer: nop
#
          <idle>-0       [001] ..s2.   100.250000: rto: (tcp_enter_loss+0x0/0x2c0) lport=80 rport=16540
          <idle>-0       [000] ..s2.   101.500000: rto: (tcp_enter_loss+0x0/0x2c0) lport=80 rport=%d
          <idle>-0       [000] ..s2.   102.000000: synack_rto: (tcp_syn_ack_timeout+0x0/0x30) lport=80 rport=%d
          <idle>-0       [000] ..s2.   103.000000: rto: (tcp_enter_loss+0x0/0x2c0) lport=80 rport=%d
""" % (((41000 & 0xff) << 8) | (41000 >> 8), ((42000 & 0xff) << 8) | (42000 >> 8),
       ((43000 & 0xff) << 8) | (43000 >> 8))


def test_events_parsed_with_ports_in_host_order():
    ev = tcpstats.parse_events(TRACE)
    assert ev == [(100.25, "rto", 40000), (101.5, "rto", 41000), (102.0, "synack_rto", 42000),
                  (103.0, "rto", 43000)]


def test_attribution_by_port_and_time(tmp_path, capsys):
    rows = [
        # A kept-alive connection on 41000: a 5 KB response, then a 300 KB
        # one that had started by the timeout at 101.5.
        {"kind": "keepalive", "port": 41000, "bytes": 5000, "start": 99.0, "end": 99.1},
        {"kind": "keepalive", "port": 41000, "bytes": 300000, "start": 101.0, "end": 103.0},
        # Started after the timeout: not the one that timed out.
        {"kind": "keepalive", "port": 41000, "bytes": 2000000, "start": 104.0, "end": 105.0},
    ]
    req = tmp_path / "p@0.8-1.jsonl"
    req.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # 40000 is a download that never finished: only load.json names it.
    (tmp_path / "p@0.8-1.load.json").write_text(json.dumps({"bulk_ports": [40000]}))
    tr = tmp_path / "rto.txt"
    tr.write_text(TRACE)
    tcpstats.main(["--attribute", str(tr), str(req)])
    got = json.loads(capsys.readouterr().out)
    # 43000 is on no row: a response that did not finish.
    assert got == {"bulk": 1, "100 KB - 1 MB": 1, "SYN-ACK": 1, "unknown": 1, "connections": 4}


def test_backoffs_on_one_connection_count_once_as_connections():
    # A download timing out three times (backing off), a response once, and
    # a SYN-ACK on a port a data connection also used: three connections.
    ev = [(1.0, "rto", 5), (1.4, "rto", 5), (2.2, "rto", 5), (2.5, "rto", 6),
          (3.0, "synack_rto", 6)]
    got = tcpstats.attribute(ev, [], [5])
    assert got == {"bulk": 3, "unknown": 1, "SYN-ACK": 1, "connections": 3}


def test_a_reused_port_is_whoever_started_on_it_last():
    # Port 7 carried a download from 1.0 (in bulk_conns: it never
    # finished), then, from 5.0, a 50 KB response; port 8 a response, then
    # a download. Each timeout is the latest connection's on its port.
    rows = [{"kind": "short", "port": 7, "bytes": 50000, "start": 5.0, "end": 6.0},
            {"kind": "short", "port": 8, "bytes": 2000000, "start": 1.0, "end": 2.0}]
    ev = [(2.0, "rto", 7), (5.5, "rto", 7), (1.5, "rto", 8), (3.5, "rto", 8), (0.5, "rto", 8)]
    got = tcpstats.attribute(ev, rows, [7, 8], [[7, 1.0], [8, 3.0]])
    # 0.5 on port 8: before anything started there. Four connections (7
    # twice, 8 twice) and the unknown one.
    assert got == {"bulk": 2, "10 KB - 100 KB": 1, ">= 1 MB": 1, "unknown": 1, "connections": 5}


def test_undone_timeouts_tabled_where_recorded(tmp_path, capsys):
    def full(t, u, s):
        return dict(counters(t, 0, 0), TCPLossUndo=u, TCPSpuriousRTOs=s)
    runs = {
        "srff-htb-8@0.8-1": {"tcp_before": full(0, 0, 0), "tcp_after": full(10, 8, 6),
                             "rto": {">= 1 MB": 10, "connections": 2}},
        "srff-htb-8@0.8-2": {"tcp_before": full(10, 8, 6), "tcp_after": full(14, 10, 6),
                             "rto": {"bulk": 4, "connections": 1}},
    }
    write_runs(tmp_path, runs)
    tcpstats.main([str(tmp_path)])
    out = capsys.readouterr().out
    assert "RTOs undone (TCPLossUndo) | of them by F-RTO (TCPSpuriousRTOs) |" in out
    assert ("| srff-htb-8 | 0.8 | 2 | 7.0 [4, 10] | 0.0 [0, 0] | 0.0 [0, 0] | 5.0 [2, 8] "
            "| 3.0 [0, 6] |") in out
    assert "| connections |" in out
    assert "| srff-htb-8 | 0.8 | 2 | 2.0 | 0.0 | 0.0 | 0.0 | 5.0 | 0.0 | 0.0 | 1.5 |" in out
    # One run without them (recorded before): no undo column for anyone.
    runs["fq_codel@0.8-1"] = {"tcp_before": counters(0, 0, 0), "tcp_after": counters(1, 0, 0),
                              "rto": {"bulk": 1}}
    write_runs(tmp_path, runs)
    tcpstats.main([str(tmp_path)])
    out = capsys.readouterr().out
    assert "TCPLossUndo" not in out and "| connections |" not in out
    assert "| srff-htb-8 | 0.8 | 2 | 7.0 [4, 10] | 0.0 [0, 0] | 0.0 [0, 0] |\n" in out


def test_whose_table(tmp_path, capsys):
    c = counters(0, 0, 0)
    runs = {
        "srff-htb-8@0.8-1": {"tcp_before": c, "tcp_after": counters(3, 9, 0),
                             "rto": {"bulk": 2, ">= 1 MB": 1}},
        "srff-htb-8@0.8-2": {"tcp_before": c, "tcp_after": counters(1, 9, 0), "rto": {"bulk": 1}},
        "fq_codel@0.8-1": {"tcp_before": c, "tcp_after": c, "rto": {}},
    }
    write_runs(tmp_path, runs)
    tcpstats.main([str(tmp_path)])
    out = capsys.readouterr().out
    assert "| srff-htb-8 | 0.8 | 2 | 1.5 | 0.0 | 0.0 | 0.0 | 0.5 | 0.0 | 0.0 |" in out
    assert "| fq_codel | 0.8 | 1 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |" in out


def test_cpu_table_where_recorded(tmp_path, capsys):
    # user nice system idle iowait irq softirq, per CPU.
    before = {"cpu0": [0, 0, 0, 0, 0, 0, 0], "cpu1": [0, 0, 0, 0, 0, 0, 0]}
    runs = {
        # cpu0 half in the kernel (30 system + 20 softirq of 100), cpu1 a tenth.
        "srff-mq@0.8-1": {"tcp_before": counters(0, 0, 0), "tcp_after": counters(0, 0, 0),
                          "cpu_before": before,
                          "cpu_after": {"cpu0": [40, 0, 30, 10, 0, 0, 20],
                                        "cpu1": [10, 0, 5, 80, 0, 0, 5]}},
        "srff-mq@0.8-2": {"tcp_before": counters(0, 0, 0), "tcp_after": counters(0, 0, 0),
                          "cpu_before": before,
                          "cpu_after": {"cpu0": [70, 0, 10, 10, 0, 0, 10],
                                        "cpu1": [0, 0, 0, 100, 0, 0, 0]}},
        # No CPU times recorded: not in the CPU table.
        "fq_codel@0.8-1": {"tcp_before": counters(0, 0, 0), "tcp_after": counters(0, 0, 0)},
    }
    write_runs(tmp_path, runs)
    tcpstats.main([str(tmp_path)])
    out = capsys.readouterr().out
    cpu = out[out.index("system + softirq"):]
    # busiest: 0.5 and 0.2; mean over CPUs: 0.3 and 0.1.
    assert "| srff-mq | 0.8 | 2 | 0.35 [0.20, 0.50] | 0.20 [0.10, 0.30] |" in cpu
    assert "fq_codel" not in cpu


def test_no_cpu_table_without_cpu_times(tmp_path, capsys):
    write_runs(tmp_path, {"fifo@0.4-1": {"tcp_before": counters(0, 0, 0),
                                         "tcp_after": counters(1, 1, 1)}})
    tcpstats.main([str(tmp_path)])
    assert "softirq" not in capsys.readouterr().out
