#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/srff-check.sh: tc-scripts/srff-check's verdicts without a kernel. A
# stub `tc`, `ip` and `srffctl` (first in PATH) serve one scene each: a
# qdisc tree as `tc -j qdisc show` prints it, the VLANs of `ip -d -j link
# show`, and srff's configuration as `srffctl -j show` prints it. Checked,
# per tree: the qdisc verdict and the bands srff's priorities land in (mq
# over prio or fq_codel, mqprio, fq with and without a priomap, ets, tbf and
# htb with and without bands under them, cake, noqueue, an unknown kind, no
# root, a priomap that merges the bands, class ids of 3 and 8 bands), the
# classes verdict (a VLAN egress-qos-map that splits srff's priorities or
# not, a VLAN device with no queue), the exit status, and that -j prints
# one JSON object; the backlog verdict on a sequence of samples (a standing
# queue, a packet in passing, a quarter of the samples, drops).
# tests/kernel/check.sh runs srff-check against a real
# kernel's trees, busy and idle.
# Ends in "srff-check: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
CHECK=${SRFF_CHECK:-$PWD/tc-scripts/srff-check}
pass=0 failed=0
check() {	# check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok - $what"; pass=$((pass + 1))
	else echo "not ok - $what"; failed=$((failed + 1)); fi
}
command -v jq >/dev/null || { echo "srff-check: 0 passed, 0 failed (no jq: skipped)"; exit 0; }

T=$(mktemp -d /tmp/srff-check-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin"
export SCENE=$T/scene SRFFCTL=$T/bin/srffctl PATH=$T/bin:$PATH
cat >"$T/bin/tc" <<'EOF'
#!/bin/sh
case "$*" in
"class show dev "*) cat "$SCENE/class.txt" 2>/dev/null ;;
"-s -j qdisc show dev "*)
	# The backlog's samples: seq/N.json for the Nth, else seq/rest.json.
	if [ -d "$SCENE/seq" ]; then
		n=$(($(cat "$SCENE/n" 2>/dev/null || echo 0) + 1)); echo "$n" >"$SCENE/n"
		if [ -e "$SCENE/seq/$n.json" ]; then cat "$SCENE/seq/$n.json"; else cat "$SCENE/seq/rest.json"; fi
	else
		cat "$SCENE/qdisc.json"
	fi ;;
*) cat "$SCENE/qdisc.json" ;;
esac
EOF
cat >"$T/bin/ip" <<'EOF'
#!/bin/sh
case "$*" in
"-d -j link show") cat "$SCENE/links.json" ;;
"link show dev eth9") echo "2: eth9: <BROADCAST,UP> mtu 1500" ;;
"link show dev "*) echo "Device does not exist." >&2; exit 1 ;;
*) echo '[]' ;;
esac
EOF
cat >"$T/bin/srffctl" <<'EOF'
#!/bin/sh
cat "$SCENE/show.json"
EOF
chmod +x "$T/bin/"*

PRIOMAP='[1,2,2,2,1,2,0,0,1,1,1,1,1,1,1,1]'
SHOW3='{"thresholds":[16384,131072],"priorities":[6,0,2],"auto_thresholds":true,"app_priority":"override"}'

# scene QDISC-JSON [SHOW-JSON [LINKS-JSON]]: what the stubs print next.
scene() {
	rm -rf "$SCENE"; mkdir -p "$SCENE"
	echo "$1" >"$SCENE/qdisc.json"
	echo "${2:-$SHOW3}" >"$SCENE/show.json"
	echo "${3:-[]}" >"$SCENE/links.json"
	OUT=
}
# verdict NAME ITEM STATUS TEXT: srff-check -j on eth9 gives ITEM STATUS,
# and its why (or fix) says TEXT (srff-check runs once per scene).
verdict() {
	local name=$1 item=$2 want=$3 text=$4 out got
	[ -n "$OUT" ] || OUT=$("$CHECK" -j -s 0.1 eth9 2>"$T/err")
	out=$OUT
	got=$(jq -r --arg i "$item" '.devices.eth9[$i].status' <<<"$out")
	check "$name: $item $want (got $got)" test "$got" = "$want"
	check "$name: $item says '$text'" grep -qF -- "$text" \
		<<<"$(jq -r --arg i "$item" '.devices.eth9[$i] | .why + " / " + (.fix // "")' <<<"$out")"
	check "$name: nothing on stderr" test ! -s "$T/err"
}

