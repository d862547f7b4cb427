#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""PIAS's thresholds for a workload, as the open-loop experiment sets them.

  pias.py DIST SCALE LOAD BANDS

Prints BANDS - 1 thresholds in bytes, comma-separated (srffctl set
thresholds takes them so): the optimum of PIAS's M/G/1 multi-level model
(Bai et al., NSDI 2015) for the flow sizes of DIST scaled by SCALE at LOAD,
over the bounds of srff's size buckets, the first at least 16 KiB as for
every rule of docs/thresholds.md (threshold_study.py's `pias`).
The sizes are a fixed sample (SAMPLES of them, seed SEED), so a boot gets
the same thresholds for the same workload. What a PIAS deployment would set
from the workload known in advance, matched to srff's bands: the baseline
issue 33 asks for beside the thresholds srff learns.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sizes  # noqa: E402
import threshold_study as ts  # noqa: E402

SAMPLES, SEED = 20000, 1


def pias_thresholds(dist, scale, load, bands):
    hist = ts.histogram(sizes.draw(sizes.load(dist, scale), SAMPLES, SEED))
    return ts.thresholds("pias", hist, load, bands, ts.DEFAULT_FLOOR, 1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        dist, scale, load, bands = argv[0], float(argv[1]), float(argv[2]), int(argv[3])
        if len(argv) != 4 or not 0 < load < 1 or not 2 <= bands <= 16 or scale <= 0:
            raise ValueError
    except (ValueError, IndexError):
        print("usage: pias.py DIST SCALE LOAD BANDS (0 < LOAD < 1, 2 <= BANDS <= 16)",
              file=sys.stderr)
        return 2
    try:
        t = pias_thresholds(dist, scale, load, bands)
    except ValueError as e:
        print("pias: %s" % e, file=sys.stderr)
        return 2
    print(",".join(str(x) for x in t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
