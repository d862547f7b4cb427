#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Flow completion times and slowdowns, the way pFabric, PIAS and Homa report.

  fct.py table RUN_DIR [-o DIR]
        RUN_DIR/requests/POLICY[@LOAD]-ROUND.jsonl (web_client.py's logs,
        timed from RUN_DIR/pcap/ when the captures are there, as
        web_analyze.py does) -> DIR/requests.csv.xz, DIR/bulk.csv.xz and
        DIR/loads.json.xz (the open-loop clients' .load.json files); DIR is
        RUN_DIR unless given. These three are what a results folder commits
        (experiments/tabfile.py: xz; older runs' .gz and loads.json read too).
  fct.py report INPUT... [--rate RATE] [--rtt S] [--ref POLICY] [--out DIR]
        [--edges 100000,1000000] [--edge-scale X] [--boot B] [--seed N]
        [--clock client]
        INPUT is a RUN_DIR (its requests.csv.xz if there, else its logs) or
        a requests.csv.xz. Prints markdown tables; with --out writes
        DIR/headline.md, DIR/tables.md, DIR/targets.md (issue 11's targets
        for each srff policy against --ref), where the run has an idle
        baseline DIR/excess.md (delay in excess of it, per size, and the
        load each run carried) and DIR/defaults.md (issue 32's targets on
        it), DIR/summary.json and, if
        matplotlib is installed, DIR/fct_cdf.png and DIR/bulk_goodput.png.
        Several RUN_DIRs, boots of one configuration: pooled, each response
        judged against its own boot's idle baseline, rounds resampled
        within their boot, each boot's ratio beside the pooled one
        (experiments/report.sh's boots-*/ folders).
  fct.py compact RUN_DIR
        drop fct_client (below) from RUN_DIR/requests.csv.xz: a third of
        the file (openloop.sh with WEB_CLIENT_CLOCK=0).

The table has one line per request: run, round, policy, load ("closed"
for closed-loop clients), kind (short, keepalive, bulk), nth (the
request's place on its connection), size and hdr (body and header bytes),
fct (s), clock (what timed it: client, the client's clock; pcap, a
capture on the client's side; router, a capture on the router's interface
toward the client, after every queue of the path) and stall (bulk: longest
wait for data, s). (The logs' sched and start, when each request was due
and began, are not kept: nothing here reads them, and at a microsecond
they were half the file.) A run with clients at several round trips
(web_client.py --sources) adds rtt, the request's round trip as labelled
(2ms); the column is there only then. Where the router's capture timed
responses, fct_client keeps the client's clock beside it (empty for the
others), and report --clock client makes the report on that clock: the
two clocks compared on the same responses. bulk.csv.xz has run, round, policy, load, req
(the request's line in its log), t (s since the round's first request)
and bytes (body bytes so far): for each transfer only the samples the
per-second goodput interpolates from, the last at or before and the first
after each whole second, and the last (bulk_samples); the figures are
those of every sample, to the bit.

Ideal FCT: the time the response would take alone on the idle bottleneck,

    ideal = k * RTT + 8 * wire(size + hdr) / RATE

with k = 2 for a request that opens its connection (SYN/SYN-ACK, then
request and response: as measured from before connect() or the capture's
SYN) and k = 1 on a kept-alive connection, one less where the router's
capture timed it (the client's SYN or request reaches the router one
client-side delay after it left: the netem on the client's egress), and
wire(n) = n + ceil(n /
1448) * 66, the bytes tbf charges for n bytes of payload (wire.py). It
leaves out slow start and the server's own time, so a slowdown of 1 is
not reachable; compare policies, not slowdowns against 1. RATE comes from
params.json's "rate" unless --rate says; RTT (--rtt, default 0) is the
guest's idle round trip, measured, not assumed. slowdown = fct / ideal.
A request with an rtt label takes that round trip instead, plus what the
measured one exceeds the run's nominal --nominal-rtt (the stack's share).

Requests of the short and keep-alive clients are binned by body size:
< 100 KB, 100 KB - 1 MB, >= 1 MB (edges in bytes, --edges; --edge-scale
multiplies them, by default by the open-loop clients' --scale when they
all used one, so the bins hold the same flows as unscaled), and "all";
bulk downloads are reported apart, by goodput. Per policy, load and bin:
n, mean and p99 (nearest rank) of FCT and slowdown, with 95 % confidence
intervals from a bootstrap over rounds: each resample draws whole rounds
with replacement, because completions within one busy period are not
independent. Ratios against --ref (default fq_codel) resample the same
rounds for both policies when their rounds are interleaved (the same
(run, round) keys); otherwise each independently ("paired" says which).
With 3 rounds a resample is one of 10 multisets: the intervals are coarse.
Bulk: per transfer goodput (body bytes / fct) with its CI over rounds;
the bulk clients' summed goodput in each second of a round: mean, 5th
percentile, seconds with none; and the longest stall of any transfer.
"""
import argparse
import bisect
import collections
import csv
import json
import math
import os
import random
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tabfile  # noqa: E402
import wire  # noqa: E402

COLUMNS = ["run", "round", "policy", "load", "kind", "nth", "size", "hdr", "sched", "start",
           "fct", "clock", "stall"]
# What requests.csv.xz keeps of a request (build_table's rows have COLUMNS).
TABLE_COLUMNS = [c for c in COLUMNS if c not in ("sched", "start")]
BULK_COLUMNS = ["run", "round", "policy", "load", "req", "t", "bytes"]
EDGES = (100000, 1000000)
# The bins of the delay in excess of the idle link's (the defaults issue's).
EXCESS_EDGES = (10000, 100000, 1000000)
IDLE_KIND = "idle"
LOG_NAME = re.compile(r"^(?P<policy>.+?)(?:@(?P<load>[0-9.]+))?-(?P<round>\d+)\.jsonl$")


# --- the per-request table ---------------------------------------------------

def _num(v, digits=6):
    return "" if v is None else ("%.*f" % (digits, v)).rstrip("0").rstrip(".")


def build_table(run_dir, run=None):
    """(request rows, bulk progress rows, {log name: load.json}) of a run."""
    import web_analyze

    run = run or os.path.basename(os.path.normpath(run_dir))
    rdir = os.path.join(run_dir, "requests")
    # Where the capture was: the client's side ("pcap"), or a router's
    # interface, the last hop before the client (meta.json's capture_dev:
    # "router"), where a request arrives one client-side delay later.
    pcap_clock = "router" if _params(run_dir).get("capture_dev") else "pcap"
    rows, prog, loads = [], [], {}
    for name in sorted(os.listdir(rdir)):
        m = LOG_NAME.match(name)
        if not m:
            continue
        base = name[:-len(".jsonl")]
        lj = os.path.join(rdir, base + ".load.json")
        meta = json.load(open(lj)) if os.path.exists(lj) else None
        if meta:
            loads[base] = meta
        load = m.group("load") or (_num(meta["target_load"], 3) if meta else "closed")
        logs = [json.loads(x) for x in open(os.path.join(rdir, name))]
        pcap = os.path.join(run_dir, "pcap", base + ".pcap")
        seen = (web_analyze.match_responses(web_analyze.pcap_responses(pcap), logs)
                if os.path.exists(pcap) else {})
        t0 = min((r.get("sched", r["start"]) for r in logs), default=0.0)
        for i, r in enumerate(logs):
            fct, clock = r["end"] - r["start"], "client"
            nth = r.get("nth", 0)
            fct_client = fct
            if i in seen:
                fct, clock = seen[i][1] - seen[i][0], pcap_clock
            rows.append({"run": run, "round": int(m.group("round")), "policy": m.group("policy"),
                         "load": load, "kind": r["kind"], "nth": nth, "size": r["bytes"],
                         "hdr": r.get("hdr", 0),
                         "sched": r["sched"] - t0 if "sched" in r else None,
                         "start": r["start"] - t0, "fct": fct, "clock": clock,
                         "stall": r.get("max_gap"), "rtt": r.get("rtt"),
                         "fct_client": fct_client if clock == "router" else None})
            for t, n in r.get("progress", []):
                prog.append({"run": run, "round": int(m.group("round")),
                             "policy": m.group("policy"), "load": load, "req": i,
                             "t": r["start"] - t0 + t, "bytes": n})
    return rows, prog, loads


def bulk_samples(prog):
    """The progress samples per_second_goodput reads: per transfer, the
    last sample at or before each whole second and the first after it (the
    two it interpolates between), and the last sample (where the series
    ends). Times are taken as written (_num's 6 digits), so the reader
    finds the same neighbours and gets the same figures, to the bit; the
    order of the rows is kept."""
    by_req = collections.defaultdict(list)
    for i, r in enumerate(prog):
        by_req[(r["policy"], r["load"], r["run"], r["round"], r["req"])].append(
            (float(_num(r["t"])), r["bytes"], i))
    keep = set()
    for s in by_req.values():
        s.sort()
        ts = [t for t, _, _ in s]
        for sec in range(0, math.floor(ts[-1]) + 2):
            j = bisect.bisect_right(ts, sec)
            keep.update(s[k][2] for k in (j - 1, j) if 0 <= k < len(s))
        keep.add(s[-1][2])
    return [r for i, r in enumerate(prog) if i in keep]


def write_csv(path, columns, rows):
    """An xz'd CSV (tabfile.write): the same bytes for the same rows."""
    tabfile.write_csv(path, columns, (
        {c: _num(r[c]) if isinstance(r[c], float) or r[c] is None else r[c] for c in columns}
        for r in rows))


def read_csv(path):
    """Rows of a requests or bulk table (.csv.xz, or an older .csv.gz)."""
    ints = {"round", "nth", "size", "hdr", "req", "bytes"}
    floats = {"sched", "start", "fct", "stall", "t", "fct_client"}
    rows = tabfile.read_csv(path)
    for r in rows:
        for k, v in r.items():
            if k == "rtt":
                r[k] = v or None
            elif k in ints:
                r[k] = int(v)
            elif k in floats:
                r[k] = float(v) if v != "" else None
    return rows


def load_input(path):
    """(rows, progress rows, loads, params) from a run dir or its
    requests.csv.xz (or an older run's .csv.gz)."""
    if path.endswith((".csv.xz", ".csv.gz")):
        d = os.path.dirname(path) or "."
        rows = read_csv(path)
        b = tabfile.find(d, "bulk.csv")
        prog = read_csv(b) if b else []
    else:
        d = path
        t = tabfile.find(d, "requests.csv")
        if t:
            return load_input(t)
        rows, prog, loads = build_table(d)
        return rows, prog, loads, _params(d)
    lj = tabfile.find(d, "loads.json")
    loads = json.loads(tabfile.read(lj)) if lj else {}
    return rows, prog, loads, _params(d)


def _params(d):
    """params.json's object, or meta.json's "params" (experiments/runmeta.py)."""
    p = os.path.join(d, "params.json")
    if os.path.exists(p):
        return json.load(open(p))
    p = os.path.join(d, "meta.json")
    return json.load(open(p)).get("params", {}) if os.path.exists(p) else {}


# --- metrics -------------------------------------------------------------------

def ideal_fct(size, hdr, nth, rate_bps, rtt, mss=wire.MSS, overhead=wire.OVERHEAD,
              clock="client"):
    """Alone on the idle bottleneck: (2 RTTs for a new connection, 1 on a
    kept-alive one; one less timed by the router's capture) + the
    response's framed bytes at the bottleneck rate."""
    k = (2 if nth == 0 else 1) - (1 if clock == "router" else 0)
    return k * rtt + 8 * wire.wire_bytes(size + hdr, mss, overhead) / rate_bps


def quantile(sorted_values, q):
    """Nearest rank, as web_analyze.p99."""
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def bin_label(edges):
    def kb(x):
        return ("%g MB" % (x / 1e6)) if x >= 1e6 else ("%g KB" % (x / 1e3))
    labels = ["< %s" % kb(edges[0])]
    labels += ["%s - %s" % (kb(a), kb(b)) for a, b in zip(edges, edges[1:])]
    labels.append(">= %s" % kb(edges[-1]))
    return labels


def size_bin(size, edges):
    """Index of size's bin: edges are lower bounds of the bins after the
    first (100 000 B is in "100 KB - 1 MB")."""
    return bisect.bisect_right(edges, size)


class Rounds:
    """A statistic's values split by round, for the bootstrap: per round
    the sorted values and their sum."""

    def __init__(self, by_round):
        self.keys = sorted(k for k, v in by_round.items() if v)
        self.strata = _strata(self.keys)
        self.sorted = {k: sorted(by_round[k]) for k in self.keys}
        self.sums = {k: math.fsum(by_round[k]) for k in self.keys}
        self.all = sorted(v for k in self.keys for v in self.sorted[k])

    def n(self, mult=None):
        mult = mult or dict.fromkeys(self.keys, 1)
        return sum(m * len(self.sorted.get(k, ())) for k, m in mult.items())

    def mean(self, mult=None):
        mult = mult or dict.fromkeys(self.keys, 1)
        n = self.n(mult)
        return math.fsum(m * self.sums.get(k, 0.0) for k, m in mult.items()) / n if n else None

    def quantile(self, q, mult=None):
        """Nearest-rank quantile of the rounds pooled with multiplicities
        mult: the least value v with at least ceil(q n) values <= v."""
        mult = mult or dict.fromkeys(self.keys, 1)
        # (a round's sorted values, its multiplicity): the search's inner
        # loop, on every step of every resample of the bootstrap.
        parts = [(self.sorted[k], m) for k, m in mult.items() if k in self.sorted]
        n = sum(m * len(s) for s, m in parts)
        if not n:
            return None
        want = max(1, math.ceil(q * n))
        right = bisect.bisect_right
        vals = self.all
        lo, hi = 0, len(vals) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            v = vals[mid]
            got = 0
            for s, m in parts:
                got += m * right(s, v)
            if got >= want:
                hi = mid
            else:
                lo = mid + 1
        return vals[lo]

    def stat(self, name, mult=None):
        if name == "mean":
            return self.mean(mult)
        return self.quantile(0.5 if name == "p50" else 0.99, mult)


def _ci(values):
    if not values:
        return None
    s = sorted(values)
    return [quantile(s, 0.025), quantile(s, 0.975)]


def _strata(keys):
    """keys, (run, round) pairs, split by run: the boots of a pooled
    report, each its own stratum (one stratum for one boot)."""
    by = {}
    for k in keys:
        by.setdefault(k[0] if isinstance(k, tuple) else None, []).append(k)
    return list(by.values())


def _draw(rng, strata):
    """One resample of the rounds (Rounds.strata): {round: how many times
    drawn}, in the order first drawn (as collections.Counter would give
    it, faster). Rounds of several boots are drawn within their boot: each
    resample keeps every boot's number of rounds, so a boot with more
    rounds does not stand in for another."""
    mult = {}
    choice = rng.choice
    for stratum in strata:
        for _ in stratum:
            k = choice(stratum)
            mult[k] = mult.get(k, 0) + 1
    return mult


def bootstrap(rounds, stat, boot, rng):
    """95 % CI of stat ("mean", "p50" or "p99") over resampled rounds."""
    keys = rounds.keys
    if len(keys) < 2:
        return None
    out = []
    for _ in range(boot):
        mult = _draw(rng, rounds.strata)
        v = rounds.stat(stat, mult)
        if v is not None:
            out.append(v)
    return _ci(out)


def bootstrap_ratio(a, b, stat, boot, rng):
    """95 % CI of stat(a) / stat(b); ("paired", CI) when a and b have the
    same rounds, resampled together, else each on its own."""
    paired = a.keys == b.keys
    if len(a.keys) < 2 or len(b.keys) < 2:
        return paired, None
    out = []
    for _ in range(boot):
        ma = _draw(rng, a.strata)
        mb = ma if paired else _draw(rng, b.strata)
        x, y = a.stat(stat, ma), b.stat(stat, mb)
        if x is not None and y:
            out.append(x / y)
    return paired, _ci(out)


def _delay_ratio(x, y):
    """x / y where both are delays, else None: on kept-alive connections a
    loaded one can beat the idle baseline's, whose window restarts after
    idle, and a negative "ratio" would pass any bound."""
    return x / y if x is not None and y and y > 0 and x >= 0 else None


def _boot_ratio(a, b, stat, run):
    """_delay_ratio of stat(a) and stat(b) over one boot's rounds (None
    where either has none)."""
    ma = {k: 1 for k in a.keys if k[0] == run}
    mb = {k: 1 for k in b.keys if k[0] == run}
    if not ma or not mb:
        return None
    return _delay_ratio(a.stat(stat, ma), b.stat(stat, mb))


def _rng(seed, *key):
    return random.Random("/".join(str(k) for k in (seed,) + key))


def _load_order(v):
    try:
        return (0, float(v))
    except ValueError:
        return (1, v)


class IdleBaseline:
    """What a response took alone on the idle link (web_client.py --mode
    idle, kind "idle" in the table): per kind of connection (new: nth 0;
    kept-alive: nth > 0), round trip (rtt, None for a run with one) and
    whether the router's capture timed it (clock "router": one client-side
    delay less than the client's side sees; a response is judged against
    its own clock's) the median FCT of each size measured, and between
    them linear in size (beyond them, the nearest)."""

    def __init__(self, rows):
        by = collections.defaultdict(lambda: collections.defaultdict(list))
        for r in rows:
            by[(r["nth"] == 0, r.get("rtt"), r.get("clock") == "router")][r["size"]].append(r["fct"])
        self.curves = {k: sorted((x, statistics.median(v)) for x, v in d.items())
                       for k, d in by.items() if d}

    @staticmethod
    def label(key):
        """"new", "kept-alive", with a round trip "new@2ms", timed by the
        router's capture "new/router", "new@2ms/router"."""
        new, rtt, router = key
        return ("new" if new else "kept-alive") + ("@%s" % rtt if rtt else "") + \
            ("/router" if router else "")

    def __call__(self, size, nth, rtt=None, clock="client"):
        c = self.curves.get((nth == 0, rtt, clock == "router"))
        if not c:
            return None
        i = bisect.bisect_left(c, (size,))
        if i < len(c) and c[i][0] == size:
            return c[i][1]
        if i == 0:
            return c[0][1]
        if i == len(c):
            return c[-1][1]
        (x0, y0), (x1, y1) = c[i - 1], c[i]
        return y0 + (size - x0) * (y1 - y0) / (x1 - x0)


def rtt_seconds(label):
    """A round trip as tc writes it ("2ms", "80ms", "1s", "500us") in s."""
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)", label.strip().lower())
    if not m:
        raise ValueError("not a round trip: %r" % label)
    return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


def summarise(rows, prog, rate_bps, rtt, ref="fq_codel", edges=EDGES, boot=2000, seed=1,
              order=None, mss=wire.MSS, overhead=wire.OVERHEAD, excess_edges=EXCESS_EDGES,
              nominal_rtt=None):
    """Everything the tables and plots show, as one JSON-able dict. Rows
    with an rtt label (several round trips in one run) get their own
    round trip in the ideal FCT (the label, plus what rtt, the measured
    one, exceeds nominal_rtt, the run's nominal one, when both are given),
    their own idle baseline, and excess bins of their own ("all @ 2ms")
    beside the pooled ones."""
    labels = bin_label(edges)
    idle_rows = [r for r in rows if r["kind"] == IDLE_KIND]
    rows = [r for r in rows if r["kind"] != IDLE_KIND]
    base = IdleBaseline(idle_rows) if idle_rows else None
    # Several boots pooled (fct.py report RUN RUN...): each response is
    # judged against its own boot's idle baseline, and each boot's ratio
    # is given beside the pooled one (boots disagree by more than their
    # rounds do).
    boots = sorted({r["run"] for r in rows})
    bases = {}
    if len(boots) > 1 and idle_rows:
        for b in boots:
            mine = [r for r in idle_rows if r["run"] == b]
            bases[b] = IdleBaseline(mine) if mine else None
    xlabels = bin_label(excess_edges)
    xsmall = bin_label(excess_edges[1:2])[0]
    rtts = sorted({r.get("rtt") for r in rows if r.get("rtt")}, key=rtt_seconds)
    stack = max(0.0, rtt - nominal_rtt) if rtt and nominal_rtt is not None else 0.0
    rtt_of = {lab: rtt_seconds(lab) + stack for lab in rtts}
    policies = order or []
    for r in rows:
        if r["policy"] not in policies:
            policies.append(r["policy"])
    loads = sorted({r["load"] for r in rows}, key=_load_order)
    # (policy, load, bin label) -> metric -> round key -> [values]
    groups = collections.defaultdict(lambda: {"fct": collections.defaultdict(list),
                                              "slowdown": collections.defaultdict(list)})
    # (policy, load, excess bin label) -> round key -> [excess delay, s]
    xgroups = collections.defaultdict(lambda: collections.defaultdict(list))
    bulk = collections.defaultdict(lambda: collections.defaultdict(list))
    stall = {}
    for r in rows:
        key = (r["run"], r["round"])
        if r["kind"] == "bulk":
            if r["fct"] > 0:
                bulk[(r["policy"], r["load"])][key].append(8 * r["size"] / r["fct"] / 1e6)
            if r["stall"] is not None:
                k = (r["policy"], r["load"])
                stall[k] = max(stall.get(k, 0.0), r["stall"])
            continue
        ideal = ideal_fct(r["size"], r["hdr"], r["nth"], rate_bps,
                          rtt_of.get(r.get("rtt"), rtt), mss, overhead, r.get("clock", "client"))
        for lab in (labels[size_bin(r["size"], edges)], "all"):
            g = groups[(r["policy"], r["load"], lab)]
            g["fct"][key].append(r["fct"])
            g["slowdown"][key].append(r["fct"] / ideal)
        b = bases.get(r["run"], base)
        alone = b(r["size"], r["nth"], r.get("rtt"), r.get("clock", "client")) if b else None
        if alone is not None:
            xb, d = size_bin(r["size"], excess_edges), r["fct"] - alone
            for lab in (xlabels[xb], xsmall if r["size"] < excess_edges[1] else None, "all"):
                if lab:
                    xgroups[(r["policy"], r["load"], lab)][key].append(d)
                    if r.get("rtt"):
                        xgroups[(r["policy"], r["load"], "%s @ %s" % (lab, r["rtt"]))][key].append(d)
    out = {"rate_bps": rate_bps, "rtt": rtt, "ref": ref, "edges": list(edges), "boot": boot,
           "seed": seed, "mss": mss, "overhead": overhead, "policies": policies,
           "loads": loads, "bins": labels + ["all"], "groups": [], "ratios": [], "bulk": [],
           "excess_edges": list(excess_edges),
           "excess_bins": xlabels + [xsmall, "all"] + [
               "%s @ %s" % (lab, t) for t in rtts for lab in xlabels + [xsmall, "all"]],
           "idle": ({"requests": len(idle_rows),
                     "sizes": {IdleBaseline.label(k): len(c) for k, c in base.curves.items()},
                     "curves": {IdleBaseline.label(k): c for k, c in base.curves.items()}}
                    if base else None),
           "excess": [], "excess_ratios": [], "boots": boots if len(boots) > 1 else [],
           "kinds": sorted({r["kind"] for r in rows if r["kind"] != "bulk"}),
           "clocks": dict(sorted(collections.Counter(
               r.get("clock", "client") for r in rows if r["kind"] != "bulk").items()))}
    if rtts:
        out["rtts"] = {lab: rtt_of[lab] for lab in rtts}
    cache = {}
    for p in policies:
        for ld in loads:
            for lab in labels + ["all"]:
                g = groups.get((p, ld, lab))
                if not g:
                    continue
                e = {"policy": p, "load": ld, "bin": lab}
                for metric in ("fct", "slowdown"):
                    rd = Rounds(g[metric])
                    cache[(p, ld, lab, metric)] = rd
                    e["n"], e["rounds"] = rd.n(), len(rd.keys)
                    for st in ("mean", "p99"):
                        e["%s_%s" % (metric, st)] = rd.stat(st)
                        e["%s_%s_ci" % (metric, st)] = bootstrap(
                            rd, st, boot, _rng(seed, p, ld, lab, metric, st))
                    s = rd.all
                    e["%s_cdf" % metric] = [quantile(s, q / 100) for q in range(1, 101)]
                out["groups"].append(e)
    for p in policies:
        if p == ref:
            continue
        for ld in loads:
            for lab in labels + ["all"]:
                if (p, ld, lab, "fct") not in cache or (ref, ld, lab, "fct") not in cache:
                    continue
                e = {"policy": p, "ref": ref, "load": ld, "bin": lab}
                for metric in ("fct", "slowdown"):
                    a, b = cache[(p, ld, lab, metric)], cache[(ref, ld, lab, metric)]
                    for st in ("mean", "p99"):
                        x, y = a.stat(st), b.stat(st)
                        e["%s_%s_ratio" % (metric, st)] = x / y if y else None
                        e["paired"], e["%s_%s_ratio_ci" % (metric, st)] = bootstrap_ratio(
                            a, b, st, boot, _rng(seed, "ratio", p, ld, lab, metric, st))
                        if out["boots"]:
                            e["%s_%s_ratio_boots" % (metric, st)] = [
                                _boot_ratio(a, b, st, run) for run in out["boots"]]
                out["ratios"].append(e)
    xcache = {}
    for p in policies:
        for ld in loads:
            for lab in out["excess_bins"]:
                if (p, ld, lab) not in xgroups:
                    continue
                rd = Rounds(xgroups[(p, ld, lab)])
                xcache[(p, ld, lab)] = rd
                e = {"policy": p, "load": ld, "bin": lab, "n": rd.n(), "rounds": len(rd.keys)}
                for st in ("mean", "p50", "p99"):
                    e[st] = rd.stat(st)
                    e[st + "_ci"] = bootstrap(rd, st, boot, _rng(seed, "excess", p, ld, lab, st))
                out["excess"].append(e)
    for p in policies:
        for ld in loads:
            for lab in out["excess_bins"]:
                if p == ref or (p, ld, lab) not in xcache or (ref, ld, lab) not in xcache:
                    continue
                a, b = xcache[(p, ld, lab)], xcache[(ref, ld, lab)]
                e = {"policy": p, "ref": ref, "load": ld, "bin": lab}
                for st in ("mean", "p50", "p99"):
                    e[st + "_ratio"] = _delay_ratio(a.stat(st), b.stat(st))
                    e["paired"], e[st + "_ratio_ci"] = (
                        bootstrap_ratio(a, b, st, boot, _rng(seed, "xratio", p, ld, lab, st))
                        if e[st + "_ratio"] is not None else (a.keys == b.keys, None))
                    if out["boots"]:
                        e[st + "_ratio_boots"] = [_boot_ratio(a, b, st, run)
                                                  for run in out["boots"]]
                out["excess_ratios"].append(e)
    persec = per_second_goodput(prog)
    for p in policies:
        for ld in loads:
            if (p, ld) not in bulk:
                continue
            rd = Rounds(bulk[(p, ld)])
            secs = sorted(v for (pp, ll, _), s in persec.items() if (pp, ll) == (p, ld)
                          for v in s)
            out["bulk"].append({
                "policy": p, "load": ld, "n": rd.n(), "rounds": len(rd.keys),
                "goodput_mean": rd.mean(),
                "goodput_mean_ci": bootstrap(rd, "mean", boot, _rng(seed, "bulk", p, ld)),
                "seconds": len(secs),
                "persec_mean": statistics.fmean(secs) if secs else None,
                "persec_p5": quantile(secs, 0.05) if secs else None,
                "persec_zero": sum(1 for v in secs if v == 0),
                "longest_stall": stall.get((p, ld)),
                "persec": {"%s/%s" % k[2]: v for k, v in persec.items() if k[:2] == (p, ld)},
            })
    return out


def per_second_goodput(prog):
    """{(policy, load, (run, round)): [Mbit/s of all bulk transfers in
    second 0, 1, ...]} from cumulative progress samples, interpolated at
    whole seconds."""
    by_req = collections.defaultdict(list)
    for r in prog:
        by_req[(r["policy"], r["load"], (r["run"], r["round"]), r["req"])].append(
            (r["t"], r["bytes"]))
    out = {}
    for (p, ld, rk, _), s in by_req.items():
        s.sort()
        series = out.setdefault((p, ld, rk), [])
        ts = [t for t, _ in s]
        end = math.floor(s[-1][0])

        def cum(x):
            i = bisect.bisect_right(ts, x)
            if i == 0:
                return 0.0
            if i == len(s):
                return s[-1][1]
            (t0, b0), (t1, b1) = s[i - 1], s[i]
            return b0 + (x - t0) * (b1 - b0) / (t1 - t0)
        for sec in range(0, end + 1):
            while len(series) <= sec:
                series.append(0.0)
            series[sec] += 8 * (cum(sec + 1) - cum(sec)) / 1e6
    # The last second of a round is partial: leave it out.
    return {k: v[:-1] for k, v in out.items() if len(v) > 1}


# --- output --------------------------------------------------------------------

def _g(v):
    """Three significant digits, without an exponent."""
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    return "%.1f" % v if a >= 10 else "%.3g" % v


def _fmt(v, ci, unit=1.0):
    if v is None:
        return "-"
    s = _g(v * unit)
    if ci:
        s += " [%s, %s]" % (_g(ci[0] * unit), _g(ci[1] * unit))
    return s


def tables(s):
    """The markdown tables of a summary."""
    out = ["| policy | load | size | n | rounds | mean FCT (ms) | p99 FCT (ms) "
           "| mean slowdown | p99 slowdown |", "|---|---|---|---|---|---|---|---|---|"]
    for e in s["groups"]:
        out.append("| %s | %s | %s | %d | %d | %s | %s | %s | %s |" % (
            e["policy"], e["load"], e["bin"], e["n"], e["rounds"],
            _fmt(e["fct_mean"], e["fct_mean_ci"], 1e3), _fmt(e["fct_p99"], e["fct_p99_ci"], 1e3),
            _fmt(e["slowdown_mean"], e["slowdown_mean_ci"]),
            _fmt(e["slowdown_p99"], e["slowdown_p99_ci"])))
    scaled = s.get("edge_scale", 1.0)
    text = ["FCT and slowdown (FCT / ideal FCT at %s bit/s, RTT %g ms) per size%s; "
            "95 %% CIs from %d bootstrap resamples of whole rounds.\n" %
            ("%g" % s["rate_bps"], s["rtt"] * 1e3,
             " (bins of the unscaled sizes: edges x %g)" % scaled if scaled != 1.0 else "",
             s["boot"]), "\n".join(out)]
    if s["ratios"]:
        out = ["| policy | load | size | mean slowdown ratio | p99 slowdown ratio "
               "| mean FCT ratio | p99 FCT ratio | rounds |", "|---|---|---|---|---|---|---|---|"]
        for e in s["ratios"]:
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                e["policy"], e["load"], e["bin"],
                _fmt(e["slowdown_mean_ratio"], e["slowdown_mean_ratio_ci"]),
                _fmt(e["slowdown_p99_ratio"], e["slowdown_p99_ratio_ci"]),
                _fmt(e["fct_mean_ratio"], e["fct_mean_ratio_ci"]),
                _fmt(e["fct_p99_ratio"], e["fct_p99_ratio_ci"]),
                "paired" if e["paired"] else "unpaired"))
        text += ["\nAgainst %s: ratio < 1 is faster.\n" % s["ref"], "\n".join(out)]
    if s["bulk"]:
        out = ["| policy | load | transfers | goodput per transfer (Mbit/s) "
               "| bulk Mbit/s per second: mean | p5 | seconds without data | longest stall (s) |",
               "|---|---|---|---|---|---|---|---|"]
        for e in s["bulk"]:
            out.append("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
                e["policy"], e["load"], e["n"], _fmt(e["goodput_mean"], e["goodput_mean_ci"]),
                _fmt(e["persec_mean"], None), _fmt(e["persec_p5"], None),
                "%d of %d" % (e["persec_zero"], e["seconds"]) if e["seconds"] else "-",
                _fmt(e["longest_stall"], None)))
        text += ["\nBulk downloads.\n", "\n".join(out)]
    return "\n".join(text) + "\n"


