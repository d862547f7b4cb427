#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Randomised requests to the srff family: every one is validated.

  nlfuzz.py [-n REQUESTS] [--seed S]

Sends REQUESTS generic netlink requests built from the uapi header's own
attribute numbers: mostly SET_CONFIG with one to five attributes, each with
a value drawn from the edges of its range (or random), and with probability
one half a structural mutation on top: an unknown or misplaced attribute
type, a payload too short or too long, a nest without NLA_F_NESTED, a nest
item of the wrong type, size or count, random bytes, a duplicate. A few
requests are GET_CONFIG, GET_STATS, GET_SIZES or FLUSH_FLOWS carrying attributes.

After every request the configuration is read back, and:
  - a refused request must carry an extended-ack message and leave the
    configuration byte-for-byte unchanged;
  - an accepted one must leave a configuration that obeys every rule the
    family documents (1-15 strictly ascending thresholds above 0, one
    priority per band unless class-id steering, priorities 0-15 or
    major:minor, the ms bounds, enums in range, 1-32 top ports above 0);
  - an accepted request that was not mutated must read back what it set.
Prints one JSON line (counts, the messages seen) and exits 1 on any
violation, naming the request. The kernel log is scanned by the harness.
"""
import argparse
import json
import random
import struct
import sys

from genl import (CMDS, NLA_F_NESTED, Genl, attr, parse_attrs, uapi_enum)

A = uapi_enum("srff_attr")
ITEM = uapi_enum("srff_item_attr")["SRFF_A_ITEM"]
UDP_MAX = len(uapi_enum("srff_udp_policy")) - 2      # the last member is __MAX
APP_MAX = len(uapi_enum("srff_app_prio")) - 2
MARK_MAX = len(uapi_enum("srff_mark")) - 2
DSCP_KEEP = 0xFF
U32 = 0xFFFFFFFF

# (kind, edges): the values worth trying for each scalar attribute.
SCALARS = {
    "SRFF_A_CLASSID_MAJOR": ("H", [0, 1, 0x10, 0xFFFF]),
    "SRFF_A_IDLE_TIMEOUT_MS": ("I", [0, 99, 100, 2500, 3600000, 3600001, U32]),
    "SRFF_A_GC_INTERVAL_MS": ("I", [0, 99, 100, 750, 60000, 60001, U32]),
    "SRFF_A_MAX_FLOWS": ("I", [0, 15, 16, 5000, 1 << 24, (1 << 24) + 1, U32]),
    "SRFF_A_UDP_POLICY": ("B", list(range(UDP_MAX + 3)) + [255]),
    "SRFF_A_UNTRACKED_PRIORITY": ("I", [0, 1, 15, 16, 0xFFFF, 0x10000, 0x100001, U32]),
    "SRFF_A_APP_PRIORITY": ("B", list(range(APP_MAX + 3)) + [255]),
    "SRFF_A_IDLE_RESET_MS": ("I", [0, 1, 60000, 3600000, 3600001, U32]),
    "SRFF_A_AUTO_THRESHOLDS": ("B", [0, 1, 2, 255]),
    # Off and on again while traffic runs: the tracker freed and rebuilt.
    "SRFF_A_ENABLED": ("B", [0, 1, 1, 1, 2, 255]),
    "SRFF_A_MARK": ("B", list(range(MARK_MAX + 3)) + [255]),
    "SRFF_A_DSCP_OVERRIDE": ("B", [0, 1, 2, 255]),
}
# Nests of SRFF_A_ITEM: (item kind, item edges, usual count range).
LISTS = {
    "SRFF_A_THRESHOLDS": ("Q", [0, 1, 1500, 5000, 1 << 20, 1 << 40, (1 << 64) - 1], 1, 16),
    "SRFF_A_PRIORITIES": ("I", [0, 2, 6, 15, 16, 0x10001, U32], 1, 17),
    "SRFF_A_TOP_PORTS": ("H", [0, 1, 21, 22, 443, 0xFFFF], 0, 33),
    # An empty map is the default map again, which reads back whole: not
    # among the usual counts (the "empty" mutation still sends one).
    "SRFF_A_DSCP_MAP": ("B", [0, 1, 46, 63, 64, 0xFE, DSCP_KEEP], 1, 17),
}
SIZE = {"B": 1, "H": 2, "I": 4, "Q": 8}


def scalar_value(rng, kind, edges):
    if rng.random() < 0.8:
        return rng.choice(edges)
    return rng.getrandbits(8 * SIZE[kind])


def list_values(rng, name):
    kind, edges, lo, hi = LISTS[name]
    n = rng.randint(lo, hi)
    if name == "SRFF_A_THRESHOLDS" and rng.random() < 0.5:
        # Mostly ascending, to reach the other checks behind this one.
        vals, v = [], 0
        for _ in range(n):
            v += rng.choice([1, 1500, 1 << 20])
            vals.append(v)
        if rng.random() < 0.3:
            rng.shuffle(vals)
        return vals
    return [scalar_value(rng, kind, edges) for _ in range(n)]


def encode(name, value):
    if name in LISTS:
        kind = LISTS[name][0]
        items = b"".join(attr(ITEM, struct.pack("=" + kind, v)) for v in value)
        return attr(A[name] | NLA_F_NESTED, items)
    return attr(A[name], struct.pack("=" + SCALARS[name][0], value))


def mutate(rng, attrs):
    """One structural change to the list of encoded attributes, in place."""
    i = rng.randrange(len(attrs))
    raw = attrs[i]
    ln, t = struct.unpack_from("=HH", raw)
    body = raw[4:ln]
    how = rng.choice(["type", "short", "long", "unnested", "item-type",
                      "item-size", "random", "dup", "empty", "zero-type"])
    if how == "type":       # unknown, read-only, dump-only or too high
        t = rng.choice([A["SRFF_A_STATS"], A["SRFF_A_FLOW"], A["SRFF_A_SIZES"], A["SRFF_A_PAD"],
                        A["SRFF_A_FILTER_BAND"], A["SRFF_A_FILTER_MIN_BYTES"],
                        len(A), len(A) + 5, 99, 0x7FFF]) | (t & NLA_F_NESTED)
        attrs[i] = attr(t, body)
    elif how == "short" and body:
        attrs[i] = attr(t, body[:rng.randrange(len(body))])
    elif how == "long":
        attrs[i] = attr(t, body + bytes(rng.randint(1, 8)))
    elif how == "unnested" and t & NLA_F_NESTED:
        attrs[i] = attr(t & ~NLA_F_NESTED, body)
    elif how == "item-type" and t & NLA_F_NESTED:
        attrs[i] = attr(t, attr(rng.choice([0, 2, 7]), struct.pack("=Q", 100)) + body)
    elif how == "item-size" and t & NLA_F_NESTED:
        attrs[i] = attr(t, body + attr(ITEM, bytes(rng.choice([1, 3, 5, 12]))))
    elif how == "random":
        attrs[i] = attr(t, bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 24))))
    elif how == "dup":
        attrs.append(raw)
    elif how == "empty":
        attrs[i] = attr(t, b"")
    elif how == "zero-type":
        attrs[i] = attr(0, body)
    else:
        return False
    return True


def decode(payload):
    """The GET_CONFIG reply as {name: value}."""
    names = {v: k for k, v in A.items()}
    out = {}
    for t, v in parse_attrs(payload):
        name = names.get(t & ~NLA_F_NESTED)
        if name in LISTS:
            kind = LISTS[name][0]
            out[name] = [struct.unpack("=" + kind, x)[0] for _, x in parse_attrs(v)]
        elif name in SCALARS:
            out[name] = struct.unpack("=" + SCALARS[name][0], v[:SIZE[SCALARS[name][0]]])[0]
    return out


def default_map(bands):
    """Every band keeps its DSCP but the lowest: LE (1)."""
    return [DSCP_KEEP] * (bands - 1) + [1]


def is_default_map(m):
    """A map the kernel takes as the default (for its own length)."""
    return len(m) >= 1 and m == default_map(len(m))


def prio_ok(p):
    return p <= 15 or (p >> 16) != 0


def rules_broken(c, host_max_flows=None, host_gc_ms=None):
    """What an accepted configuration must never be; returns the broken rule.
    With the host's limits (the module's max_flows and gc_interval_ms, for a
    namespace other than the initial one), those bound it too."""
    th, pr, ports = c["SRFF_A_THRESHOLDS"], c["SRFF_A_PRIORITIES"], c.get("SRFF_A_TOP_PORTS", [])
    checks = [
        ("1-15 thresholds", 1 <= len(th) <= 15),
        ("thresholds above 0", th[0] > 0),
        ("thresholds strictly ascending", all(a < b for a, b in zip(th, th[1:]))),
        ("a priority per band", c["SRFF_A_CLASSID_MAJOR"] != 0 or len(pr) == len(th) + 1),
        ("priorities in range", all(prio_ok(p) for p in pr)),
        ("untracked priority in range", prio_ok(c["SRFF_A_UNTRACKED_PRIORITY"])),
        ("idle timeout bounds", 100 <= c["SRFF_A_IDLE_TIMEOUT_MS"] <= 3600000),
        ("GC interval bounds", 100 <= c["SRFF_A_GC_INTERVAL_MS"] <= 60000),
        ("idle reset bounds", c["SRFF_A_IDLE_RESET_MS"] <= 3600000),
        ("idle reset shorter than the idle timeout",
         c["SRFF_A_IDLE_RESET_MS"] == 0 or c["SRFF_A_IDLE_RESET_MS"] < c["SRFF_A_IDLE_TIMEOUT_MS"]),
        ("max flows within the host's limit",
         host_max_flows is None or c["SRFF_A_MAX_FLOWS"] <= host_max_flows),
        ("GC interval within the host's limit",
         host_gc_ms is None or c["SRFF_A_GC_INTERVAL_MS"] >= host_gc_ms),
        ("max flows bounds", 16 <= c["SRFF_A_MAX_FLOWS"] <= 1 << 24),
        ("UDP policy", c["SRFF_A_UDP_POLICY"] <= UDP_MAX),
        ("app priority", c["SRFF_A_APP_PRIORITY"] <= APP_MAX),
        ("top ports", len(ports) <= 32 and all(ports)),
        ("auto thresholds 0 or 1", c["SRFF_A_AUTO_THRESHOLDS"] in (0, 1)),
        ("enabled 0 or 1", c["SRFF_A_ENABLED"] in (0, 1)),
        ("mark in range", c["SRFF_A_MARK"] <= MARK_MAX),
        ("DSCP override 0 or 1", c["SRFF_A_DSCP_OVERRIDE"] in (0, 1)),
        ("a DSCP per band", len(c["SRFF_A_DSCP_MAP"]) == len(th) + 1),
        ("DSCPs 0-63 or keep", all(d <= 63 or d == DSCP_KEEP for d in c["SRFF_A_DSCP_MAP"])),
    ]
    return [what for what, ok in checks if not ok]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--host-max-flows", type=int,
                    help="the module's max_flows: the most this namespace may set")
    ap.add_argument("--host-gc-interval-ms", type=int,
                    help="the module's gc_interval_ms: the least this namespace may set")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    g = Genl()
    fam = g.family("srff")
    if fam is None:
        print(json.dumps({"error": "no srff family"}))
        return 4

    def config():
        (code, _), rep = g.request(fam, CMDS["get-config"], b"")
        assert code == 0 and rep, "get-config failed"
        return rep[0]

    def changed(before, after):
        """What differs, by attribute name. While the thresholds are
        learnt, the GC worker may install new ones at any moment (under
        the debug kernel's slow fuzzing, enough flows end for it to learn):
        they are the learner's, not the request's, and are left out."""
        b, a = decode(before), decode(after)
        if b.get("SRFF_A_AUTO_THRESHOLDS") == 1 and a.get("SRFF_A_AUTO_THRESHOLDS") == 1:
            b.pop("SRFF_A_THRESHOLDS", None)
            a.pop("SRFF_A_THRESHOLDS", None)
        return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))

    before = config()
    start = before
    counts = {"accepted": 0, "refused": 0, "mutated": 0, "other_cmds": 0}
    messages, bad = {}, []
    for n in range(a.n):
        cmd = "set-config"
        if rng.random() < 0.05:
            cmd = rng.choice(["get-config", "get-stats", "flush", "get-sizes"])
            counts["other_cmds"] += 1
        names = rng.sample(sorted(SCALARS) + sorted(LISTS), rng.randint(1, 5))
        want = {}
        for name in names:
            want[name] = (list_values(rng, name) if name in LISTS else
                          scalar_value(rng, *SCALARS[name]))
        attrs = [encode(name, want[name]) for name in names]
        mutated = rng.random() < 0.5 and mutate(rng, attrs)
        counts["mutated"] += mutated
        payload = b"".join(attrs)
        (code, ext), _ = g.request(fam, CMDS[cmd], payload)
        after = config()
        where = "request %d (%s %s%s)" % (n, cmd, payload.hex(), ", mutated" if mutated else "")
        if code:
            counts["refused"] += 1
            msg = ext.get("msg")
            messages[msg] = messages.get(msg, 0) + 1
            if not msg:
                bad.append("%s: error %d without an extended-ack message" % (where, code))
            diff = changed(before, after)
            if diff:
                bad.append("%s: refused (%s) but the configuration changed: %s"
                           % (where, msg, ", ".join(diff)))
        else:
            counts["accepted"] += 1
            c = decode(after)
            for rule in rules_broken(c, a.host_max_flows, a.host_gc_interval_ms):
                bad.append("%s: accepted, and now breaks '%s': %s" % (where, rule, c))
            if cmd == "set-config" and not mutated:
                for name, v in want.items():
                    if name == "SRFF_A_DSCP_MAP" and is_default_map(v):
                        # The default, which follows the number of bands.
                        v = default_map(len(c["SRFF_A_THRESHOLDS"]) + 1)
                    if c.get(name, [] if name in LISTS else None) != v:
                        bad.append("%s: %s set to %s reads back %s" % (where, name, v, c.get(name)))
            if cmd != "set-config" and changed(before, after):
                bad.append("%s: %s changed the configuration: %s"
                           % (where, cmd, ", ".join(changed(before, after))))
        before = after
        if len(bad) >= 10:
            break
    # Put the configuration back as it was, so later checks start clean.
    restore = b"".join(encode(k, v) for k, v in decode(start).items())
    (code, _), _ = g.request(fam, CMDS["set-config"], restore)
    out = dict(counts, messages=len(messages),
               top_messages=sorted(messages.items(), key=lambda kv: -kv[1])[:12],
               restored=code == 0 and config() == start, violations=bad)
    print(json.dumps(out))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
