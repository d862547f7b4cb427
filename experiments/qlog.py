#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where the queue was: per-band backlog and sojourn time of a run's bottleneck.

  qlog.py table RUN_DIR [-o DIR]
        RUN_DIR/qlog/POLICY@LOAD-ROUND.jsonl (the guest's samples of
        `tc -s -j qdisc show` and `tc -s class show` of the bottleneck
        device, every 250 ms: {"t": s, "q": [...], "ct": "class text"};
        "c": [...] where tc prints classes in JSON) ->
        DIR/queues.csv.xz, one line per sample and queue (DIR is RUN_DIR
        unless given). That file is what a results folder commits
        (experiments/tabfile.py; an older run's queues.csv.gz is read too).
  qlog.py report INPUT... [--out DIR]
        INPUT is a RUN_DIR (its queues.csv.xz, else its qlog/) or a
        queues.csv.xz. Prints a markdown table; --out writes DIR/queues.md.

A queue is a qdisc ("q KIND HANDLE") or a class ("c KIND CLASSID"): the
bands of prio and ETS are classes, fq_codel leaves are qdiscs. Per policy,
load and queue, over the samples of every round: the mean and the largest
backlog (bytes), the bytes it sent and dropped per second, and the mean
sojourn time by Little's law, W = L / lambda: mean backlog over the rate
at which bytes left it. Little's law holds for any queue and discipline in
steady state, per band too; over a 20 s run with a 250 ms sampling period
it is an estimate (a backlog that comes and goes between samples is
missed), good to tell a standing queue of 100 ms from none. A queue that
sent nothing has no sojourn. The root of a shaped setup (tbf 1:) and a
classful qdisc count their children's backlog: they show the whole queue.
"""
import argparse
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tabfile  # noqa: E402

COLUMNS = ["run", "round", "policy", "load", "t", "queue", "parent", "backlog", "qlen",
           "bytes", "drops"]
LOG_NAME = re.compile(r"^(?P<policy>.+?)(?:@(?P<load>[0-9.]+))?-(?P<round>\d+)\.jsonl$")


# Classes of these kinds are flows, not bands (fq_codel and cake list one
# class per active flow): left out.
FLOW_CLASSES = ("fq_codel", "cake", "fq", "sfq")


_CLASS = re.compile(r"^class (?P<kind>\S+) (?P<handle>\S+) (?:root|parent (?P<parent>\S+))")
_SENT = re.compile(r"Sent (?P<bytes>\d+) bytes (?P<pkts>\d+) pkt \(dropped (?P<drops>\d+)")
_BACKLOG = re.compile(r"backlog (?P<n>[0-9.]+)(?P<unit>[KMG]?)b (?P<qlen>\d+)p")
_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_classes(text):
    """`tc -s class show`'s text (tc 6.1 prints no JSON for classes) as
    the entries `tc -j` would give: class, handle, parent, bytes, drops,
    backlog (bytes: tc rounds it to K or M only near a multiple) and qlen."""
    out, cur = [], None
    for line in text.splitlines():
        m = _CLASS.match(line)
        if m:
            cur = {"class": m["kind"], "handle": m["handle"], "parent": m["parent"] or "",
                   "root": m["parent"] is None, "bytes": 0, "drops": 0, "backlog": 0, "qlen": 0}
            out.append(cur)
            continue
        if cur is None:
            continue
        m = _SENT.search(line)
        if m:
            cur["bytes"], cur["drops"] = int(m["bytes"]), int(m["drops"])
        m = _BACKLOG.search(line)
        if m:
            cur["backlog"] = int(float(m["n"]) * _UNIT[m["unit"]])
            cur["qlen"] = int(m["qlen"])
    return out


def _entries(sample):
    """(queue id, parent, stats) of each qdisc and band class in a sample."""
    for e in sample.get("q") or []:
        yield ("q %s %s" % (e.get("kind", "?"), e.get("handle", "?")),
               "root" if e.get("root") else e.get("parent", ""), e)
    classes = list(sample.get("c") or [])
    if isinstance(sample.get("ct"), str):
        classes += parse_classes(sample["ct"])
    for e in classes:
        if e.get("class") in FLOW_CLASSES:
            continue
        yield ("c %s %s" % (e.get("class", "?"), e.get("handle", "?")),
               "root" if e.get("root") else e.get("parent", ""), e)


def parse_log(path, run):
    """Rows of queues.csv.xz from one qlog file (bad lines are skipped)."""
    m = LOG_NAME.match(os.path.basename(path))
    if not m:
        return []
    rows, t0 = [], None
    with open(path) as f:
        for line in f:
            try:
                s = json.loads(line)
            except ValueError:
                continue  # a sample cut short when the sampler was stopped
            if t0 is None:
                t0 = s["t"]
            for qid, parent, e in _entries(s):
                rows.append({"run": run, "round": int(m["round"]), "policy": m["policy"],
                             "load": m["load"] or "closed", "t": "%.3f" % (s["t"] - t0),
                             "queue": qid, "parent": parent,
                             "backlog": e.get("backlog", 0), "qlen": e.get("qlen", 0),
                             "bytes": e.get("bytes", 0), "drops": e.get("drops", 0)})
    return rows


def build_table(run_dir, run=None):
    run = run or os.path.basename(os.path.normpath(run_dir))
    d = os.path.join(run_dir, "qlog")
    rows = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        rows += parse_log(os.path.join(d, name), run)
    return rows


def write_csv(path, rows):
    """xz'd (tabfile.write): the same rows give the same bytes, so a
    regenerated file is not a change in git."""
    tabfile.write_csv(path, COLUMNS, rows)


def load_input(path):
    if path.endswith((".csv.xz", ".csv.gz")):
        return tabfile.read_csv(path)
    p = tabfile.find(path, "queues.csv")
    return tabfile.read_csv(p) if p else build_table(path)


def _step(x, y):
    """What a counter gained between two samples. Counters only grow while
    a qdisc lives; one that went back was replaced and counts from 0."""
    x, y = int(x), int(y)
    return y - x if y >= x else y


def summarise(rows):
    """{(policy, load, queue): stats} over all rounds' samples."""
    series = collections.defaultdict(list)
    for r in rows:
        series[(r["run"], r["round"], r["policy"], r["load"], r["queue"])].append(r)
    acc = collections.defaultdict(lambda: {"samples": 0, "backlog_sum": 0.0, "backlog_max": 0,
                                           "bytes": 0, "drops": 0, "seconds": 0.0,
                                           "parent": ""})
    for (run, rnd, pol, load, q), s in series.items():
        s.sort(key=lambda r: float(r["t"]))
        a = acc[(pol, load, q)]
        a["parent"] = s[0]["parent"]
        b = [int(r["backlog"]) for r in s]
        a["samples"] += len(b)
        a["backlog_sum"] += sum(b)
        a["backlog_max"] = max(a["backlog_max"], max(b))
        if len(s) > 1:
            sent = sum(_step(x["bytes"], y["bytes"]) for x, y in zip(s, s[1:]))
            drops = sum(_step(x["drops"], y["drops"]) for x, y in zip(s, s[1:]))
            a["bytes"] += sent
            a["drops"] += drops
            a["seconds"] += float(s[-1]["t"]) - float(s[0]["t"])
    out = {}
    for k, a in acc.items():
        mean = a["backlog_sum"] / a["samples"] if a["samples"] else 0.0
        rate = a["bytes"] / a["seconds"] if a["seconds"] > 0 else 0.0
        out[k] = {"parent": a["parent"], "samples": a["samples"], "mean_backlog": mean,
                  "max_backlog": a["backlog_max"], "bytes_per_s": rate,
                  "drops_per_s": a["drops"] / a["seconds"] if a["seconds"] > 0 else 0.0,
                  "sojourn_ms": 1000.0 * mean / rate if rate > 0 else None}
    return out


def _load_key(v):
    try:
        return (0, float(v))
    except ValueError:
        return (1, v)


def table(summary):
    lines = ["| policy | load | queue | parent | mean backlog (KB) | max (KB) | sent (KB/s) "
             "| drops/s | sojourn (ms) |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for (pol, load, q) in sorted(summary, key=lambda k: (k[0], _load_key(k[1]), k[2])):
        s = summary[(pol, load, q)]
        if s["bytes_per_s"] == 0 and s["max_backlog"] == 0:
            continue  # an idle band says nothing
        lines.append("| %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %s |" % (
            pol, load, q, s["parent"], s["mean_backlog"] / 1000, s["max_backlog"] / 1000,
            s["bytes_per_s"] / 1000, s["drops_per_s"],
            "-" if s["sojourn_ms"] is None else "%.1f" % s["sojourn_ms"]))
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table")
    t.add_argument("run_dir")
    t.add_argument("-o", "--outdir")
    r = sub.add_parser("report")
    r.add_argument("inputs", nargs="+")
    r.add_argument("--out")
    a = p.parse_args(argv)
    if a.cmd == "table":
        rows = build_table(a.run_dir)
        if not rows:
            sys.exit("qlog: no samples under %s/qlog" % a.run_dir)
        write_csv(os.path.join(a.outdir or a.run_dir, "queues.csv.xz"), rows)
        return
    rows = []
    for i in a.inputs:
        rows += load_input(i)
    md = table(summarise(rows))
    sys.stdout.write(md)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "queues.md"), "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
