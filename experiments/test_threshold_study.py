# SPDX-License-Identifier: GPL-2.0
"""Known answers for threshold_sim.c and threshold_study.py's rules.

    python3 -m pytest experiments/test_threshold_study.py
"""
import os
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tabfile  # noqa: E402
import threshold_study as T  # noqa: E402

R = 12.5e6
EPS = 1e-9


@pytest.fixture(scope="module")
def sim():
    d = tempfile.mkdtemp()
    exe = T.build_sim(d)
    yield exe
    os.unlink(exe)
    os.rmdir(d)


def run(sim, trace, **kw):
    """FCTs of the flows of trace [(arrival s, size bytes)]."""
    opts = dict(rate=R, leaf="fifo", first=1000, later=1000, window=1000)
    opts.update(kw)
    words = [f"{k}={v}" for k, v in opts.items()]
    words.append("trace=" + ",".join(f"{t!r}:{s}" for t, s in trace))
    return T.run_jobs(sim, [" ".join(words)])[0]["fct"]


# --- the simulator ------------------------------------------------------------

@pytest.mark.parametrize("leaf", ["fifo", "fair", "fq", "srpt"])
@pytest.mark.parametrize("skb", [T.SKB_GSO, T.SKB_MTU])
def test_single_flow_fct_is_size_over_rate(sim, leaf, skb):
    (fct,) = run(sim, [(0.0, 1_000_000)], leaf=leaf, **skb)
    assert fct == pytest.approx(1_000_000 / R, abs=EPS)


def test_strict_priority_two_flows(sim):
    # A (1 MB) is past the 10 KB threshold, in band 1, when B (5 KB) arrives
    # mid-packet: B waits only for A's packet on the wire, then goes first.
    pkt = 1000 / R
    a, b = run(sim, [(0.0, 1_000_000), (0.04 + pkt / 4, 5000)], thr="10000")
    assert b == pytest.approx(3 * pkt / 4 + 5 * pkt, abs=EPS)
    assert a == pytest.approx(1_005_000 / R, abs=EPS)


def test_one_band_fifo_two_flows(sim):
    # without thresholds, one packet per flow queued: FIFO alternates them
    pkt = 1000 / R
    a, b = run(sim, [(0.0, 1_000_000), (0.04 + pkt / 4, 5000)])
    assert b == pytest.approx(3 * pkt / 4 + 9 * pkt, abs=EPS)
    assert a == pytest.approx(1_005_000 / R, abs=EPS)


def test_fair_shares_bytes(sim):
    # two equal flows at once: fair finishes them one packet apart, both at ~2x
    a, b = run(sim, [(0.0, 100_000), (0.0, 100_000)], leaf="fair", window=10_000)
    assert sorted([a, b]) == pytest.approx([199_000 / R, 200_000 / R], abs=EPS)


def test_srpt_serves_the_shortest_first(sim):
    a, b, c = run(sim, [(0.0, 30_000), (0.0, 10_000), (0.0, 20_000)], leaf="srpt")
    assert (b, c, a) == pytest.approx((10_000 / R, 30_000 / R, 60_000 / R), abs=EPS)


def test_fq_new_flow_boost(sim):
    # fq_codel: B's skb (its queue was empty) goes before A's queued skbs;
    # plain fair queueing (equal finish tags, A's earlier) sends one of A's first
    pkt = 1000 / R
    trace = [(0.0, 1_000_000), (0.01 + pkt / 4, 1000)]
    _, b = run(sim, trace, leaf="fq", window=50_000)
    assert b == pytest.approx(3 * pkt / 4 + pkt, abs=EPS)
    _, b = run(sim, trace, leaf="fair", window=50_000)
    assert b == pytest.approx(3 * pkt / 4 + 2 * pkt, abs=EPS)


def test_sampled_mean_is_the_cdf_mean(sim):
    sizes = T.sample_sizes(sim, T.DISTS["websearch"], 3, 200_000)
    assert sum(sizes) / len(sizes) == pytest.approx(1138 * 1460, rel=0.02)
    assert min(sizes) == 6 * 1460 and max(sizes) <= 20000 * 1460


