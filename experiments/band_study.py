#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How many bands, which thresholds, which order between the bands?

    python3 experiments/band_study.py [--out DIR] [--quick]   # ~30 s
    python3 experiments/band_study.py --tables [DIR]         # table.md again

The simulated counterpart of the defaults question (issue 32): every
candidate of POLICIES, on the three-file FTP trace (F3, F2, F1 two seconds
apart at 50 Mbit/s: the seed's experiment) and on the web mixes at 60 and
80 % load (100 Mbit/s), through experiments/threshold_sim.c (its header has
the model: one bottleneck, skbs as TSQ sends them, fq_codel-like leaves).
Besides FCTs: the >= 1 MB flows' longest stall (what strict order costs
the largest; the guest's bulk download measures the same). A policy is
thresholds (fixed, or the live-table rule `las`, a candidate srff_nf/
auto.h does not have: every PERIOD the quantiles of the bytes the active
flows have sent, at srff's bucket bounds) and an order between the bands (strict priority, or
ETS: band 0 strict, DRR quanta for the others, as srff-qdisc sets them, or
strict with an assured rate per band, as HTB classes with prio would give:
`ladder16-htb`, 10 % of the link split over the 16 bands).

Writes DIR/results.tsv (one row per policy and workload, mean over the
seeds) and DIR/table.md. Default DIR: experiments/results/bands.
Deterministic: fixed seeds. What it cannot show: a real TCP's reaction to
a band change (reordering), the kernel's GC pace, the guest's noise.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import threshold_study as ts  # noqa: E402

FTP_RATE = 6.25e6                          # 50 Mbit/s, the FTP experiment's link
FTP_FILES = ((0, 79532032), (2, 31898736), (4, 5756923))   # (start s, bytes)
WEB = [(d, l) for d in ("websearch", "datamining", "fb_hadoop") for l in (0.6, 0.8)]
SEEDS = (1, 2)
MEAS = 20000
MTU = 1514


def ets(n, ratio=3, cap=81):
    """srff-qdisc's ets_quanta: band 0 strict, band N-1 one MTU, ratio r
    between adjacent DRR bands, capped so band 1 gets at most cap MTUs
    (srff-qdisc's cap is 81; the -r2 and -r3 policies lift it)."""
    r = ratio
    if n > 2 and cap ** (1 / (n - 2)) < r:
        r = cap ** (1 / (n - 2))
    return [0] + [int(MTU * r ** (n - 1 - b) + 0.5) for b in range(1, n)]


def ladder(n, first=16384, ratio=2):
    return [first * ratio ** i for i in range(n)]


def geo8():
    """auto.h's geo rule for 8 bands on a web mix: p60 under the floor."""
    return ladder(7, ratio=8)


# name: (thresholds or ("las", period, n), order: "strict" | quanta list)
POLICIES = {
    "fq": ([], "strict"),
    "shipped": ([16384, 524288], ets(3)),
    "shipped-strict": ([16384, 524288], "strict"),
    "geo8-ets": (geo8(), ets(8)),
    "ladder16-strict": (ladder(15), "strict"),
    "ladder16-ets": (ladder(15), ets(16)),
    "ladder16-ets-r2": (ladder(15), ets(16, ratio=2, cap=1e4)),
    "ladder16-ets-r3": (ladder(15), ets(16, ratio=3, cap=1e6)),
    "ladder16-htb": (ladder(15), ("assured", 0.1)),
    "las3-ets": (("las", 2.5, 2), ets(3)),
    "las3-ets-1s": (("las", 1.0, 2), ets(3)),
    "las3-strict": (("las", 2.5, 2), "strict"),
    "las8-ets": (("las", 2.5, 7), ets(8)),
    "srpt": (None, None),
}


def job(policy, workload, seed, meas):
    thr, order = POLICIES[policy]
    if workload == "ftp":
        trace = ",".join(f"{t}:{b}" for t, b in FTP_FILES)
        w = f"trace={trace} rate={FTP_RATE}"
    else:
        d, load = workload
        w = (f"dist={dist(d)} load={load} seed={seed} warm={ts.WARM} meas={meas} "
             f"rate={ts.RATE} small={ts.SMALL} big={ts.BIG}")
    if thr is None:
        return w + " leaf=srpt"
    p = " leaf=fq"
    if thr and thr[0] == "las":
        p += f" las={thr[1]},{thr[2]}"
    elif thr:
        p += " thr=" + ",".join(str(t) for t in thr)
    if order != "strict" and order[0] == "assured":   # a share of the link, split evenly
        rate = FTP_RATE if workload == "ftp" else ts.RATE
        p += " assured=" + ",".join([f"{order[1] * rate / (len(thr) + 1):.6g}"] * (len(thr) + 1))
    elif order != "strict":
        p += " drr=" + ",".join(str(q) for q in order)
    return w + p


def dist(name):
    return ts.DISTS[name] if name in ts.DISTS else "cdf:" + ts.cdf_file(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "results", "bands"))
    ap.add_argument("--quick", action="store_true", help="one seed, 3000 flows (a smoke test)")
    ap.add_argument("--tables", nargs="?", const=os.path.join(HERE, "results", "bands"),
                    metavar="DIR", help="only make DIR/table.md again from DIR/results.tsv")
    args = ap.parse_args()
    if args.tables:
        write_table(args.tables)
        return
    os.makedirs(args.out, exist_ok=True)
    seeds, meas = (SEEDS[:1], 3000) if args.quick else (SEEDS, MEAS)
    t0 = time.time()
    exe = ts.build_sim(args.out)
    lines, keys = [], []
    for p in POLICIES:
        lines.append(job(p, "ftp", 1, meas))
        keys.append((p, "ftp"))
        for w in WEB:
            for s in seeds:
                lines.append(job(p, w, s, meas))
                keys.append((p, w))
    print(f"band_study: {len(lines)} simulations", file=sys.stderr)
    res = ts.run_jobs(exe, lines)
    os.unlink(exe)
    rows = {}
    for k, r in zip(keys, res):
        rows.setdefault(k, []).append(r)
    alone = FTP_FILES[2][1] / FTP_RATE
    out = []
    for (p, w), rs in rows.items():
        if w == "ftp":
            f = rs[0]["fct"]
            out.append(dict(policy=p, workload="ftp", load="-", f1_x_alone=f[2] / alone,
                            f2_s=f[1], f3_s=f[0]))
            continue
        m = [dict(ts.flatten(r), stall_big_max=r["stall_big_max_ms"],
                  stall_big_mean=r["stall_big_mean_ms"]) for r in rs]
        avg = {k: sum(x[k] for x in m) / len(m) for k in m[0]}
        out.append(dict(policy=p, workload=w[0], load=w[1], **avg))
    with open(os.path.join(args.out, "results.tsv"), "w") as f:
        cols = (["policy", "workload", "load", "f1_x_alone", "f2_s", "f3_s"] + list(ts.METRICS) +
                ["stall_big_max", "stall_big_mean"])
        f.write("\t".join(cols) + "\n")
        for r in out:
            f.write("\t".join(ts.fmt(r.get(c, "-")) for c in cols) + "\n")
    with open(os.path.join(args.out, "params.json"), "w") as f:
        json.dump(dict(policies={k: [v[0], v[1]] for k, v in POLICIES.items()},
                       ftp_rate=FTP_RATE, ftp_files=FTP_FILES, web=WEB, seeds=list(seeds),
                       meas=meas, rate=ts.RATE, commit=ts.git_commit()), f, indent=1)
        f.write("\n")
    write_table(args.out)
    print(f"band_study: {time.time() - t0:.0f} s, {args.out}/table.md", file=sys.stderr)


