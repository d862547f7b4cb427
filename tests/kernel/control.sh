#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# control.sh MODE: the "srff" netlink family and srffctl, in the guest.
#
#   SND [srff, veth0: tbf 50mbit -> prio 10:] ---- RCV
#
#  roundtrip  every setting set with srffctl reads back the same (text and
#             JSON); save | apply restores a saved configuration exactly
#  invalid    each class of bad input is refused with the kernel's message
#             (or srffctl's, for what cannot even be encoded) and leaves the
#             configuration byte-for-byte unchanged; raw requests
#             (tests/tools/genl.py) with unknown, oversized or misplaced
#             attributes are refused by the kernel's policies with an ack
#  fuzz       2 000 randomised requests (tests/tools/nlfuzz.py: edge values,
#             wrong types and sizes, unknown attributes, duplicates) while
#             TCP connections churn and a transfer runs: every refusal has a
#             message and changes nothing, every accepted configuration obeys
#             the family's rules, unmutated settings read back
#  apprio     app_priority override (the default) replaces a priority the
#             application set (SO_PRIORITY); keep leaves it, and its band
#  perms      an unprivileged user may read config and stats but not set,
#             flush or dump (exit 3); root of a new user namespace may
#             change its own network namespace
#  dump       10 000 flows dump complete, each listed once, while traffic
#             runs; filters (band and min-bytes in the kernel), sort and
#             limit work
#  churn      while short TCP connections create and retire flows, every
#             raw dump lists each of 20 000 stable flows once and none is
#             flagged NLM_F_DUMP_INTR (whole hash buckets per message), and
#             every srffctl dump is complete, with no warning
#  live       raising the thresholds during a transfer moves that flow back
#             to band 0 at once (tc counters); flush forgets every flow
#  ports      top-ports keeps a bulk transfer on port 5555 in band 0
#  udp        udp top / ignore / track take effect
#  idlereset  with idle-reset, each new response on a kept-alive connection
#             starts in band 0 again; without it, only the first does
#  params     module parameters read srffctl's units (thresholds=16k,1m
#             idle_reset_ms=0.1s ... off) and refuse what srffctl refuses
#  trace      the tracepoints srff_flow_create and srff_flow_retire: each
#             flow created once; retired at FIN with its size, idle after the
#             idle timeout, by flush, and when its namespace is deleted
#  nomodule   srffctl says plainly that srff is not loaded (exit 4)
. "$(dirname "$0")/../lib.sh"

mode=${1:?mode}
NSTABLE=20000		# churn: flows that exist throughout the dumps
GENL="$PY $TOOLS/genl.py"
[ -x "$SRFFCTL" ] || fail "srffctl not built"

# Other namespaces may not set a GC interval shorter than the module's.
HOST_GC_MS=100
if [ "$mode" != nomodule ]; then
	# Fixed thresholds and no idle reset: the band tests below count on
	# 1500 and 5000, and idlereset switches the reset on itself.
	srff_load thresholds=1500,5000 idle_reset_ms=0 idle_timeout_ms=600000 gc_interval_ms=$HOST_GC_MS
	setup_pair
	SRFF_NS=$SND
	shaped_prio "$SND" veth0 50mbit
fi

