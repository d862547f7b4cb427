#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# safety.sh MODE: what a hostile or unusual neighbour can make srff do.
#
#  userns      nobody's own user + network namespace (U1, U2), flooding a
#              dummy device of its own (loopback traffic srff leaves alone):
#                 [init_net: srff max_flows=2000 max_flows_total=4000
#                  max_flows_reserved=1000 userns_idle_timeout_ms=10m]
#                 U1 (uid 65534) d0 -> 1-byte UDP to thousands of ports
#                 U2 (uid 65534) d0 -> the same, at the same time
#                 U3 (uid 65533) d0 -> the same, after them
#              (a) set max-flows above the host's max_flows, gc-interval
#              below its gc_interval_ms, or idle-timeout above its
#              userns_idle_timeout_ms is refused with the kernel's message
#              and changes nothing; lowering works; (b) U1's flows never
#              exceed its cap; (c) U1 + U2 (one user) flooding together never
#              hold more than max_flows (2000) between them, and the
#              srff_flow slab stays within the flows (plus the slack
#              explained there); (d) another user's U3 then gets what the
#              namespaces' share has left (4000 - 1000 reserved - 2000), and
#              the initial namespace still its reserved 1000; no tenant sees
#              the host-wide figures
#
#  synflood    PEER 10.77.0.1 veth0 ---- veth1 10.77.0.2 SRV [srff max_flows=256]
#              PEER sends 5000 spoofed SYNs a second (random sources in
#              198.18.0.0/15) to SRV:80; SRV's default route is via PEER, so
#              its SYN-ACKs are really sent (and dropped by PEER). They must
#              create no flow
#              (nodata_pkts grows by thousands, flows stays tiny, table_full
#              0); 20 real clients fetching 20 KB each during the flood are
#              all tracked.
#
#  evict       SND [srff max_flows=64 hash_buckets=1] veth0 ---- veth1 RCV
#              64 idle one-datagram flows: a new flow evicts one after 250 ms;
#              64 busy flows (every 50 ms): a newcomer is refused instead;
#              crossing 7/8 full starts GC early.
#
#  tunnel_gre, tunnel_wg, tunnel_xfrm, tunnel_srv6
#              SND [srff] veth0: tbf 10mbit -> prio 10: ---- veth1 RCV
#                   10.77.0.1  ================ tunnel ====  10.77.0.2
#                   10.99.0.1  (gre1 / wg0 / ESP tunnel mode /  10.99.0.2
#                               SRv6 H.Encaps to fd77::100)
#              One long TCP transfer through the tunnel and, once it is past
#              500 KB, five of 4 KB while it runs (thresholds 16k 64k): on
#              veth0's prio the short ones leave in band 0 and the long one's
#              tail in band 2 (per-inner-flow bands on the outer packets);
#              srff counts each packet once (its bytes within 10 % of the
#              qdisc's, not 2x); GRE/ESP outer packets make no flow;
#              WireGuard's outer packets make one flow per inner flow
#              ("inner" tag), wg0's pass none, and the long connection keeps
#              one tag (one count) all along, through a retransmission
#              timeout that re-hashes its socket (RCV drops the tunnel's
#              packets until TcpTimeoutRehash grows). SRv6 (a seg6 route,
#              whose inner packets never pass POST_ROUTING): the outer
#              packets are classified by their inner flow, one flow each.
#              IPVS in tunnel mode (tunnel_ipvs): SND is the client and the
#              director of virtual service 10.99.0.2:5001 (local clients go
#              through IPVS at LOCAL_OUT), RCV the real server, which takes
#              the IPIP packets on tunl0 and answers directly; the same.
#
#  reuse       SND [srff] veth0 ---- veth1 RCV (the server closes first)
#              a client on local port 40000 sends 100 KB and closes, then
#              connects again from the same 4-tuple: the SYN restarts the
#              flow (bytes from 0, not closed) and the new data leaves in
#              band 0.
#
#  ctlsock     SND [srff, idle reset on] veth0 ---- veth1 RCV
#              SND serves 20 KB to each of 10 clients, then drops the
#              connection silently (abortive close, its RST dropped by
#              nftables in OUTPUT); each client then sends 100 bytes, and
#              SND's kernel answers with a RST from IPv4's per-CPU control
#              socket (SOCK_RAW, protocol TCP), on the flow srff tracks.
#              Every client sees its reset, and srff met each RST on its
#              connection's flow (10 flows closed, none made by a RST).
#              This exercises the path; it cannot see the old out-of-bounds
#              read of write_seq from that raw socket: KASAN did not report
#              it in the debug kernel either (the read lands on memory that
#              KASAN holds valid, as another object of the raw socket slab).
#
#  loopback    X [srff]: 1000 UDP datagrams to 127.0.0.1 and 1000 to ::1,
#              each to a port of its own (as a local user could send): no
#              flow, nothing in any band, loopback_pkts counts them; the
#              same through X's dummy device d0 are 1000 flows.
#
#  mcast       X [srff]: 100 UDP datagrams each to 239.1.2.3 (looped back to
#              X's own listeners: every one passes POST_ROUTING twice), to
#              ff02::1 on d0, and to d0's broadcast 10.88.0.255: no flow,
#              nothing counted in a band, ignored_pkts counts every pass.
#
#  enable_fail X [srff netns=ask, off in X], 1024 nftables base chains at
#              ip6 postrouting in X (the most a hook can have): `set enabled
#              on` is refused with the cause ("too many netfilter hooks")
#              and changes nothing, again and again while X floods IPv4
#              through d0 from both CPUs, until the IPv4 hook that
#              nf_register_net_hooks() registers before the IPv6 one fails
#              has met packets (srff_flow_create traced in X) in at least
#              3 refusals: those packets queued the resize worker, which the
#              refusal must cancel before freeing (the debug kernel's uaf
#              canary, kind enable, shows KASAN catching the old order).
#              Then a namespace created with 1024 such chains before a
#              netns=all load keeps srff off and the load succeeds.
#
#  smaller     (a) insmod with hash_buckets above 16777216 fails ("bad module
#              parameter"); (b) idle-reset >= idle-timeout is refused;
#              (c) TSO on: srff's bytes == prio's bytes - 14 per segment;
#              (d) srffctl stats/show answer while a flush of a 16 Mi-bucket
#              table runs (the family is parallel_ops).
. "$(dirname "$0")/../lib.sh"

mode=${1:?mode}
SAFETY="$PY $TOOLS/safety.py"
# log with the seconds since the start: guest time is what these modes spend
log() { printf '# [%ss] %s\n' "$SECONDS" "$*"; }
[ -x "$SRFFCTL" ] || fail "srffctl not built"
WORK=$(mktemp -d)
trap 'default_cleanup; rm -rf "$WORK"' EXIT

# A dummy device to flood through (a loopback one srff leaves alone): the
# packets pass POST_ROUTING on d0 and are dropped there, no ARP needed.
FLOOD_NET=10.88.0
FLOOD_DST=$FLOOD_NET.2
flood_dev() {	# flood_dev [RUNNER...]: in the namespace RUNNER enters
	"$@" ip link add d0 type dummy || fail "dummy d0 (${*:-here})"
	"$@" ip addr add $FLOOD_NET.1/24 dev d0 || fail "d0's address (${*:-here})"
	"$@" ip link set d0 up || fail "d0 up (${*:-here})"
}

# jq_check WHAT JSON FILTER: the filter must print true.
jq_check() { check "$1" test "$(jq -r "$3" <<<"$2")" = true; }

