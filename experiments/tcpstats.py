#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""TCP's retransmissions per run of the open-loop experiment.

  tcpstats.py RUN_DIR [--out DIR]

RUN_DIR/srff.json.gz (what openloop.sh commits; srff/RUN.json while the raw
logs are kept) holds, per run POLICY@LOAD-ROUND, the server namespace's
TcpExt TCPTimeouts (retransmission timeouts), Tcp RetransSegs and TcpExt
TCPLossProbes before and after the run's arrivals and drain. Prints, per
policy and load, how much each grew in a run: the mean over rounds and the
smallest and largest. --out writes DIR/tcp.md. Runs recorded before the
counters were (no "tcp_before") are left out; with none left, says so and
writes no file.

A timeout is the guard rail of the defaults issue: a bulk download that
sits behind responses long enough times out and restarts from one segment.
Unless it was spurious: a segment that only waited in a queue longer than
the RTO is acknowledged after the timeout, and the sender undoes it
(cwnd restored; TcpExt TCPLossUndo, and TCPSpuriousRTOs where F-RTO found
it). Where the runs recorded those, the table says how many were undone,
and, where they recorded TCPSpuriousRtxHostQueues, how many retransmissions
TCP did not send because the original was still in this host's qdisc.
The counters are the whole namespace's (every response and the bulk
downloads), not one socket's: where the run also recorded "rto" (the
guest's kprobes on tcp_enter_loss and tcp_syn_ack_timeout, one event per
timeout, see openloop-guest.sh), the table says whose they were: the bulk
downloads', a response's by its size, or a SYN-ACK's. Where the runs
recorded the guest's CPU time per CPU ("cpu_before", "cpu_after": /proc/stat),
a last table gives the share of each CPU's time spent in the kernel (system +
softirq: the packet path, qdiscs and srff's hook, and the server's and
client's system calls) per run: the busiest CPU's and the mean over CPUs.

  tcpstats.py --attribute TRACE REQUESTS.jsonl