# --- the histogram and the rules ------------------------------------------------

def test_buckets_match_sizes_h():
    assert [T.bucket(x) for x in (0, 255, 256, 1023, 1024, 1279, 1280, 2047, 2048, 2559, 2560)] \
        == [0, 0, 1, 3, 4, 4, 5, 7, 8, 8, 9]
    assert [T.low(b) for b in (0, 3, 4, 5, 7, 8, 9, 12)] == \
        [0, 768, 1024, 1280, 1792, 2048, 2560, 4096]
    for x in (300, 1460, 14600, 64240, 10**6, 10**9):
        b = T.bucket(x)
        assert T.low(b) <= x < T.low(b + 1)
    assert T.bucket(1 << 60) == T.NBUCKETS - 1


def hist_one_size(size, n=1000):
    flows, nbytes = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    flows[T.bucket(size)] = n
    nbytes[T.bucket(size)] = n * size
    return flows, nbytes


def test_equal_bytes_one_size():
    # every flow sends 1 MiB: band i carries the bytes between t(i-1) and t(i)
    h = hist_one_size(1 << 20)
    assert T.thresholds("bytes", h, 0.8, 2, 0, 1) == [1 << 19]
    assert T.thresholds("bytes", h, 0.8, 4, 0, 1) == [1 << 18, 1 << 19, 3 << 18]


def uniform(lo=10, hi=20):
    """Buckets lo..hi-1 hold 100 flows each, sizes at the bucket's low bound."""
    flows, nbytes = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    for b in range(lo, hi):
        flows[b] = 100
        nbytes[b] = 100 * T.low(b)
    return flows, nbytes


def test_homa_and_quantiles_on_uniform_histograms():
    flows, nbytes = uniform()
    eq = [0] * T.NBUCKETS
    for b in range(10, 20):
        eq[b] = 1000                       # equal bytes in every bucket
    assert T.thresholds("homa", (flows, eq), 0.8, 2, 0, 1) == [T.low(15)]
    assert T.thresholds("quant", (flows, nbytes), 0.8, 3, 0, 1) == [T.low(15), T.low(19)]
    assert T.thresholds("quant", (flows, nbytes), 0.8, 2, 0, 1) == [T.low(19)]


def test_geo_rule():
    flows, nbytes = uniform()
    # p60 of flows is low(16) = 8 KB; the floor lifts it to 16 KB; x8 after
    assert T.thresholds("geo", (flows, nbytes), 0.8, 4, 0, 1) == [8192, 65536, 524288]
    assert T.thresholds("geo", (flows, nbytes), 0.8, 4, 16384, 1) == [16384, 131072, 1 << 20]


def test_constraints():
    k = [T.bound_up(x) for x in (1000, 2000, 3000)]
    assert [T.low(b) for b in T.constrain(k, 16384, 1)] == [16384, 20480, 24576]
    assert [T.low(b) for b in T.constrain(k, 0, 4)] == [1024, 4096, 16384]


def test_model_is_mg1_fcfs_with_one_level_and_fb_in_the_limit():
    h = hist_one_size(1 << 20)
    m = T.Model(*h, 0.5)
    x = float(1 << 20)
    # one level: FCFS, T = x + lambda x^2 / (2 (1 - rho)), lambda = rho / x
    assert m.cost([]) == pytest.approx(x + 0.5 * x / (2 * 0.5))
    assert m.cost([], slowdown=True) == pytest.approx(1 + 0.5 / (2 * 0.5))


def test_pias_search_finds_the_obvious_split():
    # many 2 KB flows, a few 10 MB ones: the threshold separates them
    flows, nbytes = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    for size, n in ((2048, 10000), (10 << 20, 10)):
        flows[T.bucket(size)] += n
        nbytes[T.bucket(size)] += n * size
    for rule in ("pias", "pias-sd"):
        (t,) = T.thresholds(rule, (flows, nbytes), 0.8, 2, 0, 1)
        assert 2048 < t <= 10 << 20


