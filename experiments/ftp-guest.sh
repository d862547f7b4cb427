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
# interleaved round by round in one boot, so drift hits them all alike.
# SCALE (default 1) shrinks the files for smoke tests.
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
OUT=$(cd "$1" && pwd)
TRIALS=${2:-3}
SCALE=${3:-1}
RATE=${FTP_RATE:-50mbit}
POLICIES=${FTP_POLICIES:-"unmarked fq_codel srff-orig srff-default"}
TIMEOUT=${FTP_TIMEOUT:-300}
Q=$TOP/tc-scripts/srff-qdisc
export SRFF_QDISC_STATE=$OUT/.qdisc-state

say() { echo "[ftp] $*" >&2; }

files=(F3:79532032 F2:31898736 F1:5756923)
work=$(mktemp -d /tmp/srff-ftp.XXXXXX)
mount -t tmpfs -o size=400m none "$work"
mkdir -p "$work/root" "$work/empty"
for f in "${files[@]}"; do
	size=$(awk -v s="${f#*:}" -v k="$SCALE" 'BEGIN { printf "%d", s * k }')
	head -c "$size" /dev/urandom > "$work/root/${f%%:*}"
done
chmod -R a+rX "$work/root"

SRV=srv-$$ CLI=cli-$$
cleanup() {
	set +e
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

cat > "$work/vsftpd.conf" <<EOF
listen=YES
listen_ipv6=NO
listen_address=10.90.0.1
anonymous_enable=YES
local_enable=NO
no_anon_password=YES
anon_root=$work/root
ftp_username=ftp
nopriv_user=ftp
secure_chroot_dir=$work/empty
pasv_enable=YES
pasv_min_port=30000
pasv_max_port=30999
pasv_address=10.90.0.1
seccomp_sandbox=NO
background=NO
xferlog_enable=NO
max_clients=50
EOF
ip netns exec "$SRV" vsftpd "$work/vsftpd.conf" &
VSFTPD=$!
for i in $(seq 100); do
	ip netns exec "$SRV" ss -Hltn 'sport = :21' | grep -q . && break
	sleep 0.1
done
ip netns exec "$SRV" ss -Hltn 'sport = :21' | grep -q . || { say "vsftpd did not start"; exit 1; }

policy_on() {
	case $1 in
	unmarked) ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null ;;
	fq_codel) ip netns exec "$SRV" "$Q" install shaped-fq s0 "$RATE" >/dev/null ;;
	srff-orig) ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null
		   insmod "${SRFF_KO:-srff_nf/srff.ko}" thresholds=5000000,30000000 ;;
	srff-default) ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null
		      insmod "${SRFF_KO:-srff_nf/srff.ko}" ;;
	*) say "unknown policy $1"; exit 2 ;;
	esac
}

policy_off() {
	grep -q '^srff ' /proc/modules && rmmod srff
	ip netns exec "$SRV" "$Q" revert s0 >/dev/null
}

cat > "$OUT/params.json" <<EOF
{
  "experiment": "ftp-three-files",
  "files": {"F3": $(awk -v k="$SCALE" 'BEGIN{printf "%d", 79532032*k}'), "F2": $(awk -v k="$SCALE" 'BEGIN{printf "%d", 31898736*k}'), "F1": $(awk -v k="$SCALE" 'BEGIN{printf "%d", 5756923*k}')},
  "order": ["F3", "F2", "F1"],
  "start_gap_s": 2,
  "rate": "$RATE",
  "rate_bps": $(awk -v r="$RATE" 'BEGIN { n = r + 0; u = tolower(substr(r, length(n "") + 1));
	m = u ~ /^g/ ? 1e9 : u ~ /^m/ ? 1e6 : u ~ /^k/ ? 1e3 : 1; print n * m }'),
  "trials": $TRIALS,
  "scale": $SCALE,
  "policies": [$(printf '"%s",' $POLICIES | sed 's/,$//')],
  "kernel": "$(uname -r)",
  "offloads_s0": "$(ip netns exec "$SRV" ethtool -k s0 2>/dev/null | awk '/^(tcp-segmentation|generic-segmentation)-offload/ {printf "%s %s ", $1, $2}')",
  "vsftpd": "$(dpkg-query -W -f='${Version}' vsftpd 2>/dev/null)",
  "date": "$(date -u +%FT%TZ)"
}
EOF

. "$TOP/experiments/capture.sh"

fetch() {	# fetch FILE: one download, its own data connection
	ip netns exec "$CLI" timeout "$TIMEOUT" curl -s -S -o /dev/null "ftp://10.90.0.1/$1"
}

for t in $(seq 1 "$TRIALS"); do
	for p in $POLICIES; do
		say "trial $t/$TRIALS, policy $p: F3, F2, F1 two seconds apart"
		policy_on "$p"
		pcap=$OUT/pcap/$p-$t.pcap
		mkdir -p "$OUT/pcap"
		capture_start "$CLI" c0 "$pcap" tcp
		start=$(date +%s.%N)
		fetch F3 & a=$!
		sleep 2
		fetch F2 & b=$!
		sleep 2
		fetch F1 & c=$!
		ok=1
		wait $a || ok=0
		wait $b || ok=0
		wait $c || ok=0
		end=$(date +%s.%N)
		capture_stop "$SRV" s0 "$pcap"
		[ -e /sys/module/srff ] && ip netns exec "$SRV" "$TOP/srffctl/srffctl" -j stats > "$OUT/pcap/$p-$t.srff.json" 2>/dev/null || true
		tc -n "$SRV" -s qdisc show dev s0 > "$OUT/pcap/$p-$t.tc.txt"
		policy_off
		[ $ok = 1 ] || { say "trial $t $p: a download failed or timed out"; exit 1; }
		say "  done in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
	done
done
say "all trials done"
