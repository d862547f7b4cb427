#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# gc.sh idle|fin: garbage collection.
#  idle: idle_timeout 3 s, GC every 250 ms. A flow that stops sending is
#        freed (gc_freed rises, it leaves the dump) while one that keeps
#        sending every 100 ms stays, with its byte count intact; the
#        sweeps report their duration and longest chain.
#  fin:  idle_timeout 10 min. A TCP connection that closed (FIN) is
#        retired by the next GC (fin_retired) while an open, idle one stays.
. "$(dirname "$0")/../lib.sh"

mode=${1:?idle|fin}
PAIR_IPV4_ONLY=1 setup_pair
SRFF_NS=$SND

flow_ports() {	# the destination ports of tracked flows, sorted
	srffctl -j flows | jq -r '.[] | select(.proto == "udp" or .proto == "tcp") | .dport' | sort -n | tr '\n' ' '
}

case $mode in
idle)
	# Stretched with the other timeouts: under the debug kernel, a loaded
	# guest can take seconds between sending and listing the flows.
	# No idle reset: the busy flow's count must carry across its 100 ms
	# gaps.
	srff_load idle_timeout_ms=$((3000 * ${SRFF_TIMEOUT_SCALE:-1})) gc_interval_ms=250 idle_reset_ms=0
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6002 600 100 --interval 0.1 &
	BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $SND $SRFFCTL -j flows | jq -e 'length >= 1' >/dev/null" ||
		fail "busy flow tracked"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6001 1 100
	check "both flows tracked: $(flow_ports)" test "$(flow_ports)" = "6001 6002 "
	wait_for 15 sh -c "ip netns exec $SND $SRFFCTL -j stats | jq -e '.gc_freed >= 1' >/dev/null" ||
		fail "idle flow not collected within 15 s"
	check "idle flow 6001 freed, busy 6002 kept: $(flow_ports)" test "$(flow_ports)" = "6002 "
	bytes=$(srffctl -j flows | jq '.[] | select(.dport == 6002) | .bytes')
	check "busy flow kept its count ($bytes bytes > 128 * 5)" test "$bytes" -gt 640
	# Every sweep since has walked the busy flow's bucket.
	st=$(srffctl -j stats)
	check "the latest sweep timed: $(echo "$st" | jq -c '{gc_runs, gc_last_us, gc_last_chain}')" \
		jq -e '.gc_runs >= 2 and .gc_last_us > 0 and .gc_last_chain >= 1' <<<"$st"
	;;
fin)
	srff_load idle_timeout_ms=600000 gc_interval_ms=250
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 6003 &
	BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :6003' | grep -q ." || fail "sink"
	# One connection stays open (idle) for a minute, one closes at once.
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 6003 1000 --hold 60 &
	BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $SND ss -Htn state established '( dport = :6003 )' | grep -q ." ||
		fail "open connection"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 6003 5000 ||
		fail "tcp-send"
	wait_for 15 sh -c "ip netns exec $SND $SRFFCTL -j stats | jq -e '.fin_retired >= 1' >/dev/null" ||
		fail "closed flow not retired within 15 s"
	st=$(srffctl -j stats)
	check "closed flow retired, not counted as idle: $(echo "$st" | jq -c '{fin_retired, gc_freed}')" \
		test "$(echo "$st" | jq .gc_freed)" = 0
	n=$(srffctl -j flows | jq '[.[] | select(.proto == "tcp" and .dport == 6003)] | length')
	check "the open connection is still tracked ($n flow)" test "$n" = 1
	;;
esac
exit $ksft_pass