def geo_kernel(flows):
    """docs/thresholds.md's C version of geo (4 bands), in integers."""
    total = sum(flows)
    need, cum, k = -(-total * 3 // 5), 0, 0
    while k < T.NBUCKETS and cum < need:
        cum += flows[k]
        k += 1
    t0 = max(T.low(min(k, T.NBUCKETS - 1)), 16384)
    return [t0, t0 << 3, t0 << 6]


def test_geo_kernel_version_is_the_rule():
    import random
    rng = random.Random(5)
    for _ in range(2000):
        flows = [0] * T.NBUCKETS
        for _ in range(rng.randint(1, 50)):
            flows[rng.randint(0, 70)] += rng.randint(1, 1000)
        nbytes = [f * T.low(b) for b, f in enumerate(flows)]
        assert T.thresholds("geo", (flows, nbytes), 0.8, 4, 16384, 1) == geo_kernel(flows)


def test_eight_bands():
    """8 bands: geo goes on x8 from p60 (srff_nf/auto.h for 4+ bands, the
    FTP experiment's 16K..4G); quant takes its 7 quantiles; the searched
    rules stop at 4 bands."""
    flows, nbytes = uniform()
    t = T.thresholds("geo", (flows, nbytes), 0.8, 8, 16384, 1)
    assert t == [16384 << (3 * i) for i in range(7)]
    q = T.thresholds("quant", (flows, nbytes), 0.8, 8, 0, 1)
    assert len(q) == 7 and q == sorted(set(q))
    pairs = T.rule_bands()
    assert ("geo", 8) in pairs and ("bytes", 8) in pairs and ("quant", 8) in pairs
    assert ("pias", 8) not in pairs and ("pias-sd", 8) not in pairs and ("pias", 4) in pairs


# --- band_study's additions: DRR between the bands, the live-table rule -----

def test_drr_strict_prefix_is_strict_priority(sim):
    # ETS's `strict 1`: band 0 before the DRR bands, as thr= alone does
    pkt = 1000 / R
    trace = [(0.0, 1_000_000), (0.04 + pkt / 4, 5000)]
    assert run(sim, trace, thr="10000", drr="0,1000") == run(sim, trace, thr="10000")


def test_drr_shares_by_quanta(sim):
    # B (band 0, quantum 2000) and A (band 1, quantum 1000), both backlogged:
    # two of B's packets to one of A's, where strict priority sends B's 5
    # packets in a row (test_strict_priority_two_flows).
    pkt = 1000 / R
    a, b = run(sim, [(0.0, 1_000_000), (0.04 + pkt / 4, 5000)], thr="10000",
               drr="2000,1000")
    strict = 3 * pkt / 4 + 5 * pkt
    assert strict + 2 * pkt - EPS <= b <= strict + 3 * pkt + EPS
    assert a == pytest.approx(1_005_000 / R, abs=EPS)   # work-conserving


def test_las_rule_puts_a_new_flow_above_the_active_ones(sim):
    # A (40 MB) alone; at t=0.5 the rule sees it at ~6 MB and sets the first
    # threshold at its bucket; B (1 MB, t=1) then stays above it all along,
    # finishing in its own time plus at most one of A's skbs. One band: it
    # shares the link with A (fair leaf), nearly twice as long.
    a_only = 40_000_000
    opts = dict(leaf="fair", first=1000, later=1000, window=1000)
    _, b = run(sim, [(0.0, a_only), (1.0, 1_000_000)], las="0.5,1", **opts)
    assert b == pytest.approx(1_000_000 / R, abs=2 * 1000 / R)
    _, b1 = run(sim, [(0.0, a_only), (1.0, 1_000_000)], **opts)
    assert b1 > 1.9 * 1_000_000 / R


def test_las_rule_floor_before_any_flow(sim):
    # no active flow yet: the thresholds are the floor ladder (16 KiB, then
    # the next bucket up), so a flow's first 16 KiB are in band 0
    pkt = 1000 / R
    opts = dict(leaf="fifo", first=1000, later=1000, window=1000)
    a, b = run(sim, [(0.0, 1_000_000), (0.002 + pkt / 4, 16000)], las="10,2", **opts)
    # B (16 KB < 16 KiB) in band 0 throughout; A (25 KB sent) below it, in
    # band 2 (>= 20 KiB): B waits only for A's packet on the wire
    assert b == pytest.approx(3 * pkt / 4 + 16 * pkt, abs=EPS)


def test_band_study_table_regenerates(tmp_path):
    import band_study
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "bands")
    for f in ("results.tsv",):
        with open(os.path.join(src, f)) as i, open(tmp_path / f, "w") as o:
            o.write(i.read())
    band_study.write_table(str(tmp_path))
    with open(os.path.join(src, "table.md")) as a, open(tmp_path / "table.md") as b:
        assert a.read() == b.read()


