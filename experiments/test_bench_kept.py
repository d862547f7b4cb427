# SPDX-License-Identifier: GPL-2.0
"""bench/kept.py and bench/report.py over a kept run's files, wherever the
folder is: the probe files are found beside guest.tsv, whatever path the
guest wrote, and report.md holds every report the folder has."""
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
S = 1_000_000_000


def kept_run(d, probe_name):
    rows = []
    for n in (1000, 1000000):
        for r in (1, 2, 3):
            rows += ["%d\tnone\t%d\t40000\t-" % (n, r), "%d\tsrff\t%d\t39000\t%d" % (n, r, n),
                     "%d\tnft\t%d\t30000\t%d" % (n, r, n)]
    rows.append("memory\t1000000\t124875571\t4194304")
    # The sweep: set at 10 s, the table emptied by 20 s, 1.5 s of sweep.
    rows.append("gc\t1000000\t%d\t%d\t%d\t1500000\t11\t1000000\t%s"
                % (10 * S, 19 * S, 20 * S, probe_name("probe_gc")))
    rows.append("busy\t%d\t%d\t%s" % (3 * S, 5 * S, probe_name("probe_busy")))
    (d / "guest.tsv").write_text("\n".join(rows) + "\n")
    # Slices every 100 ms: 30 000 pps, 15 000 during the sweep.
    (d / "probe_gc").write_text("".join(
        "slice %d %d\n" % (t * S // 10, 15000 if 185 <= t <= 190 else 30000) for t in range(1, 300)))
    (d / "probe_busy").write_text("".join(
        "slice %d %d\n" % (t * S // 10, 30000) for t in range(1, 70)))
    (d / "native.txt").write_text("srff user-space benchmark\n")
    (d / "netns-mem.txt").write_text("KiB per namespace\n")


def test_kept_report_from_committed_files(tmp_path):
    run = tmp_path / "results" / "x"
    run.mkdir(parents=True)
    # As guest.sh wrote it before it named the files only: the guest's path.
    kept_run(run, lambda name: "/somewhere/in/the/guest/bench/out/" + name)
    r = subprocess.run([sys.executable, os.path.join(TOP, "bench", "kept.py"), str(run)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    guest = (run / "guest.txt").read_text()
    assert "srff cheaper than nft in 3 of 3 rounds" in guest
    assert "124.9 B/flow" in guest
    assert "probe during the sweep / before: 0.50x" in guest
    report = (run / "report.md").read_text()
    assert report.count("```text") == 3            # native, guest, per namespace
    assert "srff user-space benchmark" in report and "KiB per namespace" in report
    assert guest.strip() in report
    # The same files give the same bytes.
    subprocess.run([sys.executable, os.path.join(TOP, "bench", "kept.py"), str(run)], check=True)
    assert (run / "report.md").read_text() == report


def test_kept_refuses_a_folder_without_rows(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(TOP, "bench", "kept.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "usage" in r.stderr