def _cells(entries):
    """{(policy, load, bin): entry} of a summary's list of entries."""
    return {(e["policy"], e["load"], e["bin"]): e for e in entries}


def headline(s):
    """One line per load and policy: mean slowdown by size bin, small
    flows' p99, bulk goodput and stall; ratios against the reference in
    brackets where there is one. The table docs/experiments.md shows."""
    g = _cells(s["groups"])
    ra = _cells(s["ratios"])
    bk = {(e["policy"], e["load"]): e for e in s["bulk"]}
    bins = s["bins"]
    small = bins[0]
    head = ["load", "policy"] + ["mean slowdown %s" % b for b in bins] + \
        ["p99 slowdown %s" % small, "bulk Mbit/s", "longest bulk stall (s)"]
    out = ["| " + " | ".join(head) + " |", "|---|---" + "|---:" * (len(head) - 2) + "|"]

    def cell(p, ld, b, st):
        e = g.get((p, ld, b))
        if not e:
            return "-"
        v = "%.2f" % e["slowdown_%s" % st]
        r = ra.get((p, ld, b))
        if r and r["slowdown_%s_ratio" % st] is not None:
            v += " (%.2f)" % r["slowdown_%s_ratio" % st]
        return v
    for ld in s["loads"]:
        for p in s["policies"]:
            if not any((p, ld, b) in g for b in bins):
                continue
            b = bk.get((p, ld))
            out.append("| " + " | ".join(
                [ld, p] + [cell(p, ld, x, "mean") for x in bins] + [cell(p, ld, small, "p99")] +
                ["%.2f" % b["goodput_mean"] if b and b["goodput_mean"] is not None else "-",
                 "%.2f" % b["longest_stall"] if b and b["longest_stall"] is not None else "-"]) +
                " |")
    sc = s.get("edge_scale", 1.0)
    return ("Slowdown (FCT / ideal FCT) by response size%s, in brackets the ratio to %s "
            "(< 1: faster); bulk: mean goodput per transfer.\n\n" % (
                " (sizes scaled by %g: the bins hold the flows they would unscaled)" % sc
                if sc != 1.0 else "", s["ref"]) +
            "\n".join(out) + "\n")


