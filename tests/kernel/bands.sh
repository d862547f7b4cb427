#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bands.sh tcp|udp 4|6 [classid]: bytes land in the prio bands the
# thresholds predict. With "classid", srff writes class ids 10:1..10:5 of a
# 5-band prio for 4 thresholds (classid_major=0x10) instead of priorities.
#
#   SND [srff, veth0: tbf 20mbit -> prio 10: (3 bands)] ---- RCV (sink)
#
# veth0 is captured with TSO on, so the capture holds the skbs srff saw,
# GSO super-packets whole; tests/tools/pcap_bands.py replays srff's rule
# over it and the `tc -s class` counters of prio 10: must match exactly,
# packets and bytes (a GSO skb counted as tc counts it). srff's own
# per-band statistics must match too. For TCP, the first data skb must be
# a super-packet larger than the MTU and still leave in band 0; for UDP the
# split is also checked against plain arithmetic. No idle reset: the replay
# does not model it (keepalive.sh tests it).
. "$(dirname "$0")/../lib.sh"

proto=${1:?tcp|udp}
fam=${2:?4|6}
out=$(mktemp -d)
mode=${3:-priorities}
if [ "$mode" = classid ]; then
	TH=1000,2000,4000,8000 BANDS=5
	srff_load idle_timeout_ms=600000 idle_reset_ms=0 thresholds=$TH classid_major=0x10
	SIMARGS="--classid-major 16 --bands $BANDS"
else
	TH=1500,5000 BANDS=3
	srff_load idle_timeout_ms=600000 idle_reset_ms=0 thresholds=$TH
	SIMARGS=""
fi
setup_pair
SRFF_NS=$SND
shaped_prio "$SND" veth0 20mbit $BANDS
if [ "$fam" = 4 ]; then dst=$RCV_IP4; else dst=$RCV_IP6; fi

tcpdump_start "$SND" veth0 "$out/cap.pcap" "$RCV" veth1
# Counters from here on: the capture's window.
tc0=$(class_counters "$SND" veth0)
stats0=$(srffctl -j stats) || fail "srffctl stats"
case $proto in
tcp)
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 &
	BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." ||
		fail "sink did not listen"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send "$dst" 5001 300000 ||
		fail "tcp-send"
	# Every packet of the connection must be through the qdisc and in the
	# capture before both are read: wait for the close to complete.
	wait_for 30 sh -c "! ip netns exec $SND ss -Htn state connected exclude time-wait '( dport = :5001 )' | grep -q ." ||
		fail "connection did not close"
	;;
udp)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send "$dst" 5002 100 472 ||
		fail "udp-send"
	;;
esac
# The capture is written with -U; the qdisc is empty once tbf let it all go.
wait_drained "$SND" veth0
tcpdump_stop

sim=$($PY "$TOOLS/pcap_bands.py" "$out/cap.pcap" --src-mac $(ip -n "$SND" -j link show veth0 | jq -r '.[0].address') --thresholds $TH $SIMARGS) || fail "pcap_bands"
log "predicted from capture: $sim"
got=$(join <(echo "$tc0") <(class_counters "$SND" veth0) | awk '{ print $1, $4 - $2, $5 - $3 }')
log "tc -s class, since the capture started: $(echo $got)"

last=$((BANDS - 1))
for b in $(seq 0 $last); do
	want_p=$(echo "$sim" | jq ".bands[\"$b\"].pkts")
	want_b=$(echo "$sim" | jq ".bands[\"$b\"].bytes")
	read -r _ got_p got_b < <(echo "$got" | awk -v b=$b '$1 == b')
	check "band $b: tc counted $got_p pkts $got_b bytes, predicted $want_p pkts $want_b bytes" \
		test "$got_p" = "$want_p" -a "$got_b" = "$want_b"
	# A super-packet may jump a band; the top and bottom always carry.
	[ $b != 0 ] && [ $b != $last ] || check "band $b carried traffic" test "$want_p" -gt 0
done

# srff's own statistics: per band, L3 bytes of what it marked since the
# capture started.
stats=$(srffctl -j stats) || fail "srffctl stats"
for b in $(seq 0 $last); do
	want=$(echo "$sim" | jq ".srff[\"$b\"].l3_bytes")
	got_b=$(( $(echo "$stats" | jq ".bands[] | select(.band == $b) | .bytes") -
		  $(echo "$stats0" | jq ".bands[] | select(.band == $b) | .bytes") ))
	check "srff band $b stats: $got_b L3 bytes, capture says $want" test "$got_b" = "$want"
done

if [ "$proto" = tcp ]; then
	first=$(echo "$sim" | jq '[.flows[] | select(.first_data_len > 0)][0]')
	check "first data skb is a GSO super-packet: $(echo "$first" | jq .first_data_len) L3 bytes" \
		test "$(echo "$first" | jq .first_data_len)" -gt 1500
	check "and it left in band 0" test "$(echo "$first" | jq .first_data_band)" = 0
fi
if [ "$proto" = udp ] && [ "$mode" != classid ]; then
	# 100 datagrams of 472 payload bytes: 500 (v4) or 520 (v6) L3 bytes.
	size=$(( fam == 4 ? 500 : 520 ))
	b0=0 b1=0 b2=0
	for ((i = 0; i < 100; i++)); do
		before=$((i * size))
		if [ $before -lt 1500 ]; then b0=$((b0 + 1))
		elif [ $before -lt 5000 ]; then b1=$((b1 + 1))
		else b2=$((b2 + 1)); fi
	done
	exp="0 $b0 $((b0 * (size + 14)))
1 $b1 $((b1 * (size + 14)))
2 $b2 $((b2 * (size + 14)))"
	check "UDP split is $b0/$b1/$b2 datagrams by arithmetic" test "$got" = "$exp"
fi
rm -rf "$out"
exit $ksft_pass