def test_stall_of_a_large_flow(sim):
    # A (2 MB, >= big) past the 600 KB threshold when B (500 KB, below it
    # throughout) arrives: strict priority sends all of B before A's next
    # packet, so A's longest wait is B's 500 packets and the one on the
    # wire; in one fair band, about a packet.
    pkt = 1000 / R
    trace = "trace=0.0:2000000,0.1:500000"
    base = f"rate={R} first=1000 later=1000 window=1000 {trace}"
    strict, fair = T.run_jobs(sim, [f"{base} leaf=fair thr=600000", f"{base} leaf=fair"])
    assert strict["stall_big_max_ms"] == pytest.approx(1e3 * 501 * pkt, abs=1e3 * pkt)
    assert strict["stall_big_mean_ms"] == strict["stall_big_max_ms"]   # one large flow
    assert fair["stall_big_max_ms"] <= 1e3 * 2 * pkt + 1e-6


def test_assured_rate_serves_a_starved_band(sim):
    # The same two flows: with band 1 assured a quarter of the link, A is
    # sent between B's packets instead of after all of them; B still
    # finishes first, a little later than under strict priority.
    trace = "trace=0.0:2000000,0.1:500000"
    base = f"rate={R} first=1000 later=1000 window=1000 {trace} leaf=fair thr=600000"
    strict, assured = T.run_jobs(sim, [base, f"{base} assured=0,{R / 4}"])
    assert assured["stall_big_max_ms"] < strict["stall_big_max_ms"] / 2
    assert strict["fct"][1] < assured["fct"][1] < strict["fct"][1] * 1.5
    bad = T.run_jobs(sim, [f"{base} assured={R / 4}"])[0]     # not one rate per band
    assert bad == {"error": "bad job"}


def test_threshold_tables_regenerate_from_results_xz(tmp_path):
    # The committed results.tsv.xz gives the committed tables; write_tsv
    # writes the same text back, xz'd, and a plain results.tsv (as older
    # studies wrote) reads the same.
    import lzma
    import shutil
    import threshold_tables
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "thresholds")
    shutil.copy(os.path.join(src, "params.json"), tmp_path)
    shutil.copy(os.path.join(src, "results.tsv.xz"), tmp_path)
    threshold_tables.write(str(tmp_path), *threshold_tables.load_rows(str(tmp_path)))
    # summary.md is committed (docs include it); tables.md, every table,
    # is made by report.sh and not committed (the 2 MB cap): it holds the
    # summary's rows too.
    with open(os.path.join(src, "summary.md")) as a, open(tmp_path / "summary.md") as b:
        assert a.read() == b.read()
    assert (tmp_path / "tables.md").read_text().count("\n| ") > 100
    text = lzma.open(tmp_path / "results.tsv.xz", "rt").read()
    header, *lines = text.splitlines()
    cols = header.split("\t")
    rows = [dict(zip(cols, line.split("\t"))) for line in lines]
    again = tmp_path / "again"
    again.mkdir()
    T.write_tsv(str(again / "results.tsv.xz"), rows)
    assert lzma.open(again / "results.tsv.xz", "rt").read() == text
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(os.path.join(src, "params.json"), plain)
    (plain / "results.tsv").write_text(text)
    assert threshold_tables.load_rows(str(plain)) == threshold_tables.load_rows(str(tmp_path))