# soft_check: as check, but carry on and fail at the end (end_soft), so
# that one run shows every property that does not hold.
SOFT_FAILED=()
soft_check() {
	local what=$1; shift
	if "$@"; then
		printf '# ok: %s\n' "$what"
	else
		printf '# FAIL (going on): %s\n' "$what"
		SOFT_FAILED+=("$what")
	fi
}
soft_jq_check() { soft_check "$1" test "$(jq -r "$3" <<<"$2")" = true; }
end_soft() {
	[ ${#SOFT_FAILED[@]} = 0 ] || fail "$(printf '%s; ' "${SOFT_FAILED[@]}")"
}

listening() {	# listening NS PORT
	wait_for 20 sh -c "ip netns exec $1 ss -Hltn 'sport = :$2' | grep -q ." ||
		fail "nothing listens on $2 in $1"
}

sum_bands() {	# sum_bands STATS_JSON pkts|bytes
	jq "[.bands[].$2] | add" <<<"$1"
}

# band_bytes COUNTERS BAND: bytes of prio BAND in class_counters output.
band_bytes() { awk -v b="$2" '$1 == b { print $3 }' <<<"$1"; }

# tcpext NS NAME: NS's TcpExt counter NAME (/proc/net/netstat).
tcpext() {
	ip netns exec "$1" awk -v n="$2" '$1 == "TcpExt:" {
		if (!c) { for (i = 2; i <= NF; i++) if ($i == n) c = i }
		else { print $c + 0; exit }
	}' /proc/net/netstat
}
tcpext_above() { [ "$(tcpext "$1" "$2")" -gt "$3" ]; }

case $mode in
userns)
	NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	# Debian's switch for unprivileged user namespaces, and the generic
	# limit: switch them on for this test (root may), put them back after.
	restore=()
	if v=$(sysctl -n kernel.unprivileged_userns_clone 2>/dev/null) && [ "$v" = 0 ]; then
		sysctl -qw kernel.unprivileged_userns_clone=1 || skip "cannot enable unprivileged_userns_clone"
		restore+=("kernel.unprivileged_userns_clone=0")
	fi
	if v=$(sysctl -n user.max_user_namespaces 2>/dev/null) && [ "$v" -lt 8 ]; then
		sysctl -qw user.max_user_namespaces=100 || skip "cannot raise user.max_user_namespaces"
		restore+=("user.max_user_namespaces=$v")
	fi
	trap 'default_cleanup; [ ${#restore[@]} = 0 ] || sysctl -qw "${restore[@]}"; rm -rf "$WORK"' EXIT

	srff_load max_flows=2000 max_flows_total=4000 max_flows_reserved=1000 userns_idle_timeout_ms=10m
	# uns_start VAR: a user + network namespace owned by nobody, held
	# open by a sleep; VAR gets the holder's pid.
	# (unshare may fork: the holder says its own pid.)
	uns_start() {	# uns_start VAR [UID]
		local who=("${NOBODY[@]}")
		[ -n "${2:-}" ] && who=(setpriv --reuid="$2" --regid="$2" --clear-groups)
		"${who[@]}" unshare -U -r -n sh -c 'echo $$; exec sleep 600' > "$WORK/$1.pid" 2>"$WORK/$1.err" &
		BG_PIDS+=($!)
		if ! wait_for 10 test -s "$WORK/$1.pid"; then
			log "unshare: $(cat "$WORK/$1.err")"
			grep -Eqi "not permitted|no space left" "$WORK/$1.err" &&
				skip "the kernel refuses unprivileged user namespaces (unshare -U -r -n as nobody)"
			fail "unshare -U -r -n as nobody did not start"
		fi
		local pid
		pid=$(cat "$WORK/$1.pid")
		BG_PIDS+=("$pid")
		check "$1 (pid $pid) has a user namespace of its own" \
			test "$(readlink /proc/$pid/ns/user)" != "$(readlink /proc/self/ns/user)"
		eval "$1=$pid"
	}
	# uns PID CMD...: run CMD as nobody (uid 0 of its own user namespace:
	# capabilities there and nowhere else) in that namespace.
	uns() { local pid=$1; shift
		setpriv --reuid="$(command stat -c %u /proc/$pid)" --regid="$(command stat -c %g /proc/$pid)" \
			--clear-groups nsenter --preserve-credentials -t "$pid" -U -n -- "$@"; }
	uns_start U1
	uns_start U2
	uns_start U3 65533
	check "U1 runs as nobody on the host" test "$(command stat -c %u /proc/$U1)" = 65534
	check "U3 as another user" test "$(command stat -c %u /proc/$U3)" = 65533
	for u in "$U1" "$U2" "$U3"; do
		uns "$u" ip link set lo up || fail "lo up in $u"
		flood_dev uns "$u"
	done

	log "(a) limits"
	before=$(uns "$U1" "$SRFFCTL" -j show) || fail "show in U1"
	log "U1: $before"
	check "U1 starts with the host's max_flows (2000)" test "$(jq .max_flows <<<"$before")" = 2000
	expect_rc 1 "U1: max-flows 2001 (above the host's 2000) refused" uns "$U1" "$SRFFCTL" set max-flows 2001
	check "  with the kernel's message" grep -q "max flows above the host's limit" <<<"$LAST_OUT"
	check "  configuration unchanged" test "$(uns "$U1" "$SRFFCTL" -j show)" = "$before"
	expect_rc 1 "U1: max-flows 16777216 refused" uns "$U1" "$SRFFCTL" set max-flows 16777216
	check "  configuration unchanged" test "$(uns "$U1" "$SRFFCTL" -j show)" = "$before"
	expect_rc 1 "U1: gc-interval 1s (below the host's 2.5 s) refused" uns "$U1" "$SRFFCTL" set gc-interval 1s
	check "  with the kernel's message" grep -q "GC interval below the host's limit" <<<"$LAST_OUT"
	check "  configuration unchanged" test "$(uns "$U1" "$SRFFCTL" -j show)" = "$before"
	expect_rc 1 "U1: idle-timeout 11m (above the host's 10m for user namespaces) refused" \
		uns "$U1" "$SRFFCTL" set idle-timeout 11m
	check "  with the kernel's message" grep -q "idle timeout above the host's limit for user namespaces" <<<"$LAST_OUT"
	check "  configuration unchanged" test "$(uns "$U1" "$SRFFCTL" -j show)" = "$before"
	expect_rc 1 "U1: a lawful change with an unlawful one (max-flows 1000 gc-interval 200ms) refused whole" \
		uns "$U1" "$SRFFCTL" set max-flows 1000 gc-interval 200ms
	check "  configuration unchanged" test "$(uns "$U1" "$SRFFCTL" -j show)" = "$before"
	# idle timeout is not limited: a long one keeps GC from freeing
	# flows in bulk during the floods (see the slab check below).
	expect_rc 0 "U1: lowering max-flows to 1000 works" uns "$U1" "$SRFFCTL" set max-flows 1000 idle-timeout 10m
	check "  and reads back" test "$(uns "$U1" "$SRFFCTL" -j show | jq .max_flows)" = 1000
	check "  and reached the table" test "$(uns "$U1" "$SRFFCTL" -j stats | jq .max_flows)" = 1000
	expect_rc 0 "U1: gc-interval 5s (above the host's) works" uns "$U1" "$SRFFCTL" set gc-interval 5s
	check "host's namespace untouched" test "$("$SRFFCTL" -j show | jq .max_flows)" = 2000

	log "(b) U1 floods its dummy device: 5000 flows against its cap of 1000"
	stop=$WORK/stop1
	$SAFETY watch /proc/$U1/ns/net --stop "$stop" --ready "$WORK/w1" > "$WORK/watch1" & wpid=$!
	BG_PIDS+=($wpid)
	wait_for 30 test -e "$WORK/w1" || fail "watch did not start"
	# (the senders' time limits stretch as every wait does: under the debug
	# kernel beside another guest, 30 s sent 3584 of 5000)
	secs=$((30 * ${SRFF_TIMEOUT_SCALE:-1}))
	n=$(uns "$U1" $SAFETY udp-flood $FLOOD_DST 5000 --seconds $secs) || fail "flood in U1"
	touch "$stop"; wait "$wpid"
	w=$(cat "$WORK/watch1"); log "sent $n; watch: $w"
	st=$(uns "$U1" "$SRFFCTL" -j stats); log "U1: $(jq -c 'del(.bands)' <<<"$st")"
	check "U1 sent 5000 datagrams ($n)" test "$n" = 5000
	soft_check "the flood met the cap: created $(jq .created <<<"$st"), evicted $(jq .evicted <<<"$st"), refused $(jq .table_full <<<"$st")" \
		test "$(jq '.created + .table_full >= 5000 and .created >= 1000' <<<"$st")" = true
	soft_jq_check "U1's flows never exceeded 1000 ($(jq '.ns[0].flows_max' <<<"$w") at most, $(jq .samples <<<"$w") samples)" \
		"$w" '.ns[0].flows_max <= 1000 and .ns[0].flows_max > 0 and .samples >= 3'
	soft_check "  and stand at most at 1000 now ($(jq .flows <<<"$st"))" test "$(jq .flows <<<"$st")" -le 1000

	log "(c) U1 and U2, one user's, flood together (each may hold 2000, together too)"
	uns "$U1" "$SRFFCTL" set max-flows 2000 || fail "U1 back to 2000"
	uns "$U2" "$SRFFCTL" set idle-timeout 10m || fail "U2 idle-timeout"
	uns "$U3" "$SRFFCTL" set idle-timeout 10m || fail "U3 idle-timeout"
	slab_base=$(awk '$1 == "srff_flow" { print $2 }' /proc/slabinfo)
	log "srff_flow slab: $(grep '^srff_flow ' /proc/slabinfo); aliases $(cat /sys/kernel/slab/srff_flow/aliases 2>/dev/null)"
	stop=$WORK/stop2
	$SAFETY watch /proc/$U1/ns/net /proc/$U2/ns/net --stop "$stop" --ready "$WORK/w2" > "$WORK/watch2" & wpid=$!
	BG_PIDS+=($wpid)
	wait_for 30 test -e "$WORK/w2" || fail "watch did not start"
	uns "$U1" $SAFETY udp-flood $FLOOD_DST 8000 --base-port 20000 --seconds $secs > "$WORK/n1" & p1=$!
	uns "$U2" $SAFETY udp-flood $FLOOD_DST 8000 --base-port 20000 --seconds $secs > "$WORK/n2" & p2=$!
	wait "$p1" || fail "flood in U1"
	wait "$p2" || fail "flood in U2"
	touch "$stop"; wait "$wpid"
	w=$(cat "$WORK/watch2"); log "sent $(cat "$WORK/n1") + $(cat "$WORK/n2"); watch: $w"
	s1=$(uns "$U1" "$SRFFCTL" -j stats); s2=$(uns "$U2" "$SRFFCTL" -j stats)
	log "U1: $(jq -c 'del(.bands)' <<<"$s1")"
	log "U2: $(jq -c 'del(.bands)' <<<"$s2")"
	log "srff_flow slab: $(grep '^srff_flow ' /proc/slabinfo); cpu_slabs $(cat /sys/kernel/slab/srff_flow/cpu_slabs 2>/dev/null)"
	h=$("$SRFFCTL" -j stats)
	soft_check "the host-wide cap is 4000" test "$(jq .max_flows_host <<<"$h")" = 4000
	soft_check "  and the tenants do not see the host's figures" \
		test "$(jq -s 'map(has("flows_host") or has("max_flows_host")) | any' <<<"$s1 $s2")" = false
	soft_jq_check "U1 + U2 never held more than 2000 together ($(jq '[.ns[].flows_max] | add' <<<"$w") at most, each; $(jq .flows_host_max <<<"$w") host-wide, $(jq .samples <<<"$w") samples)" \
		"$w" '.flows_host_max <= 2000 + 64 and .samples >= 3'
	soft_check "  U1 + U2 now: $(jq .flows <<<"$s1") + $(jq .flows <<<"$s2") <= 2000" \
		test $(( $(jq .flows <<<"$s1") + $(jq .flows <<<"$s2") )) -le 2000
	soft_check "  and reached it: the two floods wanted 4000" \
		test $(( $(jq .flows <<<"$s1") + $(jq .flows <<<"$s2") )) -ge 1900
	soft_jq_check "  each namespace stayed within its own 2000" "$w" '[.ns[].flows_max] | max <= 2000'
	# The slab. SLUB's active count includes the free objects cached
	# per CPU (cpu_slabs x objs_per_slab, read with each sample and
	# subtracted: slab_excess); what is left beyond the flows linked or
	# reserved is flows unlinked (evicted) whose RCU grace period has not
	# ended yet: the evictions of about one grace period. Under emulation
	# both floods together evict ~3000 flows a second and a grace period
	# lasted ~100 ms (up to 295 pending seen); on a loaded 2-core host a
	# grace period can stretch several-fold, so 1000 is allowed. A cap
	# that did not hold would show up to 16000 objects. Once the floods
	# stop and RCU catches up, the bound is exact (below). Under KASAN
	# (make test-debug) a freed object waits in KASAN's quarantine before
	# SLUB counts it free, and grace periods are slower still: the count
	# during the floods measures those, not srff (seen: 3696 beyond the
	# flows). There it is shown; the settled bound below is checked on
	# every kernel.
	slab_what="srff_flow objects in use stayed within 2000 + 1000 RCU-pending ($(jq .slab_excess_max <<<"$w") beyond the flows; active $(jq .slab_active_max <<<"$w") incl. $(jq .slab_cpu_cached_max <<<"$w") cached per CPU; before $slab_base)"
	if kasan_kernel; then
		log "KASAN kernel, not checked: $slab_what"
	else
		soft_jq_check "$slab_what" \
			"$w" '.slab_active_max - .slab_cpu_cached_max <= 3000 and .slab_excess_max <= 1000'
	fi
	settled() {
		local a c per
		a=$(awk '$1 == "srff_flow" { print $2 }' /proc/slabinfo)
		per=$(awk '$1 == "srff_flow" { print $5 }' /proc/slabinfo)
		c=$(cut -d' ' -f1 /sys/kernel/slab/srff_flow/cpu_slabs)
		[ $((a - c * per)) -le "$("$SRFFCTL" -j stats | jq .flows_host)" ]
	}
	soft_check "once RCU has caught up, no object beyond the flows (<= $(jq .flows_host <<<"$h"))" wait_for 10 settled

	log "(d) another user's U3, then the host's own namespace"
	# What the namespaces' 3000 have left: 1000 when U1 and U2 filled
	# their 2000, a few more when evictions under the per-CPU slot caches
	# left them short of it (seen: 1992).
	left=$(( 3000 - $("$SRFFCTL" -j stats | jq .flows_host) ))
	n3=$(uns "$U3" $SAFETY udp-flood $FLOOD_DST 3000 --base-port 20000 --seconds $secs) || fail "flood in U3"
	s3=$(uns "$U3" "$SRFFCTL" -j stats); log "U3: $(jq -c 'del(.bands)' <<<"$s3")"
	soft_check "U3 got what the namespaces' 3000 had left: $(jq .flows <<<"$s3") of the $left (sent $n3)" \
		test "$(jq .flows <<<"$s3")" -ge $((left - 100)) -a "$(jq .flows <<<"$s3")" -le "$left"
	# A flow idle 250 ms in a full table makes room for a newcomer
	# (evicted): under a slow kernel the flood's first flows go that way.
	soft_check "  and the rest was refused or took the place of its own idle flows (table_full $(jq .table_full <<<"$s3") + evicted $(jq .evicted <<<"$s3"))" \
		test "$(jq '.table_full + .evicted' <<<"$s3")" -ge 1900
	flood_dev
	trap 'ip link del d0 2>/dev/null; default_cleanup; [ ${#restore[@]} = 0 ] || sysctl -qw "${restore[@]}"; rm -rf "$WORK"' EXIT
	h0=$("$SRFFCTL" -j stats)
	n0=$($SAFETY udp-flood $FLOOD_DST 1000 --base-port 30000) || fail "flood in the initial namespace"
	h=$("$SRFFCTL" -j stats); log "host: $(jq -c 'del(.bands)' <<<"$h")"
	ip link del d0
	soft_check "the initial namespace still got its reserved 1000: $(( $(jq .created <<<"$h") - $(jq .created <<<"$h0") )) flows of $n0 (per-CPU caches may hold a few)" \
		test $(( $(jq .created <<<"$h") - $(jq .created <<<"$h0") )) -ge 900
	soft_check "  and the host-wide count stayed within 4000 ($(jq .flows_host <<<"$h"))" \
		test "$(jq .flows_host <<<"$h")" -le 4000
	end_soft
	;;