# The backlog over 1 s (11 samples) of an ets root: SAMPLE N QLEN BACKLOG
# DROPS, the Nth sample (rest: every other one).
ETS_ROOT='"kind":"ets","handle":"10:","root":true,"options":{"bands":3,"strict":1,"priomap":[1,2,2,2,1,2,0,1,1,1,1,1,1,1,1,1]}'
sample() {
	mkdir -p "$SCENE/seq"
	echo "[{$ETS_ROOT,\"qlen\":$2,\"backlog\":$3,\"drops\":$4,\"requeues\":0}]" >"$SCENE/seq/$1.json"
}
backlog_verdict() {	# NAME STATUS TEXT: srff-check -s 1 on eth9's samples
	local out got
	out=$("$CHECK" -j -s 1 eth9 2>/dev/null)
	got=$(jq -r '.devices.eth9.backlog.status' <<<"$out")
	check "$1: backlog $2 (got $got)" test "$got" = "$2"
	check "$1: backlog says '$3'" grep -qF -- "$3" <<<"$(jq -r '.devices.eth9.backlog.why' <<<"$out")"
}
ETS="[{$ETS_ROOT}]"
scene "$ETS"; sample rest 5 7570 0
backlog_verdict "a standing queue" ok "packets waited in 11 of 11 samples, up to 5 packets (7570 bytes)"
scene "$ETS"; sample rest 0 0 0; sample 4 1 1514 0
backlog_verdict "one packet in passing" warn "the qdisc was empty in 10 of 11 samples"
scene "$ETS"; sample rest 0 0 0; sample 3 2 3028 0; sample 7 1 0 0
backlog_verdict "packets in 2 of 11 samples" warn "the qdisc was empty in 9 of 11 samples"
scene "$ETS"; sample rest 0 0 0; for i in 2 4 6; do sample $i 1 1514 0; done
backlog_verdict "packets in 3 of 11 samples: a quarter" ok "packets waited in 3 of 11 samples"
scene "$ETS"; sample rest 0 0 9
sample 1 0 0 0
backlog_verdict "drops while it is watched" ok "9 drops"

scene '[{"kind":"mq","handle":"1:","root":true,"options":{}},
	{"kind":"prio","handle":"8001:","parent":"1:1","options":{"bands":3,"priomap":'"$PRIOMAP"'}},
	{"kind":"prio","handle":"8002:","parent":"1:2","options":{"bands":3,"priomap":'"$PRIOMAP"'}}]'
verdict "mq over prio" qdisc ok "mq at the root, prio under each of 2 TX queues"
verdict "mq over prio" qdisc ok "land in bands 0,1,2"

scene '[{"kind":"mq","handle":"0:","root":true,"options":{}},
	{"kind":"fq_codel","handle":"0:","parent":":1","options":{}},
	{"kind":"fq_codel","handle":"0:","parent":":2","options":{}}]'
verdict "mq over fq_codel" qdisc fail "2 of 2 TX queues have a qdisc that ignores skb->priority (fq_codel)"
verdict "mq over fq_codel" qdisc fail "install mq eth9"

scene '[{"kind":"mqprio","handle":"8001:","root":true,"options":{"tc":3,"map":'"$PRIOMAP"'}}]'
verdict mqprio qdisc ok "land in traffic classes 0,1,2"
verdict mqprio classes ok "mqprio sends srff's priorities 6,0,2 to traffic classes 0,1,2"

scene '[{"kind":"fq","handle":"8001:","root":true,"options":{"priomap":'"$PRIOMAP"'}}]'
verdict "fq with a priomap" qdisc ok "weights 9:3:1 by default"

scene '[{"kind":"ets","handle":"10:","root":true,"options":{"bands":3,"strict":1,"priomap":[1,2,2,2,1,2,0,1,1,1,1,1,1,1,1,1]}}]'
verdict ets qdisc ok "root ets 10: picks a band by skb->priority; srff's priorities 6,0,2 land in bands 0,1,2"

scene '[{"kind":"tbf","handle":"1:","root":true,"options":{"rate":1250000}},
	{"kind":"prio","handle":"10:","parent":"1:1","options":{"bands":3,"priomap":'"$PRIOMAP"'}}]'
verdict "tbf over prio" qdisc ok "root tbf 1: with prio 10: under it"

scene '[{"kind":"tbf","handle":"1:","root":true,"options":{"rate":1250000}}]'
verdict "tbf alone" qdisc fail "install shaped-ets eth9 10000kbit (the same rate, ets under it)"

