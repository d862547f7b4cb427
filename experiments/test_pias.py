# SPDX-License-Identifier: GPL-2.0
"""pias.py: PIAS's thresholds for the open-loop experiment's workloads."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pias  # noqa: E402
import threshold_study as ts  # noqa: E402


def test_thresholds_for_each_band_count(capsys):
    """BANDS - 1 thresholds, rising, the first at least 16 KiB, each a
    bucket bound srff's histogram can tell apart; the same every call."""
    for dist, scale in (("websearch", 0.0625), ("fb_hadoop", 1.0), ("datamining", 0.01)):
        for bands in (3, 8):
            assert pias.main([dist, str(scale), "0.8", str(bands)]) == 0
            t = [int(x) for x in capsys.readouterr().out.strip().split(",")]
            assert len(t) == bands - 1
            assert t[0] >= 16384 and t == sorted(set(t))
            assert all(ts.low(ts.bucket(x)) == x for x in t)
            assert pias.pias_thresholds(dist, scale, 0.8, bands) == t


def test_follows_the_sizes():
    """Larger flows, larger thresholds: web search's sizes unscaled against
    the 1/16 the guest's 20 Mbit/s link carries."""
    small = pias.pias_thresholds("websearch", 0.0625, 0.8, 3)
    big = pias.pias_thresholds("websearch", 1.0, 0.8, 3)
    assert big[-1] > small[-1]


def test_bad_arguments(capsys):
    for argv in ([], ["websearch", "1", "0.8"], ["websearch", "x", "0.8", "3"],
                 ["websearch", "1", "1.0", "3"], ["websearch", "1", "0.8", "1"],
                 ["websearch", "1", "0.8", "3", "extra"], ["nosuch", "1", "0.8", "3"]):
        assert pias.main(argv) == 2
        assert capsys.readouterr().out == ""
