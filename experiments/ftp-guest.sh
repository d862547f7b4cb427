#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/ftp-guest.sh OUTDIR [TRIALS] [SCALE]: the original three-file
# FTP experiment, run inside the guest kernel (experiments/demo.sh boots it).
#
#   SRV [vsftpd, srff, s0: tbf 50mbit -> prio 10: | fq_codel] ---- c0 CLI [curl, tcpdump]
#       10.90.0.1                                                     10.90.0.2
#
# F3 (79 532 032 B), F2 (31 898 736 B), F1 (5 756 923 B) are fetched in that
# order, 2 s apart, over passive FTP. tcpdump on the client side records
# each trial; experiments/analyze.py turns the captures into response times
# (SYN of a file's data connection -> its last data byte). Policies run
# interleaved in one boot, in an order drawn at random every trial
# (guest-lib.sh shuffle, from the boot's seed; params.json records the
# orders), so drift hits them all alike, after a burn-in trial (the three
# files, unmarked) that is thrown away: the first trial after the warm-up
# is not like the others. SCALE (default 1) shrinks the files for smoke
# tests.
#
# A server with a history: srff is loaded once, before the first trial,
# and stays loaded; first comes a warm-up (FTP_WARMUP seconds at most) of
# FTP downloads from another size mix (FTP_WARMUP_DIST, web search scaled
# down by default: 64 files at its quantiles, fetched in a seeded random
# order by FTP_WARMUP_CLIENTS clients, 32 by default), until srff has
# learnt its thresholds from it (about 40 s under emulation). Under
# the policies that are not srff's, srff keeps the priorities the sockets
# set and gives the others 0, as if it were not loaded. The three files
# then meet thresholds that no one chose for them.
#
# Policies (FTP_POLICIES):
#   alone         F1 alone on the idle link (shaped prio): the ideal F1 is
#                 measured against
#   unmarked      the 2003 setup without marking: tbf + prio 10: with pfifo
#                 leaves, every priority 0
#   fq_codel      tbf + fq_codel (Debian's default qdisc)
#   srff-orig     the 2003 experiment's thresholds set by hand (5 000 000,
#                 30 000 000 bytes) over the 2003 setup (prio, pfifo leaves)
#   srff          srff's defaults (learnt thresholds, 3 bands) over the
#                 recommended setup, ETS with fq_codel leaves (shaped-ets:
#                 band 0 strict, bands 1 and 2 share 3:1)
#   srff-8        learnt thresholds for 8 bands, over shaped-ets with 8
#                 bands, steered by class id (10:1..10:8)
#   srff-16       16 bands, fixed thresholds twice apart from 16 KiB to 256
#                 MiB (the ladder of experiments/band_study.py), by class
#                 id, over shaped-prio-fq with 16 bands: strict priority,
#                 fq_codel in every band
#   srff-16-ets   the same over shaped-ets with 16 bands (band 0 strict,
#                 the others DRR, adjacent quanta about 1.37:1)
#   srff-8-htb    learnt thresholds for 8 bands over shaped-htb with 8
#                 bands (htb classes 10:1..10:8: each assured 1/80 of the
#                 rate, the rest borrowed in band order), by class id;
#                 srff-8-htbA: the bands assured A % of the rate together;
#                 -lax: CoDel at 50 ms / 500 ms in bands 1-7 (codel_lax)
#   srff-8-floor  learnt thresholds for 8 bands by class id over tbf:
#                 bands 0-2 in strict order, bands 3-7 in one fq_codel
#                 assured 10 % of the rate against them (guest-lib.sh's
#                 floor_tree); srff-8-floorP: P %; -lax: CoDel at 50 ms /
#                 500 ms but in band 0
# Files: pcap/POLICY-TRIAL.pcap (not committed), srff/POLICY-TRIAL.json
# (srffctl show and stats after the trial) and .tc.txt (tc -s of the
# bottleneck; demo.sh packs srff/ into srff.tar.xz), warmup.srff.json
# (stats after the warm-up), params.json, meta.json.
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
OUT=$(cd "$1" && pwd)
TRIALS=${2:-3}
SCALE=${3:-1}
RATE=${FTP_RATE:-50mbit}
POLICIES=${FTP_POLICIES:-"alone unmarked fq_codel srff-orig srff srff-8 srff-8-htb"}
TIMEOUT=${FTP_TIMEOUT:-300}
WARMUP=${FTP_WARMUP:-150}
WARM_DIST=${FTP_WARMUP_DIST:-websearch}
WARM_SCALE=${FTP_WARMUP_SCALE:-0.0625}
BURNIN=${FTP_BURNIN:-1}
SEED=${FTP_SEED:-$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 + 1 ))}
WARM_CLIENTS=${FTP_WARMUP_CLIENTS:-32}
Q=$TOP/tc-scripts/srff-qdisc
CTL=$TOP/srffctl/srffctl
export SRFF_QDISC_STATE=$OUT/.qdisc-state