case $mode in
roundtrip)
	# A new number of bands needs its priorities in the same request.
	expect_rc 1 "4 thresholds with 3 priorities refused" srffctl set-thresholds 1.5k 20k 1M 4Mi
	run srffctl set-thresholds 1.5k 20k 1M 4Mi priorities 6,0,1,2,3 || fail "set-thresholds"
	run srffctl set idle-timeout 2.5s gc-interval 750ms \
		max-flows 5000 udp top top-ports 21,22,23 untracked-priority 1 \
		app-priority keep idle-reset 1s mark dscp dscp-map cs1,keep,af21,ef,le \
		dscp-override on || fail "set"
	got=$(srffctl -j show) || fail "show -j"
	log "$got"
	want='{"thresholds":[1536,20480,1048576,4194304],"priorities":[6,0,1,2,3],"classid":null,"classid_major":0,"idle_timeout_ms":2500,"gc_interval_ms":750,"max_flows":5000,"udp_policy":"top","top_ports":[21,22,23],"untracked_priority":1,"app_priority":"keep","idle_reset_ms":1000,"auto_thresholds":false,"enabled":true,"mark":"dscp","dscp_map":[8,null,18,46,1],"dscp_override":true}'
	check "JSON config reads back every setting" \
		test "$(echo "$got" | jq -cS .)" = "$(echo "$want" | jq -cS .)"
	check "max_flows reached the table" test "$(stat max_flows)" = 5000
	# A DSCP map equal to the default is the default: it follows the
	# number of bands from then on.
	run srffctl set dscp-map keep,keep,keep,keep,le || fail "default dscp-map"
	# Learnt thresholds: auto keeps their number and shows those in force;
	# thresholds set by hand fix them again.
	run srffctl set thresholds auto || fail "thresholds auto"
	got=$(srffctl -j show)
	check "thresholds auto: learning, 4 thresholds still in force" \
		jq -e '.auto_thresholds == true and (.thresholds | length) == 4' <<<"$got"
	check "  show says auto" sh -c "ip netns exec $SND $SRFFCTL show | grep -q '^thresholds auto  # now 1536b 20Kb 1Mb 4Mb'"
	run srffctl set-thresholds auto priorities 6,0,2 || fail "auto with 3 bands"
	check "  with 3 bands: the defaults for 2 thresholds, 16 KiB and 128 KiB" \
		jq -e '.auto_thresholds == true and .thresholds == [16384, 131072]' <<<"$(srffctl -j show)"
	check "  and the default DSCP map for 3 bands" \
		jq -e '.dscp_map == [null, null, 1]' <<<"$(srffctl -j show)"
	run srffctl set-thresholds 1.5k 20k 1M 4Mi priorities 6,0,1,2,3 || fail "set-thresholds"
	check "  set by hand: fixed again" jq -e '.auto_thresholds == false' <<<"$(srffctl -j show)"
	run srffctl set classid 10: || fail "classid"
	check "classid 10: is major 0x10" test "$(srffctl -j show | jq .classid_major)" = 16
	check "  and \"10:\" in JSON, as tc writes handles" test "$(srffctl -j show | jq -r .classid)" = 10:
	run srffctl set dscp-map cs1,keep,af21,ef,le || fail "dscp-map"
	srffctl show | sed 's/^/#   /'
	saved=$(srffctl save) || fail "save"
	log "saved: $(echo "$saved" | tr '\n' ';')"
	# An operator's DSCP map must change with the number of bands.
	run srffctl set-thresholds 100 200 dscp-map le,le,le && run srffctl set classid none udp ignore \
		top-ports none idle-reset off priorities 1,2,3 mark none dscp-override off || fail "scramble"
	check "scrambled" test "$(srffctl -j show | jq -c .top_ports)" = "[]"
	echo "$saved" | ip netns exec "$SND" "$SRFFCTL" apply - || fail "apply"
	check "apply restores the saved configuration" \
		test "$(srffctl save)" = "$saved"
	# -n NETNS, as ip -n: from the initial namespace, act on SND's srff.
	check "srffctl -n $SND show reads SND's configuration" \
		test "$("$SRFFCTL" -n "$SND" -j show)" = "$(srffctl -j show)"
	check "  which is not the initial namespace's" \
		test "$("$SRFFCTL" -n "$SND" -j show)" != "$("$SRFFCTL" -j show)"
	run "$SRFFCTL" -n "$SND" set idle-reset 2s || fail "set with -n"
	check "  set with -n changed SND" test "$(srffctl -j show | jq .idle_reset_ms)" = 2000
	check "  and only SND" test "$("$SRFFCTL" -j show | jq .idle_reset_ms)" = 0
	check "  a path works too" \
		test "$("$SRFFCTL" -n "/run/netns/$SND" -j show | jq .idle_reset_ms)" = 2000
	expect_rc 2 "-n with a namespace that does not exist" "$SRFFCTL" -n srff-no-such-ns show
	check "  names it" grep -q "srff-no-such-ns" <<<"$LAST_OUT"
	;;