# Issue 11's targets for srff with its defaults against the reference
# (fq_codel): (label, what, key, bound, at most?). what: "ratio" of a size
# bin's statistic (key: bin, statistic) to the reference's; "value" of the
# policy's own, bound by the load (slowdown_bound); "goodput" ratio; "stall"
# against the reference's longest stall. Bins: "small" is the first,
# "large" the last (< 100 KB and >= 1 MB unscaled). %(ref)s in a label is
# the reference.
TARGETS = (
    ("small: mean FCT ≤ 0.5×", "ratio", ("small", "fct_mean"), 0.5, True),
    ("small: p99 FCT ≤ 0.7×", "ratio", ("small", "fct_p99"), 0.7, True),
    ("small: mean slowdown ≤ 1.25 (1.5 above 60 %%)", "value", ("small", "slowdown_mean"),
     None, True),
    ("large: mean FCT ≤ 1.1×", "ratio", ("large", "fct_mean"), 1.1, True),
    ("bulk: goodput ≥ 0.85×", "goodput", None, 0.85, False),
    ("bulk: longest stall ≤ %(ref)s's", "stall", None, None, True),
)


def slowdown_bound(load):
    """The small responses' mean slowdown the issue allows at a load: 1.25
    up to 60 %, 1.5 above."""
    return 1.5 if float(load) > 0.6 else 1.25


