#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# stress.sh flood|rmmod|netns: the packet path under hostile and dying input.
#
#   SND 10.78.1.1 ---- 10.78.1.2 RTR 10.78.2.1 ---- 10.78.2.2 RCV
#       fd78:1::1                     (mtu 1280)       fd78:2::2
#
#  flood: for 30 s, `ping -f -s 14720` (what crashed the 2003 module) over
#         IPv4 and IPv6, 30000-byte UDP datagrams (fragmented at SND and
#         re-fragmented by RTR onto the 1280-byte link) and a TCP stream,
#         with srff in every namespace. RTR forwards fragments it cannot
#         read ports from: they must be tracked port-less. Traffic must
#         still flow at the end.
#  rmmod: the same traffic; srff is removed, loaded and removed again while
#         it runs (5 rounds). Traffic must keep flowing.
#  netns: SRFF_STRESS_ROUNDS (3; tests/run-debug: 10) rounds of:
#         namespaces full of queued traffic (tbf backlog) are killed and
#         deleted; then srff is removed, which would WARN in
#         kmem_cache_destroy had one flow leaked.
# The runner fails any of these on BUG/WARNING/Oops/stall in the kernel log.
. "$(dirname "$0")/../lib.sh"

mode=${1:?flood|rmmod|netns}
DUR=${SRFF_STRESS_SECONDS:-30}
# SND's shaper. An emulated guest cannot send 200 Mbit/s, so netns mode,
# which needs a standing queue at SND, shapes far below what it sends.
SND_RATE=200mbit
[ "$mode" = netns ] && SND_RATE=5mbit

topology() {
	setup_ns SND RTR RCV
	ip link add s0 netns "$SND" type veth peer name r0 netns "$RTR"
	ip link add r1 netns "$RTR" type veth peer name d0 netns "$RCV"
	ip -n "$SND" addr add 10.78.1.1/24 dev s0
	ip -n "$RTR" addr add 10.78.1.2/24 dev r0
	ip -n "$RTR" addr add 10.78.2.1/24 dev r1
	ip -n "$RCV" addr add 10.78.2.2/24 dev d0
	ip -n "$SND" addr add fd78:1::1/64 dev s0 nodad
	ip -n "$RTR" addr add fd78:1::2/64 dev r0 nodad
	ip -n "$RTR" addr add fd78:2::1/64 dev r1 nodad
	ip -n "$RCV" addr add fd78:2::2/64 dev d0 nodad
	ip -n "$RTR" link set r1 mtu 1280
	ip -n "$RCV" link set d0 mtu 1280
	local ns dev
	for ns in "$SND" "$RTR" "$RCV"; do
		for dev in $(ip -n "$ns" -br link | awk '$1 != "lo" { sub("@.*", "", $1); print $1 }'); do
			ip -n "$ns" link set "$dev" up
		done
	done
	ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ip -n "$SND" route add default via 10.78.1.2
	ip -n "$RCV" route add default via 10.78.2.1
	ip -n "$SND" -6 route add default via fd78:1::2
	ip -n "$RCV" -6 route add default via fd78:2::1
	tc -n "$SND" qdisc replace dev s0 root handle 1: tbf rate "$SND_RATE" burst 64k latency 200ms
	tc -n "$SND" qdisc add dev s0 parent 1:1 handle 10: prio
	tc -n "$RTR" qdisc replace dev r1 root handle 1: tbf rate 100mbit burst 64k latency 200ms
	tc -n "$RTR" qdisc add dev r1 parent 1:1 handle 10: prio
	wait_for 20 ip netns exec "$SND" ping -c1 -W1 10.78.2.2 >/dev/null || fail "no route v4"
	wait_for 20 ip netns exec "$SND" ping -6 -c1 -W1 fd78:2::2 >/dev/null || fail "no route v6"
	# IPv6 routers do not fragment: SND must know the 1280-byte path MTU
	# before the flood, or its first 1500-byte fragments draw a Packet Too
	# Big and ping -f stops at that error (seen in CI under load).
	wait_for 20 sh -c "ip netns exec $SND ping -6 -c1 -W1 -s 14720 fd78:2::2 >/dev/null 2>&1;
		ip -n $SND -6 route get fd78:2::2 | grep -q 'mtu 1280'" ||
		fail "SND never learnt the IPv6 path MTU"
}

# Traffic for $1 seconds, in the background.
traffic() {
	local secs=$1
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 7001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :7001' | grep -q ." || fail "sink"
	ip netns exec "$SND" ping -q -f -w "$secs" -s 14720 10.78.2.2 > "$OUT/ping4" 2>&1 & BG_PIDS+=($!)
	ip netns exec "$SND" ping -q -6 -f -w "$secs" -s 14720 fd78:2::2 > "$OUT/ping6" 2>&1 & BG_PIDS+=($!)
	ip netns exec "$SND" timeout "$secs" $PY "$TOOLS/traffic.py" udp-send 10.78.2.2 7002 1000000 30000 --interval 0.01 & BG_PIDS+=($!)
	ip netns exec "$SND" timeout "$secs" $PY "$TOOLS/traffic.py" udp-send fd78:2::2 7003 1000000 30000 --interval 0.01 & BG_PIDS+=($!)
	ip netns exec "$SND" timeout "$secs" $PY "$TOOLS/traffic.py" tcp-send 10.78.2.2 7001 10000000000 & BG_PIDS+=($!)
}

