#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""dumpcheck.py SPORT BASE COUNT [--dumps N] [--timeout S]

Dump srff's flow table over raw generic netlink again and again, while the
caller churns the table, and judge each dump against a set of stable flows
that exist throughout: the UDP flows from source port SPORT to destination
ports BASE .. BASE+COUNT-1.

Every dump must list every stable flow exactly once, flagged or not: the
kernel puts whole hash buckets in each message, so flows that come and go
between messages cannot make it skip or repeat another. NLM_F_DUMP_INTR
should then be rare (only a bucket longer than a message is split); each
flagged dump is counted. Stops after N dumps or at the timeout, and prints
one JSON line:

  {"dumps": N, "intr": N, "bad": [..], "flows_min": N, "flows_max": N}

bad describes each dump that broke the rule (should be empty).
"""
import argparse
import json
import struct
import sys
import time
from collections import Counter

from genl import CMDS, Genl, parse_attrs, uapi_enum

A = uapi_enum("srff_attr")
F = uapi_enum("srff_flow_attr")
IPPROTO_UDP = 17


def stable_ports(replies, sport, base, count):
    """Counter of the stable flows' destination ports in one dump."""
    seen = Counter()
    nflows = 0
    for _, payload in replies:
        for t, nest in parse_attrs(payload):
            if t & 0x7fff != A["SRFF_A_FLOW"]:
                continue
            nflows += 1
            f = dict(parse_attrs(nest))
            proto = f[F["SRFF_FLOW_A_PROTO"]][0]
            sp = struct.unpack("=H", f[F["SRFF_FLOW_A_SPORT"]])[0]
            dp = struct.unpack("=H", f[F["SRFF_FLOW_A_DPORT"]])[0]
            if proto == IPPROTO_UDP and sp == sport and base <= dp < base + count:
                seen[dp] += 1
    return seen, nflows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sport", type=int)
    p.add_argument("base", type=int)
    p.add_argument("count", type=int)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--dumps", type=int, default=5)
    a = p.parse_args()

    g = Genl()
    fam = g.family("srff")
    if fam is None:
        sys.exit("dumpcheck: srff is not loaded")
    res = {"dumps": 0, "intr": 0, "bad": [], "flows_min": None, "flows_max": None}
    deadline = time.monotonic() + a.timeout
    while time.monotonic() < deadline and res["dumps"] < a.dumps:
        err, replies, intr = g.dump(fam, CMDS["get-flows"])
        if err:
            sys.exit("dumpcheck: dump failed (%d)" % err)
        seen, nflows = stable_ports(replies, a.sport, a.base, a.count)
        res["dumps"] += 1
        res["intr"] += bool(intr)
        res["flows_min"] = nflows if res["flows_min"] is None else min(nflows, res["flows_min"])
        res["flows_max"] = max(nflows, res["flows_max"] or 0)
        missing = a.count - len(seen)
        repeated = sum(1 for n in seen.values() if n > 1)
        if missing or repeated:
            res["bad"].append("dump %d%s: %d stable flows missing, %d repeated"
                              % (res["dumps"], " (flagged)" if intr else "",
                                 missing, repeated))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
