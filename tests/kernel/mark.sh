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
#
# mark.sh container: marks made in a container reach the host's NIC queue.
#   CTR 10.80.0.2 --veth-- HOST 10.80.0.1 | 10.81.0.1 [hout: prio 10:,
#   a u32 filter: DSCP 1 (LE) -> 10:3] --veth-- PEER 10.81.0.2
# srff on in CTR only, with mark dscp and the default map; HOST forwards
# and runs no srff. skb->priority does not cross the veth; the DS field
# does, so HOST's qdisc can act on it (as a switch's priority queues or
# cake's diffserv tins would): a 1 MB transfer from CTR puts its first
# 128 KiB in 10:2 (priority 0, the best-effort band) and the rest in 10:3,
# and PEER receives the rest as LE.
. "$(dirname "$0")/../lib.sh"

fam=${1:?4|6|container}

if [ "$fam" = container ]; then
	srff_load netns=ask idle_timeout_ms=600000 idle_reset_ms=0
	setup_container_host
	ip -n "$PEER" route add 10.80.0.0/24 via 10.81.0.1
	tc -n "$HOST" qdisc replace dev hout root handle 10: prio bands 3 || fail "prio"
	tc -n "$HOST" filter add dev hout parent 10: protocol ip prio 1 u32 \
		match ip dsfield 0x04 0xfc classid 10:3 || fail "u32 dsfield filter"
	ip netns exec "$PEER" nft -f - <<-EOF || fail "nft counters"
		table inet srff_dscp {
			chain pre {
				type filter hook prerouting priority 0; policy accept;
				ip saddr 10.80.0.2 tcp dport 5001 ip dscp 1 counter comment "le"
			}
		}
	EOF
	SRFF_NS=$CTR
	run srffctl set enabled on || fail "set enabled on in CTR"
	run srffctl set thresholds 16k,128k || fail "thresholds"
	run srffctl set mark dscp || fail "set mark dscp"
	check "HOST runs no srff" test "$(ip netns exec "$HOST" "$SRFFCTL" -j show | jq -r .enabled)" = false
	ip netns exec "$PEER" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $PEER ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	run ip netns exec "$CTR" $PY "$TOOLS/traffic.py" tcp-send 10.81.0.2 5001 1000000 ||
		fail "tcp-send"
	cc=$(class_counters "$HOST" hout)
	log "HOST hout classes (band pkts bytes): $(tr '\n' ' ' <<<"$cc")"
	read -r _ _ b1 < <(awk '$1 == 1' <<<"$cc")
	read -r _ _ b2 < <(awk '$1 == 2' <<<"$cc")
	check "the first 128 KiB in HOST's best-effort band 10:2: $b1 bytes" \
		test "${b1:-0}" -ge 131072 -a "${b1:-0}" -lt 400000
	check "the rest, LE, in 10:3 by its DSCP alone: $b2 bytes" test "${b2:-0}" -ge 700000
	le=$(ip netns exec "$PEER" nft -j list table inet srff_dscp |
		jq '[.nftables[] | select(.rule) | .rule.expr[] | select(.counter) | .counter.bytes] | add // 0')
	check "PEER receives the rest as LE: $le bytes" test "$le" -ge 700000
	check "CTR's srff counted its marks" \
		test "$(srffctl -j stats | jq .dscp_pkts)" -gt 0
	exit $ksft_pass
fi

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
# The receiver's counters, read in one nft call (each call is slow under
# QEMU): mark notes them, now reads them again, delta NAME [bytes|packets]
# is NAME's growth between the two, snap the counts at now.
declare -A base cur
snapshot() {
	local -n into=$1
	local c b p
	while read -r c b p; do
		into[$c:bytes]=$b into[$c:packets]=$p
	done < <(ip netns exec "$RCV" nft -j list table inet srff_dscp |
		jq -r '.nftables[] | select(.rule) | .rule |
			[.comment, (.expr[] | select(.counter) | .counter | .bytes, .packets)] | @tsv')
}
mark() { snapshot base; }
now() { snapshot cur; }
delta() { echo $(( ${cur[$1:${2:-bytes}]:-0} - ${base[$1:${2:-bytes}]:-0} )); }
snap() { for d in d0 d1 d8 d16 d24 d46 le-ect0; do printf '%s=%s ' "$d" "${cur[$d:bytes]:-0}"; done; }
hdr_errors() {
	ip netns exec "$RCV" awk '$1 == "Ip:" { if (!c) { for (i = 2; i <= NF; i++) if ($i == "InHdrErrors") c = i } else { print $c; exit } }' /proc/net/snmp
}

ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 &
BG_PIDS+=($!)
wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
for ns in "$SND" "$RCV"; do ip netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn=1; done
run srffctl set thresholds 16k,128k || fail "thresholds"
send() { run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send "$DST" 5001 1000000 || fail "tcp-send"; now; }

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
# srff counts a header per segment; the receiver counts after GRO, one per
# merged packet: up to ~5 % fewer bytes for the same packets.
check "  the first 128 KiB keep DSCP 0: +$(delta d0) bytes" \
	test "$(delta d0)" -ge 120000 -a "$(delta d0)" -lt 300000
check "  ECN bits kept: +$(delta le-ect0) of them ECT(0) with LE" \
	test "$(delta le-ect0)" -ge $(( $(delta d1) * 9 / 10 ))
if [ "$fam" = 4 ]; then
	check "  no IPv4 header checksum errors at the receiver" test "$(hdr_errors)" = "$h0"
fi
np=$(srffctl -j stats | jq .dscp_pkts)
check "  srffctl stats counts them: $np" test "$np" -gt 0
# TSO on the veth: the sender's TCP hands over super-packets, each marked
# once for all its segments (segmentation copies the header).
check "  GSO super-packets marked whole: $(( $(delta d1) / (np > 0 ? np : 1) )) bytes per mark" \
	test "$(delta d1)" -gt $(( np * 3000 ))

# An application's EF: kept, unless dscp-override.
mark
run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send "$DST" 9 200 1000 --sport 4001 --tos 0xb8 ||
	fail "udp-send EF"
now
log "EF, no override: $(snap)"
check "  EF kept in every band: +$(delta d46 packets) packets of 200, none lowered (+$(delta d1 packets))" \
	test "$(delta d46 packets)" = 200 -a "$(delta d1 packets)" = 0
run srffctl set dscp-override on || fail "dscp-override on"
mark
run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send "$DST" 9 200 1000 --sport 4002 --tos 0xb8 ||
	fail "udp-send EF, override"
now
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
