#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/report.sh [RUN_DIR...]: regenerate the reports of results
# folders from their committed tables, with no VM and no raw logs or
# captures:
#   open-*/  (requests.csv.xz, bulk.csv.xz, loads.json.xz, queues.csv.xz,
#            meta.json, srff.json.gz, order.jsonl; an older run's .gz and
#            loads.json too) -> tables.md, targets.md, queues.md,
#            headline.md, tcp.md, learnt.md, summary.json, fct_cdf*.png,
#            bulk_goodput.png; where the router's capture timed the
#            responses and the table kept the client's clock too, the same on
#            that clock in client-clock/
#   ftp-*/   (transfers.csv, series.csv.gz, params.json) -> table.md,
#            report.md, results.json, response_times.png, throughput.png
#   thresholds/ (results.tsv.xz, params.json) -> tables.md, summary.md;
#            (learning.tsv.xz, learning.json) -> learning.md,
#            learning-summary.md
#   bands/   (results.tsv) -> table.md
#   boots-*/ (boots.txt: open-*/ folders of one configuration) -> the
#            open-*/ reports of those boots pooled (report_boots)
#   bench/results/*/ (guest.tsv, probe_gc, probe_busy, native*.txt,
#            netns-mem.txt, meta.json) -> guest.txt, report.md
# then the include blocks of docs/experiments.md, docs/thresholds.md and
# docs/performance.md
# (experiments/doc_tables.py).
# With no argument, every experiments/results/open-*/ and ftp-*/ that has
# its tables. Of the open-*/ plots and summary.json, git holds only the
# plots docs/ shows (.gitignore): the others are made here.
# The bootstrap is seeded: the same data give the same tables, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	for d in experiments/results/open-*/ experiments/results/ftp-*/; do
		[ -e "$d/meta.json" ] && [ -e "$d/transfers.csv" -o -e "$d/requests.csv.xz" -o -e "$d/requests.csv.gz" ] &&
			set -- "$@" "$d"
	done
	for d in experiments/results/boots-*/; do
		[ -e "$d/boots.txt" ] && set -- "$@" "$d"
	done
