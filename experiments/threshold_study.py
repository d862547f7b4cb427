#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How should srff choose its thresholds from its flow-size histogram?

    python3 experiments/threshold_study.py [--out DIR] [--quick] [--part all|rules|learning]

builds experiments/threshold_sim.c and runs two parts (default: both).

rules: computes thresholds by every rule from a training histogram of each
workload (bucketed as srff_nf/sizes.h buckets), simulates them on one
bottleneck link (threshold_sim.c's header has the model) and writes
DIR/results.tsv.xz (one row per configuration, mean over the seeds),
DIR/thresholds.tsv.xz, DIR/params.json, DIR/tables.md and DIR/summary.md
(threshold_tables.py makes both again from the first three). ~7 min.

learning: the rules that learn (issue 32), side by side with the shipped
geo at 3, 4 and 8 bands, on the same mixes and the held-out Hadoop one:
Homa's equal-bytes cutoffs, PIAS's thresholds for the distribution and
load, and the live-table rule; scored with the same metrics, on the
three-file FTP case after a warm-up of each mix, and on convergence and
hold over a chain of mixes through auto.c's decayed histogram (see the
section "rules that learn" below). Writes DIR/learning.tsv.xz,
DIR/learning.json, and (threshold_tables.py) DIR/learning.md and
DIR/learning-summary.md. ~7 min.

Default DIR: experiments/results/thresholds. Deterministic: fixed seeds
throughout.

Rules (each gives N-1 thresholds for N bands, all at bucket bounds):
  bytes   equal bytes per band as MLFQ bands carry them: band i carries
          sum over flows of min(size, t_i) - min(size, t_(i-1))
  homa    Homa's homa_prio: equal bytes by flow size (a flow's bytes count
          where its size falls)
  quant   flow-count quantiles: N=2 p90; N=3 p50,p90; N=4 p50,p90,p99;
          N=8 p50,p75,p90,p95,p99,p99.5,p99.9
  pias    PIAS-style: the bucket bounds minimising the M/G/1 multi-level
          model's mean FCT at the workload's load, found exactly by dynamic
          programming (Model.search_dp; the rules part stops at 4 bands, as
          it did when the search was exhaustive; the learning part goes to 8)
  pias-sd the same search minimising the model's mean slowdown
  geo     the simple rule: t1 = max(floor, flow-count quantile q), then
          each threshold r times the previous one; (q, r) = GEO[N]: p60 and 8
          for 4 bands and more, p50 and 32 for 3 (chosen on a grid, see docs),
          as srff_nf/auto.h computes them for any number of bands
  span    (not in the tables; experiments/rule.py) geo's t1, then
          thresholds spread evenly in log(size) over the flows above t1
          (to twice their mean distance above it, at least 64 t1, each 2
          to 8 times the previous), then two (one for 4-5 bands) 8 times
          apart above that: the bands spent where the sizes are, as
          PIAS spends them, with bands left for flows past anything common
  las     (learning part) the live-table rule: threshold_sim's las=, every
          period the floor, then count quantiles of the bytes the active
          flows have sent
