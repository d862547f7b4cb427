#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/guest.sh: per-packet cost of srff in the guest kernel (run by
# bench/run through scripts/vm). One boot, policies interleaved, medians.
#
#   SND [udpflood -> veth0, no qdisc] ------ veth1 RCV (drops: not its addresses)
#
# Policies: none (no hook), srff, nft (nftables postrouting rule on
# `ct original bytes` setting `meta priority`, which needs conntrack with
# accounting: what a sysadmin would use instead). Flows: 1k, 100k, 1M
# distinct UDP flows, round-robin, so every packet is a lookup of a
# different flow. Then: slab memory per flow at 1M, and how long GC takes
# to free 1M idle flows while a probe stream measures the packet path.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
trap - EXIT
FLOOD=bench/build/udpflood
SECS=${BENCH_SECONDS:-4}
ROUNDS=${BENCH_ROUNDS:-3}
SIZES=${BENCH_SIZES:-"1000 100000 1000000"}
NADDR=32
OUT=${BENCH_OUT:-bench/out}
mkdir -p "$OUT"
RES=$OUT/guest.tsv
: > "$RES"

setup_pair
ip -n "$SND" route add 10.77.16.0/24 dev veth0
mac1=$(ip -n "$RCV" -j link show veth1 | jq -r '.[0].address')
for i in $(seq 0 $((NADDR - 1))); do
	ip -n "$SND" neigh add 10.77.16.$i lladdr "$mac1" dev veth0 nud permanent
done
# Conntrack sized for 1M flows (table size and limit are global: set in the
# initial namespace), with byte accounting in SND, for the nft policy.
modprobe nf_conntrack || exit 1
sysctl -qw net.netfilter.nf_conntrack_buckets=1048576 net.netfilter.nf_conntrack_max=2000000 || exit 1
# UDP entries must outlive the untimed first pass over 1M flows (minutes
# under emulation), or the timed phase would measure their re-creation.
ip netns exec "$SND" sysctl -qw net.netfilter.nf_conntrack_acct=1 \
	net.netfilter.nf_conntrack_udp_timeout=3600 || exit 1
# srff sized for 1M flows: max_flows 2^20, so 2^19 buckets (8 B each).
MAXF=1048576
BUCKET_BYTES=$(( MAXF / 2 * 8 ))

policy_on() {
	case $1 in
	none) ;;
	srff) insmod srff_nf/srff.ko max_flows=$MAXF idle_timeout_ms=600000 ;;
	nft)
		ip netns exec "$SND" nft -f - <<-'NFT'
		table inet srffalt {
			chain post {
				type filter hook postrouting priority 101;
				ct original bytes < 1500 meta priority set 0:6
				ct original bytes >= 1500 ct original bytes < 5000 meta priority set 0:0
				ct original bytes >= 5000 meta priority set 0:2
			}
		}
		NFT
		;;
	esac
}

policy_off() {
	case $1 in
	none) ;;
	srff) rmmod srff ;;
	nft) ip netns exec "$SND" nft delete table inet srffalt
	     ip netns exec "$SND" conntrack -F 2>/dev/null
	     wait_for 60 sh -c "[ \$(ip netns exec $SND cat /proc/sys/net/netfilter/nf_conntrack_count) -eq 0 ]" ||
		echo "# conntrack table not empty after flush" >&2 ;;
	esac
}

echo "# bench: $ROUNDS rounds x {none, srff, nft} x flows {$SIZES}, ${SECS}s each" >&2
for n in $SIZES; do
	for r in $(seq 1 "$ROUNDS"); do
		for p in none srff nft; do
			policy_on $p || { echo "policy $p failed" >&2; exit 1; }
			pps=$(ip netns exec "$SND" $FLOOD 10.77.16.0 "$n" "$SECS" 18 $NADDR | awk '{print $4}')
			tracked=-
			[ $p = srff ] && tracked=$(SRFF_NS=$SND stat flows)
			[ $p = nft ] && tracked=$(ip netns exec "$SND" cat /proc/sys/net/netfilter/nf_conntrack_count)
			printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$p" "$r" "$pps" "$tracked" >> "$RES"
			echo "# flows=$n round=$r policy=$p pps=$pps tracked=$tracked" >&2
			policy_off $p
		done
	done
done

# Memory: slab growth for 1M flows.
echo "# memory and GC at 1M flows" >&2
slab() { awk '/^Slab:/ {print $2 * 1024}' /proc/meminfo; }
insmod srff_nf/srff.ko max_flows=$MAXF idle_timeout_ms=600000 gc_interval_ms=60000
s0=$(slab)
ip netns exec "$SND" $FLOOD 10.77.16.0 1000000 0.1 18 $NADDR >/dev/null
s1=$(slab)
flows=$(SRFF_NS=$SND stat flows)
printf 'memory\t%s\t%s\t%s\n' "$flows" "$((s1 - s0))" "$BUCKET_BYTES" >> "$RES"

# GC: a probe stream on one flow; measure it, then make every other flow
# idle-expired and time the sweep while the probe runs.
probe() { ip netns exec "$SND" $FLOOD 10.77.16.0 1 "$1" 18 1 | awk '{print $4}'; }
base=$(probe 2)
ip netns exec "$SND" $FLOOD 10.77.16.0 1 8 18 1 > "$OUT/probe_gc" &
pp=$!
sleep 1
t0=$(date +%s%N)
SRFF_NS=$SND srffctl set idle-timeout 100ms gc-interval 100ms
wait_for 120 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j stats | jq .flows) -le 1 ]"
t1=$(date +%s%N)
wait $pp
during=$(awk '{print $4}' "$OUT/probe_gc")
gcruns=$(SRFF_NS=$SND stat gc_runs)
printf 'gc\t%s\t%s\t%s\t%s\n' "$(( (t1 - t0) / 1000000 ))" "$base" "$during" "$gcruns" >> "$RES"
rmmod srff
echo "# done" >&2
