#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise bench/guest.sh's TSV.

Per-packet cost: for each round, what srff and nft+conntrack add per packet
over the round's own no-hook run (paired, so a round that ran slow for all
three policies cancels out), then the median over rounds. GC: the kernel's
own timing of the sweep, and the probe stream's 100 ms slices before,
during and after it."""
import os
import statistics
import sys
from collections import defaultdict

pps = defaultdict(dict)		# (flows, round) -> policy -> pps
mem = gc = busy = None
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "memory":
        mem = f[1:]
    elif f[0] == "gc":
        gc = f[1:]
    elif f[0] == "busy":
        busy = f[1:]
    elif len(f) == 5 and f[3]:
        pps[(int(f[0]), int(f[2]))][f[1]] = float(f[3])

med = statistics.median
sizes = sorted({n for n, _ in pps})
print("%-9s %-6s %10s %10s %s" % ("flows", "policy", "pps(med)", "ns/pkt", "rounds (pps)"))
added = {}
for n in sizes:
    rounds = [pps[k] for k in sorted(pps) if k[0] == n]
    for p in ("none", "srff", "nft"):
        v = [r[p] for r in rounds if p in r]
        if v:
            print("%-9d %-6s %10.0f %10.0f %s" % (n, p, med(v), 1e9 / med(v),
                  " ".join("%.0f" % x for x in v)))
    for p in ("srff", "nft"):
        v = [1e9 / r[p] - 1e9 / r["none"] for r in rounds if p in r and "none" in r]
        if v:
            added[(n, p)] = v
print()
print("added ns/packet over no hook, paired within each round: median [min .. max] of the rounds")
for n in sizes:
    parts = []
    for p in ("srff", "nft"):
        if (n, p) in added:
            v = added[(n, p)]
            parts.append("%s %+.0f [%+.0f .. %+.0f]" % (p, med(v), min(v), max(v)))
    cheaper = ""
    if (n, "srff") in added and (n, "nft") in added:
        pairs = list(zip(added[(n, "srff")], added[(n, "nft")]))
        wins = sum(1 for a, b in pairs if a < b)
        cheaper = "; srff cheaper than nft in %d of %d rounds" % (wins, len(pairs))
    print("  %7d flows: %s%s" % (n, ", ".join(parts), cheaper))
lo, hi = (sizes[0], sizes[-1]) if sizes else (None, None)
if (lo, "srff") in added and (hi, "srff") in added:
    rl = [pps[k]["srff"] for k in pps if k[0] == lo and "srff" in pps[k]]
    rh = [pps[k]["srff"] for k in pps if k[0] == hi and "srff" in pps[k]]
    print("srff path ns/packet at %d flows / at %d flows: %.2fx (target <= 1.2x)"
          % (hi, lo, (1e9 / med(rh)) / (1e9 / med(rl))))
if mem:
    flows, kmem, buckets = int(mem[0]), int(mem[1]), int(mem[2])
    print("\nmemory at %d flows: kernel memory (Slab + VmallocUsed) grew %.1f MiB = %.1f B/flow (target <= 128),"
          " the bucket array the table grew to included (%.1f MiB = %.1f B/flow)"
          % (flows, kmem / 2**20, kmem / flows, buckets / 2**20, buckets / flows))
def read_slices(path):
    """The probe's 100 ms slices: guest.tsv names its file beside it (older
    runs wrote the guest's path, of which the name is what is left)."""
    path = os.path.join(os.path.dirname(sys.argv[1]), os.path.basename(path))
    out = []
    for line in open(path):
        f = line.split()
        if f and f[0] == "slice":
            out.append((int(f[1]), float(f[2])))
    return out


def show(name, v):
    if not v:
        return "%s: no slices" % name
    return "%s %d slices, median %.0f pps (min %.0f)" % (name, len(v), med(v), min(v))


W = 100_000_000				# a probe slice's length, ns
if gc:
    flows0, t_set, t_full, t_empty, us, chain, freed, probe = gc
    t_set, t_full, t_empty, us, freed = int(t_set), int(t_full), int(t_empty), int(us), int(freed)
    per = us / max(freed, 1)
    print("GC of %d idle flows, timed by the kernel: sweep %.0f ms = %.2f us per flow; the longest"
          " chain under one bucket lock was %s flows, so the longest stretch without rescheduling"
          " is about %.0f us" % (freed, us / 1e3, per, chain, int(chain) * per))
    if t_empty:
        slices = read_slices(probe)
        before = [p for t, p in slices if t <= t_set]
        # Certainly inside the sweep: it ended after t_full and by t_empty,
        # and lasted us microseconds.
        during = [p for t, p in slices if t - W >= t_empty - us * 1000 and t <= t_full]
        after = [p for t, p in slices if t - W >= t_empty and t <= t_empty + 4_000_000_000]
        print("probe on CPU 1, sweep on CPU 0: " + "; ".join(show(*x) for x in
              (("before", before), ("during", during), ("after", after))))
        if before and during:
            print("probe during the sweep / before: %.2fx" % (med(during) / med(before)))
    else:
        print("GC: the table did not empty while polled")
if busy:
    t0, t1, probe = int(busy[0]), int(busy[1]), busy[2]
    slices = read_slices(probe)
    before = [p for t, p in slices if t <= t0]
    during = [p for t, p in slices if t - W >= t0 and t <= t1]
    print("control, CPU 0 busy with dd instead: " + "; ".join(show(*x) for x in
          (("before", before), ("during", during))))
    if before and during:
        print("probe while CPU 0 is busy with anything / idle: %.2fx" % (med(during) / med(before)))
missing = [name for name, v in (("per-packet rows", pps), ("memory", mem), ("gc", gc), ("control", busy)) if not v]
if missing:
    sys.exit("report: no %s in %s: the guest run stopped early (see %s/guest.log)"
             % (", ".join(missing), sys.argv[1], os.path.dirname(sys.argv[1]) or "."))