scene '[{"kind":"htb","handle":"1:","root":true,"options":{}},
	{"kind":"fq_codel","handle":"20:","parent":"1:10","options":{}},
	{"kind":"sfq","handle":"30:","parent":"1:20","options":{}}]'
verdict "htb over fq_codel and sfq" qdisc fail "root htb 1: with fq_codel/sfq under it picks no band"

# shaped-htb: htb 10: steered by class id, its classes in htb prio order.
HTBQ='[{"kind":"htb","handle":"10:","root":true,"options":{"r2q":10,"default":"0x2","direct_packets_stat":0,"direct_qlen":1000}},
	{"kind":"fq_codel","handle":"101:","parent":"10:1","options":{}},
	{"kind":"fq_codel","handle":"102:","parent":"10:2","options":{}},
	{"kind":"fq_codel","handle":"103:","parent":"10:3","options":{}}]'
SHOWC='{"thresholds":[16384,131072],"classid_major":16,"priorities":["10:1","10:2","10:3"],"auto_thresholds":true,"app_priority":"override"}'
htb_classes() {	# htb_classes PRIO1 PRIO2 PRIO3: classes 10:1-10:3 at those htb prios
	printf '%s\n' "class htb 10:100 root rate 20Mbit ceil 20Mbit burst 256Kb cburst 256Kb " \
		"class htb 10:1 parent 10:100 leaf 101: prio $1 rate 666Kbit ceil 20Mbit burst 1599b cburst 256Kb " \
		"class htb 10:2 parent 10:100 leaf 102: prio $2 rate 666Kbit ceil 20Mbit burst 1599b cburst 256Kb " \
		"class htb 10:3 parent 10:100 leaf 103: prio $3 rate 666Kbit ceil 20Mbit burst 1599b cburst 256Kb " >"$SCENE/class.txt"
}
scene "$HTBQ" "$SHOWC"; htb_classes 0 1 2
verdict "htb by class id" qdisc ok "root htb 10: (its classes by class id, in htb prio order) picks a band by skb->priority; srff's class ids 10:1..3 land in bands 0,1,2"
scene "$HTBQ" "$SHOWC"; htb_classes 2 1 0
verdict "htb, prios upside down" qdisc warn "land in bands 2,1,0: some of srff's bands share one, or a later one ranks higher"
scene "$HTBQ"; htb_classes 0 1 2
verdict "htb, srff's priorities 6/0/2: no class id" qdisc fail "root htb 10: with fq_codel under it picks no band"

scene '[{"kind":"cake","handle":"8001:","root":true,"options":{}}]'
verdict cake qdisc fail "srffctl set classid 8001:"

scene '[{"kind":"fq_codel","handle":"0:","root":true,"options":{}}]'
verdict fq_codel qdisc fail "root fq_codel 0: picks no band by skb->priority"
verdict fq_codel qdisc fail "install eth9 (it picks ets: one TX queue"

scene '[{"kind":"weird","handle":"1:","root":true,"options":{}}]'
verdict "an unknown kind" qdisc warn "does not know whether it picks a band"

scene '[]'
verdict "no root" qdisc warn "tc shows no root qdisc on eth9"
verdict "no root" backlog warn "no queue here"

scene '[{"kind":"prio","handle":"10:","root":true,"options":{"bands":3,"priomap":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}}]'
verdict "a priomap that merges" qdisc fail "land in bands 1,1,1: all in one"

scene '[{"kind":"prio","handle":"10:","root":true,"options":{"bands":3,"priomap":'"$PRIOMAP"'}}]' \
	'{"thresholds":[16384,131072],"classid_major":16,"priorities":["10:1","10:2","10:3"],"auto_thresholds":false,"app_priority":"keep"}'
verdict "class ids 10:1..3" qdisc ok "srff's class ids 10:1..3 land in bands 0,1,2"
out=$OUT
check "class ids: srff's item says fixed and keep" grep -q "(fixed), priorities class ids 10:1..3, app-priority keep" \
	<<<"$(jq -r .host.srff.why <<<"$out")"

# srff loaded, but off in this namespace (module parameter netns=ask).
scene '[{"kind":"prio","handle":"10:","root":true,"options":{"bands":3,"priomap":'"$PRIOMAP"'}}]' \
	'{"thresholds":[16384,131072],"priorities":[6,0,2],"auto_thresholds":true,"app_priority":"override","enabled":false}'
