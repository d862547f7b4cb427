#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A kept benchmark run's report, from its committed files.

  bench/kept.py bench/results/NAME

A run kept with BENCH_OUT=bench/results/NAME make bench holds the guest's
raw rows (guest.tsv, probe_gc, probe_busy), the native reports (native.txt,
native-thp.txt where the machine had transparent huge pages), the
per-namespace memory report (netns-mem.txt) and meta.json. This remakes
guest.txt (bench/report.py over the rows) and report.md: the four reports
whole, under a line that says where and when they were measured, which
docs/performance.md includes. experiments/report.sh runs it for every kept
run; the same files give the same bytes.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = (("native.txt", "Native: the user-space build of flowkey.c and table.c (`srff_nf/user/build/bench`)"),
         ("native-thp.txt", "Native, per-packet part again with malloc on transparent huge pages"),
         ("guest.txt", "Guest kernel: per packet against no hook and nft + conntrack, memory, GC (`bench/report.py guest.tsv`)"),
         ("netns-mem.txt", "Guest kernel: memory per network namespace (`bench/netns-mem.sh 100`)"))


def main(argv):
    if len(argv) != 2 or not os.path.isfile(os.path.join(argv[1], "guest.tsv")):
        sys.exit("usage: bench/kept.py bench/results/NAME (a folder with guest.tsv)")
    run = argv[1].rstrip("/")
    r = subprocess.run([sys.executable, os.path.join(HERE, "report.py"),
                        os.path.join(run, "guest.tsv")], capture_output=True, text=True)
    if r.returncode:
        sys.exit("kept: bench/report.py failed on %s: %s" % (run, r.stderr.strip()))
    with open(os.path.join(run, "guest.txt"), "w") as f:
        f.write(r.stdout)
    meta = {}
    if os.path.exists(os.path.join(run, "meta.json")):
        meta = json.load(open(os.path.join(run, "meta.json")))
    git = meta.get("git") or {}
    p = meta.get("params") or {}
    m = meta.get("machine") or {}
    out = ["Run `%s`: %s, commit %s, guest kernel %s on %s vCPUs (%s); %s rounds of %s s per"
           " policy and flow count."
           % (run, (meta.get("date") or "date unknown")[:10], (git.get("commit") or "unknown")[:7],
              m.get("kernel", "unknown"), m.get("cpus", "?"), m.get("model", "?"),
              p.get("rounds", "?"), p.get("seconds", "?")), ""]
    for name, title in PARTS:
        path = os.path.join(run, name)
        if not os.path.exists(path):
            continue
        out += ["**%s**" % title, "", "```text", open(path).read().rstrip("\n"), "```", ""]
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main(sys.argv)
