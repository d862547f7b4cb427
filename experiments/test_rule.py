# SPDX-License-Identifier: GPL-2.0
"""rule.py: a threshold rule's thresholds for the open-loop experiment's
workloads (PIAS's, span's, geo's)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rule  # noqa: E402
import threshold_study as ts  # noqa: E402


def test_thresholds_for_each_band_count(capsys):
    """BANDS - 1 thresholds, rising, the first at least 16 KiB, each a
    bucket bound srff's histogram can tell apart; the same every call."""
    for name in rule.RULES:
        for dist, scale in (("websearch", 0.0625), ("fb_hadoop", 1.0), ("datamining", 0.01)):
            for bands in (3, 8):
                assert rule.main([name, dist, str(scale), "0.8", str(bands)]) == 0
                t = [int(x) for x in capsys.readouterr().out.strip().split(",")]
                assert len(t) == bands - 1
                assert t[0] >= 16384 and t == sorted(set(t))
                assert all(ts.low(ts.bucket(x)) == x for x in t)
                assert rule.rule_thresholds(name, dist, scale, 0.8, bands) == t


def test_follows_the_sizes():
    """Larger flows, larger thresholds: web search's sizes unscaled against
    the 1/16 the guest's 20 Mbit/s link carries."""
    for name in ("pias", "span"):
        small = rule.rule_thresholds(name, "websearch", 0.0625, 0.8, 3)
        big = rule.rule_thresholds(name, "websearch", 1.0, 0.8, 3)
        assert big[-1] > small[-1]


K = 1024


def test_span_spends_the_bands_where_the_sizes_are():
    """Web search at the guest's scale: geo's 8 bands put everything between
    16 KiB and its largest responses (1.8 MB) in 3 bands and keep 4 above
    them; span puts 5 there (x2.83 apart, up to twice the mean distance of
    the flows above 16 KiB), and 2 beyond, 8 times apart, for what outgrows
    every response."""
    geo = rule.rule_thresholds("geo", "websearch", 0.0625, 0.8, 8)
    span = rule.rule_thresholds("span", "websearch", 0.0625, 0.8, 8)
    assert geo == [16 * K * 8 ** i for i in range(7)]
    assert span == [16 * K, 48 * K, 128 * K, 384 * K, 1024 * K, 8192 * K, 65536 * K]
    # 4 bands: one step, capped at x8, and one beyond: geo's.
    assert rule.rule_thresholds("span", "websearch", 0.0625, 0.8, 4) == geo[:3]


def test_span_is_geo_with_its_spare_bands_moved_down():
    """A narrow mix (every flow 20 kB): span keeps geo's t1, 8 t1, 64 t1,
    512 t1 and 4096 t1 and spends the two thresholds geo puts past 32768 t1
    between t1 and 64 t1. A mix whose flows above t1 sit 16 powers of two
    above it steps x8, as geo does. Up to 6 bands span is geo."""
    narrow = ts.histogram([20000] * 1000)
    wide = ts.histogram([1000] * 600 + [1 << 30] * 400)
    geo = ts.thresholds("geo", narrow, 0.8, 8, ts.DEFAULT_FLOOR, 1)
    span = ts.thresholds("span", narrow, 0.8, 8, ts.DEFAULT_FLOOR, 1)
    assert span[0:5:2] == geo[:3] and span[5:] == geo[3:5]
    assert geo[0] < span[1] < geo[1] < span[3] < geo[2]
    assert ts.thresholds("span", wide, 0.8, 8, ts.DEFAULT_FLOOR, 1) == \
        ts.thresholds("geo", wide, 0.8, 8, ts.DEFAULT_FLOOR, 1)
    for hist in (narrow, wide):
        for n in range(2, 7):
            assert ts.thresholds("span", hist, 0.8, n, ts.DEFAULT_FLOOR, 1) == \
                ts.thresholds("geo", hist, 0.8, n, ts.DEFAULT_FLOOR, 1), n


def test_bad_arguments(capsys):
    for argv in ([], ["pias", "websearch", "1", "0.8"], ["pias", "websearch", "x", "0.8", "3"],
                 ["pias", "websearch", "1", "1.0", "3"], ["pias", "websearch", "1", "0.8", "1"],
                 ["pias", "websearch", "1", "0.8", "3", "extra"],
                 ["pias", "nosuch", "1", "0.8", "3"], ["nosuch", "websearch", "1", "0.8", "3"]):
        assert rule.main(argv) == 2
        assert capsys.readouterr().out == ""


def test_hold_counts_installs_under_a_steady_mix(capsys):
    """--hold: geo under web search at the guest's scale installs once (the
    first learnt set, from the default ladder, which it equals here: 0 or 1)
    and then holds still for 2 hours; the output names both rules."""
    res = rule.hold("websearch", 0.0625, 2.0)
    assert set(res) == {"geo", "span"}
    assert res["geo"][0] <= 1 and res["geo"][1] == tuple(16 * K * 8 ** i for i in range(7))
    assert res["span"][1] == (16 * K, 48 * K, 128 * K, 384 * K, 1024 * K, 8192 * K, 65536 * K)
    assert rule.main(["--hold", "websearch", "0.0625", "0.1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [l.split(":")[0] for l in out] == ["geo", "span"]
    for argv in (["--hold"], ["--hold", "websearch"], ["--hold", "websearch", "0"],
                 ["--hold", "websearch", "1", "25"], ["--hold", "nosuch", "1"]):
        assert rule.main(argv) == 2
