#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""TCP's retransmissions per run of the open-loop experiment.

  tcpstats.py RUN_DIR [--out DIR]

RUN_DIR/srff.json.gz (what openloop.sh commits; srff/RUN.json while the raw
logs are kept) holds, per run POLICY@LOAD-ROUND, the server namespace's
TcpExt TCPTimeouts (retransmission timeouts), Tcp RetransSegs and TcpExt
TCPLossProbes before and after the run's arrivals and drain. Prints, per
policy and load, how much each grew in a run: the mean over rounds and the
smallest and largest. --out writes DIR/tcp.md. Runs recorded before the
counters were (no "tcp_before") are left out; with none left, says so and
writes no file.

A timeout is the guard rail of the defaults issue: a bulk download that
sits behind responses long enough times out and restarts from one segment.
The counters are the whole namespace's (every response and the bulk
downloads), not one socket's.
"""
import argparse
import gzip
import json
import os
import re
import sys

COUNTERS = ("TCPTimeouts", "RetransSegs", "TCPLossProbes")
RUN = re.compile(r"^(?P<policy>.+)@(?P<load>[0-9.]+)-(?P<round>\d+)$")


def load_runs(run_dir):
    """{run name: {"tcp_before": {...}, "tcp_after": {...}, ...}}."""
    path = os.path.join(run_dir, "srff.json.gz")
    if os.path.exists(path):
        with gzip.open(path) as f:
            return json.load(f)
    d = os.path.join(run_dir, "srff")
    runs = {}
    if os.path.isdir(d):
        for n in sorted(os.listdir(d)):
            if n.endswith(".json"):
                with open(os.path.join(d, n)) as f:
                    runs[n[:-5]] = json.load(f)
    return runs


def summarise(runs, order=None):
    """[(policy, load, counter, n, mean, lo, hi)] in policy order (order, or
    first seen), then load."""
    cells = {}
    seen = []
    for name, r in runs.items():
        m = RUN.match(name)
        if not m or "tcp_before" not in r or "tcp_after" not in r:
            continue
        key = (m["policy"], float(m["load"]))
        if m["policy"] not in seen:
            seen.append(m["policy"])
        for c in COUNTERS:
            grew = r["tcp_after"][c] - r["tcp_before"][c]
            cells.setdefault(key + (c,), []).append(grew)
    names = list(order or [])
    names += [p for p in seen if p not in names]
    rank = {p: i for i, p in enumerate(names)}
    out = []
    for (p, ld, c), v in sorted(cells.items(),
                                key=lambda kv: (rank[kv[0][0]], kv[0][1],
                                                COUNTERS.index(kv[0][2]))):
        out.append((p, ld, c, len(v), sum(v) / len(v), min(v), max(v)))
    return out


def table(rows):
    if not rows:
        return "No run of this folder recorded TCP's counters.\n"
    by = {}
    for p, ld, c, n, mean, lo, hi in rows:
        by.setdefault((p, ld), {})[c] = (n, mean, lo, hi)
    lines = ["Growth per run of the server namespace's TCP counters: mean [smallest, largest] "
             "over rounds.", "",
             "| policy | load | runs | RTOs (TCPTimeouts) | segments retransmitted | loss probes |",
             "|---|---|---:|---|---|---|"]
    for (p, ld), cs in by.items():
        n = next(iter(cs.values()))[0]
        cell = ["%.1f [%d, %d]" % cs[c][1:] for c in COUNTERS]
        lines.append("| %s | %g | %d | %s |" % (p, ld, n, " | ".join(cell)))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    order = None
    meta = os.path.join(a.run_dir, "meta.json")
    if os.path.exists(meta):
        with open(meta) as f:
            order = json.load(f).get("params", {}).get("policies")
    rows = summarise(load_runs(a.run_dir), order)
    md = table(rows)
    sys.stdout.write(md)
    if a.out and rows:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "tcp.md"), "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
