#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_prometheus.py [STATS_JSON...]: contrib/srff-prometheus writes
valid Prometheus text (the exposition format node-exporter's textfile
collector reads) with the values srffctl gave it, atomically.

It runs on canned srffctl -j output (tests/data/), on each STATS_JSON
(stats -j as test_parse.c printed it with srffctl's own printer), and on a
stand-in srffctl, answering or failing. Prints "ok - ..." or "not ok - ..."
per check, for test_parse.c to count."""
import json
import math
import os
import re
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTER = os.path.join(HERE, "..", "..", "contrib", "srff-prometheus")
DATA = os.path.join(HERE, "data")
PYTHON = sys.executable

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(?:\{(%s(?:,%s)*)?\})? (\S+)$" % (NAME, LABEL, LABEL))

results = []


def check(what, cond, detail=""):
    results.append(cond)
    print(("ok - %s" if cond else "not ok - %s") % what + ("" if cond else ": %s" % detail))


def parse_labels(text):
    return tuple(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', text or ""))


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return name


def validate(text):
    """Problems with text as Prometheus text format; and its samples."""
    problems, types, helps, samples, seen, order = [], {}, {}, {}, set(), []
    if not text.endswith("\n"):
        problems.append("no newline at the end")
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            if len(parts) < 4 or not re.fullmatch(NAME, parts[2]):
                problems.append("line %d: malformed %s" % (n, line))
                continue
            table = helps if parts[1] == "HELP" else types
            if parts[2] in table:
                problems.append("line %d: second %s for %s" % (n, parts[1], parts[2]))
            if parts[2] in order:
                problems.append("line %d: %s after its samples" % (n, parts[1]))
            if parts[1] == "TYPE" and parts[3] not in ("counter", "gauge", "histogram", "summary", "untyped"):
                problems.append("line %d: type %s" % (n, parts[3]))
            table[parts[2]] = parts[3]
            continue
        if line.startswith("#") or not line:
            problems.append("line %d: unexpected %r" % (n, line))
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append("line %d: not a sample: %r" % (n, line))
            continue
        name, labels, value = m.group(1), parse_labels(m.group(2)), m.group(3)
        try:
            v = float(value)
        except ValueError:
            problems.append("line %d: value %r" % (n, value))
            continue
        if value in ("inf", "Inf", "-inf") or (math.isinf(v) and value not in ("+Inf", "-Inf")):
            problems.append("line %d: infinity written %r" % (n, value))
        fam = family_of(name, types)
        if fam not in types or fam not in helps:
            problems.append("line %d: %s without HELP and TYPE before it" % (n, fam))
        if order and order[-1] != fam and fam in order:
            problems.append("line %d: %s's samples are not together" % (n, fam))
        if not order or order[-1] != fam:
            order.append(fam)
        if (name, labels) in seen:
            problems.append("line %d: duplicate series %s%s" % (n, name, labels))
        seen.add((name, labels))
        if not name.startswith("srff_"):
            problems.append("line %d: %s is not srff_*" % (n, name))
        if types.get(fam) == "counter" and not name.endswith("_total"):
            problems.append("line %d: counter %s without _total" % (n, name))
        if types.get(fam) in ("counter",) and v < 0:
            problems.append("line %d: negative counter" % n)
        samples[(name, labels)] = v
    # Histograms: cumulative buckets, +Inf equal to _count.
    for fam, t in types.items():
        if t != "histogram":
            continue
        groups = {}
        for (name, labels), v in samples.items():
            if name == fam + "_bucket":
                rest = tuple(kv for kv in labels if kv[0] != "le")
                le = dict(labels).get("le")
                if le is None:
                    problems.append("%s bucket without le" % fam)
                    continue
                groups.setdefault(rest, []).append((float(le), v))
        for rest, buckets in groups.items():
            buckets.sort()
            counts = [c for _, c in buckets]
            if counts != sorted(counts):
                problems.append("%s%s: buckets not cumulative: %s" % (fam, rest, buckets))
            if not buckets or not math.isinf(buckets[-1][0]):
                problems.append("%s%s: no +Inf bucket" % (fam, rest))
            elif samples.get((fam + "_count", rest)) != buckets[-1][1]:
                problems.append("%s%s: +Inf bucket is not _count" % (fam, rest))
            if (fam + "_sum", rest) not in samples:
                problems.append("%s%s: no _sum" % (fam, rest))
    return problems, samples, types


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([PYTHON, EXPORTER] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=e)


def stand_in(dir, exit_code=0):
    """A srffctl that prints the canned JSON, and logs its arguments."""
    path = os.path.join(dir, "srffctl")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho \"$*\" >> %s/args\n" % dir)
        if exit_code:
            f.write("echo 'srffctl: srff: kernel module not loaded' >&2\nexit %d\n" % exit_code)
        else:
            f.write('for a; do last=$a; done\ncat "%s/$last.json"\n' % DATA)
    os.chmod(path, 0o755)
    return path


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "srff.prom")
        # Canned stats and sizes
        p = run(["--stats-json", os.path.join(DATA, "stats.json"),
                 "--sizes-json", os.path.join(DATA, "sizes.json"), "-o", out])
        check("canned JSON: exit 0", p.returncode == 0, p.stderr)
        text = open(out).read() if os.path.exists(out) else ""
        problems, s, types = validate(text)
        check("canned JSON: valid Prometheus text", not problems, problems)
        check("  written 0644", stat.S_IMODE(os.stat(out).st_mode) == 0o644 if os.path.exists(out) else False)
        check("  no temporary file left", sorted(os.listdir(tmp)) == ["srff.prom"], os.listdir(tmp))
        check("  srff_up 1", s.get(("srff_up", ())) == 1)
        band0 = (("band", "0"), ("priority", "6"))
        band2 = (("band", "2"), ("priority", "2"))
        check("  band 0: labels band and priority, packets and bytes",
              s.get(("srff_band_packets_total", band0)) == 100 and
              s.get(("srff_band_bytes_total", band0)) == 100000, s)
        check("  band ranges from the thresholds: 0..16384, 131072..+Inf",
              s.get(("srff_band_from_bytes", band0)) == 0 and
              s.get(("srff_band_to_bytes", band0)) == 16384 and
              s.get(("srff_band_from_bytes", band2)) == 131072 and
              math.isinf(s.get(("srff_band_to_bytes", band2), 0)))
        check("  flows removed by reason",
              [s.get(("srff_flows_removed_total", (("reason", r),))) for r in ("idle", "fin", "flush", "evict")]
              == [900, 80, 2, 1])
        check("  gc duration in seconds", s.get(("srff_gc_last_duration_seconds", ())) == 0.00125)
        check("  loopback and DSCP counters",
              [s.get((n, ())) for n in ("srff_loopback_packets_total", "srff_dscp_packets_total",
                                        "srff_dscp_failed_total")] == [15, 4400, 1], s)
        check("  every stats counter is there", all(
            (name, ()) in s for name in ("srff_flows", "srff_flows_max", "srff_host_flows",
                                         "srff_host_flows_max", "srff_flows_created_total",
                                         "srff_table_full_total", "srff_alloc_failed_total",
                                         "srff_untracked_packets_total", "srff_untracked_bytes_total",
                                         "srff_ignored_packets_total", "srff_top_port_packets_total",
                                         "srff_nodata_packets_total", "srff_encap_packets_total",
                                         "srff_gc_runs_total", "srff_gc_early_runs_total",
                                         "srff_gc_last_longest_chain", "srff_auto_flows",
                                         "srff_auto_changes_total")))
        check("  sizes: a histogram, le the last byte of each bucket",
              types.get("srff_flow_size_bytes") == "histogram" and
              s.get(("srff_flow_size_bytes_bucket", (("le", "511"),))) == 2 and
              s.get(("srff_flow_size_bytes_bucket", (("le", "1023"),))) == 6 and
              s.get(("srff_flow_size_bytes_bucket", (("le", "131071"),))) == 9 and
              s.get(("srff_flow_size_bytes_bucket", (("le", "+Inf"),))) == 10 and
              s.get(("srff_flow_size_bytes_sum", ())) == 5251072 and
              s.get(("srff_flow_size_bytes_count", ())) == 10, s)
        check("  sizes: how flows ended",
              [s.get(("srff_flow_size_ends_total", (("end", e),))) for e in ("fin", "idle", "response")]
              == [6, 3, 1])

        # Replacing a file, with -n's label, without sizes
        p = run(["--stats-json", os.path.join(DATA, "stats.json"), "--no-sizes", "-n", 'we"b', "-o", out])
        text = open(out).read()
        problems, s, _ = validate(text)
        check("-n: replaces the file, valid", p.returncode == 0 and not problems, problems or p.stderr)
        check("  every sample labelled netns, escaped",
              all(('netns', 'we\\"b') in labels for (_, labels) in s) and len(s) > 20, list(s)[:3])
        check("  --no-sizes: no histogram", "srff_flow_size" not in text)

        # stats -j as srffctl's own printer wrote it
        for path in sys.argv[1:]:
            stats = json.load(open(path))
            p = run(["--stats-json", path, "--no-sizes", "-o", "-"])
            problems, s, _ = validate(p.stdout)
            check("srffctl's stats -j (%s): valid" % os.path.basename(path),
                  p.returncode == 0 and not problems, problems or p.stderr)
            for b in stats["bands"]:
                labels = (("band", str(b["band"])), ("priority", str(b["priority"])))
                check("  band %d, priority %s: %d bytes" % (b["band"], b["priority"], b["bytes"]),
                      s.get(("srff_band_bytes_total", labels)) == b["bytes"], labels)

        # A stand-in srffctl: answering, with -n passed on; failing
        d = os.path.join(tmp, "ok")
        os.mkdir(d)
        p = run(["-n", "blue", "-o", out], {"SRFFCTL": stand_in(d)})
        problems, s, _ = validate(open(out).read())
        args = open(os.path.join(d, "args")).read().split("\n")
        check("srffctl answering: valid, srff_up 1", p.returncode == 0 and not problems and
              s.get(("srff_up", (("netns", "blue"),))) == 1, problems or p.stderr)
        check("  it ran srffctl -n blue -j stats and sizes",
              args[:2] == ["-n blue -j stats", "-n blue -j sizes"], args)
        d = os.path.join(tmp, "fail")
        os.mkdir(d)
        p = run(["-o", out], {"SRFFCTL": stand_in(d, 4)})
        text = open(out).read()
        problems, s, _ = validate(text)
        check("srffctl failing: exit 1, the file says srff_up 0 and nothing else",
              p.returncode == 1 and not problems and list(s) == [("srff_up", ())] and
              s[("srff_up", ())] == 0, (p.returncode, text))
        check("  and why, on stderr", "not loaded" in p.stderr, p.stderr)
        check("  no temporary file left", sorted(os.listdir(tmp)) == ["fail", "ok", "srff.prom"],
              os.listdir(tmp))

        # The validator itself catches what it must
        bad = ["srff_x 1\n",
               "# HELP srff_x x\n# TYPE srff_x counter\nsrff_x 1\n",
               "# HELP srff_x_total x\n# TYPE srff_x_total counter\nsrff_x_total 1\nsrff_x_total 2\n",
               "# HELP srff_h h\n# TYPE srff_h histogram\nsrff_h_bucket{le=\"1\"} 2\n"
               "srff_h_bucket{le=\"+Inf\"} 1\nsrff_h_sum 1\nsrff_h_count 1\n",
               "# HELP srff_g g\n# TYPE srff_g gauge\nsrff_g{a=\"1\"} inf\n"]
        check("the checker refuses malformed text", all(validate(b)[0] for b in bad),
              [validate(b)[0] for b in bad])
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