out=$("$CHECK" -j -s 0.1 eth9 2>"$T/err")
check "disabled here: srff fails" test "$(jq -r .host.srff.status <<<"$out")" = fail
check "disabled here: says off in this namespace, and how to turn it on" grep -q "off in this network namespace.*/ srffctl set enabled on" \
	<<<"$(jq -r '.host.srff | .why + " / " + .fix' <<<"$out")"
scene '[{"kind":"prio","handle":"10:","root":true,"options":{"bands":3,"priomap":'"$PRIOMAP"'}}]' \
	'{"thresholds":[16384,131072],"priorities":[6,0,2],"auto_thresholds":true,"app_priority":"override","enabled":true}'
out=$("$CHECK" -j -s 0.1 eth9 2>"$T/err")
check "enabled here: srff ok" test "$(jq -r .host.srff.status <<<"$out")" = ok

scene '[{"kind":"prio","handle":"10:","root":true,"options":{"bands":8,"priomap":'"$PRIOMAP"'}}]' \
	'{"thresholds":[1,2,3,4,5,6,7],"classid_major":16,"priorities":[1048577,1048578,1048579,1048580,1048581,1048582,1048583,1048584],"auto_thresholds":true,"app_priority":"override"}'
verdict "8 bands by class id" qdisc ok "land in bands 0,1,2,3,4,5,6,7"

# A VLAN whose map splits srff's priorities, one that maps them to one PCP.
scene '[{"kind":"prio","handle":"10:","root":true,"options":{"bands":3,"priomap":'"$PRIOMAP"'}}]' "$SHOW3" \
	'[{"ifname":"eth9.5","link":"eth9","linkinfo":{"info_kind":"vlan","info_data":{"id":5,"egress_qos":[{"from":6,"to":5},{"from":0,"to":1}]}}},
	  {"ifname":"eth9.7","link":"eth9","linkinfo":{"info_kind":"vlan","info_data":{"id":7,"egress_qos":[{"from":6,"to":3},{"from":0,"to":3},{"from":2,"to":3}]}}},
	  {"ifname":"eth8.5","link":"eth8","linkinfo":{"info_kind":"vlan","info_data":{"id":5,"egress_qos":[{"from":6,"to":7}]}}}]'
verdict "VLANs" classes warn "VLAN eth9.5 egress-qos-map 6:5 0:1 sends srff's priorities 6,0,2 to 802.1p PCP 5,1,0"
verdict "VLANs" classes warn "VLAN eth9.7 has egress-qos-map 6:3 0:3 2:3, and app-priority override"
out=$OUT
check "VLANs: another device's VLAN is not named" grep -vq eth8.5 <<<"$(jq -r .devices.eth9.classes.why <<<"$out")"

# eth9 itself a VLAN over eth1, with no queue of its own.
scene '[{"kind":"noqueue","handle":"0:","root":true,"options":{}}]' "$SHOW3" \
	'[{"ifname":"eth9","link":"eth1","linkinfo":{"info_kind":"vlan","info_data":{"id":5,"egress_qos":[]}}}]'
verdict "a VLAN device" qdisc warn "eth9 is a VLAN with no queue of its own: its packets queue on eth1"

scene '[{"kind":"noqueue","handle":"0:","root":true,"options":{}}]'
verdict noqueue qdisc fail "give it a queue: "

# The JSON, the text and the exit status agree.
scene '[{"kind":"prio","handle":"10:","root":true,"options":{"bands":3,"priomap":'"$PRIOMAP"'}}]'
out=$("$CHECK" -j -s 0.1 eth9); rc=$?
check "-j: one JSON object, status warn (an idle device)" test "$(jq -r .status <<<"$out")" = warn
check "-j: exit 1 with a warning (exit $rc)" test "$rc" = 1
check "-j: every item has status, why and fix" \
	jq -e '[.host[], .devices[][]] | length == 6 and all(has("status") and has("why") and has("fix"))' <<<"$out" >/dev/null
out=$("$CHECK" -s 0.1 eth9); rc=$?
check "text: exit 1 too (exit $rc)" test "$rc" = 1
check "text: a summary line" grep -qx "srff-check: warn (0 fail, 1 warn)" <<<"$out"
check "text: an ok line for the qdisc" grep -qE '^  ok +qdisc +root prio 10:' <<<"$out"
out=$("$CHECK" -j nosuchdev 2>&1); rc=$?
check "an unknown device: exit 2 (exit $rc)" test "$rc" = 2
check "and says which" grep -q "no network device 'nosuchdev'" <<<"$out"

echo "srff-check: $pass passed, $failed failed"
[ "$failed" = 0 ]