def _target_cell(what, key, bound, at_most, entry, mine, ref):
    """One target at one load: "figure [CI], met" (or **missed**), or "-"
    without the data. entry: the policy's ratio (what "ratio") or group
    ("value") entry for the target's bin; mine, ref: its and the
    reference's bulk entries."""
    v, ci, txt = None, None, ""
    if what in ("ratio", "value"):
        if entry:
            k = key[1] + ("_ratio" if what == "ratio" else "")
            v, ci = entry.get(k), entry.get(k + "_ci")
    elif mine and ref:
        if what == "goodput" and ref["goodput_mean"]:
            v = mine["goodput_mean"] / ref["goodput_mean"]
        elif what == "stall" and None not in (mine["longest_stall"], ref["longest_stall"]):
            v, bound = mine["longest_stall"], ref["longest_stall"]
            txt = "%.2f s (%s %.2f s)" % (v, ref["policy"], bound)
    if v is None:
        return "-"
    ok = v <= bound if at_most else v >= bound
    if not txt:
        txt = "%.2f" % v + (" [%.2f, %.2f]" % tuple(ci) if ci else "")
    return "%s, %s" % (txt, "met" if ok else "**missed**")


def _policy_tables(s, policies, rows, caption):
    """One table per srff policy (or those given) against the reference, a
    column per load: rows(p) gives its (target, [cell per load]) lines,
    caption(p) the line above it."""
    if policies is None:
        policies = [p for p in s["policies"] if p != s["ref"] and p.startswith("srff")]
    out = []
    for p in policies:
        lines = ["| target | " + " | ".join("load %s" % ld for ld in s["loads"]) + " |",
                 "|---" * (len(s["loads"]) + 1) + "|"]
        lines += ["| %s | %s |" % (label, " | ".join(cells)) for label, cells in rows(p)]
        out.append("%s:\n\n%s\n" % (caption(p), "\n".join(lines)))
    return "\n".join(out)


