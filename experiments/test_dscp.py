# SPDX-License-Identifier: GPL-2.0
"""dscp.py: the code point each byte of a response carried, from captures."""
import os
import socket
import sys

import dpkt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dscp  # noqa: E402

SRV, CLI = socket.inet_aton("10.92.1.1"), socket.inet_aton("10.92.2.2")


def pkt(seq, payload, tos=0, flags=dpkt.tcp.TH_ACK, dport=40000, snap=128):
    """An Ethernet frame from the server's port 80, cut to snap bytes as
    tcpdump -s does (the IP header keeps the whole length)."""
    tcp = dpkt.tcp.TCP(sport=80, dport=dport, seq=seq & 0xffffffff, flags=flags, data=b"x" * payload)
    ip = dpkt.ip.IP(src=SRV, dst=CLI, p=dpkt.ip.IP_PROTO_TCP, tos=tos, data=tcp)
    ip.len = len(ip)
    eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, data=ip)
    return bytes(eth)[:snap]


def write_pcap(path, frames):
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, snaplen=128)
        for i, fr in enumerate(frames):
            w.writepkt(fr, ts=i)


def test_offsets_and_code_points(tmp_path):
    (tmp_path / "pcap").mkdir()
    isn = 0xfffffff0	# the sequence numbers wrap
    cs3, cs2, cs1 = 24 << 2, 16 << 2, 8 << 2
    frames = [
        pkt(isn, 0, flags=dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK),
        pkt(isn + 1, 1448, tos=cs3 | 2),		# offset 0, ECT(0) kept beside the DSCP
        pkt(isn + 1 + 16384, 1448, tos=cs2),	# 16 KiB: the second bin boundary
        pkt(isn + 1 + (600 << 10), 60000, tos=cs1),	# a GSO packet past 512 KiB
        # A connection whose SYN-ACK was not captured: left out.
        pkt(5, 1000, tos=cs3, dport=40001),
        # A pure ACK (no payload): left out.
        pkt(isn + 1, 0, tos=cs3),
    ]
    write_pcap(tmp_path / "pcap" / "srff-dscp-ets@0.8-1.pcap", frames)
    rows = dscp.build_table(str(tmp_path))
    got = {(r["dscp"], r["bin"]): (r["packets"], r["bytes"], r["conns"]) for r in rows}
    assert got == {
        (24, 0): (1, 1448, 1),
        (16, 2): (1, 1448, 1),
        (8, 5): (1, 60000, 1),
    }
    assert {r["policy"] for r in rows} == {"srff-dscp-ets"}


def test_report_shares_per_offset_bin(tmp_path):
    (tmp_path / "pcap").mkdir()
    frames = [pkt(100, 0, flags=dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK),
              pkt(101, 1000, tos=1 << 2),	# LE, bin 0
              pkt(1101, 3000, tos=0)]		# DSCP 0, bin 0
    write_pcap(tmp_path / "pcap" / "srff-dscp-cake@0.8-1.pcap", frames)
    frames = [pkt(100, 0, flags=dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK), pkt(101, 500)]
    write_pcap(tmp_path / "pcap" / "cake@0.8-1.pcap", frames)
    dscp.main(["table", str(tmp_path)])
    assert (tmp_path / "dscp.csv.xz").exists()
    md = dscp.report(dscp.read_rows(str(tmp_path)), order=["cake", "srff-dscp-cake"])
    lines = [ln for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    dash = " | -" * (len(dscp.EDGES))
    assert lines == [
        "| cake | 0.8 | 1 | 0 | 1.000" + dash + " |",
        "| srff-dscp-cake | 0.8 | 1 | 0 | 0.750" + dash + " |",
        "| srff-dscp-cake | 0.8 | 1 | LE | 0.250" + dash + " |",
    ]


def test_bins_cover_every_offset():
    assert dscp.offset_bin(0) == 0
    assert dscp.offset_bin((4 << 10) - 1) == 0
    assert dscp.offset_bin(4 << 10) == 1
    assert dscp.offset_bin(1 << 40) == len(dscp.EDGES)
    assert len(dscp.bin_labels()) == len(dscp.EDGES) + 1
