# SPDX-License-Identifier: GPL-2.0
"""Every committed table and report regenerates from the committed data.

experiments/report.sh, run in a fresh clone of this checkout's HEAD, must
leave every committed table, report and summary as it is: a figure in docs
that the data no longer give fails here. (The plots are left out of the
comparison: their bytes follow matplotlib's version, their data do not.)
"""
import os
import shutil
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(not os.path.isdir(os.path.join(TOP, ".git")) or not shutil.which("git"),
                    reason="not a git checkout")
def test_report_sh_changes_nothing(tmp_path):
    clone = tmp_path / "srff"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", TOP, str(clone)], check=True)
    r = subprocess.run(["bash", "experiments/report.sh"], cwd=clone, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    # report.sh said which folders it remade: at least one of each kind
    # that is committed.
    results = os.listdir(clone / "experiments" / "results")
    for kind in ("open-", "ftp-"):
        made = [d for d in results if d.startswith(kind)
                and os.path.exists(clone / "experiments" / "results" / d / "meta.json")]
        for d in made:
            assert "=== experiments/results/" + d in r.stderr
    # and every kept benchmark run (bench/results/NAME: guest.txt).
    bench = clone / "bench" / "results"
    for d in (os.listdir(bench) if bench.is_dir() else []):
        if (bench / d / "guest.tsv").exists():
            assert "=== bench/results/" + d in r.stderr
    st = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                        capture_output=True, text=True, check=True).stdout.splitlines()
    changed = [l for l in st if not l.endswith(".png")]
    assert changed == [], "report.sh changed committed files: %s" % changed


@pytest.mark.skipif(not os.path.isdir(os.path.join(TOP, ".git")) or not shutil.which("git"),
                    reason="not a git checkout")
def test_committed_results_within_2_mb():
    """The committed data stay small enough for a clone (issue 33: at most
    2 MB under experiments/results): runs are compacted, derived files not
    committed, before a new run is added."""
    files = subprocess.run(["git", "ls-files", "-z", "experiments/results"], cwd=TOP,
                           capture_output=True, check=True).stdout.split(b"\0")
    total = sum(os.path.getsize(os.path.join(TOP, f.decode())) for f in files
                if f and os.path.exists(os.path.join(TOP, f.decode())))
    assert total <= 2_000_000, "experiments/results holds %d bytes committed" % total