def targets(s, policies=None):
    """Issue 11's targets for each srff policy (or those given) against the
    reference, one table per policy, a column per load: the figure, its
    95 % CI where there is one, and met or missed (on the point estimate)."""
    ref = s["ref"]
    bins = {"small": s["bins"][0], "large": s["bins"][-2]}
    g = _cells(s["groups"])
    ra = _cells(s["ratios"])
    bk = {(e["policy"], e["load"]): e for e in s["bulk"]}

    def rows(p):
        for label, what, key, bound, at_most in TARGETS:
            cells = []
            for ld in s["loads"]:
                entry = (ra if what == "ratio" else g).get((p, ld, bins[key[0]])) if key else None
                cells.append(_target_cell(
                    what, key, slowdown_bound(ld) if what == "value" else bound, at_most,
                    entry, bk.get((p, ld)), bk.get((ref, ld))))
            yield label % {"ref": ref}, cells
    return _policy_tables(s, policies, rows, lambda p: (
        "%s against %s (small: %s, large: %s; ratios with 95 %% CIs bootstrapped over rounds; "
        "met or missed on the point estimate)" % (p, ref, bins["small"], bins["large"])))


def _ratio_cell(v, ci, boots=None):
    """A ratio with its CI, and "no difference" where the CI holds 1.
    With several boots pooled, each boot's ratio follows, and where the
    CI excludes 1 but a boot's ratio is on the other side of 1 (or
    missing), "boots disagree": a difference is claimed only where
    every boot shows it."""
    if v is None:
        return "-"
    txt = "%.2f" % v
    if ci:
        txt += " [%.2f, %.2f]" % tuple(ci)
    if boots:
        txt += " (boots %s)" % ", ".join("-" if x is None else "%.2f" % x for x in boots)
    if ci:
        if ci[0] <= 1 <= ci[1]:
            txt += " no difference"
        elif boots and not all(x is not None and (x < 1) == (v < 1) and x != 1 for x in boots):
            txt += " boots disagree"
    return txt