Bands: 2, 3 (pfifo_fast), 4, and 8 (the FTP experiment's srff-8: prio with 8
bands, class-id steering).
Constraints: a floor (t1 >= floor) and a minimum ratio t(i+1) >= r * t(i),
imposed on every rule (searched rules search within them).
"""
import argparse
import bisect
import itertools
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIM_SRC = os.path.join(HERE, "threshold_sim.c")
sys.path.insert(0, HERE)
import sizes  # noqa: E402  (experiments/sizes.py: the committed CDF tables)
import tabfile  # noqa: E402  (the results' xz files)

# The simulator reads "bytes cumulative" lines, piecewise linear: written
# from experiments/dists/*.cdf (sizes in 1460-byte packets), the tables the
# experiments draw from too, so both use the same numbers.
CDF_DIR = os.path.join(HERE, "results", "thresholds", ".cdf")


def cdf_file(name):
    d = sizes.load(name)
    os.makedirs(CDF_DIR, exist_ok=True)
    path = os.path.join(CDF_DIR, name + ".txt")
    with open(path, "w") as f:
        f.write("# bytes cumulative_probability, from %s\n" % os.path.relpath(d.source, HERE))
        for x, c in d.points:
            f.write("%d %s\n" % (round(x * d.unit), repr(c)))
    return path

RATE = 12.5e6                  # bytes/s: 100 Mbit/s
SMALL, BIG = 100_000, 1_000_000
SKB_GSO = {"first": 14600, "later": 64240, "window": 131072}   # 10 and 44 MSS
SKB_MTU = {"first": 1460, "later": 1460, "window": 131072}
TRAIN_SAMPLES = 200_000
TRAIN_SEED = 1000
EVAL_SEEDS = (1, 2, 3)
WARM, MEAS = 2000, 50000

# bucket layout of srff_nf/sizes.h
UNIT_SHIFT, SUB_SHIFT, NBUCKETS = 8, 2, 128
SUB = 1 << SUB_SHIFT

DISTS = {
    "websearch": "cdf:" + cdf_file("websearch"),
    "datamining": "cdf:" + cdf_file("datamining"),
    # web objects: bounded Pareto, shape 1.2, from 8333 B (the unbounded
    # mean would be 50 KB) to 100 MB: mean 42.4 KB
    "pareto": "pareto:1.2:8333:1e8",
}
LOADS = (0.6, 0.8)
WORKLOADS = [(d, l) for d in DISTS for l in LOADS]

FLOORS = (0, 16384)
RATIOS = (1, 8)
NBANDS = (2, 3, 4, 8)
RULES = ("bytes", "homa", "quant", "pias", "pias-sd", "geo")
SEARCHED, MAX_SEARCH_BANDS = ("pias", "pias-sd"), 4
QUANT = {2: (0.9,), 3: (0.5, 0.9), 4: (0.5, 0.9, 0.99),
         8: (0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999)}
GEO = {2: (0.6, 8), 3: (0.5, 32), 4: (0.6, 8), 8: (0.6, 8)}   # bands: (quantile, ratio)


def rule_bands():
    """(rule, bands) pairs the study computes."""
    return [(r, n) for r, n in itertools.product(RULES, NBANDS)
            if r not in SEARCHED or n <= MAX_SEARCH_BANDS]
LEAVES = ("fq", "fifo")
DEFAULT_FLOOR, DEFAULT_RATIO = 16384, 1   # the constraint of the variants below
MTU_BANDS = (3, 4)                        # bands simulated with 1500-byte packets
MTU_MEAS = 10000                          # and their measured flows (one seed)
BASELINES = ("fifo", "fair", "fq", "srpt")


# --- the kernel's histogram -------------------------------------------------

def bucket(n):
    """srff_sizes_bucket()"""
    u = n >> UNIT_SHIFT
    if u < SUB:
        return u
    msb = u.bit_length() - 1
    b = ((msb - SUB_SHIFT + 1) << SUB_SHIFT) | ((u >> (msb - SUB_SHIFT)) & (SUB - 1))
    return min(b, NBUCKETS - 1)


def low(b):
    """srff_sizes_low(): the smallest size bucket b counts"""
    if b < SUB:
        return b << UNIT_SHIFT
    msb = (b >> SUB_SHIFT) + SUB_SHIFT - 1
    sub = b & (SUB - 1)
    return ((SUB | sub) << (msb - SUB_SHIFT)) << UNIT_SHIFT


def bound_up(t):
    """The smallest bucket index whose low bound is >= t."""
    b = bucket(t)
    return b if low(b) >= t else b + 1


def histogram(sizes):
    flows, nbytes = [0] * NBUCKETS, [0] * NBUCKETS
    for s in sizes:
        b = bucket(s)
        flows[b] += 1
        nbytes[b] += s
    return flows, nbytes


# --- rules: histogram -> bucket indices k (threshold = low(k)) --------------

def constrain(ks, floor, ratio):
    """Impose t1 >= floor, t(i+1) >= ratio * t(i), strictly increasing."""
    out = []
    for k in ks:
        lo = bound_up(floor) if not out else max(out[-1] + 1, bound_up(ratio * low(out[-1])))
        out.append(max(k, lo))
    return out


def first_k_reaching(cum, target):
    """Smallest k with cum[k] >= target (cum is non-decreasing)."""
    return bisect.bisect_left(cum, target)


def mlfq_bytes(flows, nbytes):
    """B[k] = sum over flows of min(size, low(k)), exact for bucket bounds."""
    out, below, above = [], 0, sum(flows)
    for k in range(NBUCKETS):
        out.append(below + low(k) * above)
        below += nbytes[k]
        above -= flows[k]
    return out


def rule_bytes(flows, nbytes, n):
    cum = mlfq_bytes(flows, nbytes)
    tot = sum(nbytes)
    return [first_k_reaching(cum, i * tot / n) for i in range(1, n)]


def rule_homa(flows, nbytes, n):
    cum = list(itertools.accumulate([0] + nbytes[:-1]))    # bytes of flows < low(k)
    tot = sum(nbytes)
    return [first_k_reaching(cum, i * tot / n) for i in range(1, n)]


def rule_quant(flows, nbytes, n, qs=None):
    cum = list(itertools.accumulate([0] + flows[:-1]))     # flows < low(k)
    tot = sum(flows)
    return [first_k_reaching(cum, q * tot) for q in (qs or QUANT[n])]


def rule_geo(flows, nbytes, n, floor):
    """t1 = max(floor, flow quantile q); t(i+1) = r * t(i); (q, r) = GEO[n]."""
    q, r = GEO.get(n, GEO[8])       # auto.c: 4 bands and more alike
    ks = constrain(rule_quant(flows, nbytes, 2, (q,)), floor, 1)
    while len(ks) < n - 1:
        ks.append(bound_up(r * low(ks[-1])))
    return ks


def rule_span(flows, nbytes, n, floor):
    """geo's t1, then thresholds spread evenly in log(size) up to the top
    of the flows above t1 (twice their mean distance above t1 in buckets,
    at least 64 t1), then two (one for 4-5 bands) x8 beyond. Up to 6 bands
    it is geo."""
    geo = rule_geo(flows, nbytes, n, floor)
    if n <= 3:
        return geo
    t1 = geo[0]
    above = sum(flows[t1:])
    mean2 = (int(2 * sum(f * (b - t1) for b, f in enumerate(flows) if b >= t1) // above)
             if above else 0)
    # d in buckets: SUB of them a power of two (bucket() above 1 KiB).
    d = max(mean2, 6 * SUB)         # at least geo's t3 (64 t1): a narrow mix leaves geo's
    beyond = 2 if n >= 6 else 1
    steps = n - 2 - beyond
    d = min(d, 3 * SUB * steps)     # at most x8 a step
    ks = [t1 + (i * d) // steps for i in range(steps + 1)]
    while len(ks) < n - 1:
        ks.append(ks[-1] + 3 * SUB)
    return ks


class Model:
    """M/G/1 with MLFQ levels, FCFS in each (Kleinrock's multi-level
    formula): a flow of size x in level j (a(j-1) <= x < a(j)) takes
        T(x) = (x + W(a_j)) / (1 - rho(a_(j-1))),
        W(a) = lambda E[min(S,a)^2] / (2 (1 - rho(a))),  rho(a) = lambda E[min(S,a)],
    which is FCFS for one level and FB (LAS) for infinitely many. Sizes in a
    bucket are taken at the bucket's mean (the histogram keeps counts and
    byte sums only)."""

    def __init__(self, flows, nbytes, load):
        n = sum(flows)
        self.p = [f / n for f in flows]
        self.x = [(b / f if f else 0) for f, b in zip(flows, nbytes)]
        mean = sum(nbytes) / n
        lam = load / mean
        self.rho, self.w = [], []
        m1 = m2 = 0.0
        tail = 1.0
        for k in range(NBUCKETS + 1):
            a = low(k) if k < NBUCKETS else math.inf
            r1 = lam * (m1 + (a * tail if tail > 1e-15 else 0))
            r2 = lam * (m2 + (a * a * tail if tail > 1e-15 else 0))
            self.rho.append(r1)
            self.w.append(r2 / (2 * (1 - r1)))
            if k < NBUCKETS:
                m1 += self.p[k] * self.x[k]
                m2 += self.p[k] * self.x[k] ** 2
                tail -= self.p[k]
        # prefix sums for levels
        self.P = list(itertools.accumulate([0] + self.p))
        self.X = list(itertools.accumulate([0] + [p * x for p, x in zip(self.p, self.x)]))
        self.H = list(itertools.accumulate([0] + [(p / x if x else 0) for p, x in zip(self.p, self.x)]))
        ks = [k for k in range(NBUCKETS) if flows[k]]
        self.kmin, self.kmax = ks[0], ks[-1]

    def cost(self, ks, slowdown=False):
        edges = [0] + list(ks) + [NBUCKETS]
        tot = 0.0
        for j in range(1, len(edges)):
            lo, hi = edges[j - 1], edges[j]
            pj = self.P[hi] - self.P[lo]
            if slowdown:
                tot += (self.w[hi] * (self.H[hi] - self.H[lo]) + pj) / (1 - self.rho[lo])
            else:
                tot += (self.w[hi] * pj + self.X[hi] - self.X[lo]) / (1 - self.rho[lo])
        return tot

    def cands(self, floor):
        return range(max(self.kmin + 1, bound_up(max(floor, 1))), self.kmax + 1)

    def search(self, n, floor, ratio, slowdown=False):
        """Exhaustive: every (n-1)-subset of the candidate bounds."""
        best, best_ks = math.inf, None
        for ks in itertools.combinations(self.cands(floor), n - 1):
            if any(low(ks[i + 1]) < ratio * low(ks[i]) for i in range(len(ks) - 1)):
                continue
            c = self.cost(ks, slowdown)
            if c < best:
                best, best_ks = c, list(ks)
        return best_ks

    def level(self, lo, hi, slowdown=False):
        """cost()'s term for the level [low(lo), low(hi))."""
        pj = self.P[hi] - self.P[lo]
        if slowdown:
            return (self.w[hi] * (self.H[hi] - self.H[lo]) + pj) / (1 - self.rho[lo])
        return (self.w[hi] * pj + self.X[hi] - self.X[lo]) / (1 - self.rho[lo])

    def search_dp(self, n, floor, ratio, slowdown=False):
        """The same optimum by dynamic programming: cost() is a sum of
        terms each of two adjacent bounds, so the best k-th threshold given
        the best first k-1 for every candidate is enough: O(n K^2) terms
        instead of O(K^(n-1)) sets (8 bands over ~90 buckets: ~30 000).
        Among equal costs it keeps the one found first, as search() does
        (lowest bounds first), up to rounding."""
        cands = list(self.cands(floor))
        if len(cands) < n - 1:
            return None
        # best[j][k]: least cost of levels 0..j with the j-th threshold at k
        best = {k: (self.level(0, k, slowdown), None) for k in cands}
        back = [best]
        for _ in range(n - 2):
            nxt = {}
            for k in cands:
                lim = low(k)
                top = (math.inf, None)
                for p, (c, _) in back[-1].items():
                    if p >= k or lim < ratio * low(p) or c == math.inf:
                        continue
                    v = c + self.level(p, k, slowdown)
                    if v < top[0]:
                        top = (v, p)
                nxt[k] = top
            back.append(nxt)
        top = (math.inf, None)
        for k, (c, _) in back[-1].items():
            v = c + self.level(k, NBUCKETS, slowdown)
            if v < top[0]:
                top = (v, k)
        if top[1] is None:
            return None
        ks, k = [], top[1]
        for stage in reversed(back):
            ks.append(k)
            k = stage[k][1]
        return ks[::-1]


