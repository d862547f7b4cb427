#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The code points on the wire: which DSCP each byte of a response carried.

  dscp.py table RUN_DIR
        RUN_DIR/pcap/POLICY@LOAD-ROUND.pcap (the guest's capture of what
        the server sent into the network, headers only: tcpdump on the
        router's interface meta.json names, capture_dev: r1, toward the
        client; r0, toward the server, in older runs) -> RUN_DIR/dscp.csv.xz:
        per run, code point and offset bin, the packets and payload bytes
        seen, and on how many connections. That file is what a results
        folder commits (the captures are not).
  dscp.py report RUN_DIR [--out DIR]
        prints, per policy, the share of the bytes at each offset into a
        connection that carried each code point; --out writes DIR/dscp.md.

A packet's offset is where its payload starts in its connection's byte
stream, from its TCP sequence number less the SYN-ACK's (a connection whose
SYN-ACK the capture missed is left out): srff's thresholds are on these
bytes (its count includes headers, so a band changes a little earlier than
the payload offset says). A GSO super-packet (veth passes them whole) counts
once, with all its bytes, at its first byte's offset. Retransmissions count
again, at their own offset. So under `mark dscp` with a code point per
band, the table shows each band's code point on the bytes srff's thresholds
give it, and under the policies that do not mark, DSCP 0 everywhere.
"""
import argparse
import collections
import os
import re
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tabfile  # noqa: E402

COLUMNS = ["run", "policy", "load", "round", "dscp", "bin", "packets", "bytes", "conns"]
NAME = re.compile(r"^(?P<policy>.+)@(?P<load>[0-9.]+)-(?P<round>\d+)\.pcap$")
# Offset bins, bytes into the connection: around srff's usual thresholds.
EDGES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 512 << 10, 1 << 20, 4 << 20]
NAMES = {0: "0", 1: "LE", 8: "CS1", 10: "AF11", 16: "CS2", 24: "CS3", 32: "CS4", 34: "AF41",
         40: "CS5", 46: "EF", 48: "CS6", 56: "CS7"}


def _size(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10)


def bin_labels():
    lo = [0] + EDGES
    return ["< %s" % _size(EDGES[0])] + \
        ["%s - %s" % (_size(a), _size(b)) for a, b in zip(lo[1:], EDGES[1:])] + \
        [">= %s" % _size(EDGES[-1])]


def offset_bin(off):
    for i, e in enumerate(EDGES):
        if off < e:
            return i
    return len(EDGES)


def dscp_name(v):
    return NAMES.get(v, str(v))


def parse_pcap(path):
    """{(dscp, bin): [packets, bytes, set of connections]} of one capture:
    TCP from port 80 with payload, IPv4 or IPv6."""
    import dpkt
    isn = {}
    cells = collections.defaultdict(lambda: [0, 0, set()])
    with open(path, "rb") as f:
        try:
            reader = dpkt.pcap.Reader(f)
        except ValueError:
            return {}
        link = reader.datalink()
        for _, buf in reader:
            try:
                if link == dpkt.pcap.DLT_EN10MB:
                    ip = dpkt.ethernet.Ethernet(buf).data
                elif link == 113:	# Linux cooked capture
                    ip = dpkt.sll.SLL(buf).data
                else:
                    ip = dpkt.ip.IP(buf)
            except (dpkt.UnpackError, IndexError):
                continue
            if isinstance(ip, dpkt.ip.IP):
                ds = ip.tos >> 2
                plen = ip.len - ip.hl * 4 if ip.len else 0
                src, dst = socket.inet_ntoa(ip.src), socket.inet_ntoa(ip.dst)
            elif isinstance(ip, dpkt.ip6.IP6):
                ds = (ip.fc >> 2) & 0x3f
                plen = ip.plen
                src = socket.inet_ntop(socket.AF_INET6, ip.src)
                dst = socket.inet_ntop(socket.AF_INET6, ip.dst)
            else:
                continue
            tcp = ip.data
            if not isinstance(tcp, dpkt.tcp.TCP) or tcp.sport != 80:
                continue
            conn = (src, dst, tcp.dport)
            if tcp.flags & dpkt.tcp.TH_SYN:
                isn[conn] = tcp.seq
                continue
            if conn not in isn:
                continue
            # The payload's length from the IP header (the capture holds
            # headers only); a GSO packet's IP length is its whole.
            payload = plen - tcp.off * 4
            if payload <= 0:
                continue
            off = (tcp.seq - isn[conn] - 1) & 0xffffffff
            c = cells[(ds, offset_bin(off))]
            c[0] += 1
            c[1] += payload
            c[2].add(conn)
    return cells


def build_table(run_dir):
    run = os.path.basename(os.path.normpath(run_dir))
    d = os.path.join(run_dir, "pcap")
    rows = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        m = NAME.match(name)
        if not m:
            continue
        for (ds, b), (p, by, conns) in sorted(parse_pcap(os.path.join(d, name)).items()):
            rows.append({"run": run, "policy": m["policy"], "load": m["load"],
                         "round": m["round"], "dscp": ds, "bin": b, "packets": p,
                         "bytes": by, "conns": len(conns)})
    return rows


def write_csv(path, rows):
    tabfile.write_csv(path, COLUMNS, rows)


def read_rows(run_dir):
    p = tabfile.find(run_dir, "dscp.csv")
    return tabfile.read_csv(p) if p else []


def report(rows, order=None, where="r0"):
    """Markdown: per policy and load, a row per code point seen, a column
    per offset bin: the share of that bin's payload bytes (every round)
    that carried the code point, captured on the router's interface
    where."""
    if not rows:
        return "No capture of this folder was tabled.\n"
    cells = collections.defaultdict(lambda: collections.Counter())
    runs = collections.defaultdict(set)
    seen = []
    for r in rows:
        key = (r["policy"], float(r["load"]))
        if r["policy"] not in seen:
            seen.append(r["policy"])
        cells[key][(int(r["dscp"]), int(r["bin"]))] += int(r["bytes"])
        runs[key].add(r["round"])
    names = list(order or []) + [p for p in seen if p not in (order or [])]
    labels = bin_labels()
    out = ["Share of the payload bytes at each offset into a connection (server to client, "
           "the router's %s) that carried each DSCP, over every round; `-`: no byte there." % where,
           "",
           "| policy | load | rounds | DSCP | " + " | ".join(labels) + " |",
           "|---|---|---:|---|" + "---:|" * len(labels)]
    for key in sorted(cells, key=lambda k: (names.index(k[0]), k[1])):
        c = cells[key]
        per_bin = collections.Counter()
        for (ds, b), v in c.items():
            per_bin[b] += v
        for ds in sorted({ds for ds, _ in c}):
            share = ["%.3f" % (c[(ds, b)] / per_bin[b]) if per_bin[b] else "-"
                     for b in range(len(labels))]
            out.append("| %s | %g | %d | %s | %s |" % (key[0], key[1], len(runs[key]),
                                                       dscp_name(ds), " | ".join(share)))
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table")
    t.add_argument("run_dir")
    r = sub.add_parser("report")
    r.add_argument("run_dir")
    r.add_argument("--out")
    a = ap.parse_args(argv)
    if a.cmd == "table":
        rows = build_table(a.run_dir)
        write_csv(os.path.join(a.run_dir, "dscp.csv.xz"), rows)
        print("dscp: %d rows from %s" % (len(rows), os.path.join(a.run_dir, "pcap")),
              file=sys.stderr)
        return
    params = {}
    meta = os.path.join(a.run_dir, "meta.json")
    if os.path.exists(meta):
        import json
        with open(meta) as f:
            params = json.load(f).get("params", {})
    md = report(read_rows(a.run_dir), params.get("policies"), params.get("capture_dev", "r0"))
    sys.stdout.write(md)
    if a.out:
        with open(os.path.join(a.out, "dscp.md"), "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