invalid)
	# Each refusal is checked against srffctl's reading of the whole
	# configuration (a C program: a python start costs a second in the
	# guest), and at the end against the kernel's raw reply.
	raw_before=$(ip netns exec "$SND" $GENL get-config | jq -r .reply)
	before=$(srffctl -j show)
	bad() {	# bad RC DESCRIPTION ARGS...: srffctl refuses, config unchanged
		local rc=$1 what=$2; shift 2
		expect_rc "$rc" "refused: $what" srffctl "$@"
		case $rc in 1) check "  the kernel said why" grep -q "kernel" <<<"$LAST_OUT" ;; esac
		check "  configuration unchanged" test "$(srffctl -j show)" = "$before"
	}
	bad 1 "descending thresholds" set-thresholds 5000 1500
	bad 1 "equal thresholds" set-thresholds 1500 1500 9000
	bad 1 "16 thresholds" set-thresholds 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16
	bad 1 "zero threshold" set-thresholds 0 100 200
	bad 1 "more bands than priorities" set-thresholds 100 200 300
	bad 1 "priority 300 (not 0-15, not major:minor)" set priorities 6,300,2
	bad 1 "idle timeout 10ms" set idle-timeout 10ms
	bad 1 "GC interval 2 minutes" set gc-interval 2m
	bad 1 "max flows 5" set max-flows 5
	bad 1 "idle reset as long as the idle timeout" set idle-timeout 2s idle-reset 2s
	# SND is not the initial namespace: the module's limits bind it.
	bad 1 "max flows above the host's limit" set max-flows $(( $(stat max_flows) + 1 ))
	check "  the kernel named the host's limit" grep -q "host's limit" <<<"$LAST_OUT"
	bad 1 "port 0 as top port" set top-ports 0
	bad 2 "garbage size" set-thresholds 1.5q
	bad 2 "unknown key" set colour blue
	bad 2 "unknown UDP policy" set udp sometimes
	# Raw requests the tool would never send, in one genl.py run (a Python
	# start costs a second or two here): each refused, with a message, and
	# the kernel's raw configuration the same bytes right after it.
	raws=(
		"unknown attribute 99|set-config 5:u32:500 99:u32:1"
		"stats attribute in a set|set-config 13:nest:flag="
		"u32 where u8 belongs|set-config 8:u32:1"
		"UDP policy 7|set-config 8:u8:7"
		"idle timeout above range|set-config 5:u32:4000000"
		"threshold item of 4 bytes|set-config 2:nest:flag=1:u32:100"
		"nest without NLA_F_NESTED|set-config 2:nest=1:u64:100,1:u64:200,1:u64:300"
		"attribute on get-config|get-config 5:u32:500"
		"enabled 2|set-config 19:u8:2"
		"mark 2|set-config 20:u8:2"
		"DSCP 64 in the map|set-config 21:nest:flag=1:u8:0,1:u8:0,1:u8:64"
		"a DSCP map of four for three bands|set-config 21:nest:flag=1:u8:0,1:u8:0,1:u8:1,1:u8:1"
		"a DSCP map item of 2 bytes|set-config 21:nest:flag=1:u16:1"
		"DSCP override 2|set-config 22:u8:2"
		"a flow filter in a set|set-config 17:u8:1"
		"empty set|set-config"
		"flow dump of band 16|--dump get-flows 17:u8:16"
		"flow dump with min bytes as u32|--dump get-flows 18:u32:5"
		"config attribute in a flow dump|--dump get-flows 5:u32:500"
	)
	mapfile -t replies < <(printf '%s\n' "${raws[@]#*|}" | ip netns exec "$SND" $GENL --batch)
	check "genl.py answered every request (${#replies[@]} of ${#raws[@]})" test ${#replies[@]} = ${#raws[@]}
	for i in "${!raws[@]}"; do
		r=${replies[i]:-"{}"}
		log "${raws[i]#*|}: $r"
		read -r refused msg same < <(jq -r --arg b "$raw_before" \
			'"\(.error < 0) \(.msg != null) \(.config_after == $b)"' <<<"$r")
		check "kernel refused: ${raws[i]%%|*}" test "$refused" = true
		check "  with an extended-ack message" test "$msg" = true
		check "  configuration unchanged (its raw bytes)" test "$same" = true
	done
	check "  and as srffctl reads it" test "$(srffctl -j show)" = "$before"
	bad 2 "flows band 16" flows band 16
	bad 2 "flows min-bytes garbage" flows min-bytes lots
	check "after every refusal, the kernel's raw configuration is the same bytes" \
		test "$(ip netns exec "$SND" $GENL get-config | jq -r .reply)" = "$raw_before"
	r=${replies[0]:-"{}"}	# unknown attribute 99
	check "the ack points at the bad attribute (offset $(jq .offs <<<"$r"))" \
		test "$(jq '.offs > 0' <<<"$r")" = true
	r=$(ip netns exec "$SND" $GENL set-config 5:u32:700)
	check "a well-formed raw request is accepted" test "$(echo "$r" | jq .error)" = 0
	check "  and took effect" test "$(srffctl -j show | jq .idle_timeout_ms)" = 700
	;;
fuzz)
	bulk_and_churn 20
	created=$(stat created)
	# SND is not the initial namespace: the module's max_flows (what SND
	# starts with) and gc_interval_ms bound what it may set.
	out=$(ip netns exec "$SND" $PY "$TOOLS/nlfuzz.py" -n 2000 --seed "${SRFF_FUZZ_SEED:-1}" \
		--host-max-flows "$(stat max_flows)" --host-gc-interval-ms "$HOST_GC_MS")
	rc=$?
	log "$(echo "$out" | jq -c 'del(.violations)')"
	echo "$out" | jq -r '.violations[]?' | sed 's/^/#   /'
	check "no request broke a rule (nlfuzz exit $rc)" test "$rc" = 0
	check "  requests were accepted ($(echo "$out" | jq .accepted)) and refused ($(echo "$out" | jq .refused))" \
		test "$(echo "$out" | jq '.accepted >= 50 and .refused >= 500')" = true
	check "  refused for many reasons ($(echo "$out" | jq .messages) messages)" \
		test "$(echo "$out" | jq '.messages >= 10')" = true
	check "  the configuration was put back" test "$(echo "$out" | jq .restored)" = true
	# The fuzzer switches srff off and on (SRFF_A_ENABLED), which starts
	# the counters again: srff tracks the churn's new flows after it.
	now=$(stat created)
	check "srff tracks new flows after the fuzzing" \
		wait_for 20 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j stats | jq .created) -gt $now ]"
	;;
