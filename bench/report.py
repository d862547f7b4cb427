#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise bench/guest.sh's TSV: medians per (flows, policy), the cost a
policy adds per packet over no hook, and the ratios the targets name."""
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
mem = gc = None
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "memory":
        mem = f[1:]
    elif f[0] == "gc":
        gc = f[1:]
    elif len(f) == 5 and f[3]:
        rows[(int(f[0]), f[1])].append(float(f[3]))

sizes = sorted({k[0] for k in rows})
print("%-9s %-6s %10s %10s %12s %s" % ("flows", "policy", "pps(med)", "ns/pkt", "added ns/pkt", "runs (pps)"))
added = {}
for n in sizes:
    base = statistics.median(rows[(n, "none")])
    for p in ("none", "srff", "nft"):
        v = rows.get((n, p))
        if not v:
            continue
        med = statistics.median(v)
        ns = 1e9 / med
        add = ns - 1e9 / base
        added[(n, p)] = add
        print("%-9d %-6s %10.0f %10.0f %12.0f %s" % (n, p, med, ns, add,
              " ".join("%.0f" % x for x in v)))
print()
lo, hi = sizes[0], sizes[-1]
if (lo, "srff") in added and (hi, "srff") in added:
    t_lo = 1e9 / statistics.median(rows[(lo, "srff")])
    t_hi = 1e9 / statistics.median(rows[(hi, "srff")])
    print("srff per-packet path cost at %d flows / at %d flows: %.2fx (target <= 1.2x)" % (hi, lo, t_hi / t_lo))
    print("srff added cost at %d / at %d: %.0f ns / %.0f ns" % (hi, lo, added[(hi, "srff")], added[(lo, "srff")]))
for n in sizes:
    if (n, "nft") in added and (n, "srff") in added:
        print("at %7d flows: srff adds %.0f ns/pkt, nft+conntrack adds %.0f ns/pkt (srff/nft %.2f)"
              % (n, added[(n, "srff")], added[(n, "nft")],
                 added[(n, "srff")] / added[(n, "nft")] if added[(n, "nft")] > 0 else float("nan")))
if mem:
    flows, slab, buckets = int(mem[0]), int(mem[1]), int(mem[2])
    print("\nmemory at %d flows: slab grew %.1f MiB = %.0f B/flow; bucket array %.1f MiB; total %.0f B/flow (target <= 128)"
          % (flows, slab / 2**20, slab / flows, buckets / 2**20, (slab + buckets) / flows))
if gc:
    ms, base, during, runs = gc
    print("GC of ~1M idle flows: freed within %s ms of the change (incl. up to one 100 ms interval, %s runs);"
          " probe stream %s pps before, %s pps while sweeping (%.2fx)"
          % (ms, runs, base, during, float(during) / float(base)))
missing = [name for name, v in (("per-packet rows", rows), ("memory", mem), ("gc", gc)) if not v]
if missing:
    sys.exit("report: no %s in %s: the guest run stopped early (see bench/out/guest.log)"
             % (", ".join(missing), sys.argv[1]))
