#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Response times of the three-file FTP experiment, from its captures.

  analyze.py RUN_DIR        RUN_DIR holds params.json and pcap/POLICY-TRIAL.pcap

For every capture (client side), each FTP data connection (server port in
vsftpd's passive range) is one file: its response time runs from the
client's SYN to the last packet carrying data from the server. The file is
recognised by the bytes the server sent. Writes RUN_DIR/results.json,
RUN_DIR/report.md, RUN_DIR/response_times.png, RUN_DIR/throughput.png and
prints the table.
"""
import json
import os
import re
import socket
import statistics
import sys

import dpkt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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


def analyze(run):
    params = json.load(open(os.path.join(run, "params.json")))
    files = params["files"]
    rate = params["rate_bps"]
    # The file alone on the idle link: its bytes with the headers the
    # shaper charges (wire.py: 66 B per 1448 B segment, 4.6 % on top).
    oracle = {f: wire.wire_bytes(files[f]) * 8 / rate for f in files}
    results = {}  # policy -> file -> [times per trial]
    series = {}  # policy -> file -> [(t, bytes)] of trial 1
    pdir = os.path.join(run, "pcap")
    for name in sorted(os.listdir(pdir)):
        m = re.match(r"(.+)-(\d+)\.pcap$", name)
        if not m:
            continue
        policy, trial = m.group(1), int(m.group(2))
        conns, _ = connections(os.path.join(pdir, name))
        byfile = identify(conns, files)
        for f in files:
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
    return params, oracle, results, series


def table(params, oracle, results):
    order = [p for p in params["policies"] if p in results]
    base = results.get("unmarked")
    lines = ["| policy | file | trials (s) | mean (s) | spread (s) | vs unmarked | oracle (s) |",
             "|---|---|---|---|---|---|---|"]
    for f in sorted(params["files"], key=lambda f: params["files"][f]):
        for p in order:
            v = results[p][f]
            mean = statistics.mean(v)
            spread = "%.2f-%.2f" % (min(v), max(v))
            if base and p != "unmarked":
                b = statistics.mean(base[f])
                imp = "%+.0f %%" % ((b - mean) / b * 100)
            else:
                imp = ""
            lines.append("| %s | %s (%.1f MB) | %s | %.2f | %s | %s | %.2f |" % (
                p, f, params["files"][f] / 1e6, " ".join("%.2f" % x for x in v),
                mean, spread, imp, oracle[f]))
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
        means = [statistics.mean(results[p][f]) for f in fnames]
        lo = [m - min(results[p][f]) for m, f in zip(means, fnames)]
        hi = [max(results[p][f]) - m for m, f in zip(means, fnames)]
        xs = [j + (i - (len(order) - 1) / 2) * w for j in range(len(fnames))]
        ax.bar(xs, means, w, yerr=[lo, hi], capsize=3, label=p)
    for j, f in enumerate(fnames):
        ax.hlines(oracle[f], j - 0.45, j + 0.45, colors="k", linestyles="dotted")
    ax.set_xticks(range(len(fnames)))
    ax.set_xticklabels(["%s\n%.1f MB" % (f, params["files"][f] / 1e6) for f in fnames])
    ax.set_ylabel("response time (s): SYN to last data byte")
    ax.set_title("Three-file FTP over %s (mean, min-max; dotted: oracle)" % params["rate"])
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(run, "response_times.png"), dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(len(order), 1, figsize=(8, 2.2 * len(order)), sharex=True)
    if len(order) == 1:
        axes = [axes]
    for ax, p in zip(axes, order):
        for f in fnames:
            s = series.get(p, {}).get(f, [])
            if not s:
                continue
            bins = {}
            for t, n in s:
                bins[int(t / 0.5)] = bins.get(int(t / 0.5), 0) + n
            xs = sorted(bins)
            ax.plot([x * 0.5 for x in xs], [bins[x] * 8 / 0.5 / 1e6 for x in xs], label=f)
        ax.set_ylabel("Mbit/s")
        ax.set_title(p + " (trial 1)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time since capture start (s)")
    fig.tight_layout()
    fig.savefig(os.path.join(run, "throughput.png"), dpi=110)
    plt.close(fig)


def main():
    run = sys.argv[1]
    params, oracle, results, series = analyze(run)
    tab = table(params, oracle, results)
    json.dump({"params": params, "oracle_s": oracle, "response_s": results},
              open(os.path.join(run, "results.json"), "w"), indent=1)
    plots(run, params, oracle, results, series)
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write("# Three-file FTP experiment\n\n")
        f.write("Kernel %s, bottleneck %s, %d trials per policy, policies interleaved "
                "in one boot under QEMU (absolute times are slow; compare policies).\n\n"
                % (params["kernel"], params["rate"], params["trials"]))
        f.write(tab + "\n\n")
        f.write("![response times](response_times.png)\n\n![throughput](throughput.png)\n\n")
        f.write("Parameters: `params.json`. Captures: `pcap/`.\n")
    print(tab)


if __name__ == "__main__":
    main()