perms)
	nobody() { ip netns exec "$SND" setpriv --reuid=65534 --regid=65534 --clear-groups "$SRFFCTL" "$@"; }
	expect_rc 0 "unprivileged: show" nobody show
	expect_rc 3 "unprivileged: -n (setns needs CAP_SYS_ADMIN)" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$SRFFCTL" -n "$SND" show
	expect_rc 0 "unprivileged: stats" nobody -j stats
	expect_rc 3 "unprivileged: set refused" nobody set max-flows 100
	expect_rc 3 "unprivileged: set-thresholds refused" nobody set-thresholds 10 20
	expect_rc 3 "unprivileged: flush refused" nobody flush
	expect_rc 3 "unprivileged: flows refused" nobody flows
	check "unchanged by the refused set" test "$(stat max_flows)" != 100
	# Root of its own user namespace administers its own netns.
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		unshare -U -r -n sh -c "$SRFFCTL set max-flows 100 && $SRFFCTL -j show" 2>&1)
	rc=$?
	log "$out"
	if [ $rc -ne 0 ] && grep -qi "unshare" <<<"$out"; then
		log "unprivileged user namespaces unavailable here: part skipped"
	else
		check "userns root may set its own netns ($rc)" test $rc = 0
		check "  and it took effect there" test "$(echo "$out" | jq .max_flows)" = 100
		check "  but not here" test "$(stat max_flows)" != 100
	fi
	;;