say() { printf '[ftp] %4ds %s\n' "$SECONDS" "$*" >&2; }	# with the seconds since the guest script began

. "$TOP/experiments/guest-lib.sh"	# shuffle, srff_learnt, srff_*_bands, pct_policy

for p in $POLICIES; do
	case $p in
	alone|unmarked|fq_codel|srff-orig|srff|srff-8|srff-16|srff-16-ets) ;;
	srff-8-htb*) pct_policy "$p" srff-8-htb >/dev/null ;;
	srff-8-floor*) pct_policy "$p" srff-8-floor >/dev/null ;;
	*) false ;;
	esac || { say "unknown policy $p (FTP_POLICIES)"; exit 2; }
done

files=(F3:79532032 F2:31898736 F1:5756923)
work=$(mktemp -d /tmp/srff-ftp.XXXXXX)
mount -t tmpfs -o size=400m none "$work"
mkdir -p "$work/root/w" "$work/empty"
for f in "${files[@]}"; do
	size=$(awk -v s="${f#*:}" -v k="$SCALE" 'BEGIN { printf "%d", s * k }')
	head -c "$size" /dev/urandom > "$work/root/${f%%:*}"
done
# The warm-up's files: the mix's sizes at 64 quantiles; and the seeded
# order the warm-up clients fetch them in.
python3 -c '
import os, random, sys
sys.path.insert(0, "experiments")
import sizes
dist, scale, seed, work = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = sizes.load(dist, scale)
n = 64
for i in range(n):
    with open(os.path.join(work, "root", "w", "w%02d" % i), "wb") as f:
        f.write(os.urandom(max(1, int(d.quantile((i + 0.5) / n)))))
rng = random.Random(seed)
with open(os.path.join(work, "warmup.order"), "w") as f:
    for _ in range(6000):
        f.write("w%02d\n" % rng.randrange(n))
' "$WARM_DIST" "$WARM_SCALE" "$SEED" "$work"
chmod -R a+rX "$work/root"

