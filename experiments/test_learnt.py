# SPDX-License-Identifier: GPL-2.0
"""learnt.py: srff's thresholds over a boot, in the order the runs ran."""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learnt  # noqa: E402

K = 1024
M = K * K


def state(th, flows, t=None):
    r = {"show": {"thresholds": th}, "stats": {"auto_flows": flows}}
    if t is not None:
        r["t"] = t
    return r


def write(path, runs, order):
    with gzip.open(path / "srff.json.gz", "wt") as f:
        json.dump(runs, f)
    with open(path / "order.jsonl", "w") as f:
        for o in order:
            f.write(json.dumps(o) + "\n")


def rows(text):
    return [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]


def test_human():
    assert [learnt.human(x) for x in (16 * K, 24 * K, 1536 * K, 4 << 30, 1000, 0)] == [
        "16 KiB", "24 KiB", "1536 KiB", "4 GiB", "1000 B", "0 B"]


def test_changes_in_run_order_per_band_count(tmp_path, capsys):
    """Rows in the order the runs ran (order.jsonl), not by name: each band
    count's first run, then the runs where its thresholds moved; a move of
    one band count is not one of the other's."""
    eight = [16 * K * 8 ** i for i in range(7)]
    eight2 = [24 * K * 8 ** i for i in range(7)]
    runs = {
        "fq_codel@0.8-1": state([16 * K, 512 * K], 3000, 200),
        "srff-htb-8@0.8-1": state(eight, 3100, 240),
        "srff-ets@0.8-1": state([16 * K, 512 * K], 3200, 280),
        "srff-ets@0.8-2": state([16 * K, 512 * K], 3300, 320),
        "srff-htb-8@0.8-2": state(eight2, 3400, 360),
        "fq_codel@0.8-2": state([64 * K, 2 * M], 3500, 400),
        # Set by hand for its run (srff-pias...): not a change of what srff learnt.
        "srff-pias@0.8-2": {"show": {"thresholds": [112 * K, 640 * K], "auto_thresholds": False},
                            "stats": {"auto_flows": 3600}},
        # Not in order.jsonl: left out.
        "srff-ets@0.6-9": state([1, 2], 1),
    }
    order = [{"round": 1, "load": 0.8, "order": ["fq_codel", "srff-htb-8", "srff-ets"]},
             {"round": 2, "load": 0.8, "order": ["srff-ets", "srff-pias", "srff-htb-8", "fq_codel"]}]
    write(tmp_path, runs, order)
    assert learnt.main([str(tmp_path), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "learnt.md").read_text() == out
    assert "(7 runs; 3 bands: changed 1 time; 8 bands: changed 1 time)" in out
    assert rows(out) == [
        "| fq_codel@0.8-1 | 1 | 200 | 3 | 16 KiB, 512 KiB | 3000 |",
        "| srff-htb-8@0.8-1 | 2 | 240 | 8 | 16 KiB, 128 KiB, 1 MiB, 8 MiB, 64 MiB, 512 MiB, 4 GiB | 3100 |",
        "| srff-htb-8@0.8-2 | 6 | 360 | 8 | 24 KiB, 192 KiB, 1536 KiB, 12 MiB, 96 MiB, 768 MiB, 6 GiB | 3400 |",
        "| fq_codel@0.8-2 | 7 | 400 | 3 | 64 KiB, 2 MiB | 3500 |",
    ]


def test_steady_and_older_runs(tmp_path, capsys):
    """Thresholds that never move: one row, "held still"; a run without
    "t" (recorded before it was) shows "-"; loads match as numbers."""
    runs = {"srff-ets@0.50-%d" % r: state([16 * K, 512 * K], 2000 + r) for r in (1, 2, 3)}
    write(tmp_path, runs, [{"round": r, "load": 0.5, "order": ["srff-ets"]} for r in (1, 2, 3)])
    assert learnt.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(3 runs; 3 bands: held still)" in out
    assert rows(out) == ["| srff-ets@0.50-1 | 1 | - | 3 | 16 KiB, 512 KiB | 2001 |"]
    assert not (tmp_path / "learnt.md").exists()


def test_no_order_writes_nothing(tmp_path, capsys):
    """A boot before the shuffled order (no order.jsonl): nothing, said so."""
    with gzip.open(tmp_path / "srff.json.gz", "wt") as f:
        json.dump({"srff-ets@0.8-1": state([16 * K, 512 * K], 1)}, f)
    assert learnt.main([str(tmp_path), "--out", str(tmp_path)]) == 0
    cap = capsys.readouterr()
    assert cap.out == "" and "no ordered runs" in cap.err
    assert not (tmp_path / "learnt.md").exists()