# What each clock of the table is, in the reports' words.
CLOCK_TEXT = {"client": "the client's clock", "pcap": "the client's capture",
              "router": "the router's capture, after every queue of the path"}


def _kind_at(label):
    """IdleBaseline.label's "new@2ms" as ("new", " at 2ms"); "new" as ("new", "");
    "new@2ms/router" as ("new", " at 2ms, timed by the router's capture")."""
    label, router, _ = label.partition("/router")
    kind, _, rtt = label.partition("@")
    return kind, (" at %s" % rtt if rtt else "") + (", timed by the router's capture" if router else "")


def excess_table(s):
    """Delay in excess of the idle link's, per load, policy and size: p50,
    p99 and mean with their CIs, and the mean's ratio to the reference."""
    if not s.get("excess"):
        return ""
    ra = _cells(s["excess_ratios"])
    out = ["| load | policy | size | n | p50 (ms) | p99 (ms) | mean (ms) "
           "| mean / %s's | p99 / %s's |" % (s["ref"], s["ref"]), "|---|---|---|---:" + "|---" * 5 + "|"]
    for e in s["excess"]:
        r = ra.get((e["policy"], e["load"], e["bin"]), {})
        out.append("| %s | %s | %s | %d | %s | %s | %s | %s | %s |" % (
            e["load"], e["policy"], e["bin"], e["n"],
            _fmt(e["p50"], e["p50_ci"], 1e3), _fmt(e["p99"], e["p99_ci"], 1e3),
            _fmt(e["mean"], e["mean_ci"], 1e3),
            _ratio_cell(r.get("mean_ratio"), r.get("mean_ratio_ci"), r.get("mean_ratio_boots"))
            if r else "",
            _ratio_cell(r.get("p99_ratio"), r.get("p99_ratio_ci"), r.get("p99_ratio_boots"))
            if r else ""))
    idle = s["idle"]
    scaled = s.get("edge_scale", 1.0)
    clocks = s.get("clocks", {})
    timed = ""
    if set(clocks) - {"client"}:
        timed = ". Timed by %s" % ", ".join("%s (%d responses)" % (CLOCK_TEXT.get(c, c), n)
                                            for c, n in clocks.items())
    boots = s.get("boots") or []
    pooled = ""
    if boots:
        pooled = (" Pooled over %d boots (%s), each response judged against its own boot's "
                  "idle baseline, rounds resampled within their boot; each boot's ratio in "
                  "brackets after the CI, and \"boots disagree\" where the CI excludes 1 but "
                  "a boot's ratio does not agree." % (len(boots), ", ".join(boots)))
    return ("Delay in excess of the idle link's: each response's FCT less what its size took "
            "alone on the idle link (the idle baseline: %d requests, of %s; medians, linear "
            "in size between them)%s%s. 95 %% CIs from %d bootstrap resamples of whole rounds; "
            "ratios against %s, \"no difference\" where the CI holds 1.%s\n\n" % (
                idle["requests"], " and ".join(
                    "%d size%s on %s connections%s" % ((n, "s" * (n != 1)) + _kind_at(k))
                    for k, n in idle["sizes"].items()),
                " (bins of the unscaled sizes: edges x %g)" % scaled if scaled != 1.0 else "",
                timed, s["boot"], s["ref"], pooled) + "\n".join(out) + "\n")