# rx_packets RCV has seen on d0.
rx() { ip -n "$RCV" -j -s link show d0 | jq '.[0].stats64.rx.packets'; }

OUT=$(mktemp -d)
case $mode in
flood)
	# Flows must outlive the flood until they are counted below, however
	# slowly a loaded machine gets there.
	srff_load idle_timeout_ms=600000
	topology
	traffic "$DUR"
	log "flooding for $DUR s"
	wait "${BG_PIDS[@]:1}" 2>/dev/null
	log "ping v4: $(grep -E 'transmitted' "$OUT/ping4")"
	log "ping v6: $(grep -E 'transmitted' "$OUT/ping6")"
	recv4=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$OUT/ping4")
	recv6=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$OUT/ping6")
	check "IPv4 14720-byte pings answered ($recv4)" test "${recv4:-0}" -gt 0
	check "IPv6 14720-byte pings answered ($recv6)" test "${recv6:-0}" -gt 0
	SRFF_NS=$RTR
	st=$(srffctl -j stats)
	log "router: $(echo "$st" | jq -c 'del(.bands)')"
	check "router tracked flows" test "$(echo "$st" | jq .created)" -gt 0
	# On a slow kernel (the debug one, beside another guest) the flood's
	# UDP senders may hardly have run within its window: python started
	# late and timeout stopped it. Then send a bounded number more of the
	# same datagrams until RTR has keyed one, rather than judge the
	# kernel by its sender.
	fragq='[.[] | select(.proto == "udp" and .sport == 0 and .dport == 0)] | length'
	if [ "$(srffctl -j flows | jq "$fragq")" -eq 0 ]; then
		log "no UDP fragment flow on RTR after the flood: sending more"
		ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send 10.78.2.2 7002 500 30000 --interval 0.02 &
		BG_PIDS+=($!)
		wait_for 60 sh -c "ip netns exec $RTR $SRFFCTL -j flows | jq -e '$fragq >= 1' >/dev/null"
	fi
	frag=$(srffctl -j flows | jq "$fragq")
	check "router keyed forwarded UDP fragments port-less ($frag flows)" test "$frag" -ge 1
	a=$(rx); wait_for 20 ip netns exec "$SND" ping -c1 -W1 10.78.2.2 >/dev/null
	check "traffic still flows after the flood" test "$(rx)" -gt "$a"
	;;
rmmod)
	srff_load
	topology
	# Long enough to outlast the rounds on a loaded machine, stretched as
	# every wait is (SRFF_TIMEOUT_SCALE: 5 under the debug kernel, where
	# 330 s ran out before round 2 with another guest beside it); cleanup
	# stops it when the rounds are done.
	traffic $(((DUR + 300) * ${SRFF_TIMEOUT_SCALE:-1}))
	for i in 1 2 3 4 5; do
		a=$(rx)
		wait_for 20 sh -c "[ \$(ip -n $RCV -j -s link show d0 | jq '.[0].stats64.rx.packets') -gt $((a + 100)) ]" ||
			fail "traffic stalled before round $i"
		run rmmod srff || fail "rmmod under traffic, round $i"
		a=$(rx)
		wait_for 20 sh -c "[ \$(ip -n $RCV -j -s link show d0 | jq '.[0].stats64.rx.packets') -gt $((a + 100)) ]" ||
			fail "traffic stalled without srff, round $i"
		run insmod "$SRFF_KO" netns=all || fail "insmod under traffic, round $i"
	done
	run rmmod srff || fail "final rmmod"
	check "traffic flowed through 5 rounds of rmmod/insmod" true
	;;
netns)
	srff_load
	rounds=${SRFF_STRESS_ROUNDS:-3}
	for i in $(seq "$rounds"); do
		topology
		traffic 60
		wait_for 20 sh -c "ip netns exec $RTR $SRFFCTL -j stats | jq -e '.flows >= 3' >/dev/null" ||
			fail "round $i: flows not tracked"
		wait_for 20 sh -c "tc -n $SND -j -s qdisc show dev s0 | jq -e '[.[].backlog] | add > 0' >/dev/null" ||
			fail "round $i: no queue formed at SND's shaper"
		backlog=$(tc -n "$SND" -j -s qdisc show dev s0 | jq '[.[].backlog] | add')
		log "round $i: deleting namespaces with $backlog bytes queued"
		for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
		kill_bg
		# ip netns exec children may outlive their parent briefly.
		for ns in "$SND" "$RTR" "$RCV"; do
			ip netns pids "$ns" 2>/dev/null | xargs -r kill -9
		done
		cleanup_ns
	done
	# Namespaces die asynchronously; removing srff waits for them and
	# destroys the flow cache, which complains loudly about any leak.
	run rmmod srff || fail "rmmod after namespace deletions"
	check "$rounds rounds of namespace deletion under traffic" true
	;;
esac
rm -rf "$OUT"
exit $ksft_pass
