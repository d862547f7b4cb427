#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/report.sh [RUN_DIR...]: regenerate the reports of open-loop
# results folders from their committed tables (requests.csv.gz,
# bulk.csv.gz, loads.json, queues.csv.gz, meta.json), with no VM and no raw
# logs: RUN_DIR/tables.md, queues.md, summary.json, fct_cdf.png and
# bulk_goodput.png, headline.md; then the include blocks of
# docs/experiments.md (experiments/doc_tables.py). With no argument, every
# experiments/results/open-*/.
# The bootstrap is seeded: the same data give the same tables, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- experiments/results/open-*/
[ -d "$1" ] || { echo "report: no results folder (run experiments/openloop.sh)" >&2; exit 1; }
for run in "$@"; do
	run=${run%/}
	rtt=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["params"].get("rtt_idle_s", 0))' "$run/meta.json")
	echo "=== $run (idle RTT ${rtt}s)" >&2
	/usr/bin/python3 experiments/fct.py report "$run" --rtt "$rtt" --out "$run" --ref fq_codel
	/usr/bin/python3 experiments/qlog.py report "$run" --out "$run"
done
# The docs show the tables the committed data give.
/usr/bin/python3 experiments/doc_tables.py docs/experiments.md