synflood)
	srff_load max_flows=256 gc_interval_ms=60000 idle_timeout_ms=600000
	PAIR_IPV4_ONLY=1 setup_pair
	PEER=$SND SRV=$RCV SRFF_NS=$RCV
	ip netns exec "$SRV" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.veth1.rp_filter=0
	ip -n "$SRV" route add default via $SND_IP4 || fail "default route"
	ip netns exec "$SRV" $SAFETY serve 80 20000 & BG_PIDS+=($!)
	listening "$SRV" 80
	s0=$(srffctl -j stats)
	# 5000 SYNs a second (a free-running sender takes both emulated CPUs
	# and every tool in the guest crawls); at most 120 s (stretched as
	# every wait is: under the debug kernel beside another guest the
	# clients outlasted 120 s), killed once the clients are done.
	secs=$((120 * ${SRFF_TIMEOUT_SCALE:-1}))
	ip netns exec "$PEER" $SAFETY syn-flood veth0 $RCV_IP4 80 $secs --rate 5000 > "$WORK/flood" & fpid=$!
	BG_PIDS+=($fpid)
	wait_for 30 sh -c "[ \$(ip netns exec $SRV $SRFFCTL -j stats | jq .nodata_pkts) -ge $(( $(jq .nodata_pkts <<<"$s0") + 3000 )) ]" ||
		fail "the server sent no 3000 SYN-ACKs: $(srffctl -j stats | jq -c 'del(.bands)')"
	maxf=0
	for i in 1 2 3 4 5; do
		f=$(stat flows); [ "$f" -gt "$maxf" ] && maxf=$f
	done
	s1=$(srffctl -j stats)
	log "after the flood's first SYN-ACKs: $(jq -c 'del(.bands)' <<<"$s1")"
	tx=$(ip -n "$SRV" -j -s link show veth1 | jq '.[0].stats64.tx.packets')
	check "SYN-ACKs sent: nodata_pkts +$(( $(jq .nodata_pkts <<<"$s1") - $(jq .nodata_pkts <<<"$s0") )), veth1 sent $tx packets" \
		test $(( $(jq .nodata_pkts <<<"$s1") - $(jq .nodata_pkts <<<"$s0") )) -ge 3000
	check "  no flow for them (flows at most $maxf, created $(jq .created <<<"$s1"))" \
		test "$maxf" -le 2 -a "$(jq .created <<<"$s1")" -le 2
	check "  table_full 0" test "$(jq .table_full <<<"$s1")" = 0
	log "20 real clients fetch 20 KB each while the flood goes on"
	# The clients keep their connections open until listed: GC retires
	# closed flows, and it runs every 60 s at the latest.
	ip netns exec "$PEER" timeout $secs $SAFETY fetch $RCV_IP4 80 20 20000 --hold "$WORK/done" \
		> "$WORK/ports" & cpid=$!
	BG_PIDS+=($cpid)
	wait_for 100 test -s "$WORK/ports" || fail "fetch"
	ports=$(cat "$WORK/ports")
	kill -0 "$fpid" 2>/dev/null || fail "the flood ended before the clients did"
	s2=$(srffctl -j stats)
	log "after the clients: $(jq -c 'del(.bands)' <<<"$s2")"
	check "the flood went on: nodata_pkts +$(( $(jq .nodata_pkts <<<"$s2") - $(jq .nodata_pkts <<<"$s1") ))" \
		test "$(jq .nodata_pkts <<<"$s2")" -gt "$(jq .nodata_pkts <<<"$s1")"
	check "every client's flow created (created +$(( $(jq .created <<<"$s2") - $(jq .created <<<"$s1") )) >= 20)" \
		test $(( $(jq .created <<<"$s2") - $(jq .created <<<"$s1") )) -ge 20
	check "no packet untracked ($(jq .untracked_pkts <<<"$s2"))" \
		test "$(jq .untracked_pkts <<<"$s2")" = "$(jq .untracked_pkts <<<"$s0")"
	check "table_full still 0" test "$(jq .table_full <<<"$s2")" = 0
	fl=$(srffctl -j flows proto tcp 2>"$WORK/flows.err") || fail "srffctl flows: $(cat "$WORK/flows.err")"
	log "client ports: $(echo $ports); TCP flows listed: $(jq length <<<"$fl")"
	missing=$(jq --argjson ps "[$(tr ' ' , <<<"$ports")]" \
		"[\$ps[] as \$p | select(any(.[]; .sport == 80 and .daddr == \"$SND_IP4\" and .dport == \$p and .bytes >= 20000) | not)] | length" \
		<<<"$fl")
	check "srffctl flows lists all 20 clients' flows with their 20 KB ($missing missing)" test "$missing" = 0
	check "and nothing else: $(jq length <<<"$fl") TCP flows" test "$(jq length <<<"$fl")" -le 22
	touch "$WORK/done"
	wait "$cpid" || fail "fetch"
	kill "$fpid" 2>/dev/null
	wait_for 10 sh -c "! kill -0 $fpid 2>/dev/null" || kill -9 "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	log "SYNs sent: $(cat "$WORK/flood")"
	;;

