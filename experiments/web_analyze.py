#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Completion times of the busy-web-server experiment.

  web_analyze.py [--no-plots] RUN_DIR
                             RUN_DIR holds params.json, requests/POLICY-ROUND.jsonl
                             and pcap/POLICY-ROUND.pcap; --no-plots: no cdf.png
                             (matplotlib's import alone takes 24 s in the
                             emulated guest)

Each response is timed from the client-side capture: from the SYN of its
connection (a new connection's first response) or from the request's first
packet (a later one on a kept-alive connection) to the last payload byte the
server sent before the next request. The client's log says which request
was which (its local port and place on the connection) and how big the
body was. A run without captures, or a request the capture cannot place, is
timed by the client's own clock instead, and the report says how many were.

Responses of the short-connection and keep-alive clients are split at
params["small_limit"] bytes (100 KB) into small and large; the bulk
clients' downloads are reported apart, and the small responses are shown
once more as the client's clock saw them, as a cross-check. Per policy:
count, mean and p99 of the completion time over all rounds, and the change
against the first policy ("unmarked"). Writes RUN_DIR/results.json,
RUN_DIR/report.md and RUN_DIR/cdf.png, and prints the table.
"""
import argparse
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


HTTP_PORT = 80


def pcap_responses(path):
    """{(client address, client port): [[(start, end), ...], ...]}: per
    client address and local port, the connections it carried in order of
    their SYNs, and each connection's responses in order, from a capture
    that sees both directions where the client's packets have already made
    their way (the client's side, or the last hop before it)."""
    import socket

    import dpkt

    conns = {}  # (addr, port) -> [{"syn": t, "resp": [[start, end, bytes], ...]}, ...]
    with open(path, "rb") as f:
        for ts, buf in dpkt.pcap.Reader(f):
            ip = dpkt.ethernet.Ethernet(buf).data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            tcp = ip.data
            # -s 96 keeps headers only, and a frame may be a GSO
            # super-packet: the payload length is the IP header's.
            n = ip.len - ip.hl * 4 - tcp.off * 4
            if tcp.dport == HTTP_PORT:  # client -> server
                seq = conns.setdefault((socket.inet_ntoa(ip.src), tcp.sport), [])
                c = seq[-1] if seq else None
                if tcp.flags & dpkt.tcp.TH_SYN:
                    # A SYN after responses is the port's next connection;
                    # before any, a retransmission: the first one starts it.
                    if c is None or c["resp"]:
                        seq.append({"syn": ts, "resp": []})
                elif n > 0 and c is not None and (not c["resp"] or c["resp"][-1][2]):
                    # A request: the first packet after the previous
                    # response's data (a retransmission of the request
                    # comes before any, and starts nothing).
                    c["resp"].append([ts if c["resp"] else c["syn"], None, 0])
            elif tcp.sport == HTTP_PORT and n > 0:  # server -> client
                seq = conns.get((socket.inet_ntoa(ip.dst), tcp.dport))
                if seq and seq[-1]["resp"]:
                    seq[-1]["resp"][-1][1] = ts
                    seq[-1]["resp"][-1][2] += n
    return {k: [[(r[0], r[1]) for r in c["resp"]] for c in seq] for k, seq in conns.items()}


def connection_ordinals(rows):
    """For each request row, which connection on its local port (and
    client address, where the row names one: src) it used (0, 1, ...): a
    port's connections follow one another, and a row with nth 0 opens the
    next one."""
    out, opened = {}, {}
    for i in sorted(range(len(rows)), key=lambda i: rows[i]["start"]):
        key = (rows[i].get("src"), rows[i].get("port"))
        if rows[i].get("nth", 0) == 0:
            opened[key] = opened.get(key, -1) + 1
        out[i] = opened.get(key, 0)
    return out


def match_responses(resp, rows):
    """{row index: (start, end)} for each request row of a client's log
    that resp (pcap_responses) holds, whole: found by its client address
    and port, its connection on them (connection_ordinals) and its place
    on that connection (nth). A row with no src (a client with one
    address) is found by its port where one address alone used it."""
    conn = connection_ordinals(rows)
    users = {}
    for addr, port in resp:
        users.setdefault(port, []).append(addr)
    by_port = {p: resp[(a[0], p)] for p, a in users.items() if len(a) == 1}
    out = {}
    for i, r in enumerate(rows):
        port = r.get("port")
        seen = resp.get((r["src"], port), []) if r.get("src") else by_port.get(port, [])
        seen = seen[conn[i]] if conn[i] < len(seen) else []
        nth = r.get("nth", 0)
        if nth < len(seen) and seen[nth][1] is not None:
            out[i] = seen[nth]
    return out


def load(run):
    params = json.load(open(os.path.join(run, "params.json")))
    limit = params.get("small_limit", 100000)
    times = {}  # policy -> class -> [seconds]
    timing = {}  # policy -> {"pcap": n, "client": n}: how requests were timed
    rdir = os.path.join(run, "requests")
    for name in sorted(os.listdir(rdir)):
        m = re.match(r"(.+)-(\d+)\.jsonl$", name)
        if not m:
            continue
        t = times.setdefault(m.group(1), {"small": [], "large": [], "bulk": [],
                                          "small_keepalive": [], "small_client": []})
        how = timing.setdefault(m.group(1), {"pcap": 0, "client": 0})
        pcap = os.path.join(run, "pcap", name[:-len(".jsonl")] + ".pcap")
        rows = [json.loads(line) for line in open(os.path.join(rdir, name))]
        seen = match_responses(pcap_responses(pcap), rows) if os.path.exists(pcap) else {}
        for i, r in enumerate(rows):
            d = r["end"] - r["start"]
            if i in seen:
                d = seen[i][1] - seen[i][0]
                how["pcap"] += 1
            else:
                how["client"] += 1
            if r["kind"] != "bulk" and r["bytes"] < limit:
                t["small_client"].append(r["end"] - r["start"])
            if r["kind"] == "bulk":
                t["bulk"].append(d)
            elif r["bytes"] < limit:
                t["small"].append(d)
                if r["kind"] == "keepalive":
                    t["small_keepalive"].append(d)
            else:
                t["large"].append(d)
    params["timing"] = timing
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
                     ("large", "large >= 100 KB"), ("bulk", "bulk 8 MiB"),
                     ("small_client", "small, client's clock")):
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
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="the run's directory")
    ap.add_argument("--no-plots", action="store_true", help="write no cdf.png")
    a = ap.parse_args()
    run, plots = a.run, not a.no_plots
    params, times = load(run)
    order, res = summarise(params, times)
    if not order:
        sys.exit("web_analyze: no requests in %s/requests" % run)
    for p in order:
        if not times[p]["small"]:
            sys.exit("web_analyze: policy %s completed no small responses" % p)
    t = table(order, res)
    timed = "Timed from the capture: " + ", ".join(
        "%s %d of %d" % (p, params["timing"][p]["pcap"],
                         params["timing"][p]["pcap"] + params["timing"][p]["client"])
        for p in order) + " requests (the rest by the client's clock)."
    json.dump({"params": params, "completion_s": res}, open(os.path.join(run, "results.json"), "w"),
              indent=1)
    if plots:
        plot(run, order, times)
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write("# Busy web server\n\nKernel %s, bottleneck %s, %d rounds of %s s per policy, "
                "interleaved in one boot under QEMU (absolute times are slow; compare policies). "
                "Percent: change against %s, positive is faster.\n\n%s\n\n%s\n\n%s"
                "Parameters: `params.json`; file sizes: `manifest.txt`; every request: "
                "`requests/`.\n" % (params.get("kernel"), params.get("rate"), params.get("rounds"),
                                    params.get("seconds"), order[0], t, timed,
                                    "![CDF](cdf.png)\n\n" if plots else ""))
    print(t)
    print(timed)


if __name__ == "__main__":
    main()