def thresholds(rule, hist, load, n, floor, ratio):
    flows, nbytes = hist
    if rule in ("pias", "pias-sd"):
        ks = Model(flows, nbytes, load).search_dp(n, floor, ratio, rule == "pias-sd")
    elif rule == "geo":
        ks = rule_geo(flows, nbytes, n, floor)
    elif rule == "span":
        ks = rule_span(flows, nbytes, n, floor)
    else:
        ks = {"bytes": rule_bytes, "homa": rule_homa, "quant": rule_quant}[rule](flows, nbytes, n)
    return [low(k) for k in constrain(ks, floor, ratio)]


# --- simulation -------------------------------------------------------------

def build_sim(out_dir):
    exe = os.path.join(out_dir, ".threshold_sim")
    subprocess.run(["gcc", "-O2", "-std=gnu11", "-Wall", "-Wextra", "-o", exe, SIM_SRC, "-lm"],
                   check=True)
    return exe


def run_jobs(exe, lines):
    """Run job lines through one simulator process; one dict per line."""
    p = subprocess.run([exe], input="\n".join(lines) + "\n", capture_output=True, text=True,
                       check=True)
    out = [json.loads(l) for l in p.stdout.splitlines()]
    assert len(out) == len(lines), p.stderr
    return out


def sample_sizes(exe, dist, seed, n):
    p = subprocess.run([exe], input=f"dist={dist} seed={seed} sample={n}\n", capture_output=True,
                       text=True, check=True)
    return [int(x) for x in p.stdout.split() if x != "end"]


def job_line(dist, load, seed, leaf, thr, skb, meas=MEAS):
    thr_s = " thr=" + ",".join(str(t) for t in thr) if thr else ""
    return (f"dist={DISTS[dist]} load={load} seed={seed} warm={WARM} meas={meas} "
            f"rate={RATE} leaf={leaf}{thr_s} first={skb['first']} later={skb['later']} "
            f"window={skb['window']} small={SMALL} big={BIG}")


METRICS = ("fct_small", "fct_mid", "fct_big", "sd_small", "sd_mid", "sd_big", "p99_small_fct",
           "p99_small_sd", "sd_all", "fct_all")


def flatten(r):
    f, s = r["fct_ms"], r["sd"]
    return {"fct_small": f[0], "fct_mid": f[1], "fct_big": f[2], "fct_all": f[3],
            "sd_small": s[0], "sd_mid": s[1], "sd_big": s[2], "sd_all": s[3],
            "p99_small_fct": r["p99_small_fct_ms"], "p99_small_sd": r["p99_small_sd"]}


