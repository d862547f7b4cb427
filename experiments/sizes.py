#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Flow-size distributions from the literature, and a seeded sampler.

  sizes.py show DIST [--scale S] [--header B]
  sizes.py sample DIST N --seed K [--scale S]
  sizes.py rate DIST --load F --rate RATE [--scale S] [--header B]

DIST is websearch (DCTCP), datamining (VL2), fb_hadoop (Facebook's
Hadoop cluster, held out from the threshold study), pareto (the busy-web
experiment's mix), or the path of a .cdf file in the format of
experiments/dists/: "unit BYTES", "interpolation integral|continuous",
then "size cdf" lines with sizes in units and the CDF ascending to 1; a
size given twice is a point mass. The files say where their numbers come
from.

A piecewise-linear CDF is sampled by inverse transform as ns-2's
RandomVariable/Empirical does (interpolation_ 2, "integral", rounds up to
a whole unit): the same numbers the pFabric and PIAS simulations drew.
pareto is web-guest.sh's file-size law: int(4000 * (1 - u) ** (-1 / 0.9)),
capped at 5 MiB.

--scale multiplies every size (after rounding to units) and keeps the
shape: an emulated guest at 20 Mbit/s completes few 1.7 MB flows a
second, so web search at --scale 0.01 (mean 16.6 KB) lets a 20 s round
finish thousands. Sizes are whole bytes, at least 1.

"rate" prints the arrival rate that offers load F of a bottleneck: F * RATE
/ (8 * mean wire bytes of a response), a response being its body plus
--header bytes of HTTP header, framed as experiments/wire.py says.
"""
import argparse
import bisect
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402

DISTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dists")


def _ceil_integral(x):
    """The integral of ceil(t) dt from 0 to x (x >= 0)."""
    n = math.floor(x)
    return n * (n + 1) / 2 + (x - n) * (n + 1)


class Empirical:
    """A piecewise-linear CDF given as points (size in units, cdf)."""

    def __init__(self, name, points, unit=1, integral=True, scale=1.0, source=None):
        if len(points) < 2 or points[-1][1] != 1.0:
            raise ValueError("%s: need at least two points, the last with cdf 1" % name)
        for (x0, c0), (x1, c1) in zip(points, points[1:]):
            if x1 < x0 or c1 < c0:
                raise ValueError("%s: sizes and cdf must ascend (%g %g, %g %g)" %
                                 (name, x0, c0, x1, c1))
        if points[0][0] < 0 or points[0][1] < 0:
            raise ValueError("%s: negative size or cdf" % name)
        self.name, self.points, self.unit = name, points, unit
        self.integral, self.scale, self.source = integral, scale, source
        self._cdfs = [c for _, c in points]

    def _units(self, u):
        """Inverse CDF in units, before rounding."""
        i = bisect.bisect_left(self._cdfs, u)
        if i == 0:
            return self.points[0][0]
        (x0, c0), (x1, c1) = self.points[i - 1], self.points[i]
        if c1 == c0:
            return x1
        return x0 + (u - c0) * (x1 - x0) / (c1 - c0)

    def quantile(self, u):
        """Size in bytes at probability u in [0, 1]."""
        x = self._units(u)
        if self.integral:
            x = math.ceil(x)
        return max(1, round(x * self.unit * self.scale))

    def sample(self, rng):
        return self.quantile(rng.random())

    def mean(self):
        """Exact mean in bytes (up to rounding each size to a whole byte)."""
        m = self.points[0][0] * self.points[0][1]
        if self.integral:
            m = math.ceil(self.points[0][0]) * self.points[0][1]
        for (x0, c0), (x1, c1) in zip(self.points, self.points[1:]):
            if c1 == c0:
                continue
            if x1 == x0:
                v = math.ceil(x0) if self.integral else x0
            elif self.integral:
                v = (_ceil_integral(x1) - _ceil_integral(x0)) / (x1 - x0)
            else:
                v = (x0 + x1) / 2
            m += (c1 - c0) * v
        return m * self.unit * self.scale

    def cdf(self, size):
        """P(a sampled size <= size bytes)."""
        x = size / (self.unit * self.scale)
        if self.integral:
            # ceil(X) <= k iff X <= k: the most whole units k that quantile()
            # rounds to at most size bytes (round() as it does, so a tie at
            # half a byte, which --scale can make, goes the same way).
            def nbytes(k):
                return max(1, round(k * self.unit * self.scale))
            k = math.floor(x + 0.5 / (self.unit * self.scale))
            while k > 0 and nbytes(k) > size:
                k -= 1
            while nbytes(k + 1) <= size:
                k += 1
            x = k
        if x < self.points[0][0]:
            return 0.0
        i = bisect.bisect_right([p for p, _ in self.points], x)
        if i >= len(self.points):
            return 1.0
        (x0, c0), (x1, c1) = self.points[i - 1], self.points[i]
        return c0 + (x - x0) * (c1 - c0) / (x1 - x0)

    def knots(self):
        """(bytes, P(size <= bytes)) at each size of the table."""
        last = {}
        for x, c in self.points:
            # a point mass: the CDF after it; so too for sizes that --scale
            # rounds to the same byte
            last[max(1, round(x * self.unit * self.scale))] = c
        return list(last.items())


class Pareto:
    """web-guest.sh's file sizes: Pareto(alpha) from xm bytes, floored to
    whole bytes, capped."""

    def __init__(self, xm=4000, alpha=0.9, cap=5 << 20, scale=1.0):
        self.name, self.xm, self.alpha, self.cap, self.scale = "pareto", xm, alpha, cap, scale
        self.source = "experiments/web-guest.sh: Pareto(alpha %g) from %d B, capped at %d B" % (
            alpha, xm, cap)

    def quantile(self, u):
        x = min(self.cap, int(self.xm * (1 - u) ** (-1 / self.alpha)))
        return max(1, round(x * self.scale))

    def sample(self, rng):
        return self.quantile(rng.random())

    def mean(self):
        """E[min(X, cap)] = xm + integral from xm to cap of (xm / x)^alpha,
        less half a byte for the flooring."""
        a, xm, c = self.alpha, self.xm, self.cap
        if a == 1:
            tail = xm * math.log(c / xm)
        else:
            tail = xm ** a * (c ** (1 - a) - xm ** (1 - a)) / (1 - a)
        return (xm + tail - 0.5) * self.scale

    def cdf(self, size):
        x = size / self.scale
        if x < self.xm:
            return 0.0
        if x >= self.cap:
            return 1.0
        return 1 - (self.xm / (math.floor(x) + 1)) ** self.alpha

    def knots(self):
        """(bytes, P(size <= bytes)) at a few sizes."""
        return [(b, self.cdf(b)) for b in (round(q * self.scale) for q in
                                           (self.xm * 2, self.xm * 10, self.xm * 100))]


def read_cdf(path, scale=1.0):
    unit, integral, points = 1, True, []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if line[0] == "unit":
            unit = float(line[1])
        elif line[0] == "interpolation":
            if line[1] not in ("integral", "continuous"):
                raise ValueError("%s:%d: interpolation integral or continuous" % (path, n))
            integral = line[1] == "integral"
        elif len(line) == 2:
            points.append((float(line[0]), float(line[1])))
        else:
            raise ValueError("%s:%d: want 'size cdf'" % (path, n))
    name = os.path.splitext(os.path.basename(path))[0]
    return Empirical(name, points, unit, integral, scale, source=os.path.abspath(path))


def load(name, scale=1.0):
    """A distribution by name (websearch, datamining, fb_hadoop, pareto; any
    NAME.cdf in experiments/dists/) or .cdf path."""
    if scale <= 0:
        raise ValueError("scale must be positive")
    if name == "pareto":
        return Pareto(scale=scale)
    path = name if os.sep in name or name.endswith(".cdf") else os.path.join(DISTS, name + ".cdf")
    if not os.path.exists(path):
        known = sorted(f[:-4] for f in os.listdir(DISTS) if f.endswith(".cdf"))
        raise ValueError("no distribution %r (known: %s, pareto)" % (name, ", ".join(known)))
    return read_cdf(path, scale)


def draw(dist, n, seed):
    """n sizes from dist, the same for the same seed."""
    rng = random.Random(seed)
    return [dist.sample(rng) for _ in range(n)]


def mean_wire(dist, header=0, mss=wire.MSS, overhead=wire.OVERHEAD, points=1 << 16):
    """Mean bytes the bottleneck carries per response: body plus header,
    framed. The framing is not linear in the size, so this integrates the
    quantile function (midpoint rule; point masses come out exact)."""
    s = 0
    for i in range(points):
        s += wire.wire_bytes(dist.quantile((i + 0.5) / points) + header, mss, overhead)
    return s / points


def arrival_rate(dist, load_frac, rate_bps, header=0, mss=wire.MSS, overhead=wire.OVERHEAD):
    """Responses per second that offer load_frac of rate_bps."""
    return load_frac * rate_bps / (8 * mean_wire(dist, header, mss, overhead))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for c in ("show", "sample", "rate"):
        s = sub.add_parser(c)
        s.add_argument("dist")
        s.add_argument("--scale", type=float, default=1.0)
        if c == "sample":
            s.add_argument("n", type=int)
            s.add_argument("--seed", type=int, required=True)
        else:
            s.add_argument("--header", type=int, default=0,
                           help="HTTP header bytes per response (default 0)")
        if c == "rate":
            s.add_argument("--load", type=float, required=True)
            s.add_argument("--rate", required=True, help="bottleneck, as tc: 20mbit")
    a = p.parse_args(argv)
    d = load(a.dist, a.scale)
    if a.cmd == "sample":
        for v in draw(d, a.n, a.seed):
            print(v)
    elif a.cmd == "show":
        print("%s (scale %g): %s" % (d.name, a.scale, d.source))
        print("mean %.1f B, mean on the wire with %d B of header %.1f B" %
              (d.mean(), a.header, mean_wire(d, a.header)))
        for q in (0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999):
            print("  p%-5g %d B" % (q * 100, d.quantile(q)))
    else:
        lam = arrival_rate(d, a.load, wire.parse_rate(a.rate), a.header)
        print("%.6g" % lam)


if __name__ == "__main__":
    main()
