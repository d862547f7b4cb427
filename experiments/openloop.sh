#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/openloop.sh [ROUNDS] [SECONDS] (make experiments): open-loop
# web load, every queueing policy, in one boot of Debian's kernel under QEMU
# (scripts/vm runs experiments/openloop-guest.sh; its header says what runs
# and what each WEB_* variable does). Then, on the host:
#   fct.py table + qlog.py table    the logs -> requests.csv.xz, bulk.csv.xz,
#                                   loads.json.xz, queues.csv.xz: what is
#                                   committed (the raw logs are not)
#   experiments/report.sh RUN       tables.md, queues.md and plots from those
# Results: experiments/results/open-DIST-BOTTLENECK-<date>/.
# WEB_QUICK=1: a smoke run (1 round, 8 s, loads 0.6, fifo and srff-ets,
# a 20 s warm-up, an idle baseline of 8 sizes once each): checks the whole
# chain in ~5 min, proves nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-10}
SECS=${2:-15}
if [ "${WEB_QUICK:-0}" = 1 ]; then
	ROUNDS=1 SECS=8
	export WEB_LOADS=${WEB_LOADS:-0.6} WEB_POLICIES=${WEB_POLICIES:-"fifo srff-ets"}
	export WEB_WARMUP=${WEB_WARMUP:-20} WEB_DRAIN=${WEB_DRAIN:-15}
	export WEB_IDLE_SIZES=${WEB_IDLE_SIZES:-8} WEB_IDLE_REPS=${WEB_IDLE_REPS:-1}
fi
# The kernel: Debian 12's 6.1 by default; SRFF_KERNEL_SERIES=6.12 boots
# Debian 13's (srff.ko built for it in tests/out/build-KVER, and the guest
# given bookworm-backports' tc, which sch_fq's bands need: srff-fq-bands).
. scripts/kver.sh
srff_guest_builds openloop || exit 1
dist=${WEB_DIST:-fb_hadoop}
bn=${WEB_BOTTLENECK:-local}
run=experiments/results/open-$dist-$bn-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$run"
echo "=== open-loop web experiment ($dist, bottleneck $bn, $KVER): $ROUNDS rounds x ${SECS}s, results in $run" >&2
set +e
scripts/vm experiments/openloop-guest.sh "$run" "$ROUNDS" "$SECS" 2>&1 |
	grep --line-buffered -E '^\[web\]|rror' >&2
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "openloop: the guest run failed (see above)" >&2; exit 1; }
/usr/bin/python3 experiments/fct.py table "$run"
# WEB_CLIENT_CLOCK=0: where the router's capture timed the responses, the
# table keeps only its clock (the client's is a third of the file).
[ "${WEB_CLIENT_CLOCK:-1}" = 1 ] || /usr/bin/python3 experiments/fct.py compact "$run"
/usr/bin/python3 experiments/qlog.py table "$run"
# The captures of runs that mark code points (srff-dscp-*) -> the code
# points per offset, dscp.csv.xz. (fct.py table timed the responses from
# every capture.)
[ ! -d "$run/pcap" ] || ! grep -q '"srff-dscp-' "$run/meta.json" ||
	/usr/bin/python3 experiments/dscp.py table "$run"
/usr/bin/python3 - "$run" <<'EOF'
# srff's state after each run (thresholds in effect, stats) in one file.
import gzip, json, os, sys
d = os.path.join(sys.argv[1], "srff")
runs = {n[:-5]: json.load(open(os.path.join(d, n))) for n in sorted(os.listdir(d))
        if n.endswith(".json")}
with open(os.path.join(sys.argv[1], "srff.json.gz"), "wb") as f, \
        gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as g:
    g.write(json.dumps(runs, indent=0, sort_keys=True).encode())
EOF
# The raw logs are reduced to the tables above; keep them only when asked.
[ "${WEB_KEEP_RAW:-0}" = 1 ] || rm -rf "$run/requests" "$run/qlog" "$run/srff" "$run/pcap"
experiments/report.sh "$run"