evict)
	PAIR_IPV4_ONLY=1 setup_pair
	SRFF_NS=$SND
	shaped_prio "$SND" veth0 100mbit
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	listening "$RCV" 5001
	# (loaded last: the closed TCP flow below must be listed before the
	# first GC, 60 s after loading)
	srff_load max_flows=64 hash_buckets=1 idle_timeout_ms=600000 gc_interval_ms=60000
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 56 --base-port 20000 || fail "udp-flows"
	st=$(srffctl -j stats); log "$(jq -c 'del(.bands)' <<<"$st")"
	check "56 flows: 7/8 full, no early GC yet ($(jq .gc_early <<<"$st"))" \
		test "$(jq .flows <<<"$st")" = 56 -a "$(jq .gc_early <<<"$st")" = 0
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 8 --base-port 20056 || fail "udp-flows"
	st=$(srffctl -j stats); log "$(jq -c 'del(.bands)' <<<"$st")"
	check "64 flows, the table full ($(jq .flows <<<"$st"))" test "$(jq .flows <<<"$st")" = 64
	check "more than 7/8 full started GC early ($(jq .gc_early <<<"$st"))" test "$(jq .gc_early <<<"$st")" -ge 1
	check "  which freed nothing (idle timeout 10 min)" test "$(jq .gc_freed <<<"$st")" = 0
	wait_for 10 sh -c "ip netns exec $SND $SRFFCTL -j flows | jq -e 'map(.idle_ms) | min >= 300' >/dev/null" ||
		fail "flows never idle 300 ms"
	c0=$(jq .created <<<"$st")
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5001 10000 || fail "tcp-send"
	st=$(srffctl -j stats); log "$(jq -c 'del(.bands)' <<<"$st")"
	check "a new TCP flow with data was tracked (created $c0 -> $(jq .created <<<"$st"))" \
		test "$(jq .created <<<"$st")" -gt "$c0"
	check "  by evicting an idle flow (evicted $(jq .evicted <<<"$st"))" test "$(jq .evicted <<<"$st")" -ge 1
	check "  nothing refused (table_full $(jq .table_full <<<"$st"), untracked $(jq .untracked_pkts <<<"$st"))" \
		test "$(jq .table_full <<<"$st")" = 0 -a "$(jq .untracked_pkts <<<"$st")" = 0
	check "  it is listed with its 10 KB" test "$(srffctl -j flows port 5001 | jq '.[0].bytes >= 10000')" = true
	check "  the table still holds 64" test "$(jq .flows <<<"$st")" = 64

	log "64 busy flows (a datagram each every 50 ms): a newcomer must not evict one"
	run srffctl flush || fail "flush"
	# 90 s of sending, stretched as the waits are: three attempts under the
	# debug kernel outlasted 90 s.
	ip netns exec "$SND" $SAFETY udp-busy $RCV_IP4 64 0.05 $((90 * ${SRFF_TIMEOUT_SCALE:-1})) \
		--base-port 21000 --ready "$WORK/busy" \
		--log "$WORK/rounds" > "$WORK/gap" & bpid=$!
	BG_PIDS+=($bpid)
	wait_for 30 test -e "$WORK/busy" || fail "busy sender did not start"
	busy_only() {	# the 64 busy flows tracked, and nothing else
		ip netns exec "$SND" "$SRFFCTL" -j flows |
			jq -e '([.[] | select(.proto == "udp" and .dport >= 21000 and .dport < 21064)] | length) == 64 and length == 64' >/dev/null
	}
	wait_for 10 busy_only || fail "busy flows not all tracked"
	# Let every busy flow live past the eviction age, sending all along.
	wait_for 10 sh -c "ip netns exec $SND $SRFFCTL -j flows | jq -e 'map(.age_ms) | min >= 600' >/dev/null" ||
		fail "busy flows did not age"
	# A busy flow is one that never paused 250 ms while the newcomers came.
	# Should the host stall the guest's sender that long (seen under heavy
	# load), srff rightly sees an idle flow: that attempt does not count.
	for attempt in 1 2 3; do
		wait_for 10 busy_only || fail "the table did not settle back to the 64 busy flows"
		s0=$(srffctl -j stats); log "$(jq -c 'del(.bands)' <<<"$s0")"
		win=$(ip netns exec "$SND" $SAFETY newcomers $RCV_IP4 30000 5001) || fail "newcomers"
		s1=$(srffctl -j stats); log "$(jq -c 'del(.bands)' <<<"$s1")"
		fl=$(srffctl -j flows)
		end=${win#* }
		wait_for 10 awk -v e="$end" '$1 > e { found = 1 } END { exit !found }' "$WORK/rounds" ||
			fail "busy sender stopped"
		# the longest time between two rounds that overlaps the window
		gap=$(awk -v a="${win% *}" -v b="$end" \
			'p != "" && $1 > a && p < b && $1 - p > m { m = $1 - p } { p = $1 } END { printf "%.3f", m }' \
			"$WORK/rounds")
		awk -v g="$gap" 'BEGIN { exit !(g < 0.25) }' && break
		log "attempt $attempt: the busy sender paused $gap s during the newcomers: again"
	done
	kill "$bpid"; wait "$bpid" 2>/dev/null
	if ! awk -v g="$gap" 'BEGIN { exit !(g < 0.25) }' && kasan_kernel; then
		# Under KASAN (make test-debug) the guest runs 5-8 times slower,
		# and the sender of a datagram every 50 ms paused over 250 ms in
		# every attempt (seen: 0.26-0.31 s): srff then rightly sees busy
		# flows go idle, and whether it evicts them says nothing. The
		# paths ran (newcomers refused, evictions, early GC) for KASAN and
		# lockdep to watch; the verdicts are the production kernel's.
		log "KASAN kernel, not checked: the busy sender paused $gap s (250 ms allowed) in each of $attempt attempts, so the eviction verdicts are left to make test"
	else
		check "the busy flows never paused 250 ms while the newcomers came (longest gap $gap s, attempt $attempt)" \
			awk -v g="$gap" 'BEGIN { exit !(g < 0.25) }'
		check "newcomers refused: table_full +$(( $(jq .table_full <<<"$s1") - $(jq .table_full <<<"$s0") ))" \
			test "$(jq .table_full <<<"$s1")" -ge $(( $(jq .table_full <<<"$s0") + 4 ))
		check "  their packets untracked (+$(( $(jq .untracked_pkts <<<"$s1") - $(jq .untracked_pkts <<<"$s0") )))" \
			test "$(jq .untracked_pkts <<<"$s1")" -gt "$(jq .untracked_pkts <<<"$s0")"
		check "  no busy flow evicted (evicted $(jq .evicted <<<"$s0") -> $(jq .evicted <<<"$s1"))" \
			test "$(jq .evicted <<<"$s1")" = "$(jq .evicted <<<"$s0")"
		check "  all 64 busy flows still tracked" \
			test "$(jq '[.[] | select(.proto == "udp" and .dport >= 21000 and .dport < 21064)] | length' <<<"$fl")" = 64
		check "  and no newcomer is" test "$(jq '[.[] | select(.dport == 30000 or .dport == 5001)] | length' <<<"$fl")" = 0
		check "a refusal kicks GC too (gc_early $(jq .gc_early <<<"$s0") -> $(jq .gc_early <<<"$s1"))" \
			test "$(jq .gc_early <<<"$s1")" -gt "$(jq .gc_early <<<"$s0")"
	fi
	;;

tunnel_gre|tunnel_wg|tunnel_xfrm|tunnel_srv6|tunnel_ipvs)
	kind=${mode#tunnel_}
	# SRv6 needs IPv6 between the two; the others run with IPv6 off.
	if [ "$kind" = srv6 ]; then setup_pair; else PAIR_IPV4_ONLY=1 setup_pair; fi
	SRFF_NS=$SND
	shaped_prio "$SND" veth0 10mbit
	IN_SND=10.99.0.1 IN_RCV=10.99.0.2
	case $kind in
	gre)
		ip -n "$SND" link add gre1 type gre local $SND_IP4 remote $RCV_IP4 || fail "gre"
		ip -n "$RCV" link add gre1 type gre local $RCV_IP4 remote $SND_IP4 || fail "gre"
		ip -n "$SND" addr add $IN_SND/24 dev gre1
		ip -n "$RCV" addr add $IN_RCV/24 dev gre1
		ip -n "$SND" link set gre1 up
		ip -n "$RCV" link set gre1 up
		;;
	wg)
		command -v wg >/dev/null || skip "wg (wireguard-tools) not installed"
		for n in s r; do
			wg genkey > "$WORK/$n.key" && wg pubkey < "$WORK/$n.key" > "$WORK/$n.pub" || fail "wg genkey"
		done
		ip -n "$SND" link add wg0 type wireguard || fail "wireguard"
		ip -n "$RCV" link add wg0 type wireguard || fail "wireguard"
		run ip netns exec "$SND" wg set wg0 private-key "$WORK/s.key" listen-port 51820 \
			peer "$(cat "$WORK/r.pub")" endpoint $RCV_IP4:51820 allowed-ips $IN_RCV/32 || fail "wg set"
		run ip netns exec "$RCV" wg set wg0 private-key "$WORK/r.key" listen-port 51820 \
			peer "$(cat "$WORK/s.pub")" endpoint $SND_IP4:51820 allowed-ips $IN_SND/32 || fail "wg set"
		ip -n "$SND" addr add $IN_SND/24 dev wg0
		ip -n "$RCV" addr add $IN_RCV/24 dev wg0
		ip -n "$SND" link set wg0 up
		ip -n "$RCV" link set wg0 up
		;;
	xfrm)
		# ESP in tunnel mode between the veth addresses for traffic
		# between the inner ones (on lo), static keys, both directions.
		ip -n "$SND" addr add $IN_SND/32 dev lo
		ip -n "$RCV" addr add $IN_RCV/32 dev lo
		ip -n "$SND" route add $IN_RCV/32 via $RCV_IP4 dev veth0 src $IN_SND
		ip -n "$RCV" route add $IN_SND/32 via $SND_IP4 dev veth1 src $IN_RCV
		enc=0x$(printf '%032x' 0x5afe)
		auth=0x$(printf '%064x' 0x5afe5afe)
		for ns in "$SND" "$RCV"; do
			ip -n "$ns" xfrm state add src $SND_IP4 dst $RCV_IP4 proto esp spi 0x1001 reqid 1 \
				mode tunnel enc 'cbc(aes)' "$enc" auth 'hmac(sha256)' "$auth" || fail "xfrm state"
			ip -n "$ns" xfrm state add src $RCV_IP4 dst $SND_IP4 proto esp spi 0x1002 reqid 2 \
				mode tunnel enc 'cbc(aes)' "$enc" auth 'hmac(sha256)' "$auth" || fail "xfrm state"
		done
		ip -n "$SND" xfrm policy add src $IN_SND/32 dst $IN_RCV/32 dir out \
			tmpl src $SND_IP4 dst $RCV_IP4 proto esp reqid 1 mode tunnel || fail "xfrm policy"
		ip -n "$SND" xfrm policy add src $IN_RCV/32 dst $IN_SND/32 dir in \
			tmpl src $RCV_IP4 dst $SND_IP4 proto esp reqid 2 mode tunnel || fail "xfrm policy"
		ip -n "$RCV" xfrm policy add src $IN_RCV/32 dst $IN_SND/32 dir out \
			tmpl src $RCV_IP4 dst $SND_IP4 proto esp reqid 2 mode tunnel || fail "xfrm policy"
		ip -n "$RCV" xfrm policy add src $IN_SND/32 dst $IN_RCV/32 dir in \
			tmpl src $SND_IP4 dst $RCV_IP4 proto esp reqid 1 mode tunnel || fail "xfrm policy"
		;;
	srv6)
		# SND encapsulates IPv4 to the inner address in IPv6 with an
		# SRH of one segment, RCV's fd77::100, where the SRH, ended,
		# hands the inner packet on (ipv6_srh_rcv); RCV answers in
		# plain IPv4.
		ip -n "$SND" addr add $IN_SND/32 dev lo
		ip -n "$RCV" addr add $IN_RCV/32 dev lo
		ip -n "$RCV" addr add fd77::100/128 dev veth1 nodad
		ip netns exec "$RCV" sysctl -qw net.ipv6.conf.all.seg6_enabled=1 \
			net.ipv6.conf.veth1.seg6_enabled=1 net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.veth1.rp_filter=0
		ip -n "$SND" route add $IN_RCV/32 encap seg6 mode encap segs fd77::100 \
			dev veth0 src $IN_SND || fail "seg6 route"
		ip -n "$RCV" route add $IN_SND/32 via $SND_IP4 dev veth1 src $IN_RCV
		;;
	ipvs)
		command -v ipvsadm >/dev/null || skip "ipvsadm not installed"
		IN_SND=$SND_IP4
		ip -n "$SND" route add $IN_RCV/32 dev veth0
		ip netns exec "$SND" ipvsadm -A -t $IN_RCV:5001 -s rr || fail "ipvsadm -A"
		ip netns exec "$SND" ipvsadm -a -t $IN_RCV:5001 -r $RCV_IP4:5001 -i || fail "ipvsadm -a"
		# tunl0, the ipip module's device of each namespace, takes IPIP.
		modprobe ipip || fail "modprobe ipip"
		ip -n "$RCV" link set tunl0 up || fail "no tunl0 in $RCV"
		ip -n "$RCV" addr add $IN_RCV/32 dev tunl0
		ip netns exec "$RCV" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.tunl0.rp_filter=0
		;;
	esac
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	listening "$RCV" 5001
	# (IPVS serves TCP port 5001 of its virtual address, not pings.)
	[ "$kind" = ipvs ] ||
		wait_for 30 ip netns exec "$SND" ping -c1 -W1 $IN_RCV >/dev/null || fail "no path through the tunnel"
	log "$kind tunnel up"
	# srff comes last: its GC (every 60 s at most, which retires closed
	# flows) must not run before the flows are listed at the end.
	# No idle reset: a stall of the long transfer under emulation must not
	# restart its count (the outer flows of a tunnel are not local TCP).
	srff_load idle_timeout_ms=600000 gc_interval_ms=60000 idle_reset_ms=0
	# Which flows SND's srff made, from its srff_flow_create events: under
	# a debug kernel the test outlasts the GC interval, which retires the
	# closed flows before the listing at the end.
	trace_instance "/run/netns/$SND"
	run srffctl set-thresholds 16k 64k || fail "thresholds"
	c0=$(class_counters "$SND" veth0)
	e0=$(stat encap_pkts)
	# The long transfer runs until the short ones are done (at most 64 MB,
	# 2 minutes), however slowly the guest goes.
	ip netns exec "$SND" $SAFETY stream $IN_RCV 5001 --stop "$WORK/stop" > "$WORK/long" & lpid=$!
	BG_PIDS+=($lpid)
	# "well past the thresholds": the long flow (or its outer entry) > 500 KB
	wait_for 60 sh -c "ip netns exec $SND $SRFFCTL -j flows | jq -e 'map(.bytes) | max > 500000' >/dev/null" ||
		fail "the long transfer did not get going"
	log "the long transfer is past 500 KB: five short ones"
	a=$(class_counters "$SND" veth0)
	run ip netns exec "$SND" $SAFETY shorts $IN_RCV 5001 5 4000 || fail "short transfers"
	b=$(class_counters "$SND" veth0)
	log "short ones done"
	check "the long transfer was still running after the short ones" kill -0 "$lpid"
	if [ "$kind" = wg ]; then
		# A retransmission timeout: RCV drops the tunnel's packets
		# until SND's TCP has timed out and re-hashed its connection
		# (sk_txhash, net.core.txrehash), then lets them through
		# again; the long one goes on for another 200 KB.
		r0=$(tcpext "$SND" TcpTimeoutRehash)
		inner_bytes='[.[] | select(.inner != null) | .bytes] | add'
		s0=$(srffctl -j flows | jq "$inner_bytes")
		ip netns exec "$RCV" nft -f - <<-EOF || fail "nft table srff_outage"
			add table inet srff_outage
			add chain inet srff_outage in { type filter hook input priority 0; }
			add rule inet srff_outage in udp dport 51820 drop
		EOF
		wait_for 60 tcpext_above "$SND" TcpTimeoutRehash "$r0" ||
			fail "no retransmission timeout while RCV dropped the tunnel"
		ip netns exec "$RCV" nft delete table inet srff_outage || fail "nft delete"
		log "SND's TCP timed out and re-hashed ($(tcpext "$SND" TcpTimeoutRehash) times)"
		wait_for 120 sh -c "ip netns exec $SND $SRFFCTL -j flows | jq -e '($inner_bytes) > $s0 + 200000' >/dev/null" ||
			fail "the long transfer did not go on after the outage"
	fi
	touch "$WORK/stop"
	wait "$lpid" || fail "long transfer"
	long=$(cat "$WORK/long")
	log "the long transfer sent $long bytes"
	wait_drained "$SND" veth0
	c=$(class_counters "$SND" veth0)
	st=$(srffctl -j stats)
	fl=$(srffctl -j flows)
	log "veth0 prio before/after the short ones/end: $(echo $a) / $(echo $b) / $(echo $c)"
	log "srff: $(jq -c '{encap_pkts, nodata_pkts, created, untracked_pkts, bands}' <<<"$st")"
	srffctl flows | sed 's/^/#   /'
	log "SND's TCP: $(ip netns exec "$SND" nstat -az TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPLossProbes 2>/dev/null | awk 'NR > 1 { printf "%s %s  ", $1, $2 }')"
	if [ "$kind" = wg ]; then
		# The outer entry of an inner flow is keyed by a tag that wg0's
		# pass takes from the inner flow's key: it must not change when
		# TCP re-hashes the socket (sk_txhash) after the timeout above.
		n=$(jq '[.[] | select(.inner != null and .bytes > 65536)] | length' <<<"$fl")
		soft_check "the long connection kept one inner tag, so one count ($n entries above 64 KB)" test "$n" = 1
	fi
	d0=$(( $(band_bytes "$b" 0) - $(band_bytes "$a" 0) ))
	d1=$(( $(band_bytes "$b" 1) - $(band_bytes "$a" 1) ))
	d2=$(( $(band_bytes "$b" 2) - $(band_bytes "$a" 2) ))
	soft_check "the 5 short transfers (20000 bytes) left in band 0 (+$d0 bytes)" test "$d0" -ge 20000
	soft_check "  and the long one did not (band 0 +$d0 < 40000)" test "$d0" -lt 40000
	soft_check "  nothing in band 1 meanwhile (+$d1)" test "$d1" -lt 1500
	soft_check "  while the long one's tail went on in band 2 (+$d2)" test "$d2" -gt 0
	soft_check "the long one's tail in band 2 ($(band_bytes "$c" 2) >= its $long bytes - 64 KB)" \
		test "$(band_bytes "$c" 2)" -ge $((long - 65536))
	case $kind in
	srv6|ipvs)
		# No inner pass here: the outer packets are the classified ones.
		soft_check "the outer packets classified, none left to another pass (encap_pkts +$(( $(jq .encap_pkts <<<"$st") - e0 )))" \
			test "$(jq .encap_pkts <<<"$st")" = "$e0" ;;
	*)
		soft_check "encap_pkts grew (+$(( $(jq .encap_pkts <<<"$st") - e0 )))" test "$(jq .encap_pkts <<<"$st")" -gt "$e0" ;;
	esac
	q=$(( $(awk '{ s += $3 } END { print s }' <<<"$c") - $(awk '{ s += $3 } END { print s }' <<<"$c0") ))
	s=$(sum_bands "$st" bytes)
	soft_check "srff counted each packet once: $s bytes against the qdisc's $q since srff was loaded (within 10 %)" \
		test $(( s * 100 )) -ge $(( q * 90 )) -a $(( s * 100 )) -le $(( q * 110 ))
	case $kind in
	gre|xfrm|srv6|ipvs)
		# Every packet SND sends on veth0 is an outer one (under IPVS
		# the inner packets come from SND_IP4 too).
		outer_src=$SND_IP4
		[ "$kind" = ipvs ] && outer_src=none
		made=$(sed -n 's/.*srff_flow_create: netns=[0-9]* //p' "$TRACE_DIR/trace")
		sed 's/^/#   created: /' <<<"$made"
		# (The event names TCP, UDP and ICMP; other protocols print in hex.)
		outer=$(grep -E "^0x(4|29|2f|32) |^[a-z6x0-9-]+ \[(::ffff:)?(${outer_src//./\\.}|$SND_IP6)\]:" <<<"$made")
		soft_check "no flow for the outer packets ($kind: none from $outer_src or $SND_IP6, none of protocol 4/41/47/50)" \
			test -z "$outer"
		n=$(grep -cE "^tcp \[[^]]+\]:[0-9]+ -> \[::ffff:${IN_RCV//./\\.}\]:5001 " <<<"$made")
		soft_check "one flow per inner TCP connection ($n of 6 created)" test "$n" = 6
		;;
	wg)
		n=$(jq '[.[] | select(.inner != null and .proto == "udp" and .dport == 51820)] | length' <<<"$fl")
		soft_check "one outer flow per inner flow, tagged \"inner\" ($n >= 6)" test "$n" -ge 6
		soft_check "no flow for the inner pass on wg0" \
			test "$(jq "[.[] | select(.saddr == \"$IN_SND\" or .daddr == \"$IN_RCV\")] | length" <<<"$fl")" = 0
		big=$(jq '[.[] | select(.inner != null and .bytes > 100000) | .bytes] | add // 0' <<<"$fl")
		small=$(jq '[.[] | select(.inner != null and .bytes < 16384 and .bytes > 4000)] | length' <<<"$fl")
		soft_check "  the long flow's entries hold its $long bytes ($big), five short ones their ~5 KB ($small)" \
			test "$big" -ge "$long" -a "$small" -ge 5
		;;
	esac
	end_soft
	;;

reuse)
	PAIR_IPV4_ONLY=1 setup_pair
	SRFF_NS=$SND
	shaped_prio "$SND" veth0 100mbit
	ip netns exec "$RCV" $SAFETY close-sink 5001 100000 & BG_PIDS+=($!)
	listening "$RCV" 5001
	# (loaded last: the closed flow must stay in the table until the
	# reconnection, and GC, which would retire it, first runs 60 s on;
	# idle reset off: the client waits for the server's FIN before its
	# own, and a pause over 100 ms there would restart the count)
	srff_load idle_timeout_ms=600000 gc_interval_ms=60000 idle_reset_ms=0
	run ip netns exec "$SND" $SAFETY reuse-client $RCV_IP4 5001 40000 100000 || fail "first connection"
	f=$(srffctl -j flows port 40000); log "$f"
	check "first connection: one flow with its 100 KB, closed" \
		test "$(jq 'length == 1 and .[0].bytes >= 100000 and .[0].closed == true' <<<"$f")" = true
	wait_drained "$SND" veth0
	k1=$(class_counters "$SND" veth0)
	# (--hold: the client keeps its side open once all is sent, so that
	# GC cannot retire the closed flow before it is listed: under the
	# debug kernel the listing came more than a GC interval later)
	ip netns exec "$SND" $SAFETY reuse-client $RCV_IP4 5001 40000 100000 --first 1000 --go "$WORK/go" \
		--hold "$WORK/hold" > "$WORK/client" & cpid=$!
	BG_PIDS+=($cpid)
	wait_for 30 grep -q first "$WORK/client" || fail "second connection did not start"
	wait_for 10 sh -c "ip netns exec $SND $SRFFCTL -j flows port 40000 | jq -e '.[0].bytes >= 1000' >/dev/null" ||
		fail "second connection's data not counted"
	f=$(srffctl -j flows port 40000); log "$f"
	check "same 4-tuple again: the SYN restarted the flow (bytes $(jq '.[0].bytes' <<<"$f") < 1500)" \
		test "$(jq 'length == 1 and .[0].bytes < 1500' <<<"$f")" = true
	check "  the same flow, not a new one (created $(stat created))" test "$(stat created)" = 1
	check "  and it is no longer closed" test "$(jq '.[0].closed' <<<"$f")" = false
	touch "$WORK/go"
	wait_for 60 grep -q sent "$WORK/client" || fail "second connection did not send it all"
	wait_drained "$SND" veth0
	k2=$(class_counters "$SND" veth0)
	f=$(srffctl -j flows port 40000); log "$f"
	touch "$WORK/hold"
	wait "$cpid" || fail "second connection"
	log "prio after the first connection: $(echo $k1); after the second: $(echo $k2)"
	d0=$(( $(band_bytes "$k2" 0) - $(band_bytes "$k1" 0) ))
	check "the second connection's first data left in band 0 (+$d0 bytes >= 1000)" test "$d0" -ge 1000
	check "its count is its own: $(jq '.[0].bytes' <<<"$f") bytes (100 KB, not 200)" \
		test "$(jq '.[0].bytes >= 100000 and .[0].bytes < 150000' <<<"$f")" = true
	;;