def mean_se(vals):
    m = sum(vals) / len(vals)
    if len(vals) < 2:
        return m, 0.0
    var = sum((v - m) ** 2 for v in vals) / (len(vals) - 1)
    return m, math.sqrt(var / len(vals))


# --- rules that learn (issue 32, item 1) --------------------------------------
#
# The shipped rule (geo) against the candidates issue 32 names, at 3, 4 and 8
# bands, on the study's mixes and the held-out Hadoop one: Homa's equal-bytes
# cutoffs (homa: homa_prio's, bytes by flow size; bytes: equal bytes as MLFQ
# bands carry them), PIAS's thresholds for the measured distribution and load
# (pias, pias-sd: the M/G/1 multi-level model's optimum over bucket bounds,
# found exactly by Model.search_dp), and the live-table rule (las: every
# period, the floor, then count quantiles of the bytes the active flows have
# sent; las-1s the same every second; las-1s-avg over a histogram that keeps
# 15/16 of itself each second). Scored with the study's metrics (fq
# leaves, GSO skbs, strict priority), on the three-file FTP case after a
# warm-up of each mix, and on convergence: a decayed histogram as auto.c
# keeps it, fed by a chain of mixes, thresholds installed as main.c's
# auto_step installs them.

LEARN_RULES = ("geo", "homa", "bytes", "pias", "pias-sd", "las", "las-1s", "las-1s-avg")
LEARN_BANDS = (3, 4, 8)
LEARN_DISTS = ("websearch", "datamining", "pareto", "fb_hadoop")
HELD_OUT = ("fb_hadoop",)       # experiments/dists/fb_hadoop.cdf: not for choosing
LEARN_WORKLOADS = [(d, l) for d in LEARN_DISTS for l in LOADS]
# live-table rules: (period s, las mode, decay shift) for threshold_sim's las=;
# 2.5 s is the GC interval, whose table walk would build the live histogram
LAS_RULES = {"las": (2.5, 1, 0), "las-1s": (1.0, 1, 0), "las-1s-avg": (1.0, 1, 4)}
FTP_RATE = 6.25e6               # 50 Mbit/s, as band_study and the guest's FTP run
FTP_FILES = (79532032, 31898736, 5756923)  # F3, F2, F1 (band_study.FTP_FILES)
FTP_GAP = 2.0                   # s between the files' starts
FTP_GAP_SHORT = 1.0             # and again closer (strict order only): "strict-1s"
FTP_WARM_S = 20.0               # web arrivals before the files, at the mix's load
FTP_WARM_SEED = 7
# the kernel's learning (auto.h, main.c)
K_PERIOD = 2.5                  # auto_step runs from the GC worker (gc_interval_ms)
K_MIN_FLOWS = 1000              # auto_min_flows
K_KEEP, K_DECAY_SHIFT, K_FLOW_SHIFT = 4, 6, 8
CONV_CHAIN = ("websearch", "datamining", "pareto", "fb_hadoop", "websearch")
CONV_LOAD = 0.8
CONV_PHASE_FLOWS, CONV_PHASE_MIN_S = 12000, 1200.0
CONV_SEED = 2000
CONV_TOL = 1.5                  # "at B's": every threshold within x1.5 (two buckets) of B's


def learn_spec(d):
    return DISTS[d] if d in DISTS else "cdf:" + cdf_file(d)


def learn_hists(exe, quick=False):
    """Training histograms (TRAIN_SAMPLES sizes) of LEARN_DISTS; the study's
    three with the study's seeds."""
    n = 20000 if quick else TRAIN_SAMPLES
    return {d: histogram(sample_sizes(exe, learn_spec(d), TRAIN_SEED + i, n))
            for i, d in enumerate(LEARN_DISTS)}


def learn_thresholds(rule, hist, load, bands):
    """A histogram rule's thresholds, floor 16 KiB (as every rule here)."""
    return thresholds(rule, hist, load, bands, DEFAULT_FLOOR, 1)


def las_opt(rule, bands):
    period, mode, shift = LAS_RULES[rule]
    return f" las={period:g},{bands - 1},{mode},{shift}"


def policy_opt(rule, bands, hist, load):
    """threshold_sim words for a rule: thr= (learnt on hist at load) or las=."""
    if rule in LAS_RULES:
        return las_opt(rule, bands), "live"
    t = learn_thresholds(rule, hist, load, bands)
    return " thr=" + ",".join(map(str, t)), ",".join(map(str, t))


# -- the three-file FTP case --

def ftp_trace(exe, d, load, gap=FTP_GAP, seed=FTP_WARM_SEED):
    """Warm-up arrivals of mix d at `load` of the FTP link for FTP_WARM_S,
    then the three files (F3, F2, F1) on the idle link: F3 one second after
    the warm-up's last byte has left (the same time under every
    work-conserving order), F2 and F1 `gap` apart."""
    import random
    rng = random.Random(seed)
    sizes = sample_sizes(exe, learn_spec(d), seed, 4000)
    lam = load * FTP_RATE / (sum(sizes) / len(sizes))
    t, warm = 0.0, []
    for s in sizes:
        t += rng.expovariate(lam)
        if t >= FTP_WARM_S:
            break
        warm.append((round(t, 6), s))
    assert len(warm) < len(sizes)
    done = []
    if warm:
        done = run_jobs(exe, [f"rate={FTP_RATE} leaf=fifo trace=" +
                              ",".join(f"{a!r}:{s}" for a, s in warm)])[0]["fct"]
    start = math.ceil(max([a + f for (a, _), f in zip(warm, done)] + [FTP_WARM_S])) + 1.0
    files = [(start + i * gap, s) for i, s in enumerate(FTP_FILES)]
    return warm + files


def ets_quanta(bands):
    import band_study       # band_study imports this module
    return band_study.ets(bands)


# -- convergence: the kernel's decayed histogram --------------------------------

