#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/web-demo.sh [ROUNDS] [SECONDS]: the busy-web-server
# experiment end to end. Boots Debian's kernel under QEMU (scripts/vm),
# runs every policy for SECONDS in each of ROUNDS rounds (default 3 x 20 s)
# in that one boot, then analyses the requests on the host and prints the
# table. Results: experiments/results/web-<date>/ (report.md, cdf.png,
# params.json, manifest.txt, requests/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-20}
run=experiments/results/web-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$run"
echo "=== web experiment: $ROUNDS rounds x ${SECS}s per policy, results in $run" >&2
set +e
scripts/vm experiments/web-guest.sh "$run" "$ROUNDS" "$SECS" 2>&1 |
	grep --line-buffered -E '^\[web\]|rror' >&2
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "web-demo: the guest run failed (see above)" >&2; exit 1; }
/usr/bin/python3 experiments/web_analyze.py "$run"
echo "=== report: $run/report.md, plot: $run/cdf.png" >&2
