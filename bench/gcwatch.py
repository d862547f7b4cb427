#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""gcwatch.py TIMEOUT_S: poll srff's statistics every 50 ms over one netlink
socket (no process per poll, so the poller hardly competes with the sweep)
until at most one flow is left. Prints one line:

  T_FULL T_EMPTY GC_LAST_US GC_LAST_CHAIN GC_FREED

T_FULL is the CLOCK_REALTIME ns of the last poll that still saw the flows,
T_EMPTY of the first that did not (0 on timeout): the sweep ended between.
The GC figures are read once that sweep has finished.
Attribute numbers are read from the uapi header, so they cannot drift."""
import os
import struct
import sys
import time

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(top, "tests", "tools"))
from genl import CMDS, Genl, parse_attrs, uapi_enum as enum  # noqa: E402


A = enum("srff_attr")
S = enum("srff_stats_attr")


def stats(g, fam):
    (code, _), replies = g.request(fam, CMDS["get-stats"], b"")
    if code or not replies:
        sys.exit("gcwatch: get-stats failed (%d)" % code)
    for t, v in parse_attrs(replies[0]):
        if t & 0x7fff == A["SRFF_A_STATS"]:
            out = {}
            for st, sv in parse_attrs(v):
                if len(sv) in (4, 8):
                    out[st] = struct.unpack("=I" if len(sv) == 4 else "=Q", sv)[0]
            return out
    sys.exit("gcwatch: no statistics in the reply")


def main():
    g = Genl()
    fam = g.family("srff")
    if fam is None:
        sys.exit("gcwatch: srff is not loaded")
    deadline = time.monotonic() + float(sys.argv[1])
    runs = S["SRFF_STATS_A_GC_RUNS"]
    t_full = t_empty = runs_full = 0
    while time.monotonic() < deadline:
        st = stats(g, fam)
        t = time.time_ns()
        if not t_empty and st[S["SRFF_STATS_A_FLOWS"]] > 1:
            t_full, runs_full = t, st[runs]
        elif not t_empty:
            t_empty = t
        # The sweep that emptied the table was under way at t_full: its
        # timing is in once gc_runs has moved on from then.
        if t_empty and st[runs] > runs_full:
            break
        time.sleep(0.05)
    print(t_full, t_empty, st.get(S["SRFF_STATS_A_GC_LAST_US"], 0),
          st.get(S["SRFF_STATS_A_GC_LAST_CHAIN"], 0), st.get(S["SRFF_STATS_A_GC_FREED"], 0))


if __name__ == "__main__":
    main()