class KernelAuto:
    """auto.c's recent histogram: flows << K_FLOW_SHIFT, less 2^-K_DECAY_SHIFT
    per update while it holds more than K_KEEP * min_flows; the byte sums
    decayed alike (auto.c keeps none: a byte rule would add them). auto.c
    rounds the decay down, so a bucket never falls below 63 (a quarter of
    a flow): zero=True rounds it up, and a bucket empties."""

    def __init__(self, zero=False):
        self.flows = [0] * NBUCKETS
        self.nbytes = [0] * NBUCKETS
        self.up = (1 << K_DECAY_SHIFT) - 1 if zero else 0

    def count(self):
        return sum(self.flows) >> K_FLOW_SHIFT

    def update(self, new_flows, new_bytes, min_flows=K_MIN_FLOWS):
        decay = self.count() > K_KEEP * min_flows
        for b in range(NBUCKETS):
            if decay:
                self.flows[b] -= (self.flows[b] + self.up) >> K_DECAY_SHIFT
                self.nbytes[b] -= (self.nbytes[b] + self.up) >> K_DECAY_SHIFT
            self.flows[b] += new_flows[b] << K_FLOW_SHIFT
            self.nbytes[b] += new_bytes[b]

    def hist(self):
        return [f / (1 << K_FLOW_SHIFT) for f in self.flows], list(self.nbytes)