dump)
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 10000 --base-port 20000 ||
		fail "udp-flows"
	# Traffic on existing flows while dumping (new flows would rightly make
	# every dump inconsistent): a TCP stream and UDP on flow 20000.
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5001 1000000000 & BG_PIDS+=($!)
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 20000 100000 200 --interval 0.001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $SND $SRFFCTL -j stats | jq -e '.flows >= 10001' >/dev/null" ||
		fail "flows not created"
	# The 10 000 flows share udp-flows' one socket, so its source port; the
	# background sender to port 20000 is an 10 001st flow of its own.
	sp=$(srffctl -j flows proto udp port 20001 | jq '.[0].sport')
	for i in 1 2 3; do
		d=$(srffctl -j flows) || fail "dump $i"
		n=$(echo "$d" | jq "[.[] | select(.proto == \"udp\" and .sport == $sp)] | length")
		u=$(echo "$d" | jq "[.[] | select(.proto == \"udp\" and .sport == $sp) | .dport] | unique | length")
		check "dump $i: $n UDP flows listed, $u distinct, of 10000" test "$n" = 10000 -a "$u" = 10000
	done
	check "dump total equals the flow count" \
		test "$(echo "$d" | jq length)" = "$(stat flows)"
	t=$(srffctl -j flows proto tcp port 5001)
	check "filter proto tcp port 5001: one flow" test "$(echo "$t" | jq length)" = 1
	check "  with the bytes of a running transfer" test "$(echo "$t" | jq '.[0].bytes')" -gt 100000
	top=$(srffctl -j flows sort bytes limit 2)
	check "sort bytes limit 2: the TCP stream first" \
		test "$(echo "$top" | jq -r '.[0].proto')" = tcp -a "$(echo "$top" | jq length)" = 2
	check "text output lists the flows" test "$(srffctl flows | grep -c udp)" -ge 10000
	# Filters the kernel applies (thresholds 1500,5000: one datagram is
	# band 0, the TCP stream band 2).
	b0=$(srffctl -j flows band 0)
	check "band 0 (in the kernel): $(echo "$b0" | jq length) flows, all band 0, the 10000 among them" \
		test "$(echo "$b0" | jq "all(.band == 0) and ([.[] | select(.sport == $sp)] | length) == 10000")" = true
	b2=$(srffctl -j flows band 2)
	check "band 2: $(echo "$b2" | jq length) flows, all band 2, with the TCP stream" \
		test "$(echo "$b2" | jq 'all(.band == 2) and any(.proto == "tcp" and .dport == 5001) and length <= 3')" = true
	m=$(srffctl -j flows min-bytes 100k)
	check "min-bytes 100k (102400): $(echo "$m" | jq length) flows, each that big, the TCP stream among them" \
		test "$(echo "$m" | jq 'all(.bytes >= 102400) and any(.proto == "tcp") and length <= 3')" = true
	check "  band and min-bytes together" \
		test "$(srffctl -j flows band 0 min-bytes 100k | jq length)" = 0
	;;
