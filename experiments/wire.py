# SPDX-License-Identifier: GPL-2.0
"""What a response costs on the bottleneck: rates and L2 framing.

The experiments' bottleneck is tbf on a veth (tc-scripts/srff-qdisc
install shaped), with no `overhead` or size table: tbf charges each packet
its skb length at the qdisc, which on an Ethernet device starts at the MAC
header. So a segment costs its payload plus

    Ethernet header 14 + IPv4 header 20 + TCP header 20 + timestamps 12 = 66 B

and carries at most MSS = 1500 - 20 - 20 - 12 = 1448 B of payload (Linux
sends timestamps by default). A GSO super-packet is charged the same, one
set of headers per segment (qdisc_pkt_len_init). Preamble, start delimiter,
FCS and inter-frame gap (8 + 4 + 12 = 24 B per frame) are not counted by
the shaper; pass overhead=OVERHEAD + L1_EXTRA to model a physical link.
"""
import math

MSS = 1448
OVERHEAD = 14 + 20 + 20 + 12
L1_EXTRA = 8 + 4 + 12

_UNITS = {  # tc(8)'s rate units, in bits per second; a bare number is bit/s
    "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
    "kibit": 1 << 10, "mibit": 1 << 20, "gibit": 1 << 30, "tibit": 1 << 40,
    "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "tbps": 8e12,
    "kibps": 8 << 10, "mibps": 8 << 20, "gibps": 8 << 30, "tibps": 8 << 40,
}


def parse_rate(s):
    """A rate as tc writes it ("20mbit", "1gbit", "2500kbps": bytes, as in
    tc) in bits per second; a number is returned as is."""
    if isinstance(s, (int, float)):
        return float(s)
    t = s.strip().lower()
    i = len(t)
    while i and not (t[i - 1].isdigit() or t[i - 1] == "."):
        i -= 1
    num, unit = t[:i], t[i:] or "bit"
    if not num or unit not in _UNITS:
        raise ValueError("rate %r: want a number and one of %s" % (s, ", ".join(_UNITS)))
    return float(num) * _UNITS[unit]


def segments(payload, mss=MSS):
    """TCP segments needed for payload bytes."""
    return math.ceil(payload / mss) if payload > 0 else 0


def wire_bytes(payload, mss=MSS, overhead=OVERHEAD):
    """Bytes the shaper charges for payload bytes of one direction of a
    TCP connection, in full-sized segments."""
    return payload + segments(payload, mss) * overhead