ctlsock)
	n=10
	PAIR_IPV4_ONLY=1 setup_pair
	SRFF_NS=$SND
	# (GC far off: every flow must still be tracked when its RST passes;
	# idle reset at its default, on: only then does the hook look at the
	# sending socket)
	srff_load idle_timeout_ms=600000 gc_interval_ms=60000
	check "idle reset is on" test "$(srffctl -j show | jq '.idle_reset_ms > 0')" = true
	ip netns exec "$SND" nft -f - <<-'EOF' || fail "nft table srff_test"
		table ip srff_test { chain out { type filter hook output priority 0; }; }
	EOF
	ip netns exec "$SND" $SAFETY abort-server 5003 20000 $n "$WORK" & BG_PIDS+=($!)
	listening "$SND" 5003
	r=$(ip netns exec "$RCV" $SAFETY poke-client $SND_IP4 5003 20000 $n "$WORK") ||
		fail "poke-client"
	check "every client's late data was answered by a RST ($r of $n)" test "$r" = "$n"
	f=$(srffctl -j flows port 5003)
	log "$(jq -c '[.[] | {bytes, closed}]' <<<"$f")"
	# A RST carries no data and creates no flow: a closed flow per
	# connection, and no more flows than connections, means each RST met
	# the flow its connection's data made (its count restarted from 0 by
	# idle reset, after the pause: the RST's own 40 bytes). On a slow guest
	# GC (at most a minute apart) may already have retired some of the
	# closed ones: they count in fin_retired.
	closed=$(jq '[.[] | select(.closed)] | length' <<<"$f")
	retired=$(stat fin_retired)
	check "srff saw each control-socket RST on its tracked flow ($closed closed + $retired retired after closing = $n)" \
		test $((closed + retired)) = "$n"
	check "  none left open ($(jq length <<<"$f") listed)" test "$(jq length <<<"$f")" = "$closed"
	check "  the flows its data made: created $(stat created) = $n" test "$(stat created)" = "$n"
	;;