fi
[ $# -gt 0 ] && [ -d "$1" ] || { echo "report: no results folder (run experiments/openloop.sh)" >&2; exit 1; }
# report_one RUN: one folder's tables and plots.
report_one() {
	local run=$1 rtt
	if [ -e "$run/boots.txt" ]; then
		report_boots "$run"
		return
	fi
	if [ -e "$run/transfers.csv" ]; then
		echo "=== $run" >&2
		/usr/bin/python3 experiments/analyze.py --tables "$run" >/dev/null
		return
	fi
	rtt=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["params"].get("rtt_idle_s", 0))' "$run/meta.json")
	echo "=== $run (idle RTT ${rtt}s)" >&2
	/usr/bin/python3 experiments/fct.py report "$run" --rtt "$rtt" --out "$run" --ref fq_codel
	# The same report against another reference or on another clock, in a
	# folder of its own (one meta.json read for all):
	#  - downstream with cake at the router: srff's marks against cake's
	#    own tins too, in vs-cake/;
	#  - a multiqueue device: every policy against fq_codel per TX queue
	#    too (Debian's default there), in vs-fq_codel-mq/;
	#  - timed by the router's capture, the client's clock kept: on that clock too, in
	#    client-clock/ (the two clocks on the same responses);
	#  - with fq_codel's runs uncaptured too (fq_codel+capture=0), every
	#    policy against those on the client's clock, the one both have, in
	#    vs-uncaptured/: what the capture does to the runs it times.
	local sub ref clock
	while read -r sub ref clock; do
		mkdir -p "$run/$sub"
		/usr/bin/python3 experiments/fct.py report "$run" --rtt "$rtt" --out "$run/$sub" --ref "$ref" \
			--clock "$clock" >/dev/null
	done < <(python3 -c 'import json, sys
sys.path.insert(0, "experiments")
from tabfile import find, open_text
p = json.load(open(sys.argv[1]))["params"]
if p.get("bottleneck") == "downstream" and "cake" in p.get("policies", []):
    print("vs-cake cake table")
if p.get("bottleneck") == "mq" and "fq_codel-mq" in p.get("policies", []):
    print("vs-fq_codel-mq fq_codel-mq table")
if p.get("capture_dev") and "fct_client" in open_text(find(sys.argv[2], "requests.csv")).readline():
    print("client-clock fq_codel client")
if "fq_codel+capture=0" in p.get("policies", []):
    print("vs-uncaptured fq_codel+capture=0 client")' "$run/meta.json" "$run")
	/usr/bin/python3 experiments/qlog.py report "$run" --out "$run"
	/usr/bin/python3 experiments/tcpstats.py "$run" --out "$run" >/dev/null
	/usr/bin/python3 experiments/learnt.py "$run" --out "$run" >/dev/null
	[ ! -e "$run/dscp.csv.xz" ] || /usr/bin/python3 experiments/dscp.py report "$run" --out "$run" >/dev/null
}
# report_boots DIR: boots of one configuration pooled. DIR/boots.txt names
# the open-*/ folders (one a line, under experiments/results/; # starts a
# comment); DIR gets their excess.md, headline.md and the rest, every
# response judged against its own boot's idle baseline, rounds resampled
# within their boot, each boot's ratio shown (fct.py report RUN RUN...).
# The slowdowns' ideal FCT takes the boots' mean idle round trip.
report_boots() {
	local dir=$1 rtt
	local -a members=()
	mapfile -t members < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' \
		-e 's|^|experiments/results/|' "$dir/boots.txt")
	[ "${#members[@]}" -ge 2 ] || { echo "report: $dir/boots.txt: name two folders or more" >&2; return 1; }
	rtt=$(python3 -c 'import json, sys
metas = [json.load(open(d + "/meta.json")) for d in sys.argv[1:]]
rt = [m["params"].get("rtt_idle_s", 0) for m in metas]
# What makes boots one configuration: the parameters but the measured idle
# round trip, the kernel, and the packages of the testbed (the QEMU
# version among them: a folder that names none ran under 7.2).
cfg = [dict({k: v for k, v in m["params"].items() if k != "rtt_idle_s"},
            kernel=m["machine"]["kernel"], packages=m.get("packages", {})) for m in metas]
if any(c != cfg[0] for c in cfg[1:]):
    sys.exit("report: %s: not one configuration (their parameters, kernel or packages differ)"
             % " ".join(sys.argv[1:]))
print(round(sum(rt) / len(rt), 6))' "${members[@]}") || return 1
	echo "=== $dir (${#members[@]} boots, mean idle RTT ${rtt}s)" >&2
	/usr/bin/python3 experiments/fct.py report "${members[@]}" --rtt "$rtt" --out "$dir" >/dev/null
}
# The folders are independent: REPORT_JOBS (default: the CPUs) at a time,
# each one's output shown whole, in the order given; any failure fails.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pids=()
for run in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "${REPORT_JOBS:-$(nproc)}" ]; do wait -n || true; done
	report_one "${run%/}" >"$tmp/${#pids[@]}.out" 2>"$tmp/${#pids[@]}.err" &
	pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do
	wait "${pids[i]}" || rc=1
	cat "$tmp/$i.out"
	cat "$tmp/$i.err" >&2
done
[ "$rc" = 0 ] || { echo "report: a folder failed (its output above)" >&2; exit 1; }
# The threshold study's tables, from its results.tsv.xz and learning.tsv.xz
# (the simulation itself is experiments/threshold_study.py, ~15 min).
[ -e experiments/results/thresholds/results.tsv.xz ] &&
	/usr/bin/python3 experiments/threshold_tables.py experiments/results/thresholds
# The band study's table, from its results.tsv (experiments/band_study.py
# simulates, ~30 s).
[ -e experiments/results/bands/results.tsv ] &&
	/usr/bin/python3 experiments/band_study.py --tables
# The benchmark runs kept under bench/results (BENCH_OUT=bench/results/NAME
# make bench): the guest's summary from its rows and probe slices, and the
# report docs/performance.md shows.
for b in bench/results/*/guest.tsv; do
	[ -e "$b" ] || continue
	echo "=== ${b%/guest.tsv}" >&2
	/usr/bin/python3 bench/kept.py "${b%/guest.tsv}"
done
# The docs show the tables the committed data give.
/usr/bin/python3 experiments/doc_tables.py docs/experiments.md docs/thresholds.md docs/performance.md
