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
# different flow. The order of the policies rotates from round to round,
# so a slow drift of the machine does not always fall on the same one.
# Then: slab memory per flow at 1M, and how long GC takes to free 1M idle
# flows (the kernel times the sweep) while a probe stream on the other vCPU
# measures the packet path in 100 ms slices.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
trap - EXIT
FLOOD=bench/build/udpflood
SECS=${BENCH_SECONDS:-4}
ROUNDS=${BENCH_ROUNDS:-5}
SIZES=${BENCH_SIZES:-"1000 100000 1000000"}
NADDR=32
OUT=${BENCH_OUT:-bench/out}
mkdir -p "$OUT"
RES=$OUT/guest.tsv
: > "$RES"
# What the run needs to be reproduced: commit, module, kernel, VM, parameters.
/usr/bin/python3 experiments/runmeta.py "$OUT/meta.json" --ko "${SRFF_KO:-srff_nf/srff.ko}" \
	--set experiment=bench --set rounds="$ROUNDS" --set seconds="$SECS" \
	--set sizes="[${SIZES// /,}]" --pkg nftables >/dev/null ||
	echo "# runmeta failed: no meta.json" >&2

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
# srff sized for 1M flows: max_flows 2^20, so its table grows to 2^19
# buckets (8 B each). SND is not the initial namespace, which keeps
# max_flows_reserved (by default max_flows) of max_flows_total for itself:
# a total of twice max_flows leaves SND its 1M.
MAXF=1048576
KO_PARAMS="netns=all max_flows=$MAXF max_flows_total=$((2 * MAXF)) idle_timeout_ms=600000"

policy_on() {
	case $1 in
	none) ;;
	srff) insmod "${SRFF_KO:-srff_nf/srff.ko}" $KO_PARAMS ;;
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
		case $(( r % 3 )) in
		1) order="none srff nft" ;;
		2) order="srff nft none" ;;
		0) order="nft none srff" ;;
		esac
		for p in $order; do
			policy_on $p || { echo "policy $p failed" >&2; exit 1; }
			pps=$(ip netns exec "$SND" $FLOOD 10.77.16.0 "$n" "$SECS" 18 $NADDR | awk '{print $4}')
			tracked=-
			[ $p = srff ] && tracked=$(SRFF_NS=$SND stat flows)
			[ $p = srff ] && [ "$tracked" -lt "$n" ] &&
				echo "# srff tracked $tracked of $n flows: a cap, not the table, is measured" >&2
			[ $p = nft ] && tracked=$(ip netns exec "$SND" cat /proc/sys/net/netfilter/nf_conntrack_count)
			printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$p" "$r" "$pps" "$tracked" >> "$RES"
			echo "# flows=$n round=$r policy=$p pps=$pps tracked=$tracked" >&2
			policy_off $p
		done
	done
done

# Memory: kernel memory growth for 1M flows: the flows' slab, and the
# bucket array the table grows to meanwhile (kvmalloc: Slab when kmalloc
# served it, VmallocUsed when vmalloc did).
echo "# memory and GC at 1M flows" >&2
kmem() { awk '/^(Slab|VmallocUsed):/ { s += $2 * 1024 } END { print s }' /proc/meminfo; }
# No idle reset, so that the idle timeout can drop to 100 ms below; a GC
# interval a namespace may lower to 5 s below (no namespace may go under
# the module's), held at 60 s while the flows are created.
insmod "${SRFF_KO:-srff_nf/srff.ko}" $KO_PARAMS gc_interval_ms=5000 idle_reset_ms=0
ip netns exec "$SND" "$SRFFCTL" set gc-interval 60s
s0=$(kmem)
ip netns exec "$SND" $FLOOD 10.77.16.0 1000000 0.1 18 $NADDR >/dev/null
s1=$(kmem)
flows=$(SRFF_NS=$SND stat flows)
buckets=$(SRFF_NS=$SND stat buckets)
printf 'memory\t%s\t%s\t%s\n' "$flows" "$((s1 - s0))" "$((buckets * 8))" >> "$RES"

# GC. A probe stream on one of the 1M flows runs on CPU 1 for the whole
# measurement and reports its rate every 100 ms. srffctl, which re-arms the
# GC timer (so the sweep runs on that CPU's workqueue), runs on CPU 0, and
# so does the poller: the probe then sees what the sweep does to the packet
# path (bucket locks, cache, RCU), not the scheduler sharing a vCPU. The
# idle timeout drops to 100 ms and the next sweep comes 5 s later: 5 s of
# probe before it, then the sweep of ~1M idle flows, then probe again
# before the next (near-empty) sweep. The kernel times the sweep itself.
pin0() { ip netns exec "$SND" taskset -c 0 "$@"; }
ip netns exec "$SND" taskset -c 1 $FLOOD 10.77.16.0 1 20 18 1 100 > "$OUT/probe_gc" &
pp=$!
wait_for 30 sh -c "[ \$(grep -c '^slice' $OUT/probe_gc) -ge 10 ]" || echo "# probe did not start" >&2
flows0=$(SRFF_NS=$SND stat flows)
t_set=$(date +%s%N)
pin0 "$SRFFCTL" set idle-timeout 100ms gc-interval 5s
read -r t_full t_empty us chain freed < <(pin0 /usr/bin/python3 bench/gcwatch.py 120)
wait $pp
printf 'gc\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$flows0" "$t_set" "$t_full" "$t_empty" \
	"$us" "$chain" "$freed" probe_gc >> "$RES"
echo "# GC: $freed flows freed, sweep ${us} us, longest chain $chain" >&2

# The control: the same probe while CPU 0 is busy with something that is
# not srff (dd, clearing 1 MB buffers in the kernel) for 2 s. Under
# emulation two busy vCPUs share the host, so this is what any busy
# neighbour costs the probe; the sweep's effect is what goes beyond it.
ip netns exec "$SND" taskset -c 1 $FLOOD 10.77.16.0 1 6 18 1 100 > "$OUT/probe_busy" &
pp=$!
wait_for 30 sh -c "[ \$(grep -c '^slice' $OUT/probe_busy) -ge 20 ]" || echo "# probe did not start" >&2
t_b0=$(date +%s%N)
taskset -c 0 timeout 2 dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null
t_b1=$(date +%s%N)
wait $pp
printf 'busy\t%s\t%s\t%s\n' "$t_b0" "$t_b1" probe_busy >> "$RES"
rmmod srff
echo "# done" >&2
