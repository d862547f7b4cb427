#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""dumpcheck.py SPORT BASE COUNT [--timeout S] [--min-intr N] [--min-clean N]

Dump srff's flow table over raw generic netlink again and again, while the
caller churns the table, and judge each dump against a set of stable flows
that exist throughout: the UDP flows from source port SPORT to destination
ports BASE .. BASE+COUNT-1.

A dump that no message flagged NLM_F_DUMP_INTR ("clean") must list every
stable flow exactly once; a flagged one may skip or repeat flows, which is
why the flag exists. Stops once it has seen MIN_INTR flagged and MIN_CLEAN
clean dumps, or at the timeout, and prints one JSON line:

  {"dumps": N, "intr": N, "clean": N, "clean_bad": [..], "intr_anomalous": N,
   "flows_min": N, "flows_max": N}

clean_bad describes each clean dump that broke the rule (should be empty);
intr_anomalous counts flagged dumps that really did skip or repeat a stable
flow (shows the flag was needed; not a failure).
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
    p.add_argument("--min-intr", type=int, default=3)
    p.add_argument("--min-clean", type=int, default=3)
    a = p.parse_args()

    g = Genl()
    fam = g.family("srff")
    if fam is None:
        sys.exit("dumpcheck: srff is not loaded")
    res = {"dumps": 0, "intr": 0, "clean": 0, "clean_bad": [], "intr_anomalous": 0,
           "flows_min": None, "flows_max": None}
    deadline = time.monotonic() + a.timeout
    while time.monotonic() < deadline and (res["intr"] < a.min_intr or
                                           res["clean"] < a.min_clean):
        err, replies, intr = g.dump(fam, CMDS["get-flows"])
        if err:
            sys.exit("dumpcheck: dump failed (%d)" % err)
        seen, nflows = stable_ports(replies, a.sport, a.base, a.count)
        res["dumps"] += 1
        res["flows_min"] = nflows if res["flows_min"] is None else min(nflows, res["flows_min"])
        res["flows_max"] = nflows if res["flows_max"] is None else max(nflows, res["flows_max"])
        missing = a.count - len(seen)
        repeated = sum(1 for n in seen.values() if n > 1)
        if intr:
            res["intr"] += 1
            res["intr_anomalous"] += bool(missing or repeated)
        else:
            res["clean"] += 1
            if missing or repeated:
                res["clean_bad"].append("dump %d: %d stable flows missing, %d repeated"
                                        % (res["dumps"], missing, repeated))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
