#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# max_flows.sh: 500 new flows against max_flows=64. The table holds exactly
# 64; the other 436 are refused before anything is allocated, counted as
# table_full and untracked, and their packets get untracked_priority (1
# here: prio band 2, where no first packet of a tracked flow goes).
. "$(dirname "$0")/../lib.sh"

srff_load max_flows=64 idle_timeout_ms=600000 untracked_priority=1
PAIR_IPV4_ONLY=1 setup_pair
SRFF_NS=$SND
shaped_prio "$SND" veth0 100mbit
run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 500 || fail "udp-flows"
st=$(srffctl -j stats) || fail "srffctl stats"
log "$(echo "$st" | jq -c 'del(.bands)')"
check "flows at the cap: $(echo "$st" | jq .flows) == 64" test "$(echo "$st" | jq .flows)" = 64
check "created == 64" test "$(echo "$st" | jq .created)" = 64
check "table_full == 436" test "$(echo "$st" | jq .table_full)" = 436
check "untracked_pkts == 436" test "$(echo "$st" | jq .untracked_pkts)" = 436
n=$(srffctl -j flows | jq length)
check "dump lists 64 flows" test "$n" = 64
# untracked_priority 1 -> prio band 2 (class 10:3); tracked first packets
# are priority 6 -> band 0 (10:1).
read -r _ p0 _ < <(class_counters "$SND" veth0 | awk '$1 == 0')
read -r _ p2 _ < <(class_counters "$SND" veth0 | awk '$1 == 2')
check "tracked first packets in band 0 ($p0 == 64)" test "$p0" = 64
check "untracked packets in band 2 ($p2 == 436)" test "$p2" = 436
exit $ksft_pass