loopback)
	srff_load
	setup_ns X
	SRFF_NS=$X
	flood_dev ip netns exec "$X"
	s0=$(stat loopback_pkts) c0=$(stat created)
	n4=$(ip netns exec "$X" $SAFETY udp-flood 127.0.0.1 1000 --base-port 20000) || fail "flood 127.0.0.1"
	n6=$(ip netns exec "$X" $SAFETY udp-flood ::1 1000 --base-port 20000) || fail "flood ::1"
	st=$(srffctl -j stats); log "$(jq -c 'del(.bands)' <<<"$st")"
	check "sent $n4 + $n6 datagrams over lo" test "$((n4 + n6))" = 2000
	# (d0's own IPv6 router solicitation or MLD report may be a flow)
	check "  no flow created ($(jq .created <<<"$st") in all)" test "$(jq .created <<<"$st")" = "$c0"
	check "  no flow to dump but d0's ($(srffctl -j flows | jq -c '[.[].daddr]'))" \
		test "$(srffctl -j flows | jq '[.[] | select(.daddr | test("^(127[.]|::1$)"))] | length')" = 0
	# Each datagram, and the port-unreachable error it draws, leave through lo.
	check "  loopback_pkts counts them: +$(( $(jq .loopback_pkts <<<"$st") - s0 )) >= 2000" \
		test $(( $(jq .loopback_pkts <<<"$st") - s0 )) -ge 2000
	n=$(ip netns exec "$X" $SAFETY udp-flood $FLOOD_DST 1000 --base-port 20000) || fail "flood d0"
	c1=$(stat created)
	check "the same $n through d0 are $((c1 - c0)) flows" test $((c1 - c0)) -ge 1000
	;;