(in the guest, after each run) reads those events from TRACE (tracefs
text) and prints, as JSON, whose each was: the client's port names the
connection, REQUESTS.jsonl's rows the response on it (by time, for a
kept-alive connection), REQUESTS.load.json's bulk_conns the downloads
(their ports and starts; an older file's bulk_ports, ports alone).
"""
import argparse
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fct import bin_label, size_bin  # noqa: E402

COUNTERS = ("TCPTimeouts", "RetransSegs", "TCPLossProbes")
# Recorded by later runs: timeouts the sender undid (found spurious: the
# original segment had only waited), and those of them F-RTO found.
UNDO = ("TCPLossUndo", "TCPSpuriousRTOs")
# Later still: retransmissions (of a timeout or a loss probe) not sent
# because the original was still in this host's qdisc.
HOSTQ = ("TCPSpuriousRtxHostQueues",)
RUN = re.compile(r"^(?P<policy>.+)@(?P<load>[0-9.]+)-(?P<round>\d+)$")
# The defaults issue's size bins, for whose RTOs they were.
EDGES = [1e4, 1e5, 1e6]
BINS = bin_label(EDGES)
WHOSE = ["bulk"] + BINS + ["SYN-ACK", "unknown"]
# How many connections the timeouts were on (a connection whose segment
# waits past one RTO backs off and may time out again and again).
CONNS = "connections"
EVENT = re.compile(r"\s(?P<t>\d+\.\d+): (?P<ev>rto|synack_rto): .*\blport=(?P<lport>\d+) "
                   r"rport=(?P<rport>\d+)")


def parse_events(text):
    """[(t, "rto" | "synack_rto", client port)] of a tracefs text: rport is
    skc_dport, in network order, read as a host u16."""
    out = []
    for line in text.splitlines():
        m = EVENT.search(line)
        if m:
            p = int(m["rport"])
            out.append((float(m["t"]), m["ev"], ((p & 0xff) << 8) | (p >> 8)))
    return out


def attribute(events, rows, bulk_ports, bulk_conns=()):
    """{whose: count} (WHOSE's keys that occurred, and CONNS: on how many
    distinct connections, a SYN-ACK's counted apart) for events: a SYN-ACK's
    timeout is the SYN-ACK's; a connection's is that of the latest
    connection on its port to have started by then (a port is reused once
    its connection is gone; a kept-alive connection carries several
    responses): a bulk download's (bulk_conns: [port, start]; rows of kind
    bulk), or a response's, by its size; a port in bulk_ports alone (an
    older file, no starts) is the bulk's whenever no response on it had
    started; else unknown (a response that did not finish)."""
    uses = {}  # port: [(start, whose)]
    for r in rows:
        if "port" in r:
            uses.setdefault(r["port"], []).append(
                (r["start"], "bulk" if r.get("kind") == "bulk"
                 else BINS[size_bin(r["bytes"], EDGES)]))
    for port, start in bulk_conns:
        uses.setdefault(port, []).append((start, "bulk"))
    for port in set(bulk_ports) - {p for p, _ in bulk_conns}:
        uses.setdefault(port, []).append((float("-inf"), "bulk"))
    out, conns = {}, set()
    for t, ev, port in events:
        if ev == "synack_rto":
            who, conn = "SYN-ACK", (ev, port)
        else:
            cand = [u for u in uses.get(port, []) if u[0] <= t]
            use = max(cand) if cand else (None, "unknown")
            who, conn = use[1], (ev, port, use[0])
        conns.add(conn)
        out[who] = out.get(who, 0) + 1
    res = {k: out[k] for k in WHOSE if k in out}
    res[CONNS] = len(conns)
    return res


def attribute_files(trace, requests):
    with open(trace) as f:
        events = parse_events(f.read())
    rows = []
    with open(requests) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    base = requests[:-len(".jsonl")] if requests.endswith(".jsonl") else requests
    s = {}
    if os.path.exists(base + ".load.json"):
        with open(base + ".load.json") as f:
            s = json.load(f)
    return attribute(events, rows, s.get("bulk_ports", []), s.get("bulk_conns", []))


def load_runs(run_dir):
    """{run name: {"tcp_before": {...}, "tcp_after": {...}, ...}}."""
    path = os.path.join(run_dir, "srff.json.gz")
    if os.path.exists(path):
        with gzip.open(path) as f:
            return json.load(f)
    d = os.path.join(run_dir, "srff")
    runs = {}
    if os.path.isdir(d):
        for n in sorted(os.listdir(d)):
            if n.endswith(".json"):
                with open(os.path.join(d, n)) as f:
                    runs[n[:-5]] = json.load(f)
    return runs


def policy_rank(order, seen):
    """{policy: its place}: order's policies first, then the others as
    first seen."""
    names = list(order or [])
    names += [p for p in seen if p not in names]
    return {p: i for i, p in enumerate(names)}


def summarise(runs, order=None):
    """[(policy, load, counter, n, mean, lo, hi)] in policy order (order, or
    first seen), then load."""
    cells = {}
    seen = []
    names = COUNTERS + UNDO + HOSTQ
    for name, r in runs.items():
        m = RUN.match(name)
        if not m or "tcp_before" not in r or "tcp_after" not in r:
            continue
        key = (m["policy"], float(m["load"]))
        if m["policy"] not in seen:
            seen.append(m["policy"])
        for c in names:
            if c in r["tcp_before"] and c in r["tcp_after"]:
                grew = r["tcp_after"][c] - r["tcp_before"][c]
                cells.setdefault(key + (c,), []).append(grew)
    rank = policy_rank(order, seen)
    out = []
    for (p, ld, c), v in sorted(cells.items(),
                                key=lambda kv: (rank[kv[0][0]], kv[0][1],
                                                names.index(kv[0][2]))):
        out.append((p, ld, c, len(v), sum(v) / len(v), min(v), max(v)))
    return out


def summarise_whose(runs, order=None):
    """[(policy, load, runs, {whose: mean per run})] over the runs that
    recorded "rto", in summarise's order."""
    cells, seen = {}, []
    for name, r in runs.items():
        m = RUN.match(name)
        if not m or "rto" not in r:
            continue
        if m["policy"] not in seen:
            seen.append(m["policy"])
        cells.setdefault((m["policy"], float(m["load"])), []).append(r["rto"])
    rank = policy_rank(order, seen)
    out = []
    for (p, ld), v in sorted(cells.items(), key=lambda kv: (rank[kv[0][0]], kv[0][1])):
        keys = WHOSE + ([CONNS] if all(CONNS in x for x in v) else [])
        out.append((p, ld, len(v), {w: sum(x.get(w, 0) for x in v) / len(v) for w in keys}))
    return out