SRV=srv-$$ CLI=cli-$$
WARM_PIDS=
cleanup() {
	set +e
	[ -n "$WARM_PIDS" ] && kill $WARM_PIDS 2>/dev/null
	declare -F capture_end >/dev/null && capture_end
	[ -n "${VSFTPD:-}" ] && kill "$VSFTPD" 2>/dev/null
	grep -q '^srff ' /proc/modules && rmmod srff
	ip netns del "$SRV" 2>/dev/null
	ip netns del "$CLI" 2>/dev/null
	umount "$work" 2>/dev/null
	rmdir "$work" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$SRV"
ip netns add "$CLI"
ip link add s0 netns "$SRV" type veth peer name c0 netns "$CLI"
ip -n "$SRV" addr add 10.90.0.1/24 dev s0
ip -n "$CLI" addr add 10.90.0.2/24 dev c0
for ns in "$SRV" "$CLI"; do ip -n "$ns" link set lo up; done
ip -n "$SRV" link set s0 up
ip -n "$CLI" link set c0 up

printf '%s\n' listen=YES listen_ipv6=NO listen_address=10.90.0.1 anonymous_enable=YES \
	local_enable=NO no_anon_password=YES "anon_root=$work/root" ftp_username=ftp \
	nopriv_user=ftp "secure_chroot_dir=$work/empty" pasv_enable=YES pasv_min_port=30000 \
	pasv_max_port=30999 pasv_address=10.90.0.1 seccomp_sandbox=NO background=NO \
	xferlog_enable=NO max_clients=50 max_per_ip=50 > "$work/vsftpd.conf"
ip netns exec "$SRV" vsftpd "$work/vsftpd.conf" &
VSFTPD=$!
for i in $(seq 100); do
	ip netns exec "$SRV" ss -Hltn 'sport = :21' | grep -q . && break
	sleep 0.1
done
ip netns exec "$SRV" ss -Hltn 'sport = :21' | grep -q . || { say "vsftpd did not start"; exit 1; }

# srff, loaded once with its defaults, and switched on in the server's
# namespace (on by default in the initial one only); DEFAULT_PRIOS are its
# own priorities.
insmod "${SRFF_KO:-srff_nf/srff.ko}"
"$CTL" -n "$SRV" set enabled on
DEFAULT_PRIOS=$("$CTL" -n "$SRV" -j show |
	python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["priorities"])))')
# srff_set KEY VALUE...: one srffctl set in the server's namespace.
srff_set() { "$CTL" -n "$SRV" set "$@" >/dev/null; }
# Neutral: srff keeps the priorities the sockets set (vsftpd's TOS: 6 on
# the control connection, 2 on data) and gives the others 0, as if it
# were not loaded; the thresholds go on learning. (With its default,
# override, the control connection's replies would queue behind the data
# in one band.) srff's own policies override, its default.
srff_neutral() { srff_set classid none priorities 0,0,0 thresholds auto app-priority keep; }
srff_neutral

policy_on() {
	case $1 in
	alone|unmarked) ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null ;;
	fq_codel) ip netns exec "$SRV" "$Q" install shaped-fq s0 "$RATE" >/dev/null ;;
	srff-orig)
		ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null
		srff_set thresholds 5000000,30000000 priorities "$DEFAULT_PRIOS" app-priority override ;;
	srff)
		ip netns exec "$SRV" "$Q" install shaped-ets s0 "$RATE" >/dev/null
		srff_set priorities "$DEFAULT_PRIOS" thresholds auto app-priority override ;;
	srff-8) ip netns exec "$SRV" "$Q" install shaped-ets s0 "$RATE" 8 >/dev/null
		srff_eight_bands "$CTL" "$SRV" app-priority override >/dev/null ;;
	srff-8-htb*)
		read -r a lax < <(pct_policy "$1" srff-8-htb)
		SRFF_QDISC_HTB_ASSURED_PCT=$a ip netns exec "$SRV" "$Q" install shaped-htb s0 "$RATE" 8 >/dev/null
		[ "$lax" = - ] || codel_lax "$SRV" s0 || { say "policy $1: tc refused CoDel's change"; exit 1; }
		srff_eight_bands "$CTL" "$SRV" app-priority override >/dev/null ;;
	srff-8-floor*)
		read -r a lax < <(pct_policy "$1" srff-8-floor)
		ip netns exec "$SRV" "$Q" install shaped-fq s0 "$RATE" >/dev/null
		floor_tree "$SRV" s0 "$a" "$lax" || { say "policy $1: tc refused the tree"; exit 1; }
		srff_eight_bands "$CTL" "$SRV" app-priority override >/dev/null ;;
	srff-16|srff-16-ets)
		setup=shaped-prio-fq
		[ "$1" = srff-16 ] || setup=shaped-ets
		ip netns exec "$SRV" "$Q" install "$setup" s0 "$RATE" 16 >/dev/null
		srff_sixteen_bands "$CTL" "$SRV" app-priority override >/dev/null ;;
	esac
}