mcast)
	srff_load
	setup_ns X
	SRFF_NS=$X
	flood_dev ip netns exec "$X"
	ip -n "$X" route add 224.0.0.0/4 dev d0 || fail "multicast route"
	ip -n "$X" addr add fd88::1/64 dev d0 nodad
	c0=$(stat created) i0=$(stat ignored_pkts) b0=$(srffctl -j stats | jq '[.bands[].pkts] | add')
	ip netns exec "$X" $PY - <<-'PY' || fail "send"
		import socket
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
		s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
		for i in range(100):
		    s.sendto(b"m" * 100, ("239.1.2.3", 5000))
		    s.sendto(b"b" * 100, ("10.88.0.255", 5000))
		s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
		idx = socket.if_nametoindex("d0")
		s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, idx)
		for i in range(100):
		    s6.sendto(b"6" * 100, ("ff02::1", 5000, 0, idx))
		PY
	st=$(srffctl -j stats); log "$(jq -c 'del(.bands)' <<<"$st")"
	log "flows: $(srffctl -j flows | jq -c '[.[] | .daddr]')"
	check "no flow for them: created +$(( $(jq .created <<<"$st") - c0 ))" \
		test "$(srffctl -j flows | jq '[.[] | select(.daddr | test("^(239[.]|10[.]88[.]0[.]255|ff02::1$)"))] | length')" = 0
	check "  ignored_pkts +$(( $(jq .ignored_pkts <<<"$st") - i0 )) (>= 300, looped copies too)" \
		test $(( $(jq .ignored_pkts <<<"$st") - i0 )) -ge 300
	;;

