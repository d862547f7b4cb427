#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/web-guest.sh OUTDIR [ROUNDS] [SECONDS]: the busy web server,
# run inside the guest kernel (experiments/web-demo.sh boots it).
#
#   SRV [nginx, srff, s0: tbf RATE -> prio 10: | fq_codel] ---- c0 CLI [web_client.py]
#       10.91.0.1                                                 10.91.0.2
#
# nginx serves a heavy-tailed file set (Pareto sizes, alpha 0.9, from 4 KB,
# capped at 5 MB; seeded) to short-connection and keep-alive clients while
# bulk clients download 8 MB files back to back (experiments/web_client.py).
# Each policy runs SECONDS per round; rounds interleave the policies in one
# boot. Every request's start, end, size and connection is written to
# OUTDIR/requests/POLICY-ROUND.jsonl, and tcpdump on the client's side
# captures the headers of every packet to OUTDIR/pcap/POLICY-ROUND.pcap;
# experiments/web_analyze.py times each response from the capture and turns
# the times into mean and p99 completion times of small (< 100 KB) and
# large responses and a CDF plot.
# Policies: unmarked (prio, no srff), fq_codel, srff-default (thresholds
# 1500,5000), srff-idle-reset (the same with idle-reset 100ms, so a
# kept-alive connection's next response starts in the top band again) and
# srff-tuned (thresholds at this mix's scale, 16 KB and 128 KB, with
# idle-reset 100ms: a whole small response fits in the top two bands).
# srff-th-A-B is that with thresholds A and B (srffctl's units; srff-tuned
# is srff-th-16k-128k), for threshold sweeps:
#   WEB_POLICIES="unmarked srff-th-4k-32k srff-th-64k-512k" experiments/web-demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
OUT=$(cd "$1" && pwd)
ROUNDS=${2:-3}
SECONDS_PER=${3:-20}
RATE=${WEB_RATE:-20mbit}
SEED=${WEB_SEED:-1}
POLICIES=${WEB_POLICIES:-"unmarked fq_codel srff-default srff-idle-reset srff-tuned"}
CLIENTS=${WEB_CLIENTS:-"--short 8 --keepalive 4 --bulk 2 --think 0.2"}
Q=$TOP/tc-scripts/srff-qdisc
export SRFF_QDISC_STATE=$OUT/.qdisc-state

say() { echo "[web] $*" >&2; }
. "$TOP/experiments/guest-lib.sh"	# nginx_start
. "$TOP/experiments/capture.sh"