churn)
	run srffctl set gc-interval 100ms || fail "gc-interval"
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 $NSTABLE --base-port 20000 ||
		fail "udp-flows"
	sp=$(srffctl -j flows proto udp port 20001 | jq '.[0].sport')
	[ -n "$sp" ] && [ "$sp" != null ] || fail "no stable flow to port 20001"
	c0=$(stat created); r0=$(stat fin_retired)
	# Bursts of connections, 0.5 s on and 1.5 s off: each closed one is
	# unlinked by a GC run 200-300 ms later, so dumps meet links, unlinks
	# and quiet spells.
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-churn $RCV_IP4 5001 600 & BG_PIDS+=($!)
	wait_for 30 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j stats | jq .fin_retired) -gt $r0 ]" ||
		fail "churn retired no flow"
	res=$(ip netns exec "$SND" $PY "$TOOLS/dumpcheck.py" "$sp" 20000 $NSTABLE --dumps 5 --timeout 120) ||
		fail "dumpcheck"
	log "$res"
	check "$(echo "$res" | jq .dumps) raw dumps, each with all $NSTABLE stable flows once ($(echo "$res" | jq -c .bad))" \
		test "$(echo "$res" | jq '.dumps >= 3 and (.bad | length) == 0')" = true
	check "  none flagged NLM_F_DUMP_INTR ($(echo "$res" | jq .intr)): whole buckets per message" \
		test "$(echo "$res" | jq .intr)" = 0
	check "  while the table changed between them ($(echo "$res" | jq .flows_min)-$(echo "$res" | jq .flows_max) flows listed)" \
		test "$(echo "$res" | jq '.flows_max > .flows_min')" = true
	errf=$(mktemp)
	for i in 1 2 3; do
		d=$(srffctl -j flows 2>"$errf") || fail "srffctl dump $i: $(cat "$errf")"
		n=$(echo "$d" | jq "[.[] | select(.proto == \"udp\" and .sport == $sp and .dport >= 20000 and .dport < $((20000 + NSTABLE))) | .dport] | (length == $NSTABLE and (unique | length) == $NSTABLE)")
		check "srffctl dump $i complete: each stable flow once, no warning ($(cat "$errf"))" \
			test "$n" = true -a ! -s "$errf"
	done
	rm -f "$errf"
	check "flows were created ($(( $(stat created) - c0 ))) and retired ($(( $(stat fin_retired) - r0 ))) meanwhile" \
		test $(( $(stat created) - c0 )) -gt 100 -a $(( $(stat fin_retired) - r0 )) -gt 100
	;;
live)
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5001 1000000000 & BG_PIDS+=($!)
	band0() { class_counters "$SND" veth0 | awk '$1 == 0 { print $3 }'; }
	band2() { class_counters "$SND" veth0 | awk '$1 == 2 { print $3 }'; }
	wait_for 20 sh -c "[ \$(tc -n $SND -s class show dev veth0 parent 10: | awk '/10:3/ {getline; print \$2}') -gt 1000000 ]" ||
		fail "transfer did not reach band 2"
	a0=$(band0); a2=$(band2)
	run srffctl set-thresholds 1G 2G || fail "raise thresholds"
	b0=$(band0); b2=$(band2)
	wait_for 10 sh -c "[ \$(tc -n $SND -s class show dev veth0 parent 10: | awk '/10:1/ {getline; print \$2}') -gt $((b0 + 1000000)) ]" ||
		fail "band 0 did not take over"
	c0=$(band0); c2=$(band2)
	log "band0 $a0 -> $b0 -> $c0, band2 $a2 -> $b2 -> $c2"
	check "after the change the flow is in band 0 ($((c0 - b0)) bytes)" test $((c0 - b0)) -gt 1000000
	check "and band 2 stopped ($((c2 - b2)) bytes, < 1 max-size skb)" test $((c2 - b2)) -lt 70000
	run srffctl flush || fail "flush"
	st=$(srffctl -j stats)
	check "flush counted ($(echo "$st" | jq .flushed))" test "$(echo "$st" | jq .flushed)" -ge 1
	;;
ports)
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5555 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5555' | grep -q ." || fail "sink"
	run srffctl set top-ports 21,5555 || fail "top-ports"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5555 2000000 || fail "send"
	c=$(class_counters "$SND" veth0); log "$(echo $c)"
	check "2 MB to a top port all in band 0" \
		test "$(echo "$c" | awk '$1 == 0 { print $3 }')" -gt 2000000 -a "$(echo "$c" | awk '$1 == 2 { print $2 }')" = 0
	# srff counts skbs: 2 MB is at least 31 GSO skbs of 64 KB.
	check "top_port_pkts counted ($(stat top_port_pkts) skbs)" test "$(stat top_port_pkts)" -ge 31
	check "top-port flows are not tracked" test "$(srffctl -j flows port 5555 | jq length)" = 0
	;;
