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
