# SPDX-License-Identifier: GPL-2.0
"""experiments/sizes.py and wire.py against answers known by hand."""
import bisect
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import sizes  # noqa: E402
import wire  # noqa: E402

N = 20000
# Dvoretzky-Kiefer-Wolfowitz: P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2);
# at 1e-6 a correct sampler fails once in a million seeds (the seed is fixed).
DKW = math.sqrt(math.log(2 / 1e-6) / (2 * N))


def test_rates_as_tc_writes_them():
    assert wire.parse_rate("20mbit") == 20e6
    assert wire.parse_rate("1gbit") == 1e9
    assert wire.parse_rate("100") == 100
    assert wire.parse_rate("2500kbps") == 20e6  # tc: bps are bytes
    assert wire.parse_rate("1mibit") == 1 << 20
    with pytest.raises(ValueError):
        wire.parse_rate("fast")


def test_wire_bytes_by_hand():
    assert wire.OVERHEAD == 66 and wire.MSS == 1448
    assert wire.wire_bytes(0) == 0
    assert wire.wire_bytes(1) == 67
    assert wire.wire_bytes(1448) == 1448 + 66
    assert wire.wire_bytes(1449) == 1449 + 2 * 66
    assert wire.wire_bytes(10000, mss=1000, overhead=10) == 10100


@pytest.mark.parametrize("name", ["websearch", "datamining"])
def test_table_is_the_papers(name):
    d = sizes.load(name)
    assert d.unit == 1460 and d.integral
    assert d.points[-1][1] == 1.0
    first = {"websearch": (6, 0.15), "datamining": (1, 0.5)}[name]
    assert d.points[1] == first
    assert "HKUST-SING/PIAS-NS2" in open(d.source).read()


def test_quantile_interpolates_then_rounds_up():
    d = sizes.Empirical("t", [(2, 0), (2, 0.5), (10, 1)], unit=100)
    assert d.quantile(0.0) == 200 and d.quantile(0.5) == 200  # the point mass
    assert d.quantile(0.75) == 600  # 2 + 0.25 / 0.5 * 8 = 6 units
    assert d.quantile(0.76) == 700  # 6.16 -> 7
    assert d.quantile(1.0) == 1000
    c = sizes.Empirical("t", [(2, 0), (2, 0.5), (10, 1)], unit=100, integral=False)
    assert c.quantile(0.76) == 616


def test_mean_by_hand():
    # Half at 2 units, half uniform on [2, 10]: continuous mean 0.5*2 + 0.5*6.
    c = sizes.Empirical("t", [(2, 0), (2, 0.5), (10, 1)], unit=100, integral=False)
    assert c.mean() == pytest.approx(400)
    # Rounded up: ceil of U(2, 10) is 3..10, each with probability 1/8.
    d = sizes.Empirical("t", [(2, 0), (2, 0.5), (10, 1)], unit=100)
    assert d.mean() == pytest.approx(100 * (0.5 * 2 + 0.5 * sum(range(3, 11)) / 8))
    assert sizes.Empirical("t", [(2, 0), (2, 0.5), (10, 1)], unit=100, scale=0.5).mean() == \
        pytest.approx(d.mean() / 2)


@pytest.mark.parametrize("name,scale", [("websearch", 1), ("websearch", 0.01),
                                        ("datamining", 1), ("datamining", 0.001),
                                        ("fb_hadoop", 1), ("fb_hadoop", 0.01),
                                        ("pareto", 1), ("pareto", 0.1)])
def test_sampler_matches_its_table(name, scale):
    d = sizes.load(name, scale)
    v = sorted(sizes.draw(d, N, seed=7))
    # The empirical CDF at every point of the table, within the DKW bound.
    for b, c in d.knots():
        emp = bisect.bisect_right(v, b) / N
        assert abs(emp - c) <= DKW, (b, emp, c)
        assert d.cdf(b) == pytest.approx(c, abs=1e-9)
    # The mean: heavy tails converge slowly, so the tolerance is the
    # standard error of the mean times 5, from the distribution itself.
    m = d.mean()
    var = sizes.mean_wire(d, 0, overhead=0)  # cheap check that quadrature = mean
    assert var == pytest.approx(m, rel=2e-3)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / N)
    assert abs(sum(v) / N - m) <= 5 * sd / math.sqrt(N)


def test_means_the_field_quotes():
    # pFabric/PIAS: web search ~1138 packets, data mining 5117 (x 1460 B).
    assert sizes.load("websearch").mean() / 1460 == pytest.approx(1141.4, abs=0.1)
    assert sizes.load("datamining").mean() / 1460 == pytest.approx(5117, abs=1)


FB_HADOOP = os.path.join(os.path.dirname(__file__), "dists", "fb_hadoop.cdf")


def _homa_rows():
    """The source's "bytes cdf" rows, read back from the point-mass table
    (the last cdf given for each size)."""
    rows = {}
    for line in open(FB_HADOOP):
        f = line.split("#", 1)[0].split()
        if len(f) == 2 and f[0] not in ("unit", "interpolation"):
            rows[int(f[0])] = float(f[1])
    return sorted(rows.items())


