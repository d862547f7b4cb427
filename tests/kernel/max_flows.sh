#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# max_flows.sh: 500 new flows (one datagram each) against max_flows=64.
# The table never holds more than 64. Each of the other 436 either made
# room by evicting a flow of its bucket idle for SRFF_EVICT_MIN_IDLE
# (created and evicted count it; how many depends on how fast the guest
# sends) or was refused before anything was allocated (table_full and
# untracked, its packet got untracked_priority: 1 here, prio band 2, where
# no first packet of a tracked flow goes). The two add up exactly.
. "$(dirname "$0")/../lib.sh"

srff_load max_flows=64 idle_timeout_ms=600000 untracked_priority=1
PAIR_IPV4_ONLY=1 setup_pair
SRFF_NS=$SND
shaped_prio "$SND" veth0 100mbit
run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 500 || fail "udp-flows"
st=$(srffctl -j stats) || fail "srffctl stats"
log "$(echo "$st" | jq -c 'del(.bands)')"
ev=$(echo "$st" | jq .evicted)
full=$(echo "$st" | jq .table_full)
check "flows at the cap: $(echo "$st" | jq .flows) == 64" test "$(echo "$st" | jq .flows)" = 64
check "created == 64 + evicted ($ev)" test "$(echo "$st" | jq .created)" = $((64 + ev))
check "table_full ($full) == 436 - evicted" test "$full" = $((436 - ev))
check "untracked_pkts == table_full" test "$(echo "$st" | jq .untracked_pkts)" = "$full"
# RCV's srff tracks the ICMP errors it answers with: the host counts both.
# The host-wide figures are the initial namespace's to see, no other's.
host=$("$SRFFCTL" -j stats) || fail "srffctl stats in the initial namespace"
check "the host-wide count includes them ($(jq .flows_host <<<"$host"))" \
	test "$(jq .flows_host <<<"$host")" -ge 64
check "  and SND's own stats do not show it" \
	test "$(jq 'has("flows_host") or has("max_flows_host")' <<<"$st")" = false
n=$(srffctl -j flows | jq length)
check "dump lists 64 flows" test "$n" = 64
# untracked_priority 1 -> prio band 2 (class 10:3); tracked first packets
# are priority 6 -> band 0 (10:1).
read -r _ p0 _ < <(class_counters "$SND" veth0 | awk '$1 == 0')
read -r _ p2 _ < <(class_counters "$SND" veth0 | awk '$1 == 2')
check "tracked first packets in band 0 ($p0 == 64 + evicted)" test "$p0" = $((64 + ev))
check "untracked packets in band 2 ($p2 == table_full)" test "$p2" = "$full"
exit $ksft_pass