# The defaults issue's targets (issue 32) and guard rails, against the
# reference: (label, source, bin key, statistic, bound, at most).
DEFAULTS_TARGETS = [
    ("100 KB-1 MB: mean excess ≤ 0.5×", "excess", 2, "mean", 0.5, True),
    ("small (< 100 KB): mean excess ≤ %(small)s×", "excess", "small", "mean", None, True),
    ("small: p99 FCT ≤ 0.5×", "fct", 0, "fct_p99", 0.5, True),
    (">= 1 MB: mean FCT ≤ 1.1×", "fct", -2, "fct_mean", 1.1, True),
    ("bulk: goodput ≥ 0.85×", "goodput", None, None, 0.85, False),
    ("bulk: longest stall ≤ 2× and < 1 s", "stall", None, None, 2.0, True),
]


def defaults_targets(s, policies=None):
    """Issue 32's targets for each srff policy against the reference, a
    column per load: ratio [CI], met or missed on the point estimate, and
    "no difference" where the CI holds 1. The retransmission timeouts'
    guard rail is tcp.md's (tcpstats.py)."""
    if not s.get("excess"):
        return ""
    ref = s["ref"]
    xb = s["excess_bins"]
    keep = any(r == "keepalive" for r in s.get("kinds", ()))
    small = 0.5 if keep else 0.3
    xra = _cells(s["excess_ratios"])
    ra = _cells(s["ratios"])
    bk = {(e["policy"], e["load"]): e for e in s["bulk"]}

    def cell(p, ld, src, key, stat, bound, at_most):
        v = ci = boots = None
        if src == "excess":
            # "small": the < 100 KB group, after the size bins (and before
            # "all" and any round trip's own bins).
            e = xra.get((p, ld, xb[len(s["excess_edges"]) + 1] if key == "small" else xb[key]))
            if e:
                v, ci = e[stat + "_ratio"], e[stat + "_ratio_ci"]
                boots = e.get(stat + "_ratio_boots")
        elif src == "fct":
            e = ra.get((p, ld, s["bins"][key]))
            if e:
                v, ci = e[stat + "_ratio"], e[stat + "_ratio_ci"]
                boots = e.get(stat + "_ratio_boots")
        else:
            mine, theirs = bk.get((p, ld)), bk.get((ref, ld))
            if mine and theirs and src == "goodput" and theirs["goodput_mean"]:
                v = mine["goodput_mean"] / theirs["goodput_mean"]
            elif mine and theirs and src == "stall" and \
                    None not in (mine["longest_stall"], theirs["longest_stall"]):
                a, b = mine["longest_stall"], theirs["longest_stall"]
                ok = a <= bound * b and a < 1.0
                return "%.2f s (%s %.2f s), %s" % (a, ref, b, "met" if ok else "**missed**")
        if v is None:
            return "-"
        # On the point estimate, as printed (0.50 meets "≤ 0.5").
        ok = round(v, 2) <= bound if at_most else round(v, 2) >= bound
        return "%s, %s" % (_ratio_cell(v, ci, boots), "met" if ok else "**missed**")

    def rows(p):
        for label, src, key, stat, bound, at_most in DEFAULTS_TARGETS:
            bound = small if bound is None else bound
            yield label % {"small": small}, [cell(p, ld, src, key, stat, bound, at_most)
                                             for ld in s["loads"]]
    return _policy_tables(s, policies, rows, lambda p: (
        "%s against %s: the defaults issue's targets (ratios with 95 %% CIs over rounds; met or "
        "missed on the point estimate; the timeouts' guard rail is in tcp.md)" % (p, ref)))


def load_summary(loads, policies=None):
    """Per target load and policy, what the link carried, mean [smallest,
    largest] over rounds: the responses' offered load (the arrivals' bytes:
    the same for every policy of a round), the responses' achieved load, the
    bulk downloads', and the two together (the link's utilisation)."""
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    order = list(policies or [])
    for name, m in loads.items():
        mt = re.match(r"^(?:[^/]*/)?(?P<policy>[^/]+)@(?P<load>[0-9.]+)-\d+$", name)
        if not mt or "offered_load" not in m:
            continue
        if mt["policy"] not in order:
            order.append(mt["policy"])
        c = cells[(mt["load"], mt["policy"])]
        c["offered"].append(m["offered_load"])
        c["achieved"].append(m["achieved_load"])
        c["bulk"].append(m.get("bulk_load", 0.0))
        c["link"].append(m["achieved_load"] + m.get("bulk_load", 0.0))
    if not cells:
        return ""

    def f(v):
        return "%.2f [%.2f, %.2f]" % (statistics.fmean(v), min(v), max(v))
    out = ["| load | policy | rounds | responses offered | responses achieved | bulk | link |",
           "|---|---|---:|---|---|---|---|"]
    for ld in sorted({k[0] for k in cells}, key=float):
        for p in order:
            c = cells.get((ld, p))
            if c:
                out.append("| %s | %s | %d | %s | %s | %s | %s |" % (
                    ld, p, len(c["offered"]), f(c["offered"]), f(c["achieved"]), f(c["bulk"]),
                    f(c["link"])))
    return ("The load each run carried, as fractions of the bottleneck (mean [smallest, largest] "
            "over rounds): the load axis is the responses' target; the bulk download takes what "
            "they leave.\n\n" + "\n".join(out) + "\n")


def load_table(loads):
    """The open-loop clients' own account of the load, per log."""
    if not loads:
        return ""
    out = ["| log | target | offered | achieved | served | bulk | arrivals | late "
           "| no idle worker | failed | unfinished |", "|---" * 11 + "|"]
    for name in sorted(loads):
        m = loads[name]
        out.append("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %d | %d | %d | %d |" % (
            name, m["target_load"], m["offered_load"], m["achieved_load"], m["served_load"],
            m.get("bulk_load", 0.0), m["arrivals"], m["late"], m["no_idle_worker"], m["failed"],
            m["unfinished"]))
    return ("\nLoad as the clients saw it (fractions of the bottleneck; late: started more "
            "than the client's --late after due).\n\n" + "\n".join(out) + "\n")