# --- the learning study's additions: a change of mix, the floor-pinned
# live-table rule, the threshold log ---------------------------------------

def point_mass(tmp_path, name, size):
    p = tmp_path / (name + ".txt")
    p.write_text(f"{size} 0\n{size} 1\n")
    return "cdf:" + str(p)


def test_mix_changes_at_the_given_time(sim, tmp_path):
    # 1000-byte flows at load 0.5 of 1 MB/s (500/s) until t=1, then
    # 5000-byte flows (100/s) until tmax=2: Poisson counts about 500 and
    # 100, every flow of the first mix small (< 3000), of the second not.
    a, b = point_mass(tmp_path, "a", 1000), point_mass(tmp_path, "b", 5000)
    (r,) = T.run_jobs(sim, [f"dist={a} dist2={b} at=1 load=0.5 rate=1e6 warm=0 meas=100000 "
                            "tmax=2 small=3000 big=1e9 leaf=fifo first=1000 later=1000 "
                            "window=1000"])
    small, mid = r["n"][0], r["n"][1]
    assert abs(small - 500) < 4 * 500 ** 0.5 and abs(mid - 100) < 4 * 100 ** 0.5
    # M/D/1 at load 0.5: a 1 ms packet waits 0.5 ms on average
    assert r["fct_ms"][0] == pytest.approx(1.5, rel=0.15)
    (bad,) = T.run_jobs(sim, [f"dist={a} at=1 load=0.5"])   # a switch needs dist2
    assert bad == {"error": "bad job"}


def thr_log(sim, trace, las, **kw):
    opts = dict(rate=1 << 20, leaf="fair", first=1024, later=1024, window=1024)
    opts.update(kw)
    words = [f"{k}={v}" for k, v in opts.items()] + [f"las={las}", "thrlog=1"]
    words.append("trace=" + ",".join(f"{t!r}:{s}" for t, s in trace))
    return T.run_jobs(sim, [" ".join(words)])[0]["thr_log"]


def test_las_floor_mode_quantiles(sim):
    # Two equal flows from t=0 share the link (1 MiB/s, 1 KiB skbs, one
    # queued each): at t=1 one has enqueued 513 KiB, the other 512 KiB,
    # both in the bucket [512 KiB, 640 KiB). Mode 1: the floor, then the
    # median of the active flows past it, at that bucket's low bound; with
    # 4 bands the 1/3 and 2/3 quantiles are the same bucket, so the third
    # threshold goes one bucket up. Before the first period: the floor ladder.
    trace = [(0.0, 4 << 20), (0.0, 4 << 20)]
    log = thr_log(sim, trace, "1,2,1,0")
    assert log[0] == [0, 16384, 20480]
    assert log[1] == [1.0, 16384, 524288]
    log = thr_log(sim, trace, "1,3,1,0")
    assert log[1] == [1.0, 16384, 524288, 655360]
    # mode 0 (band_study's las): quantiles 1/3, 2/3 of all active flows,
    # the first at least the floor, the histogram halved each period
    log = thr_log(sim, trace, "1,2")
    assert log[1] == [1.0, 524288, 655360]


def test_las_floor_mode_ignores_flows_under_the_floor(sim):
    # A (4 MiB) alone from t=0 has enqueued 1019 KiB when B (100 KiB)
    # arrives at 0.995, in band 0: A's next skb (1020 KiB) waits behind
    # B's. At t=1 B has enqueued ~6 KiB, under the floor: not counted, so
    # A alone sets the median, the low bound of [896 KiB, 1 MiB); counted,
    # B would have pulled it down to the floor ladder's 20 KiB.
    log = thr_log(sim, [(0.0, 4 << 20), (0.995, 100 << 10)], "1,2,1,0")
    assert log[1] == [1.0, 16384, T.low(T.bucket(1020 << 10))]


