#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# mark.sh 4|6: DSCP marking (`srffctl set mark dscp`), for a bottleneck past
# this host. The receiver counts what arrives per DSCP (nftables at its
# prerouting), thresholds 16k,128k:
#  - off by default: nothing is rewritten;
#  - the default map (keep, keep, LE): a 1 MB TCP transfer with ECN on
#    arrives with DSCP 0 for its first 128 KiB and DSCP 1 (LE) for the
#    rest, the ECN bits kept (ECT(0) beside LE), the IPv4 header checksum
#    right (the transfer completes; no InHdrErrors);
#  - an application's own DSCP (200 kB of UDP with EF) is never lowered unless
#    dscp-override is on;
#  - an operator's map (cs1,cs2,cs3) gives each band its code point;
#  - a map with the wrong number of entries is refused and changes nothing;
#  - mark none: nothing is rewritten again.
. "$(dirname "$0")/../lib.sh"

fam=${1:?4|6}
setup_pair
SRFF_NS=$SND
srff_load idle_reset_ms=0
if [ "$fam" = 4 ]; then
	DST=$RCV_IP4 SRC=$SND_IP4 IPX=ip
else
	DST=$RCV_IP6 SRC=$SND_IP6 IPX=ip6
fi

rules=
for d in 0 1 8 16 24 46; do
	rules+="$IPX saddr $SRC meta l4proto { tcp, udp } $IPX dscp $d counter comment \"d$d\""$'\n'
done
rules+="$IPX saddr $SRC meta l4proto tcp $IPX dscp 1 $IPX ecn ect0 counter comment \"le-ect0\""
ip netns exec "$RCV" nft -f - <<EOF || fail "nft counters"
table inet srff_dscp {
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		$rules
	}
}
EOF
# count NAME [bytes|packets]: the receiver's counter NAME.
count() {
	ip netns exec "$RCV" nft -j list table inet srff_dscp |
		jq --arg c "$1" --arg f "${2:-bytes}" '[.nftables[] | select(.rule) | .rule |
			select(.comment == $c) | .expr[] | select(.counter) | .counter[$f]] | add // 0'
}
snap() { for d in d0 d1 d8 d16 d24 d46 le-ect0; do printf '%s=%s ' "$d" "$(count "$d")"; done; }
declare -A base
# mark: note every counter; delta NAME [bytes|packets]: its growth since.
mark() {
	local d f
	for d in d0 d1 d8 d16 d24 d46 le-ect0; do
		for f in bytes packets; do base[$d:$f]=$(count "$d" $f); done
	done
}
delta() { echo $(( $(count "$1" "${2:-bytes}") - ${base[$1:${2:-bytes}]} )); }
hdr_errors() {
	ip netns exec "$RCV" awk '$1 == "Ip:" { if (!c) { for (i = 2; i <= NF; i++) if ($i == "InHdrErrors") c = i } else { print $c; exit } }' /proc/net/snmp
}

ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 &
BG_PIDS+=($!)
wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
for ns in "$SND" "$RCV"; do ip netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn=1; done
run srffctl set thresholds 16k,128k || fail "thresholds"
send() { run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send "$DST" 5001 1000000 || fail "tcp-send"; }

# Off by default.
check "mark none by default" test "$(srffctl -j show | jq -r .mark)" = none
mark; send
log "mark none: $(snap)"
check "  nothing rewritten: all in DSCP 0 (+$(delta d0) bytes), none in 1 (+$(delta d1))" \
	test "$(delta d1)" = 0 -a "$(delta d0)" -ge 1000000

# The default map: keep, keep, LE.
run srffctl set mark dscp || fail "set mark dscp"
check "mark dscp, the default map keep,keep,le" \
	test "$(srffctl -j show | jq -c '[.mark, .dscp_map]')" = '["dscp",[null,null,1]]'
h0=$(hdr_errors)
mark; send
log "mark dscp: $(snap); srffctl: $(srffctl -j stats | jq -c '{dscp_pkts, dscp_failed}')"
check "  past 128 KiB in LE: +$(delta d1) bytes of DSCP 1" test "$(delta d1)" -ge 800000
check "  the first 128 KiB keep DSCP 0: +$(delta d0) bytes" \
	test "$(delta d0)" -ge 131072 -a "$(delta d0)" -lt 300000
check "  ECN bits kept: +$(delta le-ect0) of them ECT(0) with LE" \
	test "$(delta le-ect0)" -ge $(( $(delta d1) * 9 / 10 ))
if [ "$fam" = 4 ]; then
	check "  no IPv4 header checksum errors at the receiver" test "$(hdr_errors)" = "$h0"
fi
check "  srffctl stats counts them" test "$(srffctl -j stats | jq .dscp_pkts)" -gt 0

# An application's EF: kept, unless dscp-override.
mark
run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send "$DST" 9 200 1000 --sport 4001 --tos 0xb8 ||
	fail "udp-send EF"
log "EF, no override: $(snap)"
check "  EF kept in every band: +$(delta d46 packets) packets of 200, none lowered (+$(delta d1 packets))" \
	test "$(delta d46 packets)" = 200 -a "$(delta d1 packets)" = 0
run srffctl set dscp-override on || fail "dscp-override on"
mark
run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send "$DST" 9 200 1000 --sport 4002 --tos 0xb8 ||
	fail "udp-send EF, override"
log "EF, override: $(snap)"
check "  with dscp-override on, past 128 KiB in LE: +$(delta d1 packets) packets" \
	test "$(delta d1 packets)" -gt 0 -a "$(delta d46 packets)" -lt 200
run srffctl set dscp-override off || fail "dscp-override off"

# An operator's map.
run srffctl set dscp-map cs1,cs2,cs3 || fail "dscp-map"
mark; send
log "cs1,cs2,cs3: $(snap)"
check "  each band its code point: CS1 +$(delta d8), CS2 +$(delta d16), CS3 +$(delta d24) bytes" \
	test "$(delta d8)" -gt 0 -a "$(delta d16)" -gt 0 -a "$(delta d24)" -ge 800000

# The wrong number of entries: refused, nothing changed.
before=$(srffctl -j show | jq -c .dscp_map)
out=$(srffctl set dscp-map cs1,cs2 2>&1)
rc=$?
log "set dscp-map cs1,cs2 (3 bands): exit $rc: $out"
check "  two entries for three bands refused" test "$rc" != 0
check "  with the kernel's reason" grep -q "one DSCP per band" <<<"$out"
check "  and the map unchanged ($before)" test "$(srffctl -j show | jq -c .dscp_map)" = "$before"

# mark none: nothing rewritten again.
run srffctl set mark none || fail "set mark none"
n0=$(srffctl -j stats | jq .dscp_pkts)
mark; send
check "mark none again: nothing rewritten (+$(delta d0) bytes DSCP 0)" \
	test "$(delta d0)" -ge 1000000 -a "$(srffctl -j stats | jq .dscp_pkts)" = "$n0"
exit $ksft_pass