def plot(s, outdir):
    try:
        import matplotlib
    except ImportError:
        return []
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    made = []
    for ld in s["loads"]:
        bins = [b for b in s["bins"] if b != "all" and
                any(e["load"] == ld and e["bin"] == b for e in s["groups"])]
        fig, axes = plt.subplots(1, len(bins), figsize=(4 * len(bins), 3.6), squeeze=False)
        for ax, b in zip(axes[0], bins):
            for e in s["groups"]:
                if e["load"] == ld and e["bin"] == b:
                    ax.plot(e["slowdown_cdf"], [q / 100 for q in range(1, 101)],
                            label=e["policy"])
            ax.set_xscale("log")
            ax.set_xlabel("slowdown (FCT / ideal)")
            ax.set_title("%s, load %s" % (b, ld), fontsize=10)
            ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel("fraction of requests")
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        name = "fct_cdf%s.png" % ("" if len(s["loads"]) == 1 else "-" + str(ld))
        tabfile.save_png(fig, os.path.join(outdir, name), dpi=100)
        plt.close(fig)
        made.append(name)
    if any(e["persec"] for e in s["bulk"]):
        fig, ax = plt.subplots(figsize=(8, 3.6))
        for e in s["bulk"]:
            if not e["persec"]:
                continue
            k = sorted(e["persec"])[0]  # the first round
            ax.plot(range(len(e["persec"][k])), e["persec"][k],
                    label="%s, load %s" % (e["policy"], e["load"]))
        ax.set_xlabel("second of the round (first round)")
        ax.set_ylabel("bulk goodput (Mbit/s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        tabfile.save_png(fig, os.path.join(outdir, "bulk_goodput.png"), dpi=100)
        plt.close(fig)
        made.append("bulk_goodput.png")
    return made


def cmd_table(a):
    rows, prog, loads = build_table(a.run_dir)
    out = a.o or a.run_dir
    os.makedirs(out, exist_ok=True)
    # rtt where the run had several round trips; fct_client where the
    # router's capture timed responses: the client's clock beside it, so
    # that the report can be made on either clock (report --clock client).
    cols = TABLE_COLUMNS + (["rtt"] if any(r.get("rtt") for r in rows) else []) + \
        (["fct_client"] if any(r.get("fct_client") is not None for r in rows) else [])
    write_csv(os.path.join(out, "requests.csv.xz"), cols, rows)
    kept = bulk_samples(prog)
    write_csv(os.path.join(out, "bulk.csv.xz"), BULK_COLUMNS, kept)
    tabfile.write(os.path.join(out, "loads.json.xz"),
                  json.dumps(loads, indent=1, sort_keys=True))
    print("fct: %d requests, %d of %d bulk samples, %d open-loop logs -> %s" %
          (len(rows), len(kept), len(prog), len(loads), out))


def cmd_compact(a):
    """A table the router's capture timed, less the client's clock beside
    it (fct_client): a third of requests.csv.xz, kept only to set the two
    clocks side by side (docs/experiments.md, "The two clocks")."""
    path = tabfile.find(a.run_dir, "requests.csv")
    if not path or not path.endswith(".xz"):
        sys.exit("fct: no requests.csv.xz in %s" % a.run_dir)
    with tabfile.open_text(path) as f:
        cols = next(csv.reader(f))
    if "fct_client" not in cols:
        print("fct: %s keeps one clock already" % path)
        return
    rows = tabfile.read_csv(path)
    cols.remove("fct_client")
    tabfile.write_csv(path, cols, ({c: r[c] for c in cols} for r in rows))
    print("fct: %s: dropped the client's clock of %d requests" % (path, len(rows)))


def cmd_report(a):
    rows, prog, loads, params = [], [], {}, {}
    for i in a.input:
        r, p, lo, pa = load_input(i)
        rows += r
        prog += p
        # Several boots: their logs' names are the same ("fq_codel@0.6-1").
        boot = r[0]["run"] + "/" if len(a.input) > 1 and r else ""
        loads.update((boot + k, v) for k, v in lo.items())
        params = params or pa
    if not rows:
        sys.exit("fct: no requests in %s" % " ".join(a.input))
    if a.clock == "client":
        # Every response as the client's clock timed it (fct_client where
        # a capture timed it: the table keeps both).
        for r in rows:
            if r.get("fct_client") is not None:
                r["fct"], r["clock"] = r["fct_client"], "client"
    rate = a.rate or params.get("rate")
    if not rate:
        sys.exit("fct: no bottleneck rate: give --rate (no params.json with one)")
    scale = a.edge_scale
    if scale is None:
        # Sizes scaled by web_client.py --scale: bins of the unscaled sizes.
        scales = {m.get("scale", 1.0) for m in loads.values()}
        scale = scales.pop() if len(scales) == 1 else 1.0
    edges = [float(x) * scale for x in a.edges.split(",")]
    nominal = a.nominal_rtt or params.get("rtt")
    s = summarise(rows, prog, wire.parse_rate(rate), a.rtt, a.ref, edges, a.boot, a.seed,
                  order=list(params.get("policies", [])),
                  nominal_rtt=rtt_seconds(nominal) if nominal else None)
    s["edge_scale"] = scale
    text = tables(s) + load_table(loads)
    if s["excess"]:
        text += "\n" + excess_table(s)
    print(text, end="")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "headline.md"), "w") as f:
            f.write(headline(s))
        with open(os.path.join(a.out, "tables.md"), "w") as f:
            f.write(text)
        tg = targets(s) if s["ratios"] else ""
        if tg:
            with open(os.path.join(a.out, "targets.md"), "w") as f:
                f.write(tg)
        xs = excess_table(s)
        if xs:
            with open(os.path.join(a.out, "excess.md"), "w") as f:
                f.write(xs + "\n" + load_summary(loads, s["policies"]))
            with open(os.path.join(a.out, "defaults.md"), "w") as f:
                f.write(defaults_targets(s))
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump({"summary": s, "loads": loads, "params": params}, f, indent=1)
        made = plot(s, a.out)
        print("fct: wrote tables.md, summary.json%s to %s" %
              ("".join(", " + m for m in made) if made else " (no matplotlib: no plots)",
               a.out))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table", help="a run's logs -> requests.csv.xz, bulk.csv.xz, loads.json.xz")
    t.add_argument("run_dir")
    t.add_argument("-o", help="output directory (default RUN_DIR)")
    c = sub.add_parser("compact", help="drop the client's clock from a table the router's "
                       "capture timed (RUN_DIR/requests.csv.xz)")
    c.add_argument("run_dir")
    r = sub.add_parser("report", help="tables, summary.json and plots")
    r.add_argument("input", nargs="+")
    r.add_argument("--rate", help="bottleneck as tc writes it (default: params.json's)")
    r.add_argument("--rtt", type=float, default=0.0, help="idle round trip, s")
    r.add_argument("--nominal-rtt", help="the netem round trip --rtt measured (default: "
                   "params.json's rtt): rtt-labelled rows add the difference")
    r.add_argument("--ref", default="fq_codel")
    r.add_argument("--edges", default=",".join(str(e) for e in EDGES))
    r.add_argument("--edge-scale", type=float,
                   help="multiply the edges (default: the clients' --scale, if one)")
    r.add_argument("--boot", type=int, default=2000)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--clock", choices=("table", "client"), default="table",
                   help="client: every response timed by the client's clock, where the table "
                   "kept it beside the capture's (fct_client)")
    r.add_argument("--out")
    a = p.parse_args(argv)
    {"table": cmd_table, "compact": cmd_compact, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