# Between trials the tree is cleared (veth's default, noqueue, comes back)
# so that the next trial's install starts afresh, its counters from 0;
# srff-qdisc's save of the tree before the first install stays, and one
# revert after the last trial restores it. (A revert and an install every
# trial cost 4 s of guest time each under emulation.)
policy_off() {
	srff_neutral
	tc -n "$SRV" qdisc del dev s0 root 2>/dev/null || true
}

size_of() { awk -v s="$1" -v k="$SCALE" 'BEGIN { printf "%d", s * k }'; }
cat > "$OUT/params.json" <<EOF
{
  "experiment": "ftp-three-files",
  "files": {"F3": $(size_of 79532032), "F2": $(size_of 31898736), "F1": $(size_of 5756923)},
  "order": ["F3", "F2", "F1"],
  "fetch": {"alone": ["F1"]},
  "start_gap_s": 2,
  "rate": "$RATE",
  "rate_bps": $(awk -v r="$RATE" 'BEGIN { n = r + 0; u = tolower(substr(r, length(n "") + 1));
	m = u ~ /^g/ ? 1e9 : u ~ /^m/ ? 1e6 : u ~ /^k/ ? 1e3 : 1; print n * m }'),
  "trials": $TRIALS,
  "order_rule": "shuffled",
  "burn_in": $BURNIN,
  "scale": $SCALE,
  "policies": [$(printf '"%s",' $POLICIES | sed 's/,$//')],
  "warmup": {"dist": "$WARM_DIST", "scale": $WARM_SCALE, "max_s": $WARMUP, "seed": $SEED, "clients": $WARM_CLIENTS},
  "srff_default_priorities": "$DEFAULT_PRIOS",
  "kernel": "$(uname -r)",
  "offloads_s0": "$(ip netns exec "$SRV" ethtool -k s0 2>/dev/null | awk '/^(tcp-segmentation|generic-segmentation)-offload/ {printf "%s %s ", $1, $2}')",
  "vsftpd": "$(dpkg-query -W -f='${Version}' vsftpd 2>/dev/null)",
  "date": "$(date -u +%FT%TZ)"
}
EOF
python3 experiments/runmeta.py "$OUT/meta.json" --ko "${SRFF_KO:-srff_nf/srff.ko}" \
	--pkg vsftpd --pkg curl --params "$OUT/params.json" --seed warmup="$SEED" \
	--seed order="$SEED" --set burn_in="$BURNIN" >/dev/null

. "$TOP/experiments/capture.sh"

fetch() {	# fetch FILE: one download, its own data connection
	ip netns exec "$CLI" timeout "$TIMEOUT" curl -s -S -o /dev/null "ftp://10.90.0.1/$1"
}

