#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# netns.sh MODE: where srff is enabled (module parameter netns, SRFF_A_ENABLED).
#
#   SND [veth0: tbf 100mbit -> prio 10:] ---- RCV
#
#  enable  netns=ask (the default): on in the initial namespace, off in a new
#          one, where it marks nothing, counts nothing and holds no flow;
#          settings changed while off are kept; `srffctl set enabled on`
#          starts it (flows tracked, first packets in band 0), `off` frees
#          every flow and the host-wide count drops. netns=host: the admin
#          of another namespace (root of a user namespace too) is refused,
#          with the kernel's message, and nothing changes; the initial
#          namespace's admin may still switch the host's srff off and on.
#          netns=all: every namespace starts on.
#  forward a container's traffic, classified by the host's srff:
#            CTR 10.80.0.2 --veth-- HOST 10.80.0.1 | 10.81.0.1 [masquerade,
#            hout: tbf 100mbit -> prio 10:] --veth-- PEER 10.81.0.2
#          srff off in CTR (netns=ask), on in HOST (as in the initial
#          namespace of a docker or Kubernetes node): HOST's flows are the
#          container's, keyed by the addresses after SNAT; a 1 MB transfer
#          starts in band 0 and sinks to band 2; the container itself
#          tracks nothing, and the priority it would set does not cross
#          the veth anyway.
#  toggle  srff switched off and on 20 times in a namespace under a bulk
#          transfer and churning connections, while flow dumps, statistics
#          and size histograms are read without pause: every switch is
#          accepted, and srff tracks new flows after it; then the namespace
#          is deleted with srff on. (Under make test-debug, KASAN and
#          lockdep watch this.)
. "$(dirname "$0")/../lib.sh"

mode=${1:?enable|forward|toggle}
[ -x "$SRFFCTL" ] || fail "srffctl not built"
host_ctl() { "$SRFFCTL" "$@"; }
enabled() { srffctl -j show | jq -r .enabled; }

case $mode in
enable)
	srff_load netns=ask idle_timeout_ms=600000 idle_reset_ms=0
	check "module parameter netns reads ask" test "$(cat /sys/module/srff/parameters/netns)" = ask
	check "on in the initial namespace" test "$(host_ctl -j show | jq -r .enabled)" = true
	PAIR_IPV4_ONLY=1 setup_pair
	SRFF_NS=$SND
	shaped_prio "$SND" veth0 100mbit
	check "off in a new namespace" test "$(enabled)" = false
	check "  show says so first" test "$(srffctl show | head -n1)" = "enabled off"

	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 50 || fail "udp-flows"
	wait_drained "$SND" veth0
	st=$(srffctl -j stats)
	check "off: no flow created ($(jq -c '[.flows, .created]' <<<"$st"))" \
		test "$(jq '.flows + .created' <<<"$st")" = 0
	check "off: no packet counted" test "$(jq '[.bands[].pkts] | add' <<<"$st")" = 0
	check "off: no flow to dump" test "$(srffctl -j flows | jq length)" = 0
	read -r _ p0 _ < <(class_counters "$SND" veth0 | awk '$1 == 0')
	read -r _ p1 _ < <(class_counters "$SND" veth0 | awk '$1 == 1')
	check "off: unmarked, priority 0: all 50 in band 1 ($p0 in band 0, $p1 in band 1)" \
		test "$p0" = 0 -a "$p1" = 50

	run srffctl set thresholds 4k,64k || fail "set thresholds while off"
	check "off: settings change" test "$(srffctl -j show | jq -c .thresholds)" = "[4096,65536]"
	run srffctl set enabled on || fail "set enabled on"
	check "on after set enabled on" test "$(enabled)" = true
	check "  with the settings made while off" test "$(srffctl -j show | jq -c .thresholds)" = "[4096,65536]"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 50 || fail "udp-flows"
	wait_drained "$SND" veth0
	st=$(srffctl -j stats)
	check "on: 50 flows created ($(jq .created <<<"$st"))" test "$(jq .created <<<"$st")" = 50
	check "  and listed" test "$(srffctl -j flows | jq length)" = 50
	read -r _ q0 _ < <(class_counters "$SND" veth0 | awk '$1 == 0')
	check "on: their first packets in band 0 ($((q0 - p0)))" test $((q0 - p0)) = 50
	hostflows=$("$SRFFCTL" -j stats | jq .flows_host)
	check "the host-wide count holds them ($hostflows)" test "$hostflows" -ge 50

	run srffctl set enabled off || fail "set enabled off"
	st=$(srffctl -j stats)
	check "off again: no flows, nothing counted ($(jq -c '[.flows, .created]' <<<"$st"))" \
		test "$(jq '.flows + .created' <<<"$st")" = 0
	check "  nothing to dump" test "$(srffctl -j flows | jq length)" = 0
	check "  the host-wide count let them go ($("$SRFFCTL" -j stats | jq .flows_host))" \
		test "$("$SRFFCTL" -j stats | jq .flows_host)" -le $((hostflows - 50))
	check "  an empty size histogram" test "$(srffctl -j sizes | jq '[.buckets[]?.flows] | add // 0')" = 0
	expect_rc 2 "enabled takes on or off" srffctl set enabled yes

	# The host forbids it: netns=host. The namespaces exist before insmod.
	srff_load netns=host
	check "netns=host: off here" test "$(enabled)" = false
	before=$(srffctl -j show)
	expect_rc 1 "netns=host: this namespace's admin cannot switch srff on" srffctl set enabled on
	check "  the kernel says why" grep -q "initial namespace only" <<<"$LAST_OUT"
	check "  configuration unchanged" test "$(srffctl -j show)" = "$before"
	out=$(ip netns exec "$SND" unshare -U -r -n sh -c "$SRFFCTL set enabled on; echo rc=\$?" 2>&1)
	log "root of a user namespace: $out"
	check "  nor the root of a user namespace" grep -q "rc=1" <<<"$out"
	check "netns=host: on in the initial namespace" test "$(host_ctl -j show | jq -r .enabled)" = true
	run host_ctl set enabled off || fail "host: set enabled off"
	check "  which its admin may switch off" test "$(host_ctl -j show | jq -r .enabled)" = false
	run host_ctl set enabled on || fail "host: set enabled on"
	check "  and on" test "$(host_ctl -j show | jq -r .enabled)" = true

	srff_load netns=all
	check "netns=all: on in a namespace from the start" test "$(enabled)" = true
	;;
