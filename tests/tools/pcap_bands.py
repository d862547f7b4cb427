#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Replay srff's rule over a capture of a device's egress.

For every captured IP packet, in capture order, the flow key is read the way
flowkey.c reads it and the flow's bytes-before decide the band (band.h).
Per-flow order survives a prio qdisc (a flow's bands only go down, and a
lower band never overtakes a higher one), so replaying in capture order
gives each packet the band srff gave it. Non-IP frames (ARP) carry
priority 0. As hook.c: a TCP segment without data of a flow not yet
tracked goes to band 0 and creates no flow; a SYN restarts a tracked flow
at 0; a GSO skb counts its L3+L4 headers once per segment.

With TSO on, veth hands GSO super-packets to its peer whole, so the capture
holds exactly the skbs the hook saw. tc counts a GSO skb as gso_segs
packets of qdisc_pkt_len() bytes (each segment's headers counted again);
gso_size is the peer's MSS option less the TCP options of data segments.
Only frames from --src-mac (the sender's egress) are counted; the others are
read for the MSS. Prints JSON: per prio band {pkts, bytes} as tc counts
them, per srff band {skbs, l3_bytes}, per flow {bytes, pkts, first_len,
first_data_len, first_data_band}.

  pcap_bands.py FILE --src-mac MAC --thresholds 1500,5000
                [--priorities 6,0,2 | --classid-major 16] [--bands 3]
"""
import argparse
import json
import socket

import dpkt

PRIOMAP = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]  # prio default


def key_of(ip, v6):
    proto = ip.nxt if v6 else ip.p
    frag = False
    if not v6:
        frag = bool(ip.mf or ip.offset)
    sport = dport = 0
    l4 = ip.data
    if not frag and isinstance(l4, (dpkt.tcp.TCP, dpkt.udp.UDP)):
        sport, dport = l4.sport, l4.dport
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    return (socket.inet_ntop(fam, ip.src), socket.inet_ntop(fam, ip.dst),
            proto, sport, dport)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("pcap")
    p.add_argument("--thresholds", required=True)
    p.add_argument("--priorities", default="6,0,2")
    p.add_argument("--classid-major", type=lambda s: int(s, 0), default=0)
    p.add_argument("--bands", type=int, default=3, help="prio qdisc bands")
    p.add_argument("--src-mac", required=True, help="the sender's MAC address")
    a = p.parse_args()
    th = [int(x) for x in a.thresholds.split(",")]
    prios = [int(x) for x in a.priorities.split(",")]

    def qdisc_band(prio):
        if prio >> 16:
            return (prio & 0xFFFF) - 1
        b = PRIOMAP[prio & 15]
        return b if b < a.bands else a.bands - 1

    src_mac = bytes.fromhex(a.src_mac.replace(":", ""))
    sent = {}
    flows = {}
    mss = {}  # flow key (as the sender sees it) -> peer's MSS option
    bands = {b: {"pkts": 0, "bytes": 0} for b in range(a.bands)}
    srff = {b: {"skbs": 0, "l3_bytes": 0} for b in range(len(th) + 1)}
    with open(a.pcap, "rb") as f:
        for _ts, buf in dpkt.pcap.Reader(f):
            eth = dpkt.ethernet.Ethernet(buf)
            egress = eth.src == src_mac
            ip = eth.data
            segs, tc_bytes = 1, len(buf)
            if isinstance(ip, (dpkt.ip.IP, dpkt.ip6.IP6)):
                v6 = isinstance(ip, dpkt.ip6.IP6)
                k = key_of(ip, v6)
                tcp = ip.data if isinstance(ip.data, dpkt.tcp.TCP) else None
                if not egress:
                    if tcp and tcp.flags & dpkt.tcp.TH_SYN:
                        for o, v in dpkt.tcp.parse_opts(tcp.opts):
                            if o == dpkt.tcp.TCP_OPT_MSS:
                                mss[(k[1], k[0], k[2], k[4], k[3])] = int.from_bytes(v, "big")
                    continue
                l3len = len(buf) - 14
                if tcp and len(tcp.data):
                    gso_size = mss.get(k, 1 << 30) - (tcp.off * 4 - 20)
                    segs = -(-len(tcp.data) // gso_size)
                    hdr = 14 + (len(buf) - 14 - len(ip.data)) + tcp.off * 4
                    tc_bytes = len(buf) + (segs - 1) * hdr
                wire = tc_bytes - 14 * segs     # what srff counts: L3, per segment
                if tcp and tcp.flags & dpkt.tcp.TH_SYN and k in sent:
                    sent[k] = 0                 # a reused 4-tuple starts again
                if tcp and not len(tcp.data):
                    if k in sent:               # counted, in the top band
                        sent[k] += wire
                    band = 0                    # no data: the top band
                else:
                    before = sent.get(k, 0)
                    sent[k] = before + wire
                    band = sum(1 for t in th if before >= t)
                srff[band]["skbs"] += 1
                srff[band]["l3_bytes"] += wire
                prio = ((a.classid_major << 16) | (band + 1)) if a.classid_major \
                    else prios[band]
                fl = flows.setdefault("%s %s %d %d %d" % k,
                                      {"bytes": 0, "pkts": 0, "first_len": l3len,
                                       "first_data_len": 0, "first_data_band": -1})
                fl["bytes"] += l3len
                fl["pkts"] += 1
                if tcp and len(tcp.data) and not fl["first_data_len"]:
                    fl["first_data_len"] = l3len
                    fl["first_data_band"] = band
            elif egress:
                prio = 0
            else:
                continue
            qb = qdisc_band(prio)
            bands[qb]["pkts"] += segs
            bands[qb]["bytes"] += tc_bytes
    print(json.dumps({"bands": bands, "srff": srff, "flows": flows}))


if __name__ == "__main__":
    main()