def load_rows(d):
    with open(os.path.join(d, "results.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, l.rstrip("\n").split("\t"))) for l in f]


def write_table(d):
    """table.md from results.tsv: every figure relative to fq (one band)."""
    rows = load_rows(d)
    by = {(r["policy"], r["workload"], r["load"]): r for r in rows}
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    webs = list(dict.fromkeys((r["workload"], r["load"]) for r in rows if r["workload"] != "ftp"))
    L = ["# Bands, thresholds and order, simulated (experiments/band_study.py)", "",
         "FTP: F1's time over F1 alone on the idle link (1.00 is ideal). Web: mean FCT",
         "over fq's (one band, fq_codel-like) for < 100 KB, 100 KB-1 MB, >= 1 MB, and",
         "p99 of < 100 KB; the worst ratio over " +
         ", ".join(f"{w} {l}" for w, l in webs) + ".",
         "Stall: the longest a >= 1 MB flow waited with an skb queued and none sent",
         "(seconds, the worst cell; mean over seeds of each run's longest).", "",
         "| policy | FTP F1/alone | < 100 KB | 100 KB-1 MB | >= 1 MB | p99 < 100 KB | stall >= 1 MB (s) |",
         "|---|---|---|---|---|---|---|"]
    for p in pols:
        f1 = float(by[(p, "ftp", "-")]["f1_x_alone"])
        worst = []
        for m in ("fct_small", "fct_mid", "fct_big", "p99_small_fct"):
            worst.append(max(float(by[(p, w, l)][m]) / float(by[("fq", w, l)][m])
                             for w, l in webs))
        stall = max(float(by[(p, w, l)]["stall_big_max"]) for w, l in webs) / 1e3
        L.append(f"| {p} | {f1:.2f} | " + " | ".join(f"{x:.2f}" for x in worst) +
                 f" | {stall:.2f} |")
    with open(os.path.join(d, "table.md"), "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
