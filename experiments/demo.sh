#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/demo.sh [TRIALS] [SCALE] (make demo): the three-file FTP
# experiment end to end. Boots Debian's kernel under QEMU (scripts/vm),
# warms srff up on another size mix, runs every policy (FTP_POLICIES,
# experiments/ftp-guest.sh says which) TRIALS times (default 3) in that one
# boot, then analyses the captures on the host and prints the response-time
# table. Results: experiments/results/ftp-<date>/: what is committed
# (transfers.csv, series.csv.gz, params.json, meta.json, warmup.srff.json,
# srff/) and what is made from it (table.md, report.md, plots);
# the captures (pcap/*.pcap) are not committed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The kernel: Debian 12's 6.1 by default, SRFF_KERNEL_SERIES=6.12 Debian 13's.
. scripts/kver.sh
srff_guest_builds demo || exit 1
TRIALS=${1:-3}
SCALE=${2:-1}
run=experiments/results/ftp-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$run"
echo "=== FTP experiment: $TRIALS trials x ${FTP_POLICIES:-7 policies}, scale $SCALE, results in $run" >&2
scripts/vm experiments/ftp-guest.sh "$run" "$TRIALS" "$SCALE" 2>&1 |
	grep --line-buffered -E '^\[ftp\]|rror' >&2
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "demo: the guest run failed (see above)" >&2; exit 1; }
/usr/bin/python3 experiments/analyze.py "$run"
# The per-trial records of srff and the bottleneck, which nothing reads: one
# archive instead of a file per trial (the committed data stays small).
experiments/pack-ftp.sh "$run"
echo "=== report: $run/report.md, plots: $run/response_times.png $run/throughput.png" >&2
