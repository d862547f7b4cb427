# SPDX-License-Identifier: GPL-2.0
"""experiments/qlog.py on synthetic tc samples with known answers."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import qlog  # noqa: E402


def sample(t, band_backlog, band_bytes, drops=0, flows=0):
    """A shaped prio: tbf 1: root, prio 10: under it, two band classes."""
    total = sum(band_backlog)
    q = [{"kind": "tbf", "handle": "1:", "root": True, "bytes": sum(band_bytes),
          "drops": drops, "backlog": total, "qlen": total // 1500},
         {"kind": "prio", "handle": "10:", "parent": "1:1", "bytes": sum(band_bytes),
          "drops": drops, "backlog": total, "qlen": total // 1500}]
    c = [{"class": "prio", "handle": "10:%d" % (i + 1), "parent": "10:", "bytes": b,
          "drops": 0, "backlog": bl, "qlen": bl // 1500}
         for i, (bl, b) in enumerate(zip(band_backlog, band_bytes))]
    # Per-flow classes of an fq_codel leaf are not bands.
    c += [{"class": "fq_codel", "handle": "101:%x" % k, "bytes": 0, "backlog": 10}
          for k in range(flows)]
    return {"t": t, "q": q, "c": c}


def write_run(d, name, samples, garbage=False):
    os.makedirs(os.path.join(d, "qlog"), exist_ok=True)
    with open(os.path.join(d, "qlog", name), "w") as f:
        for s in samples:
            f.write(json.dumps(s) + "\n")
        if garbage:
            f.write('{"t": 9.5, "q": [')  # cut short by the sampler's kill


def test_littles_law(tmp_path):
    # Band 0: no backlog, 10 kB/s. Band 1: a standing 50 kB queue draining
    # at 100 kB/s: a 500 ms sojourn.
    s = [sample(100.0 + t, [0, 50000], [10000 * t, 100000 * t], drops=3 * t, flows=2)
         for t in range(11)]
    write_run(str(tmp_path), "srff-prio-fq@0.8-1.jsonl", s, garbage=True)
    rows = qlog.build_table(str(tmp_path))
    assert {r["policy"] for r in rows} == {"srff-prio-fq"}
    assert {r["load"] for r in rows} == {"0.8"}
    assert not any("fq_codel" in r["queue"] for r in rows)
    summ = qlog.summarise(rows)
    b1 = summ[("srff-prio-fq", "0.8", "c prio 10:2")]
    assert b1["sojourn_ms"] == pytest.approx(500.0)
    assert b1["bytes_per_s"] == pytest.approx(100000.0)
    b0 = summ[("srff-prio-fq", "0.8", "c prio 10:1")]
    assert b0["sojourn_ms"] == pytest.approx(0.0)
    root = summ[("srff-prio-fq", "0.8", "q tbf 1:")]
    assert root["drops_per_s"] == pytest.approx(3.0)
    assert root["mean_backlog"] == pytest.approx(50000.0)
    assert root["parent"] == "root"


def test_rounds_pool_and_replaced_qdisc(tmp_path):
    # Two rounds of one policy pool into one line; a counter that goes
    # back (the qdisc was replaced) is not a negative rate.
    a = [sample(t, [0, 20000], [0, 50000 * t]) for t in range(5)]
    b = [sample(t, [0, 40000], [0, 50000 * t]) for t in range(5)]
    b[3]["c"][1]["bytes"] = 0  # replaced: its counter starts again
    b[4]["c"][1]["bytes"] = 25000
    write_run(str(tmp_path), "fifo@0.6-1.jsonl", a)
    write_run(str(tmp_path), "fifo@0.6-2.jsonl", b)
    summ = qlog.summarise(qlog.build_table(str(tmp_path)))
    band = summ[("fifo", "0.6", "c prio 10:2")]
    assert band["mean_backlog"] == pytest.approx(30000.0)
    assert band["max_backlog"] == 40000
    # Round 2: 50 000 twice, nothing at the reset, 25 000 after it.
    assert band["bytes_per_s"] == pytest.approx((4 * 50000 + 2 * 50000 + 25000) / 8)


def test_csv_roundtrip_and_report(tmp_path):
    s = [sample(t, [1500, 3000], [1000 * t, 2000 * t]) for t in range(4)]
    write_run(str(tmp_path), "cake@0.4-1.jsonl", s)
    qlog.main(["table", str(tmp_path)])
    p = tmp_path / "queues.csv.xz"
    first = p.read_bytes()
    assert first.startswith(b"\xfd7zXZ\x00")
    qlog.main(["table", str(tmp_path)])
    assert p.read_bytes() == first  # the same rows, the same bytes
    a = qlog.summarise(qlog.load_input(str(tmp_path)))
    b = qlog.summarise(qlog.build_table(str(tmp_path)))
    assert a == b
    qlog.main(["report", str(p), "--out", str(tmp_path / "o")])
    md = (tmp_path / "o" / "queues.md").read_text()
    assert "| cake | 0.4 | c prio 10:2 | 10: | 3.0 | 3.0 | 2.0 | 0.0 | 1500.0 |" in md


def test_no_samples_is_an_error(tmp_path):
    with pytest.raises(SystemExit):
        qlog.main(["table", str(tmp_path)])


CLASS_TEXT = """class tbf 1:1 parent 1: leaf 10: 
 Sent 5 bytes 1 pkt (dropped 0, overlimits 0 requeues 0) 
 backlog 0b 0p requeues 0
class prio 10:1 parent 10: leaf 101: 
 Sent 139376 bytes 120 pkt (dropped 0, overlimits 0 requeues 0) 
 backlog 1514b 1p requeues 0
class prio 10:3 parent 10: leaf 103: 
 Sent 3114672 bytes 2100 pkt (dropped 7, overlimits 0 requeues 0) 
 backlog 60Kb 40p requeues 0
class fq_codel 103:2a8 parent 103: 
 (dropped 0, overlimits 0 requeues 0) 
 backlog 9084b 6p requeues 0
"""


def test_class_text_is_parsed():
    c = {e["handle"]: e for e in qlog.parse_classes(CLASS_TEXT)}
    assert c["10:1"] == {"class": "prio", "handle": "10:1", "parent": "10:", "root": False,
                         "bytes": 139376, "drops": 0, "backlog": 1514, "qlen": 1}
    assert c["10:3"]["backlog"] == 60 * 1024 and c["10:3"]["drops"] == 7
    assert c["1:1"]["parent"] == "1:"
    ids = [q for q, _, _ in qlog._entries({"q": [], "ct": CLASS_TEXT})]
    assert ids == ["c tbf 1:1", "c prio 10:1", "c prio 10:3"]  # no per-flow class
