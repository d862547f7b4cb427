#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh: tc-scripts/srff-check gives the verdict each setup deserves.
#
#   SND: veth0 10.77.0.1 ----------- RCV: veth1 10.77.0.2
#        [veth0.5, VLAN 5, egress-qos-map 6:5]   (verdicts, for a while)
#
#   check.sh verdicts  fq_codel root: qdisc fail; srff-qdisc install prio:
#                      qdisc ok; idle and unshaped: backlog warn "no queue
#                      here"; a VLAN whose egress-qos-map splits srff's
#                      priorities: classes warn; srff unloaded: srff fail;
#                      -j parses; an unknown device exits 2
#   check.sh backlog   srff-qdisc install shaped veth0 10mbit and a bulk TCP
#                      transfer: backlog ok, everything ok, exit 0
# SC2317: helpers run through check and wait_for; SC2119: srff_load's
# arguments are module parameters, not this script's.
# shellcheck disable=SC2317,SC2119 source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

CHECK=$TOP/tc-scripts/srff-check
Q=$TOP/tc-scripts/srff-qdisc
export SRFFCTL
SRFF_QDISC_STATE=$(mktemp -d)
export SRFF_QDISC_STATE
PAIR_IPV4_ONLY=1
command -v jq >/dev/null || skip "no jq"

# chk ARGS...: srff-check in SND, with Debian's jq, the one its package
# depends on (SRFF_JQ_PATH: tests/run-guest.sh); its output in OUT, its exit
# status in RC.
chk() {
	printf '# + srff-check %s\n' "$*"
	OUT=$(PATH=${SRFF_JQ_PATH:-$PATH} ip netns exec "$SND" "$CHECK" "$@" 2>&1); RC=$?
}
# val JQ: one value of the JSON in OUT.
val() { jq -r "$1" <<<"$OUT"; }
# expect JQ WANT: a value of the JSON in OUT is WANT (the item's why is shown).
expect() {
	local got
	got=$(val "$1")
	check "$1 = $2 (got $got: $(val "${1%.status}.why"))" test "$got" = "$2"
}
# why_has ITEM-PATH TEXT: the item's why says TEXT.
why_has() {
	check "$1.why says '$2'" grep -qF -- "$2" <<<"$(val "$1.why")"
}
is_json() { jq -e . <<<"$OUT" >/dev/null; }

