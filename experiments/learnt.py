#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""srff's learnt thresholds over an open-loop boot: did they follow the mix,
and did they hold still?

  learnt.py RUN_DIR [--out DIR]

RUN_DIR/srff.json.gz holds srff's state at the end of every run (srffctl
show and stats), RUN_DIR/order.jsonl the order the runs ran in. For each
number of bands srff ran with (3: srff as shipped, and the baselines' runs,
where srff is neutral but learns; 8 or 16: the class-id policies), prints
the thresholds in effect at the end of the first run with that many, and
of every later run where they differ from the one before, with the run's
place in the boot, the seconds since the guest script began where the run
recorded them ("t"), and the finished flows srff had learnt from; runs
whose thresholds were set by hand (auto_thresholds false) are skipped. Under a
steady mix that is one row per band count; after a change of mix
(WEB_WARMUP_DIST), the rows say when the thresholds followed. --out writes
DIR/learnt.md. Boots before the shuffled order (no order.jsonl) get
nothing.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tcpstats import RUN, load_runs  # noqa: E402


def human(n):
    """Bytes as srffctl prints them: the largest binary unit that divides
    them (16 KiB, 4 GiB), else bytes."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def in_order(run_dir):
    """[(run name, its state)] in the order the runs ran, or None without
    order.jsonl. Runs are matched by policy, load (as a number) and round."""
    path = os.path.join(run_dir, "order.jsonl")
    if not os.path.exists(path):
        return None
    runs = load_runs(run_dir)
    by_key = {}
    for name in runs:
        m = RUN.match(name)
        if m:
            by_key[(m["policy"], float(m["load"]), int(m["round"]))] = name
    out = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            for p in o["order"]:
                name = by_key.get((p, float(o["load"]), int(o["round"])))
                if name is not None and "show" in runs[name]:
                    out.append((name, runs[name]))
    return out


def changes(seq):
    """[(place, run name, t or None, bands, thresholds, flows)]: each band
    count's first run, and its runs whose thresholds differ from its run
    before. place counts from 1 over all runs."""
    last = {}
    rows = []
    for i, (name, r) in enumerate(seq, 1):
        if r["show"].get("auto_thresholds") is False:
            continue        # set by hand for the run (srff-pias, srff-span...): not learnt
        th = r["show"].get("thresholds") or []
        bands = len(th) + 1
        if last.get(bands) != th:
            rows.append((i, name, r.get("t"), bands, th,
                         r.get("stats", {}).get("auto_flows")))
        last[bands] = th
    return rows


def table(seq):
    """learnt.md's text, or "" when there is nothing to show."""
    rows = changes(seq)
    if not rows:
        return ""
    counts = sorted({b for _, _, _, b, _, _ in rows})
    moved = {b: sum(1 for r in rows if r[3] == b) - 1 for b in counts}
    lines = [
        "srff's thresholds at the end of each run, in the order the runs ran: each band "
        "count's first run, then only the runs where they changed (%d runs; %s)." % (
            len(seq), "; ".join("%d bands: %s" % (
                b, "held still" if moved[b] == 0 else
                "changed %d time%s" % (moved[b], "" if moved[b] == 1 else "s"))
                for b in counts)),
        "",
        "| run | place | t (s) | bands | thresholds | flows learnt from |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for i, name, t, bands, th, flows in rows:
        lines.append("| %s | %d | %s | %d | %s | %s |" % (
            name, i, "-" if t is None else "%d" % t, bands,
            ", ".join(human(x) for x in th) or "-",
            "-" if flows is None else "%d" % flows))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--out", help="write learnt.md here")
    a = ap.parse_args(argv)
    seq = in_order(a.run_dir)
    text = table(seq) if seq else ""
    if not text:
        print("learnt: no ordered runs with srff's state in %s" % a.run_dir, file=sys.stderr)
        return 0
    sys.stdout.write(text)
    if a.out:
        with open(os.path.join(a.out, "learnt.md"), "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
