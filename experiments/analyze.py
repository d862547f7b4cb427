#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Response times of the three-file FTP experiment, from its captures.

  analyze.py RUN_DIR           from the captures RUN_DIR/pcap/POLICY-TRIAL.pcap
  analyze.py --tables RUN_DIR  again, from the committed tables alone
  --no-plots                   the tables and reports only (matplotlib's
                               rendering is most of the time under QEMU)

For every capture (client side), each FTP data connection (server port in
vsftpd's passive range) is one file: its response time runs from the
client's SYN to the last packet carrying data from the server. The file is
recognised by the bytes the server sent. The captures are reduced to
RUN_DIR/transfers.csv (every response time) and series.csv.gz (trial 1's
bytes per 0.5 s): what is committed. The report is made from those:
results.json, table.md (included in docs/experiments.md), report.md,
response_times.png, throughput.png; the table is printed.
"""
import argparse
import csv
import gzip
import json
import os
import re
import socket
import statistics
import sys

import dpkt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tabfile  # noqa: E402
import wire  # noqa: E402

PASV = range(30000, 31000)


def connections(pcap_path):
    """Per data connection: syn time, last data time, bytes, and
    (time, bytes) samples of data from the server."""
    conns = {}
    t0 = None
    with open(pcap_path, "rb") as f:
        for ts, buf in dpkt.pcap.Reader(f):
            if t0 is None:
                t0 = ts
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            tcp = ip.data
            if tcp.dport in PASV:  # client -> server
                key = (socket.inet_ntoa(ip.src), tcp.sport, tcp.dport)
                if tcp.flags & dpkt.tcp.TH_SYN and not tcp.flags & dpkt.tcp.TH_ACK:
                    conns.setdefault(key, {"syn": ts, "last": None, "isn": None,
                                           "max_seq": 0, "samples": []})
            elif tcp.sport in PASV:  # server -> client
                key = (socket.inet_ntoa(ip.dst), tcp.dport, tcp.sport)
                c = conns.get(key)
                if c is None:
                    continue
                if tcp.flags & dpkt.tcp.TH_SYN:
                    c["isn"] = tcp.seq
                    continue
                # The capture keeps 96 bytes of each frame, and a frame may
                # be a GSO super-packet: the payload length is the IP
                # header's, not what was captured.
                n = ip.len - ip.hl * 4 - tcp.off * 4
                if n <= 0:
                    continue
                if c["isn"] is None:
                    # SYN-ACK not captured (tcpdump can drop under load):
                    # the first data segment starts the stream.
                    c["isn"] = (tcp.seq - 1) % (1 << 32)
                end = (tcp.seq - c["isn"] - 1) % (1 << 32) + n
                if end > (1 << 31):
                    continue  # before the assumed start: a reordered segment
                c["max_seq"] = max(c["max_seq"], end)
                c["last"] = ts
                c["samples"].append((ts - t0, n))
    return [c for c in conns.values() if c["last"] is not None], t0


def identify(conns, files):
    """Map each connection to the file whose size its byte count matches."""
    out = {}
    for c in conns:
        name = min(files, key=lambda f: abs(files[f] - c["max_seq"]))
        if abs(files[name] - c["max_seq"]) > 0.01 * files[name]:
            continue  # not a complete transfer of one of our files
        out[name] = c
    return out


def expected(params, policy):
    """The files a policy's trials fetch: all three, or what params says
    ("fetch": {"alone": ["F1"]})."""
    return params.get("fetch", {}).get(policy, list(params["files"]))


def oracle_s(params):
    """Each file alone on the idle link, computed: its bytes with the
    headers the shaper charges (wire.py: 66 B per 1448 B segment, 4.6 %
    on top) at the bottleneck rate."""
    return {f: wire.wire_bytes(n) * 8 / params["rate_bps"] for f, n in params["files"].items()}


def analyze(run):
    """The captures of RUN/pcap -> (params, oracle, results, series):
    results[policy][file] = [seconds per trial, in trial order];
    series[policy][file] = [(t, bytes)] of trial 1's data packets."""
    params = json.load(open(os.path.join(run, "params.json")))
    files = params["files"]
    results = {}
    series = {}
    pdir = os.path.join(run, "pcap")
    for name in sorted(os.listdir(pdir)):
        m = re.match(r"(.+)-(\d+)\.pcap$", name)
        if not m:
            continue
        policy, trial = m.group(1), int(m.group(2))
        conns, _ = connections(os.path.join(pdir, name))
        byfile = identify(conns, files)
        for f in expected(params, policy):
            if f not in byfile:
                raise SystemExit("%s: no complete transfer of %s" % (name, f))
            c = byfile[f]
            results.setdefault(policy, {}).setdefault(f, []).append(
                (trial, c["last"] - c["syn"]))
            if trial == 1:
                series.setdefault(policy, {})[f] = c["samples"]
    for p in results:
        for f in results[p]:
            results[p][f] = [t for _, t in sorted(results[p][f])]
    return params, oracle_s(params), results, series


# The committed tables: what the report is made from, so that it can be
# made again without the captures (which are not committed).
BIN = 0.5	# seconds per throughput sample


def bin_bytes(samples):
    """[(t, bytes)] -> {bin: bytes} per BIN seconds."""
    bins = {}
    for t, n in samples:
        bins[int(t / BIN)] = bins.get(int(t / BIN), 0) + n
    return bins


def write_tables(run, results, series):
    with open(os.path.join(run, "transfers.csv"), "w") as f:
        f.write("policy,trial,file,seconds\n")
        for p in sorted(results):
            for name in sorted(results[p]):
                for i, t in enumerate(results[p][name]):
                    f.write("%s,%d,%s,%.6f\n" % (p, i + 1, name, t))
    rows = []
    for p in sorted(series):
        for name in sorted(series[p]):
            bins = bin_bytes(series[p][name])
            rows += ["%s,%s,%d,%d\n" % (p, name, b, bins[b]) for b in sorted(bins)]
    with open(os.path.join(run, "series.csv.gz"), "wb") as raw, \
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        g.write(("policy,file,bin,bytes\n" + "".join(rows)).encode())


def load_tables(run):
    """(params, oracle, results, series) from the committed tables; series
    as per-bin byte counts [(bin start s, bytes)]."""
    params = json.load(open(os.path.join(run, "params.json")))
    results = {}
    with open(os.path.join(run, "transfers.csv")) as f:
        for r in csv.DictReader(f):
            results.setdefault(r["policy"], {}).setdefault(r["file"], []).append(
                (int(r["trial"]), float(r["seconds"])))
    for p in results:
        for name in results[p]:
            results[p][name] = [t for _, t in sorted(results[p][name])]
    series = {}
    with gzip.open(os.path.join(run, "series.csv.gz"), "rt") as f:
        for r in csv.DictReader(f):
            series.setdefault(r["policy"], {}).setdefault(r["file"], []).append(
                (int(r["bin"]) * BIN, int(r["bytes"])))
    return params, oracle_s(params), results, series


def table(params, oracle, results):
    """The report's table: per file, per policy, the trials, their mean
    and range, the change against unmarked, the ratio to the file alone on
    the idle link (measured, policy "alone") and the computed oracle."""
    order = [p for p in params["policies"] if p in results]
    base = results.get("unmarked")
    alone = results.get("alone", {})
    lines = ["| policy | file | trials (s) | mean (s) | range (s) | vs unmarked | × alone | oracle (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for f in sorted(params["files"], key=lambda f: params["files"][f]):
        for p in order:
            v = results[p].get(f)
            if not v:
                continue
            mean = statistics.mean(v)
            spread = "%.2f-%.2f" % (min(v), max(v))
            imp = ""
            if base and p not in ("unmarked", "alone") and f in base:
                b = statistics.mean(base[f])
                imp = "%+.0f %%" % ((b - mean) / b * 100)
            ratio = "%.2f" % (mean / statistics.mean(alone[f])) if f in alone else ""
            lines.append("| %s | %s (%.1f MB) | %s | %.2f | %s | %s | %s | %.2f |" % (
                p, f, params["files"][f] / 1e6, " ".join("%.2f" % x for x in v),
                mean, spread, imp, ratio, oracle[f]))
    return "\n".join(lines)


def plots(run, params, oracle, results, series):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = [p for p in params["policies"] if p in results]
    fnames = sorted(params["files"], key=lambda f: params["files"][f])
    fig, ax = plt.subplots(figsize=(8, 4.5))
    w = 0.8 / len(order)
    for i, p in enumerate(order):
        xs = [j + (i - (len(order) - 1) / 2) * w for j, f in enumerate(fnames) if f in results[p]]
        have = [f for f in fnames if f in results[p]]
        means = [statistics.mean(results[p][f]) for f in have]
        lo = [m - min(results[p][f]) for m, f in zip(means, have)]
        hi = [max(results[p][f]) - m for m, f in zip(means, have)]
        ax.bar(xs, means, w, yerr=[lo, hi], capsize=3, label=p)
    for j, f in enumerate(fnames):
        ax.hlines(oracle[f], j - 0.45, j + 0.45, colors="k", linestyles="dotted")
    ax.set_xticks(range(len(fnames)))
    ax.set_xticklabels(["%s\n%.1f MB" % (f, params["files"][f] / 1e6) for f in fnames])
    ax.set_ylabel("response time (s): SYN to last data byte")
    ax.set_title("Three-file FTP over %s (mean, min-max; dotted: oracle)" % params["rate"])
    ax.legend(fontsize=8)
    fig.tight_layout()
    tabfile.save_png(fig, os.path.join(run, "response_times.png"), dpi=110)
    plt.close(fig)

    shown = [p for p in order if p != "alone"] or order
    fig, axes = plt.subplots(len(shown), 1, figsize=(8, 2.2 * len(shown)), sharex=True)
    if len(shown) == 1:
        axes = [axes]
    for ax, p in zip(axes, shown):
        for f in fnames:
            s = series.get(p, {}).get(f, [])
            if not s:
                continue
            bins = bin_bytes(s)
            xs = sorted(bins)
            ax.plot([x * BIN for x in xs], [bins[x] * 8 / BIN / 1e6 for x in xs], label=f)
        ax.set_ylabel("Mbit/s")
        ax.set_title(p + " (trial 1)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time since capture start (s)")
    fig.tight_layout()
    tabfile.save_png(fig, os.path.join(run, "throughput.png"), dpi=110)
    plt.close(fig)


def thresholds_line(run):
    """What srff had learnt in the warm-up (warmup.srff.json), if anything."""
    p = os.path.join(run, "warmup.srff.json")
    if not os.path.exists(p):
        return ""
    s = json.load(open(p))
    return ("Warm-up: srff learnt from %d finished flows (%d threshold changes) before the "
            "first trial.\n\n" % (s.get("auto_flows", 0), s.get("auto_changes", 0)))


def report(run, params, oracle, results, series, with_plots=True):
    tab = table(params, oracle, results)
    json.dump({"params": params, "oracle_s": oracle, "response_s": results},
              open(os.path.join(run, "results.json"), "w"), indent=1, sort_keys=True)
    if with_plots:
        plots(run, params, oracle, results, series)
    with open(os.path.join(run, "table.md"), "w") as f:
        f.write(tab + "\n")
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write("# Three-file FTP experiment\n\n")
        order = ("in random order every trial, after a burn-in trial thrown away"
                 if params.get("order_rule") == "shuffled" else "order rotating every trial")
        f.write("Kernel %s, bottleneck %s, %d trials per policy, policies interleaved "
                "in one boot (%s) under QEMU: absolute times are "
                "slow; compare policies.\n\n" % (params["kernel"], params["rate"], params["trials"],
                                                   order))
        f.write(thresholds_line(run))
        f.write(tab + "\n\n")
        f.write("![response times](response_times.png)\n\n![throughput](throughput.png)\n\n")
        f.write("Parameters: `params.json`, `meta.json`. Data: `transfers.csv` (every "
                "response time), `series.csv.gz` (trial 1's bytes per %g s).\n" % BIN)
    return tab


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--tables", action="store_true",
                    help="report from the committed tables only (no captures)")
    ap.add_argument("--no-plots", action="store_true", help="write no PNG")
    a = ap.parse_args(argv)
    if a.tables:
        params, oracle, results, series = load_tables(a.run)
    else:
        params, oracle, results, series = analyze(a.run)
        write_tables(a.run, results, series)
        # The report is made from the tables, as --tables makes it.
        params, oracle, results, series = load_tables(a.run)
    print(report(a.run, params, oracle, results, series, with_plots=not a.no_plots))


if __name__ == "__main__":
    main()