enable_fail)
	srff_load netns=ask
	setup_ns X
	SRFF_NS=$X
	flood_dev ip netns exec "$X"
	nft_fill_postrouting "$X" "$WORK"
	log "$FILLED base chains at ip6 postrouting in $X: the kernel refused one more"
	before=$(srffctl -j show)
	expect_rc 1 "set enabled on refused" srffctl set enabled on
	check "  with the cause" grep -q "too many netfilter hooks at postrouting" <<<"$LAST_OUT"
	check "  configuration unchanged (off)" test "$(srffctl -j show)" = "$before"

	ino=$(command stat -L -c %i "/run/netns/$X")
	trace_instance "/run/netns/$X"
	I=$TRACE_DIR
	for cpu in $(seq 0 $(( $(nproc) - 1 ))); do
		taskset -c "$cpu" ip netns exec "$X" $SAFETY udp-flood $FLOOD_DST 100000000 --seconds 600 \
			>/dev/null & BG_PIDS+=($!)
	done
	wait_for 60 sh -c "[ \$(ip -n $X -j -s link show d0 | jq '.[0].stats64.tx.packets') -gt 2000 ]" ||
		fail "the flood did not start"
	# Refusals in batches of 20 until 3 met packets (or 60 s): a refusal
	# met packets if it traced a flow of X's (each datagram a port of its
	# own, so a flow each).
	hits=0 tries=0 bad=0 prev=0 deadline=$(( SECONDS + 60 * ${SRFF_TIMEOUT_SCALE:-1} ))
	while [ "$hits" -lt 3 ] && [ "$SECONDS" -lt "$deadline" ]; do
		for i in $(seq 20); do
			ip netns exec "$X" "$SRFFCTL" set enabled on 2>/dev/null && bad=$((bad + 1))
			tries=$((tries + 1))
			n=$(grep -c "srff_flow_create" "$I/trace")
			[ "$n" -gt "$prev" ] && hits=$((hits + 1))
			prev=$n
		done
	done
	kill_bg
	log "$tries refusals, $hits met packets ($prev flows traced in X)"
	check "every enable was refused ($bad accepted)" test "$bad" = 0
	check "  srff still off in X" test "$(srffctl -j show | jq .enabled)" = false
	check "the IPv4 hook met packets in $hits refusals (>= 3)" test "$hits" -ge 3
	check "  and stats read nothing of them (off)" test "$(stat created)" = 0
	ip netns exec "$X" nft delete table ip6 fill || fail "delete the chains"
	run srffctl set enabled on || fail "set enabled on once there is room"
	check "  then on" test "$(srffctl -j show | jq .enabled)" = true
	n=$(ip netns exec "$X" $SAFETY udp-flood $FLOOD_DST 100 --base-port 40000) || fail "flood"
	check "  and tracking ($(stat created) flows)" test "$(stat created)" = 100

	log "netns=all at load: a namespace that cannot take the hooks stays off"
	srff_unload || fail "rmmod"
	nft_fill_postrouting "$X" "$WORK"
	srff_load netns=all
	check "the load succeeded" grep -q '^srff ' /proc/modules
	check "  srff off in X" test "$(srffctl -j show | jq .enabled)" = false
	check "  on in the initial namespace" test "$("$SRFFCTL" -j show | jq .enabled)" = true
	check "  the kernel said why" sh -c "dmesg | grep -q 'srff: not enabled in namespace $ino'"
	;;

smaller)
	log "(a) hash_buckets"
	nbad() { dmesg | grep -c 'srff: bad module parameter'; }
	srff_unload
	for hb in 4294967295 33554432; do
		b=$(nbad)
		expect_rc 1 "insmod hash_buckets=$hb fails" insmod "$SRFF_KO" hash_buckets=$hb
		check "  not loaded" sh -c "! grep -q '^srff ' /proc/modules"
		check "  dmesg: $(dmesg | grep 'srff: bad module parameter' | tail -1 | sed 's/^\[[^]]*\] //')" \
			test "$(nbad)" -gt "$b"
	done

	log "(b) idle-reset must be shorter than idle-timeout"
	srff_load
	PAIR_IPV4_ONLY=1 setup_pair
	SRFF_NS=$SND
	before=$(srffctl -j show)
	expect_rc 1 "set idle-timeout 2s idle-reset 3s refused" srffctl set idle-timeout 2s idle-reset 3s
	check "  with the kernel's message" grep -q "idle reset must be shorter than the idle timeout" <<<"$LAST_OUT"
	check "  configuration unchanged" test "$(srffctl -j show)" = "$before"
	expect_rc 1 "idle-reset 2500ms equal to the idle timeout refused" srffctl set idle-reset 2500ms
	check "  configuration unchanged" test "$(srffctl -j show)" = "$before"
	expect_rc 0 "set idle-timeout 2s idle-reset 1s accepted" srffctl set idle-timeout 2s idle-reset 1s
	expect_rc 1 "then idle-timeout 1s (now equal to idle-reset) refused" srffctl set idle-timeout 1s
	check "  it still reads 2 s / 1 s" \
		test "$(srffctl -j show | jq -c '[.idle_timeout_ms, .idle_reset_ms]')" = "[2000,1000]"
	srffctl set idle-reset off idle-timeout 2500ms || fail "restore"

	log "(c) GSO skbs counted as the qdisc counts them"
	shaped_prio "$SND" veth0 200mbit
	offloads "$SND" veth0 on
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	listening "$RCV" 5001
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5001 4000000 || fail "tcp-send"
	wait_drained "$SND" veth0
	c=$(class_counters "$SND" veth0)
	st=$(srffctl -j stats)
	qp=$(awk '{ s += $2 } END { print s }' <<<"$c")
	qb=$(awk '{ s += $3 } END { print s }' <<<"$c")
	sp=$(sum_bands "$st" pkts)
	sb=$(sum_bands "$st" bytes)
	want=$((qb - 14 * qp))
	log "prio: $qp segments, $qb bytes; srff: $sp skbs, $sb bytes; expected $want"
	check "TSO made GSO skbs ($sp skbs for $qp segments)" test $((sp * 2)) -lt "$qp"
	check "srff bytes $sb == qdisc bytes - 14 x segments $want (within 1 %)" \
		test $(( (sb - want) * 100 )) -le "$want" -a $(( (want - sb) * 100 )) -le "$want"
	cleanup_ns
	kill_bg

	log "(d) a long flush does not hold up other requests (parallel_ops)"
	# 40 000 flows make a flush long enough for the watcher below to catch
	# X half flushed many times: under QEMU 10 it did 55 times, with 15 000
	# flows only twice. max_flows: the guest's RAM allows 32 768 a
	# namespace by default. (The table grows with its flows; hash_buckets
	# is only its ceiling, so it does not make an empty table long to walk.)
	srff_load hash_buckets=16777216 max_flows=65536 idle_timeout_ms=600000 gc_interval_ms=60000
	check "hash_buckets=16777216 (the maximum) loads" grep -q '^srff ' /proc/modules
	setup_ns X
	SRFF_NS=$X
	flood_dev ip netns exec "$X"
	n=$(ip netns exec "$X" $SAFETY udp-flood $FLOOD_DST 40000 --base-port 20000) || fail "flows"
	f0=$(stat flows)
	log "$n datagrams sent over d0"
	check "$f0 flows to flush" test "$f0" -ge 40000
	# A watcher asks, over and over, X's stats and X's and the initial
	# namespace's configuration: a reply showing X half flushed can only
	# come from a request served during the flush (without parallel_ops,
	# genl_mutex would hold every request until the flush returned).
	ip netns exec "$X" $SAFETY flushwatch "/run/netns/$X" /proc/1/ns/net --ready "$WORK/fw" \
		> "$WORK/flushwatch" & wpid=$!
	BG_PIDS+=($wpid)
	wait_for 30 test -e "$WORK/fw" || fail "flushwatch did not start"
	t0=$(date +%s%N)
	srffctl flush & fpid=$!
	# and srffctl show from another namespace, launched with the flush
	s=$(date +%s%N)
	"$SRFFCTL" show >/dev/null || fail "show"
	e=$(date +%s%N)
	flush_running=no
	kill -0 "$fpid" 2>/dev/null && flush_running=yes
	wait "$fpid" || fail "flush"
	tf=$(( ($(date +%s%N) - t0) / 1000000 ))
	wait "$wpid" || fail "flushwatch"
	w=$(cat "$WORK/flushwatch")
	log "flush: $tf ms; show launched with it: $(( (e - s) / 1000000 )) ms (flush still running then: $flush_running)"
	log "watcher: $w"
	check "flush emptied the table" test "$(stat flows)" = 0
	jq_check "stats of X answered $(jq .stats_mid <<<"$w") times mid-flush (flows $(jq -c .mid_values <<<"$w") of $f0)" \
		"$w" '.stats_mid >= 3'
	jq_check "the configuration of another namespace answered $(jq .config_other_mid <<<"$w") times mid-flush" \
		"$w" '.config_other_mid >= 1'
	jq_check "the configuration of X itself answered $(jq .config_same_mid <<<"$w") times mid-flush" \
		"$w" '.config_same_mid >= 1'
	check "srffctl show launched with the flush returned before it (or within 1 s)" \
		test "$flush_running" = yes -o $(( (e - s) / 1000000 )) -lt 1000
	;;

*)
	fail "unknown mode $mode"
	;;
esac
exit $ksft_pass