def moved(old, new):
    """srff_auto_moved(): some threshold moved by more than a quarter."""
    return any(abs(o - n) > o // 4 for o, n in zip(old, new))


def conv_stream(exe, hists, quick=False):
    """Flows ending one after another as Poisson arrivals of CONV_CHAIN's
    mixes at CONV_LOAD of RATE (a flow is counted when it arrives: its FCT
    and the GC's linger are left out), each mix for CONV_PHASE_FLOWS flows
    and at least CONV_PHASE_MIN_S. Returns [(t, size)] and the phases'
    start times."""
    import random
    out, starts, t = [], [], 0.0
    nflows, min_s = (2000, 300.0) if quick else (CONV_PHASE_FLOWS, CONV_PHASE_MIN_S)
    for i, d in enumerate(CONV_CHAIN):
        flows, nbytes = hists[d]
        lam = CONV_LOAD * RATE / (sum(nbytes) / sum(flows))
        n = max(nflows, int(lam * min_s) + 1)
        rng = random.Random(CONV_SEED + i)
        sizes = sample_sizes(exe, learn_spec(d), CONV_SEED + i, n)
        starts.append(t)
        for s in sizes:
            t += rng.expovariate(lam)
            out.append((t, s))
    starts.append(t)
    return out, starts


def kernel_learn(rule, bands, stream, end):
    """Installed thresholds every K_PERIOD: [(t, (t1, ...))] as main.c's
    auto_step leaves them (the default ladder until min_flows have ended).
    A rule named with ZERO_DECAY's suffix is that rule over a histogram
    whose decay reaches zero (KernelAuto's zero)."""
    auto = KernelAuto(zero=rule.endswith(ZERO_DECAY))
    rule = rule[:-len(ZERO_DECAY)] if rule.endswith(ZERO_DECAY) else rule
    inst = tuple(DEFAULT_FLOOR << (3 * i) for i in range(bands - 1))   # config.c's default
    log, i, k = [], 0, 1
    while k * K_PERIOD <= end:
        t = k * K_PERIOD
        nf, nb = [0] * NBUCKETS, [0] * NBUCKETS
        while i < len(stream) and stream[i][0] <= t:
            b = bucket(stream[i][1])
            nf[b] += 1
            nb[b] += stream[i][1]
            i += 1
        if any(nf):
            auto.update(nf, nb)
            if auto.count() >= K_MIN_FLOWS:
                th = tuple(learn_thresholds(rule, auto.hist(), CONV_LOAD, bands))
                if moved(inst, th):
                    inst = th
        log.append((t, inst))
        k += 1
    return log


LEARNT_SETS, LEARNT_COVER = 6, 0.9


def learnt_sets(log, t0, t1):
    """The threshold sets installed in the second half of (t0, t1], each
    with the share of that time it stayed: the longest-staying first, as
    many as cover LEARNT_COVER of the time (at most LEARNT_SETS), their
    shares scaled to sum to 1. Sets stay for minutes, flows last ms to
    seconds: the mean of the FCTs under each set, weighted so, stands for
    the FCTs under the thresholds as they move."""
    dwell = {}
    for t, th in log:
        if (t0 + t1) / 2 < t <= t1:
            dwell[th] = dwell.get(th, 0) + 1
    tot = sum(dwell.values())
    top, cov = [], 0
    for th, k in sorted(dwell.items(), key=lambda x: (-x[1], x[0])):
        if cov >= LEARNT_COVER * tot or len(top) == LEARNT_SETS:
            break
        top.append((th, k))
        cov += k
    return [(th, k / cov) for th, k in top]


def las_learn(exe, rule, bands, a, b, t_switch, t_end):
    """The live-table rule's thresholds over a change of mix a -> b at
    t_switch (threshold_sim, strict priority, fq leaves)."""
    line = (f"dist={learn_spec(a)} dist2={learn_spec(b)} at={t_switch!r} load={CONV_LOAD} "
            f"seed={CONV_SEED} warm=0 meas=100000000 tmax={t_end!r} rate={RATE} leaf=fq "
            f"thrlog=1" + las_opt(rule, bands))
    return [(r[0], tuple(r[1:])) for r in run_jobs(exe, [line])[0]["thr_log"][1:]]


CONV_WINDOW = 60.0              # s: the trailing median a change is tracked by
# PIAS's model weighs a bucket by its flows' second moment: the quarter of a
# flow auto.c's decay leaves in every bucket ever used (a 1 GB one, say)
# moves it. These also run over a histogram that forgets entirely.
ZERO_DECAY = "/z"
ZERO_RULES = ("pias" + ZERO_DECAY, "pias-sd" + ZERO_DECAY)


def steady(log, t0, t1):
    """A mix's thresholds: each one's median over the second half of its
    phase (t0, t1]."""
    half = [th for t, th in log if (t0 + t1) / 2 < t <= t1]
    return [sorted(th[j] for th in half)[len(half) // 2] for j in range(len(half[0]))]


def near(th, ref):
    """Every threshold within x CONV_TOL of ref's."""
    return all(r / CONV_TOL <= x <= r * CONV_TOL for x, r in zip(th, ref))


def trailing_median(log):
    """Each threshold's median over the trailing CONV_WINDOW, every period:
    where a rule is, its jitter aside."""
    out, i = [], 0
    for t, _ in log:
        while log[i][0] <= t - CONV_WINDOW:
            i += 1
        win = [th for _, th in log[i:] if _ <= t]
        out.append((t, tuple(sorted(th[j] for th in win)[len(win) // 2]
                             for j in range(len(win[0])))))
    return out


def conv_scores(log, t0, t1, ends, prev=None):
    """A change of mix at t0 (the next at t1), and the hold under the new
    mix. The new mix's thresholds: steady(); where the rule is: its
    trailing_median(). first_s: from t0 to the first period where the rule
    is near (x CONV_TOL) the new mix's thresholds; settle_s: to the first
    from which it is near them in 90 % of the rest of the phase; *_flows:
    the flows that ended in between (ends: their times; None for the
    live-table rules, which count no ended flow). moved: whether the old
    mix's thresholds (prev) were not near the new one's. Hold, over the
    second half of the phase: moves per hour (a period in which a threshold
    moved by more than a quarter, what main.c installs) and p90/p10 of each
    threshold over the periods (the worst one)."""
    ph = [(t, th) for t, th in log if t0 < t <= t1]
    ref = steady(log, t0, t1)
    ok = [near(th, ref) for t, th in trailing_median(log) if t0 < t <= t1]
    first = next((i for i, o in enumerate(ok) if o), None)
    settle, inside = None, 0
    for i in range(len(ok) - 1, -1, -1):     # from the end: the earliest that holds
        inside += ok[i]
        if ok[i] and inside >= 0.9 * (len(ok) - i):
            settle = i
    times = [t for t, _ in ph]

    def flows_to(i):
        if i is None or ends is None:
            return None
        return bisect.bisect_right(ends, times[i]) - bisect.bisect_right(ends, t0)

    half = [th for t, th in ph if t > (t0 + t1) / 2]
    seq = [th for t, th in ph if t <= (t0 + t1) / 2][-1:] + half
    moves = sum(moved(a, b) for a, b in zip(seq, seq[1:]))
    hours = len(half) * (ph[1][0] - ph[0][0]) / 3600
    spread = max(sorted(th[j] for th in half)[(9 * len(half)) // 10] /
                 sorted(th[j] for th in half)[len(half) // 10] for j in range(len(ref)))
    return dict(first_s=None if first is None else times[first] - t0,
                settle_s=None if settle is None else times[settle] - t0,
                first_flows=flows_to(first), settle_flows=flows_to(settle),
                moved=None if prev is None else int(not near(prev, ref)),
                moves_per_h=moves / hours, spread=spread,
                ref=",".join(str(int(x)) for x in ref))


# -- the study's learning part -------------------------------------------------

def learning(out, exe, quick=False):
    t0 = time.time()
    hists = learn_hists(exe, quick)
    seeds = EVAL_SEEDS[:1] if quick else EVAL_SEEDS
    meas = 5000 if quick else MEAS
    rb = [(r, n) for r in LEARN_RULES for n in LEARN_BANDS]

    # 1. the web mixes: every rule learnt on the workload it is scored on
    lines, keys = [], []
    for (d, l) in LEARN_WORKLOADS:
        base = (f"dist={learn_spec(d)} load={l} warm={WARM} meas={meas} rate={RATE} "
                f"first={SKB_GSO['first']} later={SKB_GSO['later']} "
                f"window={SKB_GSO['window']} small={SMALL} big={BIG}")
        pols = [("fq", 1, " leaf=fq", "-"), ("srpt", 1, " leaf=srpt", "-")]
        for r, n in rb:
            opt, thr = policy_opt(r, n, hists[d], l)
            pols.append((r, n, " leaf=fq" + opt, thr))
        for r, n, opt, thr in pols:
            for s in seeds:
                lines.append(base + f" seed={s}" + opt)
                keys.append((d, l, r, n, thr))
    print(f"learning: {len(lines)} web simulations", file=sys.stderr)
    by = {}
    for k, r in zip(keys, run_jobs(exe, lines)):
        by.setdefault(k, []).append(dict(flatten(r), stall_big_max=r["stall_big_max_ms"]))
    web = []
    for (d, l, r, n, thr), rs in by.items():
        m = {k: mean_se([x[k] for x in rs]) for k in rs[0]}
        web.append(dict(kind="web", workload=d, load=l, rule=r, bands=n, thr=thr,
                        **{k: v[0] for k, v in m.items()},
                        sd_all_se=m["sd_all"][1]))
    print(f"learning: web {time.time() - t0:.0f} s", file=sys.stderr)

    # 2. the three files after a warm-up of each mix, strict and ETS, and
    # closer together under strict priority
    lines, keys = [], []
    for (d, l) in LEARN_WORKLOADS:
        for gap, orders in ((FTP_GAP, ("strict", "ets")), (FTP_GAP_SHORT, ("strict-1s",))):
            trace = ftp_trace(exe, d, l, gap)
            tr = ("trace=" + ",".join(f"{a!r}:{s}" for a, s in trace) +
                  f" rate={FTP_RATE} leaf=fq")
            for r, n in rb:
                opt, thr = policy_opt(r, n, hists[d], l)
                for order in orders:
                    drr = ("" if order != "ets" else
                           " drr=" + ",".join(map(str, ets_quanta(n))))
                    lines.append(tr + opt + drr)
                    keys.append((d, l, r, n, order, thr))
    ftp = []
    alone = FTP_FILES[2] / FTP_RATE
    for (d, l, r, n, order, thr), res in zip(keys, run_jobs(exe, lines)):
        f3, f2, f1 = res["fct"][-3:]
        ftp.append(dict(kind="ftp", workload=d, load=l, rule=r, bands=n, order=order, thr=thr,
                        f1_x_alone=f1 / alone, f2_s=f2, f3_s=f3))
    print(f"learning: ftp {time.time() - t0:.0f} s", file=sys.stderr)

    # 3. convergence along CONV_CHAIN, and the hold under each steady mix
    stream, starts = conv_stream(exe, hists, quick)
    ends = [t for t, _ in stream]
    conv, logs = [], {}
    for r, n in rb + [(z, n) for z in ZERO_RULES for n in LEARN_BANDS]:
        if r in LAS_RULES:
            for i in range(1, len(CONV_CHAIN)):
                a, b = CONV_CHAIN[i - 1], CONV_CHAIN[i]
                ta = starts[i] - starts[i - 1]      # as long a run of a as the chain's
                tb = ta + starts[i + 1] - starts[i]
                log = las_learn(exe, r, n, a, b, ta, tb)
                sc = conv_scores(log, ta, tb, None, steady(log, 0.0, ta))
                conv.append(dict(kind="conv", rule=r, bands=n, frm=a, to=b, **sc))
            continue
        log = kernel_learn(r, n, stream, starts[-1])
        first = next((t for t, th in log if th != log[0][1]), None)
        conv.append(dict(kind="conv", rule=r, bands=n, frm="-", to=CONV_CHAIN[0],
                         first_install_s=first, **conv_scores(log, 0.0, starts[1], ends)))
        for i in range(1, len(CONV_CHAIN)):
            prev = steady(log, starts[i - 1], starts[i])
            sc = conv_scores(log, starts[i], starts[i + 1], ends, prev)
            conv.append(dict(kind="conv", rule=r, bands=n, frm=CONV_CHAIN[i - 1],
                             to=CONV_CHAIN[i], **sc))
        logs[(r, n)] = log
        print(f"learning: {r} {n} converged, {time.time() - t0:.0f} s", file=sys.stderr)

    # 4. the web mixes again, with the thresholds as the kernel's histogram
    # gives them (the steady half of each mix's first phase in the chain,
    # every set it installed there weighted by how long it stayed)
    lines, keys = [], []
    for (r, n), log in logs.items():
        for d in LEARN_DISTS:
            i = CONV_CHAIN.index(d)
            sets = learnt_sets(log, starts[i], starts[i + 1])
            base = (f"dist={learn_spec(d)} load={CONV_LOAD} warm={WARM} meas={meas} "
                    f"rate={RATE} first={SKB_GSO['first']} later={SKB_GSO['later']} "
                    f"window={SKB_GSO['window']} small={SMALL} big={BIG} leaf=fq")
            for th, w in sets:
                for s_ in seeds:
                    lines.append(base + f" seed={s_} thr=" + ",".join(map(str, th)))
                    keys.append((d, r, n, th, w))
    print(f"learning: {len(lines)} simulations of learnt thresholds", file=sys.stderr)
    agg = {}
    for (d, r, n, th, w), res in zip(keys, run_jobs(exe, lines)):
        agg.setdefault((d, r, n), {}).setdefault((th, w), []).append(
            dict(flatten(res), stall_big_max=res["stall_big_max_ms"]))
    kweb = []
    for (d, r, n), sets in agg.items():
        row = dict(kind="kweb", workload=d, load=CONV_LOAD, rule=r, bands=n,
                   thr=" ".join(f"{','.join(map(str, th))}:{w:.3f}" for th, w in sets))
        for m in list(METRICS) + ["stall_big_max"]:
            row[m] = sum(w * sum(x[m] for x in rs) / len(rs) for (th, w), rs in sets.items())
        kweb.append(row)
    print(f"learning: learnt thresholds, {time.time() - t0:.0f} s", file=sys.stderr)

    cols = ["kind", "workload", "load", "rule", "bands", "order", "thr", "frm", "to"] + \
        list(METRICS) + ["sd_all_se", "stall_big_max", "f1_x_alone", "f2_s", "f3_s",
                         "first_s", "first_flows", "settle_s", "settle_flows",
                         "first_install_s", "moved", "moves_per_h", "spread", "ref"]
    tabfile.write(os.path.join(out, "learning.tsv.xz"), "".join(
        "\t".join(line) + "\n" for line in
        [cols] + [[fmt(r[c]) if r.get(c) is not None else "-" for c in cols]
                  for r in web + ftp + conv + kweb]))
    params = dict(rules=LEARN_RULES, zero_rules=ZERO_RULES, bands=LEARN_BANDS,
                  dists=LEARN_DISTS, held_out=HELD_OUT,
                  loads=LOADS, las=LAS_RULES, floor=DEFAULT_FLOOR, rate_bytes_per_s=RATE,
                  meas=meas, warm=WARM, eval_seeds=list(seeds), train_seed=TRAIN_SEED,
                  train_samples=20000 if quick else TRAIN_SAMPLES, skb=SKB_GSO,
                  ftp=dict(rate=FTP_RATE, files=FTP_FILES, gap_s=FTP_GAP,
                           short_gap_s=FTP_GAP_SHORT, warm_s=FTP_WARM_S,
                           warm_seed=FTP_WARM_SEED,
                           ets={n: ets_quanta(n) for n in LEARN_BANDS}),
                  kernel=dict(period_s=K_PERIOD, min_flows=K_MIN_FLOWS, keep=K_KEEP,
                              decay_shift=K_DECAY_SHIFT, flow_shift=K_FLOW_SHIFT),
                  learnt=dict(sets=LEARNT_SETS, cover=LEARNT_COVER),
                  conv=dict(chain=CONV_CHAIN, load=CONV_LOAD, phase_flows=CONV_PHASE_FLOWS,
                            phase_min_s=CONV_PHASE_MIN_S, seed=CONV_SEED, tol=CONV_TOL,
                            window_s=CONV_WINDOW,
                            starts=[round(x, 3) for x in starts]),
                  commit=git_commit(), runtime_s=round(time.time() - t0))
    with open(os.path.join(out, "learning.json"), "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    print(f"learning: done, {time.time() - t0:.0f} s", file=sys.stderr)


# --- the study --------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "results", "thresholds"))
    ap.add_argument("--quick", action="store_true", help="one seed, 5000 flows (a smoke test)")
    ap.add_argument("--part", choices=("all", "rules", "learning"), default="all",
                    help="rules: the rules study (results.tsv.xz); learning: the rules that "
                    "learn (learning.tsv.xz); all: both")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    exe = build_sim(args.out)
    if args.part in ("all", "rules"):
        rules_study(args, exe)
    if args.part in ("all", "learning"):
        learning(args.out, exe, args.quick)
    import threshold_tables
    threshold_tables.write_all(args.out)
    os.unlink(exe)


def rules_study(args, exe):
    seeds = EVAL_SEEDS[:1] if args.quick else EVAL_SEEDS
    meas = 5000 if args.quick else MEAS
    t0 = time.time()

    hists = {}
    for i, d in enumerate(DISTS):
        hists[d] = histogram(sample_sizes(exe, DISTS[d], TRAIN_SEED + i, TRAIN_SAMPLES))

    # thresholds[(train workload, rule, n, floor, ratio)]
    thr = {}
    for (d, load) in WORKLOADS:
        for (rule, n), floor, ratio in itertools.product(rule_bands(), FLOORS, RATIOS):
            thr[(d, load, rule, n, floor, ratio)] = thresholds(rule, hists[d], load, n, floor,
                                                               ratio)
    print(f"thresholds: {len(thr)} sets, {time.time() - t0:.0f} s", file=sys.stderr)

    # configurations: (kind, train d, train load, rule, n, floor, ratio, test d, test load,
    #                  leaf, skb name, thresholds)
    configs = []
    skbs = {"gso": SKB_GSO, "mtu": SKB_MTU, "deep": dict(SKB_GSO, window=1 << 20)}
    f0, r0 = DEFAULT_FLOOR, DEFAULT_RATIO
    for (d, load) in WORKLOADS:
        for b in BASELINES:
            for skb in skbs:
                configs.append(("base", d, load, b, 1, 0, 1, d, load, b, skb, []))
        for key, t in thr.items():
            if key[:2] != (d, load):
                continue
            for leaf in LEAVES:
                configs.append(("rule",) + key + (d, load, leaf, "gso", t))
            if key[4:] == (f0, r0) and key[3] in MTU_BANDS:
                # the 1500-byte variant, and a FIFO leaf with a deep window
                configs.append(("rule",) + key + (d, load, "fq", "mtu", t))
                for leaf in LEAVES:
                    configs.append(("rule",) + key + (d, load, leaf, "deep", t))
    # cross-evaluation: thresholds from one workload scored on the others
    for (d, load), (d2, l2) in itertools.product(WORKLOADS, WORKLOADS):
        if (d, load) == (d2, l2):
            continue
        for rule, n in rule_bands():
            t = thr[(d, load, rule, n, f0, r0)]
            configs.append(("cross", d, load, rule, n, f0, r0, d2, l2, "fq", "gso", t))

    # dedupe simulations: same (test workload, leaf, skb, thresholds) run once
    sims, index = [], {}
    for c in configs:
        key = (c[7], c[8], c[9], c[10], tuple(c[11]))
        if key not in index:
            index[key] = len(sims)
            sims.append(key)
    runs = {"mtu": (seeds[:1], MTU_MEAS)} if not args.quick else {}
    lines, owner = [], []
    for i, (d, l, leaf, skb, t) in enumerate(sims):
        ss, m = runs.get(skb, (seeds, meas))
        for s in ss:
            lines.append(job_line(d, l, s, leaf, list(t), skbs[skb], m))
            owner.append(i)
    print(f"{len(configs)} configurations, {len(sims)} distinct, {len(lines)} simulations",
          file=sys.stderr)
    res = run_jobs(exe, lines)
    print(f"simulated: {time.time() - t0:.0f} s", file=sys.stderr)
    by_sim = [[] for _ in sims]
    for i, r in zip(owner, res):
        by_sim[i].append(flatten(r))
    per_sim = [{m: mean_se([r[m] for r in rs]) for m in METRICS} for rs in by_sim]

    rows = []
    for c in configs:
        key = (c[7], c[8], c[9], c[10], tuple(c[11]))
        m = per_sim[index[key]]
        rows.append(dict(kind=c[0], train=c[1], train_load=c[2], rule=c[3], bands=c[4],
                         floor=c[5], ratio=c[6], test=c[7], test_load=c[8], leaf=c[9], skb=c[10],
                         thr=",".join(str(x) for x in c[11]) or "-",
                         **{k: v[0] for k, v in m.items()},
                         **{k + "_se": v[1] for k, v in m.items() if k in ("sd_all", "fct_small",
                                                                              "p99_small_fct")}))
    write_tsv(os.path.join(args.out, "results.tsv.xz"), rows)
    tabfile.write(os.path.join(args.out, "thresholds.tsv.xz"),
                  "workload\tload\trule\tbands\tfloor\tratio\tthresholds\n" +
                  "".join(f"{d}\t{load}\t{rule}\t{n}\t{floor}\t{ratio}\t{','.join(map(str, t))}\n"
                          for (d, load, rule, n, floor, ratio), t in sorted(thr.items())))
    params = dict(rate_bytes_per_s=RATE, small=SMALL, big=BIG, skb=skbs, warm=WARM, meas=meas,
                  mtu_meas=meas if args.quick else MTU_MEAS, mtu_seeds=1, default_floor=f0, default_ratio=r0,
                  eval_seeds=list(seeds), train_seed=TRAIN_SEED, train_samples=TRAIN_SAMPLES,
                  dists=DISTS, loads=LOADS, floors=FLOORS, ratios=RATIOS, quant=QUANT,
                  geo={str(k): v for k, v in GEO.items()}, rules=RULES, nbands=NBANDS,
                  mtu_bands=MTU_BANDS, commit=git_commit(),
                  runtime_s=round(time.time() - t0))
    # The committed tables the CDFs came from, not the generated copies.
    top = os.path.dirname(HERE)
    params["dists"] = {k: "cdf:" + os.path.relpath(sizes.load(k).source, top)
                       if v.startswith("cdf:") else v for k, v in DISTS.items()}
    with open(os.path.join(args.out, "params.json"), "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    # main() makes the tables from the committed files, as threshold_tables.py
    # makes them again (results.tsv.xz's 5 digits, not the floats in memory).
    print(f"done: {time.time() - t0:.0f} s, {args.out}", file=sys.stderr)


def write_tsv(path, rows):
    """xz'd (experiments/tabfile.py): a tenth of the plain text."""
    cols = list(rows[0])
    tabfile.write(path, "".join("\t".join(line) + "\n" for line in
                                [cols] + [[fmt(r[c]) for c in cols] for r in rows]))


def fmt(v):
    if isinstance(v, float):
        return f"{v:.5g}"
    return str(v)


def git_commit():
    try:
        return subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