verdicts() {
	setup_pair
	srff_load

	# Debian's default qdisc (veth's own default is noqueue).
	tc -n "$SND" qdisc replace dev veth0 root fq_codel
	chk -j -s 1 veth0
	check "-j prints one JSON object" is_json
	check "exit 1 with a failed item (exit $RC)" test "$RC" = 1
	expect .status fail
	expect .host.srff.status ok
	why_has .host.srff "thresholds 16384,131072 bytes (learnt from finished flows)"
	expect .devices.veth0.qdisc.status fail
	why_has .devices.veth0.qdisc "fq_codel"
	why_has .devices.veth0.qdisc "picks no band by skb->priority"
	# veth0 has one TX queue: `install veth0` picks ets, and says so.
	check "the fix names srff-qdisc install veth0 and its pick" \
		grep -q "srff-qdisc install veth0 (it picks ets: one TX queue" <<<"$(val .devices.veth0.qdisc.fix)"
	for item in qdisc backlog multiqueue classes; do
		check "item $item has a status" grep -qxE 'ok|warn|fail' <<<"$(val ".devices.veth0.$item.status")"
	done

	# The text form says the same, one verdict line per item.
	chk -s 0.5 veth0
	printf '#   %s\n' "$OUT"
	check "text: a fail line for the qdisc" grep -qE '^  fail +qdisc +root fq_codel' <<<"$OUT"
	check "text: a summary line" grep -qE '^srff-check: fail \([0-9]+ fail, [0-9]+ warn\)$' <<<"$OUT"

	run ip netns exec "$SND" "$Q" install prio veth0 >/dev/null || fail "srff-qdisc install prio"
	chk -j -s 1 veth0
	expect .devices.veth0.qdisc.status ok
	why_has .devices.veth0.qdisc "priorities 6,0,2 land in bands 0,1,2"
	# Unshaped and idle: the qdisc never holds a packet.
	expect .devices.veth0.backlog.status warn
	why_has .devices.veth0.backlog "no queue here"
	expect .devices.veth0.classes.status ok
	check "exit 1 with a warning (exit $RC)" test "$RC" = 1

	# srff's priorities 6 and 0/2 leave with different 802.1p PCPs.
	ip -n "$SND" link add link veth0 name veth0.5 type vlan id 5 egress-qos-map 6:5 ||
		skip "no 8021q"
	ip -n "$SND" link set veth0.5 up
	# Both devices in one run (each run of srff-check is seconds of
	# emulated CPU): each gets its own items.
	chk -j -s 0.5 veth0 veth0.5
	expect .devices.veth0.classes.status warn
	why_has .devices.veth0.classes "PCP 5,0,0"
	check "the fix says app-priority keep" grep -q "app-priority keep" <<<"$(val .devices.veth0.classes.fix)"
	expect '.devices["veth0.5"].classes.status' warn
	expect '.devices["veth0.5"].qdisc.status' warn
	why_has '.devices["veth0.5"].qdisc' "queue on veth0"
	# With a map that sends them all to one PCP and app-priority keep: ok.
	ip -n "$SND" link set veth0.5 type vlan egress-qos-map 6:3 0:3 2:3
	SRFF_NS=$SND
	run srffctl set app-priority keep || fail "srffctl set app-priority keep"
	chk -j -s 0.5 veth0
	expect .devices.veth0.classes.status ok
	why_has .devices.veth0.classes "PCP 3"
	ip -n "$SND" link del veth0.5

	# No device named: SND has no default route, so every UP device but lo.
	chk -j -s 0.2
	check "default devices: veth0 only ($(val '.devices | keys | join(" ")'))" \
		test "$(val '.devices | keys | join(" ")')" = veth0

	# Unknown device: usage, exit 2, nothing else printed.
	chk -j nosuchdev
	check "unknown device exits 2 (exit $RC: $OUT)" test "$RC" = 2
	check "and says which" grep -q "no network device 'nosuchdev'" <<<"$OUT"
	chk --bogus
	check "unknown option exits 2 (exit $RC)" test "$RC" = 2

	srff_unload || fail "rmmod srff"
	chk -j -s 0.2 veth0
	expect .host.srff.status fail
	why_has .host.srff "not loaded"
	check "the fix says how to load it" grep -q "insmod" <<<"$(val .host.srff.fix)"
	# Without the module, the device checks assume srff's defaults.
	expect .devices.veth0.qdisc.status ok
	why_has .devices.veth0.qdisc "srff's default priorities 6,0,2"
}

root_backlog() {
	[ "$(tc -n "$SND" -s -j qdisc show dev veth0 | jq '[.[] | .qlen // 0] | max')" -gt 0 ]
}

backlog() {
	setup_pair
	srff_load
	run ip netns exec "$SND" "$Q" install shaped veth0 10mbit >/dev/null ||
		fail "srff-qdisc install shaped"
	ip netns exec "$RCV" "$PY" "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 10 ip netns exec "$RCV" sh -c 'ss -Hltn sport = :5001 | grep -q .' ||
		fail "the sink did not listen"
	ip netns exec "$SND" "$PY" "$TOOLS/traffic.py" tcp-send "$RCV_IP4" 5001 1000000000 & BG_PIDS+=($!)
	wait_for 20 root_backlog || fail "no backlog formed under tbf 10mbit"

	chk -j -s 2 veth0
	check "-j prints one JSON object" is_json
	expect .devices.veth0.backlog.status ok
	why_has .devices.veth0.backlog "a queue forms here"
	expect .devices.veth0.qdisc.status ok
	why_has .devices.veth0.qdisc "tbf 1: with prio 10: under it"
	expect .host.srff.status ok
	expect .status ok
	check "exit 0 when every item is ok (exit $RC)" test "$RC" = 0
	kill_bg
}

case ${1:-} in
verdicts) verdicts ;;
backlog) backlog ;;
*) fail "usage: check.sh verdicts|backlog" ;;
esac
rm -rf "$SRFF_QDISC_STATE"
exit "$ksft_pass"