def test_las_floor_mode_serves_a_new_flow_first(sim):
    # As test_las_rule_puts_a_new_flow_above_the_active_ones, in mode 1
    # with nothing kept from earlier periods: B (1 MB) arrives while A
    # (40 MB) is past the median threshold, and finishes in its own time
    # plus at most one of A's skbs.
    opts = dict(leaf="fair", first=1000, later=1000, window=1000)
    _, b = run(sim, [(0.0, 40_000_000), (1.0, 1_000_000)], las="0.5,2,1,0", **opts)
    assert b == pytest.approx(1_000_000 / R, abs=2 * 1000 / R)


def test_thr_log_static_and_tmax(sim):
    # Fixed thresholds: logged once, at time 0. tmax stops the run; the
    # flow not done by then is left out of the figures.
    (r,) = T.run_jobs(sim, [f"rate={R} leaf=fifo first=1000 later=1000 window=1000 thr=5000 "
                            "thrlog=1 tmax=0.05 trace=0.0:10000,0.01:10000000"])
    assert r["thr_log"] == [[0, 5000]]
    assert r["n"][3] == 1 and r["fct"][1] == 0


# --- PIAS by dynamic programming ------------------------------------------

def rand_hist(rng, lo=8, hi=40):
    flows, nbytes = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    for b in rng.sample(range(lo, hi), rng.randint(3, 12)):
        flows[b] = rng.randint(1, 5000)
        nbytes[b] = flows[b] * rng.randint(T.low(b), T.low(b + 1) - 1)
    return flows, nbytes


def test_pias_dp_is_the_exhaustive_search():
    import random
    rng = random.Random(11)
    for _ in range(150):
        h = rand_hist(rng)
        m = T.Model(*h, rng.choice((0.5, 0.8)))
        for n in (2, 3, 4):
            for floor, ratio in ((0, 1), (16384, 1), (0, 8)):
                for sd in (False, True):
                    ex, dp = m.search(n, floor, ratio, sd), m.search_dp(n, floor, ratio, sd)
                    if ex is None:
                        assert dp is None
                        continue
                    assert m.cost(dp, sd) <= m.cost(ex, sd) * (1 + 1e-12)
                    assert dp == ex


def test_pias_dp_gives_the_committed_searched_thresholds(sim):
    # The study's pias/pias-sd rows (thresholds.tsv.xz, found by the exhaustive
    # search) again, on the same training histograms.
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "thresholds")
    ref = {}
    with tabfile.open_text(os.path.join(src, "thresholds.tsv.xz")) as f:
        next(f)
        for line in f:
            d, l, r, n, fl, ra, t = line.rstrip("\n").split("\t")
            ref[(d, float(l), r, int(n), int(fl), int(ra))] = t
    for i, d in enumerate(T.DISTS):
        h = T.histogram(T.sample_sizes(sim, T.DISTS[d], T.TRAIN_SEED + i, T.TRAIN_SAMPLES))
        for l in T.LOADS:
            for r in ("pias", "pias-sd"):
                for n in (2, 3, 4):
                    for fl in T.FLOORS:
                        for ra in T.RATIOS:
                            t = T.thresholds(r, h, l, n, fl, ra)
                            assert ",".join(map(str, t)) == ref[(d, l, r, n, fl, ra)]


def test_pias_eight_bands_separates_eight_sizes():
    # Eight sizes three buckets or more apart: the optimum serves each in
    # its own level (shortest first), each threshold the lowest bound above
    # a size (a higher one only adds the next level's residual work).
    sizes = [1500, 20000, 300_000, 4_000_000, 50_000_000, 600_000_000, 7 * 10**9, 8 * 10**10]
    flows, nbytes = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    for s, k in zip(sizes, (50000, 20000, 5000, 1000, 100, 10, 2, 1)):
        flows[T.bucket(s)] += k
        nbytes[T.bucket(s)] += k * s
    for rule in ("pias", "pias-sd"):
        t = T.thresholds(rule, (flows, nbytes), 0.5, 8, 0, 1)
        assert t == [T.low(T.bucket(s) + 1) for s in sizes[:-1]]