work=$(mktemp -d /tmp/srff-web.XXXXXX)
SRV=wsrv-$$ CLI=wcli-$$
cleanup() {
	set +e
	[ -n "${NGINX:-}" ] && kill "$NGINX" 2>/dev/null && wait "$NGINX" 2>/dev/null
	capture_end
	grep -q '^srff ' /proc/modules && rmmod srff
	ip netns del "$SRV" 2>/dev/null
	ip netns del "$CLI" 2>/dev/null
	umount "$work/www" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/www" "$work/tmp" "$OUT/requests" "$OUT/pcap"
chmod 755 "$work"	# nginx workers drop root
mount -t tmpfs -o size=300m none "$work/www"
# The file set: seeded, so every run serves the same sizes.
python3 - "$work/www" "$SEED" > "$OUT/manifest.txt" <<'EOF'
import os, random, sys
root, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
os.makedirs(os.path.join(root, "f"))
os.makedirs(os.path.join(root, "bulk"))
blob = os.urandom(5 << 20)
for i in range(300):
    size = min(5 << 20, int(4000 * (1 - rng.random()) ** (-1 / 0.9)))
    with open(os.path.join(root, "f", "%03d" % i), "wb") as f:
        f.write(blob[:size])
    print("/f/%03d %d" % (i, size))
for i in range(2):
    with open(os.path.join(root, "bulk", "b%d" % i), "wb") as f:
        f.write(os.urandom(8 << 20))
    print("/bulk/b%d %d" % (i, 8 << 20))
EOF
chmod -R a+rX "$work/www"

ip netns add "$SRV"
ip netns add "$CLI"
ip link add s0 netns "$SRV" type veth peer name c0 netns "$CLI"
ip -n "$SRV" addr add 10.91.0.1/24 dev s0
ip -n "$CLI" addr add 10.91.0.2/24 dev c0
for ns in "$SRV" "$CLI"; do ip -n "$ns" link set lo up; done
ip -n "$SRV" link set s0 up
ip -n "$CLI" link set c0 up

nginx_start "$SRV" 10.91.0.1 "$work" || exit 1

# srff with its defaults, switched on in the server's namespace (on by
# default in the initial one only).
srff_insmod() {
	insmod "${SRFF_KO:-srff_nf/srff.ko}" &&
		ip netns exec "$SRV" srffctl/srffctl set enabled on
}

policy_on() {
	case $1 in
	unmarked) ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null ;;
	fq_codel) ip netns exec "$SRV" "$Q" install shaped-fq s0 "$RATE" >/dev/null ;;
	srff-default) ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null
		      srff_insmod ;;
	srff-idle-reset) ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null
			 srff_insmod
			 ip netns exec "$SRV" srffctl/srffctl set idle-reset 100ms ;;
	srff-tuned) policy_on srff-th-16k-128k ;;
	srff-th-*-*) local a b
		     IFS=- read -r _ _ a b <<<"$1"
		     ip netns exec "$SRV" "$Q" install shaped s0 "$RATE" >/dev/null
		     srff_insmod
		     ip netns exec "$SRV" srffctl/srffctl set-thresholds "$a" "$b" ||
			     { say "policy $1: bad thresholds"; exit 2; }
		     ip netns exec "$SRV" srffctl/srffctl set idle-reset 100ms ;;
	*) say "unknown policy $1"; exit 2 ;;
	esac
}

policy_off() {
	grep -q '^srff ' /proc/modules && rmmod srff
	ip netns exec "$SRV" "$Q" revert s0 >/dev/null
}

cat > "$OUT/params.json" <<EOF
{
  "experiment": "busy-web-server",
  "rate": "$RATE",
  "rounds": $ROUNDS,
  "seconds": $SECONDS_PER,
  "seed": $SEED,
  "clients": "$CLIENTS",
  "files": "300 Pareto(alpha 0.9, from 4000 B, cap 5 MiB) + 2 bulk of 8 MiB; manifest.txt",
  "small_limit": 100000,
  "policies": [$(printf '"%s",' $POLICIES | sed 's/,$//')],
  "kernel": "$(uname -r)",
  "nginx": "$(dpkg-query -W -f='${Version}' nginx-light 2>/dev/null || true)",
  "date": "$(date -u +%FT%TZ)"
}
EOF

for r in $(seq 1 "$ROUNDS"); do
	for p in $POLICIES; do
		say "round $r/$ROUNDS, policy $p: ${SECONDS_PER}s of load"
		policy_on "$p"
		out=$OUT/requests/$p-$r.jsonl
		capture_start "$CLI" c0 "$OUT/pcap/$p-$r.pcap" "tcp port 80"
		ip netns exec "$CLI" python3 experiments/web_client.py 10.91.0.1 "$OUT/manifest.txt" \
			"$out" --seconds "$SECONDS_PER" --seed $((SEED * 1000 + r)) $CLIENTS
		capture_stop "$SRV" s0 "$OUT/pcap/$p-$r.pcap"
		[ -e /sys/module/srff ] &&
			ip netns exec "$SRV" srffctl/srffctl -j stats > "$OUT/requests/$p-$r.srff.json"
		tc -n "$SRV" -s qdisc show dev s0 > "$OUT/requests/$p-$r.tc.txt"
		policy_off
		say "  $(wc -l < "$out") requests"
	done
done
say "all rounds done"