forward)
	srff_load netns=ask idle_timeout_ms=600000 idle_reset_ms=0 thresholds=16k,128k
	setup_container_host
	ip netns exec "$HOST" nft -f - <<-EOF || fail "nft masquerade"
		table ip nat {
			chain post { type nat hook postrouting priority srcnat; oifname "hout" masquerade; }
		}
	EOF
	shaped_prio "$HOST" hout 100mbit
	run "$SRFFCTL" -n "$HOST" set enabled on || fail "set enabled on in HOST"
	ip netns exec "$PEER" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $PEER ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	run ip netns exec "$CTR" $PY "$TOOLS/traffic.py" tcp-send 10.81.0.2 5001 1000000 --hold 5 &
	sender=$!
	wait_for 30 sh -c "ip netns exec $HOST $SRFFCTL -j flows | jq -e 'map(select(.dport == 5001 and .bytes > 1000000)) | length == 1' >/dev/null" ||
		fail "HOST never counted the container's 1 MB"
	fl=$(ip netns exec "$HOST" "$SRFFCTL" -j flows | jq -c 'map(select(.dport == 5001))')
	log "HOST's flows to the peer: $fl"
	check "HOST tracks the container's connection once" test "$(jq length <<<"$fl")" = 1
	check "  keyed by the address after SNAT (10.81.0.1, not 10.80.0.2)" \
		test "$(jq -r '.[0].saddr' <<<"$fl")" = 10.81.0.1
	wait "$sender" || fail "tcp-send"
	wait_drained "$HOST" hout
	read -r _ b0 _ < <(class_counters "$HOST" hout | awk '$1 == 0')
	read -r _ b2 _ < <(class_counters "$HOST" hout | awk '$1 == 2')
	check "the transfer starts in band 0 ($b0 packets) and sinks to band 2 ($b2)" \
		test "$b0" -ge 5 -a "$b2" -ge 400
	check "the container's own srff, off, tracked nothing" \
		test "$(ip netns exec "$CTR" "$SRFFCTL" -j stats | jq .created)" = 0
	;;
toggle)
	srff_load netns=ask idle_timeout_ms=600000
	setup_pair
	SRFF_NS=$SND
	shaped_prio "$SND" veth0 200mbit
	run srffctl set enabled on || fail "set enabled on"
	bulk_and_churn 5
	# Readers that never pause: each may see srff on or off.
	ip netns exec "$SND" sh -c "while :; do $SRFFCTL -j flows; $SRFFCTL -j stats; $SRFFCTL -j sizes; done" \
		>/dev/null 2>&1 & BG_PIDS+=($!)
	fails=0
	for i in $(seq 20); do
		srffctl set enabled off >/dev/null 2>&1 || fails=$((fails + 1))
		srffctl set enabled on >/dev/null 2>&1 || fails=$((fails + 1))
	done
	check "40 switches under traffic, all accepted ($fails refused)" test "$fails" = 0
	check "on at the end" test "$(enabled)" = true
	now=$(stat created)
	check "srff tracks new flows after the switching" \
		wait_for 30 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j stats | jq .created) -gt $now ]"
	kill_bg
	run ip netns del "$SND" || fail "ip netns del with srff on"
	check "the namespace went away with srff on" \
		wait_for 60 sh -c "! ip -n $RCV link show veth1 >/dev/null 2>&1"
	;;
*) fail "unknown mode $mode" ;;
esac
exit $ksft_pass