# --- the learning part: Homa at 8 bands, the kernel's decayed histogram,
# the convergence scores, the FTP trace, the tables ------------------------

def test_homa_eight_bands_equal_bytes():
    # Eight buckets with the same bytes: homa_prio's cutoffs fall at each
    # bucket's upper bound; bytes (MLFQ) counts min(size, t) of the larger
    # flows too, so it puts its first thresholds lower.
    flows, nbytes = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    for b in range(40, 48):
        nbytes[b] = 1 << 30
        flows[b] = (1 << 30) // T.low(b)
    assert T.thresholds("homa", (flows, nbytes), 0.8, 8, 0, 1) == \
        [T.low(b) for b in range(41, 48)]
    t = T.thresholds("bytes", (flows, nbytes), 0.8, 8, 0, 1)
    assert len(t) == 7 and t[0] <= T.low(41) and t == sorted(set(t))


def test_kernel_histogram_decays_as_auto_c():
    # srff_nf/user/test_auto.c's auto_decay: 6400 flows, nothing new, 1/64
    # per update while over 4 * min_flows (min_flows 100): 6400 (63/64)^64
    a = T.KernelAuto()
    nf, nb = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    nf[T.bucket(5000)], nb[T.bucket(5000)] = 6400, 6400 * 5000
    a.update(nf, nb, 100)
    assert a.count() == 6400
    zero = [0] * T.NBUCKETS
    a.update(zero, zero, 100)
    assert a.count() == 6300
    for _ in range(63):
        a.update(zero, zero, 100)
    assert 2330 <= a.count() <= 2340
    assert a.flows[T.bucket(10**9)] == 0
    # A bucket that gets nothing new, while others keep the decay going
    # (100 new flows an update, min_flows 10): auto.c rounds its decay down,
    # so the bucket keeps 63 (a quarter of a flow) for ever; zero=True
    # rounds up and empties it.
    big, big_b = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    big[T.bucket(10**9)], big_b[T.bucket(10**9)] = 10, 10**10
    more, more_b = [0] * T.NBUCKETS, [0] * T.NBUCKETS
    more[T.bucket(5000)], more_b[T.bucket(5000)] = 100, 500000
    for zero, left, left_b in ((False, 63, 63), (True, 0, 0)):
        z = T.KernelAuto(zero=zero)
        z.update(big, big_b, 10)
        for _ in range(2000):
            z.update(more, more_b, 10)
        assert z.flows[T.bucket(10**9)] == left
        assert z.nbytes[T.bucket(10**9)] <= left_b
        assert z.count() > 40 * 10


def test_moved_is_srff_auto_moved():
    assert not T.moved((1000, 8000), (1250, 8000))      # by a quarter: not more
    assert T.moved((1000, 8000), (1251, 8000))
    assert T.moved((1000, 8000), (1000, 5999))


def test_kernel_learn_installs_after_min_flows_and_when_moved():
    # 999 flows of 30 kB: the default ladder stays (16 KiB, 128 KiB); one
    # more and geo's 3-band rule installs the median's bucket bound, 32768,
    # and 32 times it. 30 kB flows go on: nothing moves; a burst of 1 MB
    # flows moves the median, and that is installed.
    stream = [(0.001 * i, 30000) for i in range(999)]
    log = T.kernel_learn("geo", 3, stream, 5.0)
    assert [th for _, th in log] == [(16384, 131072)] * 2
    stream += [(2.6, 30000)] + [(5 + 0.001 * i, 30000) for i in range(3000)]
    log = T.kernel_learn("geo", 3, stream, 10.0)
    assert [th for _, th in log] == [(16384, 131072)] + [(32768, 1 << 20)] * 3
    stream += [(10.1 + 0.0001 * i, 10**6) for i in range(5000)]
    log = T.kernel_learn("geo", 3, stream, 12.5)
    assert log[-1][1] == (T.low(T.bucket(10**6) + 1), 32 * T.low(T.bucket(10**6) + 1))


