#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How should srff choose its thresholds from its flow-size histogram?

    python3 experiments/threshold_study.py [--out DIR] [--quick]

builds experiments/threshold_sim.c, computes thresholds by every rule from
a training histogram of each workload (bucketed as srff_nf/sizes.h buckets),
simulates them on one bottleneck link (threshold_sim.c's header has the
model) and writes DIR/results.tsv.xz (one row per configuration, mean over the
seeds), DIR/thresholds.tsv, DIR/params.json, DIR/tables.md and DIR/summary.md
(threshold_tables.py makes both again from the first three). Default DIR:
experiments/results/thresholds. Deterministic: fixed seeds throughout.

Rules (each gives N-1 thresholds for N bands, all at bucket bounds):
  bytes   equal bytes per band as MLFQ bands carry them: band i carries
          sum over flows of min(size, t_i) - min(size, t_(i-1))
  homa    Homa's homa_prio: equal bytes by flow size (a flow's bytes count
          where its size falls)
  quant   flow-count quantiles: N=2 p90; N=3 p50,p90; N=4 p50,p90,p99;
          N=8 p50,p75,p90,p95,p99,p99.5,p99.9
  pias    PIAS-style: the bucket bounds minimising the M/G/1 multi-level
          model's mean FCT at the workload's load, found exactly by dynamic
          programming (Model.search_dp; the study stops at 4 bands, as it
          did when the search was exhaustive)
  pias-sd the same search minimising the model's mean slowdown
  geo     the simple rule: t1 = max(floor, flow-count quantile q), then
          each threshold r times the previous one; (q, r) = GEO[N]: p60 and 8
          for 4 bands and more, p50 and 32 for 3 (chosen on a grid, see docs),
          as srff_nf/auto.h computes them for any number of bands
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
    q, r = GEO[n]
    ks = constrain(rule_quant(flows, nbytes, 2, (q,)), floor, 1)
    while len(ks) < n - 1:
        ks.append(bound_up(r * low(ks[-1])))
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


# --- the study --------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "results", "thresholds"))
    ap.add_argument("--quick", action="store_true", help="one seed, 5000 flows (a smoke test)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    seeds = EVAL_SEEDS[:1] if args.quick else EVAL_SEEDS
    meas = 5000 if args.quick else MEAS
    t0 = time.time()
    exe = build_sim(args.out)

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
    with open(os.path.join(args.out, "thresholds.tsv"), "w") as f:
        f.write("workload\tload\trule\tbands\tfloor\tratio\tthresholds\n")
        for (d, load, rule, n, floor, ratio), t in sorted(thr.items()):
            f.write(f"{d}\t{load}\t{rule}\t{n}\t{floor}\t{ratio}\t{','.join(map(str, t))}\n")
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
    # The tables from the committed files, as threshold_tables.py makes them
    # again (results.tsv.xz's 5 digits, not the floats in memory).
    import threshold_tables
    threshold_tables.write(args.out, *threshold_tables.load_rows(args.out))
    os.unlink(exe)
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
