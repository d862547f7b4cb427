#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# auto.sh: automatic thresholds (srff_nf/auto.h) converge on a known mix,
# hold still while it stays the same, and stay fixed once set by hand.
#
# The mix: TCP connections sending 44 kB nine times out of ten and 1 MB
# the tenth. With headers on the wire (~3.5 %) a 44 kB flow is ~45.6 kB,
# in the bucket [40960, 49152). The rule for 3 bands (auto.h): t1 is the
# median flow's bucket's upper bound, 49152; t2 = 32 t1 = 1572864.
# srff starts from its defaults, 16 KiB and 128 KiB, and needs 200 flows
# (auto_min_flows) before it learns.
. "$(dirname "$0")/../lib.sh"

PAIR_IPV4_ONLY=1 setup_pair
SRFF_NS=$SND
srff_load auto_min_flows=200 gc_interval_ms=100 idle_timeout_ms=2000
MIX=44000,44000,44000,44000,44000,44000,44000,44000,44000,1000000

show() { srffctl -j show; }
check "auto by default, from 16 KiB and 128 KiB" \
	jq -e '.auto_thresholds == true and .thresholds == [16384, 131072]' <<<"$(show)"

ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 &
BG_PIDS+=($!)
wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"

# mix N: N connections of the mix; then wait until every one of them is in
# the recent histogram (it holds at least the ENDED flows recorded so far,
# one GC period and one auto step after the last FIN).
ended=0
mix() {
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-mix $RCV_IP4 5001 "$1" "$MIX" ||
		fail "tcp-mix"
	ended=$((ended + $1))
	wait_for 30 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j sizes | jq .flows) -ge $ended ]" ||
		fail "not all $ended flows recorded: $(srffctl -j sizes | jq -c '{flows, fin, idle}')"
	# Two auto steps (at most a second apart) after the last flow ended.
	local runs=$(( $(stat gc_runs) + 25 ))
	wait_for 30 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j stats | jq .gc_runs) -ge $runs ]" ||
		fail "GC stopped"
	log "after $ended flows: $(show | jq -c '{thresholds, auto_thresholds}')" \
		"$(srffctl -j stats | jq -c '{auto_flows, auto_changes}'), sizes p50/p90/p99" \
		"$(srffctl -j sizes | jq -c .quantiles)"
}

mix 100
check "100 flows: too few to learn from, still the defaults" \
	jq -e '.thresholds == [16384, 131072]' <<<"$(show)"
check "  no change made" test "$(stat auto_changes)" = 0

mix 300
th=$(show | jq -c .thresholds)
check "400 flows: learnt ($(stat auto_changes) change(s))" test "$(stat auto_changes)" -ge 1
check "  the median's bucket bound and 32 times it: [49152, 1572864] ($th)" \
	test "$th" = "[49152,1572864]"
check "  recent flows counted ($(stat auto_flows))" test "$(stat auto_flows)" -ge 200

changes=$(stat auto_changes)
mix 300
check "the same mix again: thresholds hold still ($(show | jq -c .thresholds))" \
	test "$(show | jq -c .thresholds)" = "$th"
check "  no change made ($(stat auto_changes) == $changes)" test "$(stat auto_changes)" = "$changes"

# With the learnt thresholds, a 44 kB response leaves in band 0 whole.
b0=$(srffctl -j stats | jq '.bands[1].bytes + .bands[2].bytes')
run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5001 44000 || fail "tcp-send"
check "a 44 kB transfer: nothing in bands 1 and 2" \
	test "$(srffctl -j stats | jq '.bands[1].bytes + .bands[2].bytes')" = "$b0"

# Set by hand: fixed; more traffic changes nothing.
run srffctl set-thresholds 1500 5000 || fail "set-thresholds"
mix 300
check "set by hand: fixed at 1500 5000 through 300 more flows" \
	jq -e '.auto_thresholds == false and .thresholds == [1500, 5000]' <<<"$(show)"
check "  no change made" test "$(stat auto_changes)" = "$changes"
# And back: learnt again at once (the next GC), from the history.
run srffctl set thresholds auto || fail "thresholds auto"
check "auto again: back at $th within 10 s" \
	wait_for 10 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j show | jq -c .thresholds) = '$th' ]"
exit $ksft_pass