def test_fb_hadoop_loads_and_is_a_cdf():
    d = sizes.load("fb_hadoop")
    assert d.name == "fb_hadoop" and d.unit == 1 and d.integral
    text = open(d.source).read()
    assert "PlatformLab/HomaSimulation" in text
    assert "f6ac2d08fdd9ebb120ed86010ea035d1a5d9d0af" in text
    xs, cs = [x for x, _ in d.points], [c for _, c in d.points]
    assert all(a <= b for a, b in zip(xs, xs[1:]))
    assert all(a <= b for a, b in zip(cs, cs[1:]))
    assert cs[0] == 0 and cs[-1] == 1.0 and xs[-1] == 10_000_000
    # Homa draws a step CDF: every size after the first is a point mass,
    # given twice, the first time at the cdf of the size before it.
    assert d.points[0] == (50, 0)
    assert len(d.points) == 1 + 2 * 460
    for i in range(1, len(d.points), 2):
        assert d.points[i][0] == d.points[i + 1][0]
        assert d.points[i][1] == d.points[i - 1][1]
    cdfs = [d.cdf(b) for b, _ in d.knots()]
    assert all(a <= b for a, b in zip(cdfs, cdfs[1:])) and cdfs[-1] == 1.0
    assert sizes.load("fb_hadoop", 0.01).mean() == pytest.approx(d.mean() / 100)


def test_fb_hadoop_numbers_from_its_rows():
    rows = _homa_rows()
    assert len(rows) == 461 and rows[:2] == [(50, 0.0), (53, 0.00074)]
    # Homa's sampler: the smallest size whose cdf is >= u.
    mean = sum((c1 - c0) * x1 for (_, c0), (x1, c1) in zip(rows, rows[1:]))
    second = sum((c1 - c0) * x1 ** 2 for (_, c0), (x1, c1) in zip(rows, rows[1:]))
    sd = math.sqrt(second - mean ** 2)

    def step(u):
        return next(x for x, c in rows if c >= u)

    assert mean == pytest.approx(127796.6, abs=0.05)  # the source's first line
    d = sizes.load("fb_hadoop")
    assert d.mean() == pytest.approx(mean, rel=1e-12)
    assert (step(0.5), step(0.6)) == (662, 960)
    for u in (0.001, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 0.99, 0.999, 1.0):
        assert d.quantile(u) == step(u), u
    # Sampled: the median within DKW of the table's, the mean within five
    # standard errors (the table's own standard deviation, 0.71 MB).
    v = sorted(sizes.draw(d, N, seed=11))
    med = v[N // 2]
    assert step(0.5 - DKW) <= med <= step(0.5 + DKW)
    assert abs(sum(v) / N - mean) <= 5 * sd / math.sqrt(N)
    assert min(v) >= 53 and max(v) <= 10_000_000


def test_scale_keeps_the_shape():
    a, b = sizes.load("websearch"), sizes.load("websearch", 0.01)
    for u in (0.05, 0.3, 0.5, 0.9, 0.999):
        assert b.quantile(u) == round(a.quantile(u) * 0.01)
    assert b.mean() == pytest.approx(a.mean() * 0.01)


def test_seeded_and_deterministic():
    d = sizes.load("datamining", 0.01)
    assert sizes.draw(d, 100, 3) == sizes.draw(d, 100, 3)
    assert sizes.draw(d, 100, 3) != sizes.draw(d, 100, 4)
    assert min(sizes.draw(d, 1000, 3)) >= 1


def test_pareto_is_web_guests_law():
    import random
    rng, d = random.Random(1), sizes.load("pareto")
    # web-guest.sh: min(5 << 20, int(4000 * (1 - rng.random()) ** (-1 / 0.9)))
    want = [min(5 << 20, int(4000 * (1 - rng.random()) ** (-1 / 0.9))) for _ in range(300)]
    assert sizes.draw(d, 300, 1) == want


def test_arrival_rate_by_hand():
    # Every response 1448 B of body + 52 of header = 1500 B: two segments,
    # 1500 + 132 = 1632 B on the wire; half of 1 Mbit/s is 38.29 a second.
    d = sizes.Empirical("one", [(1448, 0), (1448, 1)])
    assert sizes.mean_wire(d, 52) == 1632
    assert sizes.arrival_rate(d, 0.5, 1e6, header=52) == pytest.approx(0.5e6 / 8 / 1632)


def test_bad_tables(tmp_path):
    with pytest.raises(ValueError):
        sizes.Empirical("t", [(2, 0), (1, 1)])
    with pytest.raises(ValueError):
        sizes.Empirical("t", [(2, 0), (3, 0.9)])
    with pytest.raises(ValueError):
        sizes.load("nosuch")
    f = tmp_path / "x.cdf"
    f.write_text("unit 10\n# comment\n1 0\n3 1\n")
    assert sizes.load(str(f)).quantile(0.5) == 20


def test_cli(capsys):
    sizes.main(["sample", "websearch", "3", "--seed", "1", "--scale", "0.01"])
    assert len(capsys.readouterr().out.split()) == 3
    sizes.main(["rate", "websearch", "--load", "0.5", "--rate", "20mbit", "--scale", "0.01"])
    assert float(capsys.readouterr().out) > 0
    sizes.main(["show", "fb_hadoop"])
    out = capsys.readouterr().out
    assert "mean 127796.6 B" in out and "p50    662 B" in out