def test_conv_scores_on_a_known_log():
    # (100,) until t=250, then (1000,), one period a second: the trailing
    # 60 s median (t-59..t, the 31st of 60) turns at t=280, 80 s after the
    # change at 200, when one of the flows below has ended; nothing moves in
    # the steady half.
    log = [(float(t), (100,) if t <= 250 else (1000,)) for t in range(1, 1001)]
    sc = T.conv_scores(log, 200.0, 1000.0, [199.0, 200.5, 280.5, 900.0], prev=(100,))
    assert sc["first_s"] == 80 and sc["settle_s"] == 80
    assert sc["first_flows"] == 1 and sc["settle_flows"] == 1
    assert sc["moved"] == 1 and sc["moves_per_h"] == 0 and sc["spread"] == 1
    assert sc["ref"] == "1000"
    sc = T.conv_scores(log, 200.0, 1000.0, None, prev=(900,))
    assert sc["moved"] == 0 and sc["first_flows"] is None


def test_learnt_sets_weigh_by_time():
    log = [(float(t), (1,) if t % 20 < 14 else (2,) if t % 20 < 19 else (3,))
           for t in range(1, 2001)]
    sets = T.learnt_sets(log, 0.0, 2000.0)
    assert [th for th, _ in sets] == [(1,), (2,)]
    assert [round(w, 4) for _, w in sets] == [round(14 / 19, 4), round(5 / 19, 4)]


def test_ftp_trace_starts_the_files_on_an_idle_link(sim):
    trace = T.ftp_trace(sim, "websearch", 0.8)
    warm, files = trace[:-3], trace[-3:]
    assert [s for _, s in files] == list(T.FTP_FILES)
    assert [t - files[0][0] for t, _ in files] == [0, T.FTP_GAP, 2 * T.FTP_GAP]
    assert warm and max(t for t, _ in warm) < T.FTP_WARM_S
    # every warm-up flow is done (under any work-conserving order) by then
    fct = T.run_jobs(sim, [f"rate={T.FTP_RATE} leaf=fq trace=" +
                           ",".join(f"{a!r}:{s}" for a, s in warm)])[0]["fct"]
    assert max(a + f for (a, _), f in zip(warm, fct)) <= files[0][0] - 1



def test_learning_tables_regenerate(tmp_path):
    import shutil
    import threshold_tables
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "thresholds")
    for f in ("learning.json", "learning.tsv.xz"):
        shutil.copy(os.path.join(src, f), tmp_path)
    assert threshold_tables.write_learning(str(tmp_path))
    with open(os.path.join(src, "learning-summary.md")) as a, \
            open(tmp_path / "learning-summary.md") as b:
        assert a.read() == b.read()


def test_kernel_learn_is_auto_c():
    # srff_nf/user/test_auto.c's auto_converges_then_holds, through this
    # copy of auto.c and main.c: 8 bands, mix A (70 flows of 200 kB, 30 of
    # 5 MB a period) installed at the 10th period, mix B (70 of 1 kB, 30 of
    # 50 MB) at B's 116th, and nothing after in 2100 more.
    stream = []
    for k in range(2300):
        small, big = (200000, 5000000) if k < 100 else (1000, 50000000)
        t = (k + 1) * T.K_PERIOD - 1.0
        stream += [(t, small)] * 70 + [(t, big)] * 30
    log = T.kernel_learn("geo", 8, stream, 2300 * T.K_PERIOD)
    changes = [(i + 1, th) for i, (_, th) in enumerate(log) if i and th != log[i - 1][1]]
    assert changes == [(10, tuple(229376 << (3 * i) for i in range(7))),
                       (216, tuple(16384 << (3 * i) for i in range(7)))]