udp)
	cnt() { wait_drained "$SND" veth0
		class_counters "$SND" veth0 | awk -v b=$1 '$1 == b { print $2 }'; }
	run srffctl set udp top || fail "udp top"
	a=$(cnt 0)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6100 50 1000 || fail
	check "udp top: 50 datagrams of 1 KB all in band 0" test $(( $(cnt 0) - a )) = 50
	run srffctl set udp ignore || fail "udp ignore"
	a=$(cnt 1); i=$(stat ignored_pkts)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6101 50 1000 || fail
	check "udp ignore: priority left at 0 (band 1)" test $(( $(cnt 1) - a )) = 50
	check "  and counted as ignored" test $(( $(stat ignored_pkts) - i )) = 50
	run srffctl set udp track || fail "udp track"
	a=$(cnt 2)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6102 50 1000 || fail
	check "udp track: datagrams past 5000 bytes in band 2 (45)" test $(( $(cnt 2) - a )) = 45
	;;
apprio)
	cnt() { wait_drained "$SND" veth0
		class_counters "$SND" veth0 | awk -v b=$1 '$1 == b { print $2 }'; }
	check "app priority override by default" test "$(srffctl -j show | jq -r .app_priority)" = override
	# SO_PRIORITY 1 is prio band 2; srff's first band, priority 6, band 0.
	# 10 x 128 bytes: all before srff's first threshold, 1500.
	a0=$(cnt 0)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6201 10 100 --priority 1 || fail
	check "override: srff's band 0 for 10 datagrams with SO_PRIORITY 1" test $(( $(cnt 0) - a0 )) = 10
	run srffctl set app-priority keep || fail "keep"
	a0=$(cnt 0); a2=$(cnt 2); i=$(stat ignored_pkts)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6200 20 100 --priority 1 || fail
	check "keep: 20 datagrams with SO_PRIORITY 1 stay in band 2" test $(( $(cnt 2) - a2 )) = 20
	check "  none moved to band 0" test $(( $(cnt 0) - a0 )) = 0
	check "  counted as ignored" test $(( $(stat ignored_pkts) - i )) = 20
	;;
idlereset)
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	b0() { srffctl -j stats | jq '.bands[0].pkts'; }
	# Three 20 KB responses 1 s apart on one connection.
	a=$(b0)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-responses $RCV_IP4 5001 3 20000 1 || fail
	off=$(( $(b0) - a ))
	run srffctl set idle-reset 300ms || fail "idle-reset"
	a=$(b0)
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-responses $RCV_IP4 5001 3 20000 1 || fail
	on=$(( $(b0) - a ))
	log "band-0 skbs: $off without idle reset, $on with"
	# Segments with no data go to band 0 whatever the count: SYN, the
	# handshake's ACK, the FIN (unless it rides on the last data) and the
	# ACK of the sink's FIN. Data only while the count is under 1500.
	check "without idle reset only the first response starts in band 0 (<= 5 skbs: SYN, ACK, data, FIN, ACK)" test "$off" -le 5
	check "with idle reset each of the 3 responses does (>= 6 skbs)" test "$on" -ge 6
	;;
params)
	# Module parameters read sizes and durations as srffctl does.
	srff_load thresholds=16k,1m priorities=6,0,2 idle_reset_ms=0.1s \
		idle_timeout_ms=2.5s gc_interval_ms=1s max_flows=16k
	c=$(srffctl -j show)
	log "$c"
	check "thresholds=16k,1m: 16384 and 1048576, fixed" \
		test "$(echo "$c" | jq -c '[.thresholds, .auto_thresholds]')" = '[[16384,1048576],false]'
	check "idle_reset_ms=0.1s: 100 ms" test "$(echo "$c" | jq .idle_reset_ms)" = 100
	check "idle_timeout_ms=2.5s, gc_interval_ms=1s: 2500 and 1000 ms" \
		test "$(echo "$c" | jq -c '[.idle_timeout_ms, .gc_interval_ms]')" = '[2500,1000]'
	check "max_flows=16k: 16384" test "$(echo "$c" | jq .max_flows)" = 16384
	check "sysfs shows the values in bytes" \
		test "$(cat /sys/module/srff/parameters/thresholds)" = 16384,1048576
	# What srffctl save writes, the module reads back the same.
	t=$(srffctl save | awk '$1 == "thresholds" { $1 = ""; print }' | xargs | tr ' ' ',')
	r=$(srffctl save | awk '$1 == "idle-reset" { print $2 }')
	srff_load idle_reset_ms=off thresholds=1536,0.5m
	check "idle_reset_ms=off: 0, thresholds=1536,0.5m: 1536 524288" \
		test "$(srffctl -j show | jq -c '[.idle_reset_ms, .thresholds]')" = '[0,[1536,524288]]'
	srff_load thresholds="$t" idle_reset_ms="$r"
	check "srffctl save's 'thresholds $t' and 'idle-reset $r' as parameters: the same" \
		test "$(srffctl -j show | jq -c '[.thresholds, .idle_reset_ms]')" = '[[16384,1048576],100]'
	srff_unload
	for bad in thresholds=1.1k thresholds=16k,lots idle_reset_ms=2S idle_timeout_ms=5d \
		max_flows=5g gc_interval_ms=-1; do
		expect_rc 1 "insmod $bad refused" insmod "$SRFF_KO" "$bad"
		check "  and srff is not loaded" test ! -e /sys/module/srff
	done
	;;
