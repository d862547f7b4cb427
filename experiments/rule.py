#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A threshold rule's thresholds for a workload, as the open-loop experiment
fixes them.

  rule.py RULE DIST SCALE LOAD BANDS

Prints BANDS - 1 thresholds in bytes, comma-separated (srffctl set
thresholds takes them so), for the flow sizes of DIST scaled by SCALE, over
the bounds of srff's size buckets, the first at least 16 KiB as for every
rule of docs/thresholds.md. RULE (threshold_study.py's rules):

  pias  the optimum of PIAS's M/G/1 multi-level model (Bai et al., NSDI
        2015) at LOAD: what a PIAS deployment would set from the workload
        known in advance, matched to srff's bands (the baseline issue 33
        asks for beside the thresholds srff learns)
  span  geo's first threshold, then thresholds evenly in log(size) over
        the flows above it, two x8 beyond: a rule srff could learn (flow
        counts only, no load; LOAD is checked and unused), tried fixed at
        what it would converge to before it is written in C
  geo   srff's own rule (srff_nf/auto.h), what it converges to

The sizes are a fixed sample (SAMPLES of them, seed SEED), so a boot gets
the same thresholds for the same workload.

  rule.py --hold DIST SCALE [HOURS]

How often geo and span would install new thresholds for 8 bands under a
steady mix: DIST's sizes at SCALE arriving as a Poisson process at 16
Mbit/s for HOURS (2), fed to auto.c's learning as threshold_study.py copies
it (kernel_learn: the decayed histogram, a step every 2.5 s, installed
only on a move of more than a quarter). Prints each rule's installs and
the thresholds it ended on.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sizes  # noqa: E402
import threshold_study as ts  # noqa: E402

SAMPLES, SEED = 20000, 1
RULES = ("pias", "span", "geo")


def rule_thresholds(rule, dist, scale, load, bands):
    if rule not in RULES:
        raise ValueError("no rule %r (%s)" % (rule, ", ".join(RULES)))
    hist = ts.histogram(sizes.draw(sizes.load(dist, scale), SAMPLES, SEED))
    return ts.thresholds(rule, hist, load, bands, ts.DEFAULT_FLOOR, 1)


HOLD_RATE, HOLD_SEED = 2e6, 5          # bytes/s of responses, arrivals' seed


def hold(dist, scale, hours):
    """{rule: (installs, last thresholds)} for 8 bands under a steady mix."""
    d = sizes.load(dist, scale)
    mean = sum(sizes.draw(d, SAMPLES, SEED)) / SAMPLES
    rate = HOLD_RATE / mean
    rng = random.Random(HOLD_SEED)
    t, stream = 0.0, []
    for x in sizes.draw(d, int(rate * hours * 3600), HOLD_SEED):
        t += rng.expovariate(rate)
        stream.append((t, x))
    out = {}
    for name in ("geo", "span"):
        log = ts.kernel_learn(name, 8, stream, t)
        out[name] = (sum(1 for i in range(1, len(log)) if log[i][1] != log[i - 1][1]),
                     log[-1][1])
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--hold"]:
        try:
            dist, scale = argv[1], float(argv[2])
            hours = float(argv[3]) if len(argv) > 3 else 2.0
            if len(argv) > 4 or scale <= 0 or not 0 < hours <= 24:
                raise ValueError
            res = hold(dist, scale, hours)
        except (ValueError, IndexError) as e:
            print("usage: rule.py --hold DIST SCALE [HOURS] (0 < HOURS <= 24)%s"
                  % (": %s" % e if str(e) else ""), file=sys.stderr)
            return 2
        for name, (n, th) in res.items():
            print("%s: %d installs in %g h, last %s" % (name, n, hours, ",".join(map(str, th))))
        return 0
    try:
        rule, dist = argv[0], argv[1]
        scale, load, bands = float(argv[2]), float(argv[3]), int(argv[4])
        if len(argv) != 5 or not 0 < load < 1 or not 2 <= bands <= 16 or scale <= 0:
            raise ValueError
    except (ValueError, IndexError):
        print("usage: rule.py %s DIST SCALE LOAD BANDS (0 < LOAD < 1, 2 <= BANDS <= 16)"
              % "|".join(RULES), file=sys.stderr)
        return 2
    try:
        t = rule_thresholds(rule, dist, scale, load, bands)
    except ValueError as e:
        print("rule: %s" % e, file=sys.stderr)
        return 2
    print(",".join(str(x) for x in t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