# Warm-up: srff learns from finished flows (auto_min_flows of them, or its
# thresholds changed). Client K of N fetches every Nth file of the seeded
# order, 25 files per curl (one control connection, a data connection each;
# nocwd: RETR w/FILE, no CWD first). Under emulation a client spends most
# of its time waiting on the commands' round trips, not the CPU: measured
# in 40 s, 8 clients finished 333 flows, 16 485, 16 with nocwd 563, 32
# with nocwd 1170 (srff learnt; 8 took 123 s to), 48 with nocwd 1714.
warm_client() {
	local k=$1 f args=()
	while read -r f; do
		args+=(-o /dev/null "ftp://10.90.0.1/w/$f")
		if [ ${#args[@]} -ge 75 ]; then
			ip netns exec "$CLI" curl -s --ftp-method nocwd "${args[@]}" >/dev/null 2>&1 || true
			args=()
		fi
	done < <(awk -v k="$k" -v n="$WARM_CLIENTS" 'NR % n == k' "$work/warmup.order")
}
if [ "$WARMUP" -gt 0 ]; then
	say "warm-up: up to ${WARMUP}s of $WARM_DIST-sized downloads (x$WARM_SCALE), until srff has learnt"
	ip netns exec "$SRV" "$Q" install shaped-fq s0 "$RATE" >/dev/null
	t0=$(date +%s)
	for ((k = 0; k < WARM_CLIENTS; k++)); do warm_client $k & WARM_PIDS="$WARM_PIDS $!"; done
	while [ $(( $(date +%s) - t0 )) -lt "$WARMUP" ] && ! srff_learnt "$CTL" "$SRV"; do
		alive=0
		for w in $WARM_PIDS; do kill -0 "$w" 2>/dev/null && alive=1; done
		[ $alive = 1 ] || break
		sleep 1
	done
	warm_s=$(( $(date +%s) - t0 ))
	# The clients, and the curl each may be running (a shell waiting for
	# its child acts on a signal only once the child is gone).
	kill $WARM_PIDS 2>/dev/null || true
	ip netns pids "$CLI" | xargs -r kill 2>/dev/null || true
	wait $WARM_PIDS 2>/dev/null || true
	WARM_PIDS=
	tc -n "$SRV" qdisc del dev s0 root 2>/dev/null || true
	srff_learnt "$CTL" "$SRV" || say "  srff has not learnt in ${WARMUP}s: its initial thresholds stay"
	"$CTL" -n "$SRV" -j stats > "$OUT/warmup.srff.json"
	say "  after ${warm_s}s: $(python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); print("%d flows learnt from, %d threshold changes" % (s["auto_flows"], s["auto_changes"]))' "$OUT/warmup.srff.json")"
	say "  srff: $("$CTL" -n "$SRV" show | grep -E '^thresholds' | tr -s ' ')"
fi

read -ra plist <<<"$POLICIES"
total=$(( TRIALS * ${#plist[@]} )) n=0
: > "$OUT/order.jsonl"
# Trial 0 is the burn-in: the three files, unmarked, thrown away.
burn=()
[ "$BURNIN" = 0 ] || burn=(0)
for t in "${burn[@]}" $(seq 1 "$TRIALS"); do
	if [ "$t" = 0 ]; then
		order=(unmarked)
	else
		read -ra order <<<"$(shuffle $((SEED * 1000 + t)) "${plist[@]}")"
		printf '{"trial": %d, "order": [%s]}\n' "$t" \
			"$(printf '"%s",' "${order[@]}" | sed 's/,$//')" >> "$OUT/order.jsonl"
	fi
	for p in "${order[@]}"; do
		[ "$t" = 0 ] || n=$((n + 1))
		if [ "$t" = 0 ]; then
			say "burn-in: F3, F2, F1 unmarked, not kept"
		elif [ "$p" = alone ]; then
			say "[$n/$total] trial $t, $p: F1 alone on the idle link"
		else
			say "[$n/$total] trial $t, $p: F3, F2, F1 two seconds apart"
		fi
		policy_on "$p"
		pcap=$OUT/pcap/$p-$t.pcap
		mkdir -p "$OUT/pcap" "$OUT/srff"
		capture_start "$CLI" c0 "$pcap" tcp
		start=$(date +%s.%N)
		pids=()
		if [ "$p" = alone ]; then
			fetch F1 & pids+=($!)
		else
			fetch F3 & pids+=($!)
			sleep 2
			fetch F2 & pids+=($!)
			sleep 2
			fetch F1 & pids+=($!)
		fi
		ok=1
		for w in "${pids[@]}"; do wait "$w" || ok=0; done
		end=$(date +%s.%N)
		capture_stop "$SRV" s0 "$pcap"
		{
			printf '{"show":'; "$CTL" -n "$SRV" -j show
			printf ',"stats":'; "$CTL" -n "$SRV" -j stats
			printf '}\n'
		} > "$OUT/srff/$p-$t.json"
		tc -n "$SRV" -s qdisc show dev s0 > "$OUT/srff/$p-$t.tc.txt"
		policy_off
		[ $ok = 1 ] || { say "trial $t $p: a download failed or timed out"; exit 1; }
		say "  done in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
		if [ "$t" = 0 ]; then
			rm -f "$pcap" "$OUT/srff/$p-$t.json" "$OUT/srff/$p-$t.tc.txt"
		fi
	done
done
ip netns exec "$SRV" "$Q" revert s0 >/dev/null
say "all trials done"