trace)
	# The tracepoints srff_flow_create and srff_flow_retire, in SND only
	# (RCV's srff traces too, with its own netns number).
	trace_instance "/run/netns/$SND"
	I=$TRACE_DIR
	ino=$(command stat -L -c %i "/run/netns/$SND")
	run srffctl set gc-interval 100ms idle-timeout 1s || fail "set"
	traced() { grep -E "srff_flow_$1: netns=$ino $2" "$I/trace"; }
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5001 50000 || fail "tcp-send"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 7777 3 100 || fail "udp-send"
	tcp="tcp \[::ffff:$SND_IP4\]:[0-9]+ -> \[::ffff:$RCV_IP4\]:5001 inner=0"
	udp="udp \[::ffff:$SND_IP4\]:[0-9]+ -> \[::ffff:$RCV_IP4\]:7777 inner=0"
	check "created: the TCP flow, once" test "$(traced create "$tcp\$" | wc -l)" = 1
	check "created: the UDP flow, once" test "$(traced create "$udp\$" | wc -l)" = 1
	wait_for 20 traced retire "$tcp .*reason=fin" >/dev/null || fail "the TCP flow never retired"
	line=$(traced retire "$tcp .*reason=fin"); log "$line"
	b=$(sed -E 's/.* bytes=([0-9]+) .*/\1/' <<<"$line")
	check "retired at FIN with its size: $b bytes (50 000 of data and headers)" \
		test "$b" -ge 50000 -a "$b" -lt 56000
	wait_for 20 traced retire "$udp .*reason=idle" >/dev/null || fail "the UDP flow never retired"
	line=$(traced retire "$udp .*reason=idle"); log "$line"
	check "retired idle with its size: 3 x 128 bytes" grep -q " bytes=384 " <<<"$line"
	age=$(sed -E 's/.* age_ms=([0-9]+) .*/\1/' <<<"$line")
	check "  after the 1 s idle timeout: age $age ms" test "$age" -ge 1000 -a "$age" -lt 20000
	# GC must not take the next flows first (the debug kernel is slow).
	run srffctl set idle-timeout 1h || fail "set"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 7778 1 100 || fail "udp-send"
	run srffctl flush || fail "flush"
	check "flush: retired as flushed" traced retire "udp .*:7778 inner=0 bytes=128 .*reason=flushed"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 7779 1 100 || fail "udp-send"
	ip netns del "$SND"	# its srff goes with it
	wait_for 60 traced retire "udp .*:7779 inner=0 bytes=128 .*reason=teardown" >/dev/null
	check "namespace deleted: retired as teardown" traced retire "udp .*:7779 inner=0 bytes=128 .*reason=teardown"
	echo 0 >"$I/events/srff/enable"
	rmdir "$I"
	;;
nomodule)
	srff_unload
	expect_rc 4 "srffctl without the module" "$SRFFCTL" show
	check "  says so plainly" grep -qi "not loaded" <<<"$LAST_OUT"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
exit $ksft_pass
