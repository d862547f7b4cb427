#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Completion times of the busy-web-server experiment.

  web_analyze.py RUN_DIR     RUN_DIR holds params.json and requests/POLICY-ROUND.jsonl

Responses of the short-connection and keep-alive clients are split at
params["small_limit"] bytes (100 KB) into small and large; the bulk
clients' downloads are reported apart. Per policy: count, mean and p99 of
the completion time (request start -> last byte) over all rounds, and the
change against the first policy ("unmarked"). Writes RUN_DIR/results.json,
RUN_DIR/report.md and RUN_DIR/cdf.png, and prints the table.
"""
import json
import math
import os
import re
import statistics
import sys


def p99(v):
    """Nearest-rank 99th percentile."""
    s = sorted(v)
    return s[max(0, math.ceil(0.99 * len(s)) - 1)]


def load(run):
    params = json.load(open(os.path.join(run, "params.json")))
    limit = params.get("small_limit", 100000)
    times = {}  # policy -> class -> [seconds]
    rdir = os.path.join(run, "requests")
    for name in sorted(os.listdir(rdir)):
        m = re.match(r"(.+)-(\d+)\.jsonl$", name)
        if not m:
            continue
        t = times.setdefault(m.group(1), {"small": [], "large": [], "bulk": [],
                                          "small_keepalive": []})
        for line in open(os.path.join(rdir, name)):
            r = json.loads(line)
            d = r["end"] - r["start"]
            if r["kind"] == "bulk":
                t["bulk"].append(d)
            elif r["bytes"] < limit:
                t["small"].append(d)
                if r["kind"] == "keepalive":
                    t["small_keepalive"].append(d)
            else:
                t["large"].append(d)
    return params, times


def summarise(params, times):
    order = [p for p in params["policies"] if p in times]
    base = order[0] if order else None
    res = {}
    for p in order:
        res[p] = {}
        for c, v in times[p].items():
            if not v:
                res[p][c] = {"n": 0}
                continue
            res[p][c] = {"n": len(v), "mean": statistics.fmean(v), "p99": p99(v)}
    for p in order:
        for c, s in res[p].items():
            b = res[base][c]
            if s["n"] and b["n"] and p != base:
                s["mean_vs_base"] = (b["mean"] - s["mean"]) / b["mean"] * 100
                s["p99_vs_base"] = (b["p99"] - s["p99"]) / b["p99"] * 100
    return order, res


def fmt(s, key):
    if not s["n"]:
        return "-"
    v = "%.3f" % s[key]
    if key + "_vs_base" in s:
        v += " (%+.0f %%)" % s[key + "_vs_base"]
    return v


def table(order, res):
    rows = ["| policy | class | n | mean (s) | p99 (s) |", "|---|---|---|---|---|"]
    for c, label in (("small", "small < 100 KB"), ("small_keepalive", "small, kept-alive"),
                     ("large", "large >= 100 KB"), ("bulk", "bulk 8 MiB")):
        for p in order:
            s = res[p][c]
            rows.append("| %s | %s | %d | %s | %s |" % (p, label, s["n"], fmt(s, "mean"),
                                                      fmt(s, "p99")))
    return "\n".join(rows)


def plot(run, order, times):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, c, title in ((axes[0], "small", "small responses (< 100 KB)"),
                         (axes[1], "large", "large responses (>= 100 KB)")):
        for p in order:
            v = sorted(times[p][c])
            if v:
                ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=p)
        ax.set_xscale("log")
        ax.set_xlabel("completion time (s)")
        ax.set_ylabel("fraction of responses")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(run, "cdf.png"), dpi=100)


def main():
    run = sys.argv[1]
    params, times = load(run)
    order, res = summarise(params, times)
    if not order:
        sys.exit("web_analyze: no requests in %s/requests" % run)
    for p in order:
        if not times[p]["small"]:
            sys.exit("web_analyze: policy %s completed no small responses" % p)
    t = table(order, res)
    json.dump({"params": params, "completion_s": res}, open(os.path.join(run, "results.json"), "w"),
              indent=1)
    plot(run, order, times)
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write("# Busy web server\n\nKernel %s, bottleneck %s, %d rounds of %s s per policy, "
                "interleaved in one boot under QEMU (absolute times are slow; compare policies). "
                "Percent: change against %s, positive is faster.\n\n%s\n\n![CDF](cdf.png)\n\n"
                "Parameters: `params.json`; file sizes: `manifest.txt`; every request: "
                "`requests/`.\n" % (params.get("kernel"), params.get("rate"), params.get("rounds"),
                                    params.get("seconds"), order[0], t))
    print(t)


if __name__ == "__main__":
    main()
