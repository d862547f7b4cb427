#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# auto.sh: automatic thresholds (srff_nf/auto.h) converge on a known mix,
# hold still while it stays the same, and stay fixed once set by hand;
# then, with 8 bands, converge on a second mix in the same namespace and
# hold still there.
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
n=$(stat auto_changes)
check "400 flows: learnt ($n change(s))" test "$n" -ge 1
check "  the median's bucket bound and 32 times it: [49152, 1572864] ($th)" \
	test "$th" = "[49152,1572864]"
n=$(stat auto_flows)
check "  recent flows counted ($n)" test "$n" -ge 200

changes=$(stat auto_changes)
mix 300
now=$(show | jq -c .thresholds)
check "the same mix again: thresholds hold still ($now)" test "$now" = "$th"
n=$(stat auto_changes)
check "  no change made ($n == $changes)" test "$n" = "$changes"

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

# 8 bands (class ids), the same history: t1 = p60, 49152 as above, then
# x8 (auto.h: 4 bands and more).
A8='[49152,393216,3145728,25165824,201326592,1610612736,12884901888]'
run srffctl set thresholds 16k,128k,1m,8m,64m,512m,4g classid 10: || fail "8 bands"
run srffctl set thresholds auto || fail "8 bands: auto"
check "8 bands: learnt at once from the same history, $A8" \
	wait_for 10 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j show | jq -c .thresholds) = '$A8' ]"

# Mix B in the same namespace: 4 kB nine times out of ten, 400 kB the
# tenth. Its p60 is under the floor: 16384, then x8. The recent copy
# forgets mix A by 1/64 at each auto step (at most one a second) in which
# flows ended, so it takes about a minute of mix B, whatever its rate:
# batches until mix B's small flows hold 60 % of it (7 of ~10 s each in
# the emulated guest; up to 20, for a faster one).
#
# Converged means what the kernel can reach: a set is installed only if a
# threshold moves by more than a quarter (srff_auto_moved), so the path
# down from 48 KiB decides whether t1 ends at 16 KiB or one bucket above
# it, 20 KiB (4 KiB from the rule: not more than a quarter of 20 KiB).
# Either way every threshold is within a quarter of the rule's and the
# ladder is whole (t1 x 8^n).
B8='[16384,131072,1048576,8388608,67108864,536870912,4294967296]'
settled() {
	jq -e --argjson rule "$B8" '.thresholds as $h |
		($h | length) == ($rule | length) and
		all(range($h | length); ($h[.] - $rule[.] | fabs) <= (($h[.] / 4) | floor)) and
		all(range(1; $h | length); $h[.] == $h[. - 1] * 8)' >/dev/null
}
MIX=4000,4000,4000,4000,4000,4000,4000,4000,4000,400000
for batches in $(seq 20); do
	mix 300
	cur=$(show)
	! settled <<<"$cur" || break
done
B=$(jq -c .thresholds <<<"$cur")
check "mix B: learnt after $batches batches of 300 flows, within a quarter of $B8 ($B)" \
	settled <<<"$cur"
changes=$(stat auto_changes)
mix 300
now=$(show | jq -c .thresholds)
check "mix B again: thresholds hold still ($now)" test "$now" = "$B"
n=$(stat auto_changes)
check "  no change made ($n == $changes)" test "$n" = "$changes"
exit $ksft_pass