def summarise_cpu(runs, order=None):
    """[(policy, load, runs, [busiest CPU's kernel share per run],
    [mean CPU's per run])] over the runs that recorded "cpu_before"."""
    cells, seen = {}, []
    for name, r in runs.items():
        m = RUN.match(name)
        if not m or "cpu_before" not in r or "cpu_after" not in r:
            continue
        if m["policy"] not in seen:
            seen.append(m["policy"])
        shares = []
        for cpu, after in sorted(r["cpu_after"].items()):
            d = [a - b for a, b in zip(after, r["cpu_before"].get(cpu, after))]
            total = sum(d)
            if total > 0:
                shares.append((d[2] + d[6]) / total)	# system + softirq
        if shares:
            c = cells.setdefault((m["policy"], float(m["load"])), ([], []))
            c[0].append(max(shares))
            c[1].append(sum(shares) / len(shares))
    rank = policy_rank(order, seen)
    return [(p, ld, len(v[0]), v[0], v[1])
            for (p, ld), v in sorted(cells.items(), key=lambda kv: (rank[kv[0][0]], kv[0][1]))]


def table_cpu(rows):
    if not rows:
        return ""
    lines = ["", "The guest's CPU time in the kernel (system + softirq) per run, as a share of "
             "each CPU's time: mean [smallest, largest] over rounds.", "",
             "| policy | load | runs | busiest CPU | mean over CPUs |", "|---|---|---:|---|---|"]
    for p, ld, n, busiest, mean in rows:
        cell = ["%.2f [%.2f, %.2f]" % (sum(v) / len(v), min(v), max(v)) for v in (busiest, mean)]
        lines.append("| %s | %g | %d | %s |" % (p, ld, n, " | ".join(cell)))
    return "\n".join(lines) + "\n"


def table_whose(rows):
    if not rows:
        return ""
    cols = WHOSE + ([CONNS] if all(CONNS in m for *_, m in rows) else [])
    lines = ["", "Whose the timeouts were (kprobes on tcp_enter_loss and tcp_syn_ack_timeout, "
             "server port 80): mean a run.", "",
             "| policy | load | runs | " + " | ".join(cols) + " |",
             "|---|---|---:|" + "---:|" * len(cols)]
    for p, ld, n, m in rows:
        lines.append("| %s | %g | %d | %s |" % (p, ld, n, " | ".join("%.1f" % m[w] for w in cols)))
    return "\n".join(lines) + "\n"


def table(rows):
    if not rows:
        return "No run of this folder recorded TCP's counters.\n"
    by = {}
    for p, ld, c, n, mean, lo, hi in rows:
        by.setdefault((p, ld), {})[c] = (n, mean, lo, hi)
    # The undo columns only where every cell has them (runs recorded
    # before them keep their table as it was).
    def everywhere(group):
        return all(all(c in cs and cs[c][0] == cs["TCPTimeouts"][0] for c in group)
                   for cs in by.values())
    undo, hostq = everywhere(UNDO), everywhere(HOSTQ)
    cols = COUNTERS + (UNDO if undo else ()) + (HOSTQ if hostq else ())
    head = "| policy | load | runs | RTOs (TCPTimeouts) | segments retransmitted | loss probes |"
    if undo:
        head += " RTOs undone (TCPLossUndo) | of them by F-RTO (TCPSpuriousRTOs) |"
    if hostq:
        head += " retransmissions not sent, original still queued here (TCPSpuriousRtxHostQueues) |"
    lines = ["Growth per run of the server namespace's TCP counters: mean [smallest, largest] "
             "over rounds.", "", head, "|---|---|---:|" + "---|" * len(cols)]
    for (p, ld), cs in by.items():
        n = cs["TCPTimeouts"][0]
        cell = ["%.1f [%d, %d]" % cs[c][1:] for c in cols]
        lines.append("| %s | %g | %d | %s |" % (p, ld, n, " | ".join(cell)))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?")
    ap.add_argument("--out")
    ap.add_argument("--attribute", nargs=2, metavar=("TRACE", "REQUESTS"))
    a = ap.parse_args(argv)
    if a.attribute:
        json.dump(attribute_files(*a.attribute), sys.stdout)
        return
    if not a.run_dir:
        ap.error("RUN_DIR is needed")
    order = None
    meta = os.path.join(a.run_dir, "meta.json")
    if os.path.exists(meta):
        with open(meta) as f:
            order = json.load(f).get("params", {}).get("policies")
    runs = load_runs(a.run_dir)
    rows = summarise(runs, order)
    md = table(rows) + (table_whose(summarise_whose(runs, order)) +
                        table_cpu(summarise_cpu(runs, order)) if rows else "")
    sys.stdout.write(md)
    if a.out and rows:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "tcp.md"), "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
