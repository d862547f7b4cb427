#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/srff-qdisc.sh: tc-scripts/srff-qdisc's logic without a kernel. A
# stub `tc` and `ip` (first in PATH) log every command and serve fixed trees
# (`tc qdisc show` and `tc class show` text, as iproute2 6.1 prints it), and
# a fake /sys/class/net (SRFF_QDISC_SYSFS) gives the device its MTU and TX
# queues. Checked: --help and usage errors; the tc commands of the setups
# (--dry-run); the multiqueue guard (exit 4, --force); the rollback of a
# failed install (the snapshot re-created, parents first; exit 3 for a
# missing qdisc kind); how a saved tree is rebuilt on revert (htb classes,
# tbf, mqprio, kernel defaults); a change failing in the middle of the
# install's one tc -batch, or tc leaving it without saying where (rolled
# back), and a device name the batch cannot take; that --dry-run prints
# what the install runs; how many processes an install, a revert and a dry
# run start (and, where strace runs, fork); -n NETNS and where the state
# goes; revert with no save; a save by the older srff-qdisc. What the
# kernel makes of the commands is tests/kernel/tc_scripts.sh's and
# qdisc_tree.sh's job.
# Ends in "srff-qdisc: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
Q=${SRFF_QDISC:-$PWD/tc-scripts/srff-qdisc}	# another one to test it
pass=0 failed=0
check() {	# check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok - $what"; pass=$((pass + 1))
	else echo "not ok - $what"; failed=$((failed + 1)); fi
}
has() {		# has TEXT STRING...: TEXT has every STRING
	local text=$1 s; shift
	for s in "$@"; do grep -q -F -- "$s" <<<"$text" || return 1; done
}
same() {	# same DESCRIPTION WANT GOT: equal, else show both
	if [ "$2" = "$3" ]; then check "$1" true; return; fi
	check "$1" false
	diff <(echo "$2") <(echo "$3") | sed 's/^/#   /'
}

T=$(mktemp -d /tmp/srff-qdisc-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/tree"
export FAKE=$T SRFF_QDISC_SYSFS=$T/sys SRFF_QDISC_STATE=$T/state
export PATH=$T/bin:$PATH

# fake_dev DEV TXQUEUES: a device with MTU 1500.
fake_dev() {
	mkdir -p "$T/sys/$1/queues"
	echo 1500 >"$T/sys/$1/mtu"
	local i
	for ((i = 0; i < $2; i++)); do mkdir -p "$T/sys/$1/queues/tx-$i"; done
}

# The stub tc. The device's tree is $T/tree/{qdisc,class}.CUR, CUR in
# $T/tree/cur: "a" before any change; a change makes it "b" (what an
# install leaves), deleting the root makes it "a" again for good (the
# rollback or revert re-creating "a"; the next run starts afresh). Every
# command that changes something is logged to $T/log; one matching
# $FAKE_FAIL fails as the kernel fails for an unknown qdisc kind; at one
# matching $FAKE_DIE tc exits 255 then and there, as a parser's exit()
# does. `tc [-force] -batch -` runs the commands of its stdin in turn as tc
# does: a failed one says "Command failed -:LINE" and ends the batch
# (-force: goes on), exit 1, and its lines are kept, "; " between them,
# as a line of $T/batches. Every run of the stub is counted in $T/procs
# (one process, as tc is: the stubs are bash alone, no other command).
cat >"$T/bin/tc" <<'EOF'
#!/bin/bash
echo "tc $*" >>"$FAKE/procs"
cur=a
[ -e "$FAKE/tree/cur" ] && read -r cur <"$FAKE/tree/cur"
out() { local l; while IFS= read -r l || [ -n "$l" ]; do printf '%s\n' "$l"; done <"$1"; }
one() {
	case "$*" in
	-V) echo "tc utility, iproute2-6.1.0 (stub)"; return 0 ;;
	"qdisc add dev lo root fq help") [ -z "${FAKE_FQ_BANDS:-}" ] || echo "[ bands 3 priomap P0 P1 ... ]"; return 1 ;;
	qdisc\ show\ dev\ *\ root)	# the root qdisc, with its continuation
		local l on= all=	# lines, in one write as tc's stdio does
		while IFS= read -r l || [ -n "$l" ]; do
			case $l in
			"qdisc "*" root"*) on=1 ;;
			"qdisc "*) [ -z "$on" ] || break ;;
			esac
			[ -z "$on" ] || all+=$l$'\n'
		done <"$FAKE/tree/qdisc.$cur"
		printf '%s' "$all"
		return 0 ;;
	qdisc\ show*) [ ! -e "$FAKE/tree/qdisc.$cur" ] || out "$FAKE/tree/qdisc.$cur"; return 0 ;;
	class\ show*) [ ! -e "$FAKE/tree/class.$cur" ] || out "$FAKE/tree/class.$cur"; return 0 ;;
	filter\ show*) [ ! -e "$FAKE/tree/filter.$cur" ] || out "$FAKE/tree/filter.$cur"; return 0 ;;
	esac
	if [ -n "${FAKE_DIE:-}" ] && [[ "$*" == *$FAKE_DIE* ]]; then
		echo "stub tc: exits at: $*" >&2
		exit 255
	fi
	echo "$*" >>"$FAKE/log"
	if [ -n "${FAKE_FAIL:-}" ] && [[ "$*" == *$FAKE_FAIL* ]]; then
		echo "Error: Specified qdisc kind is unknown." >&2
		return 2
	fi
	case "$*" in
	"qdisc del dev "*" root") cur=a; echo a >"$FAKE/tree/cur"; : >"$FAKE/tree/restoring" ;;
	*) [ -e "$FAKE/tree/restoring" ] || { cur=b; echo b >"$FAKE/tree/cur"; } ;;
	esac
	return 0
}
force=
while :; do
	case ${1:-} in
	-s) shift ;;
	-force) force=1; shift ;;
	*) break ;;
	esac
done
[ "${1:-}" = -batch ] || { one "$@"; exit; }
[ "${2:-}" = - ] || { echo "stub tc: -batch: only - (stdin)" >&2; exit 1; }
n=0 rc=0 all=
while IFS= read -r line; do
	n=$((n + 1))
	all+="${all:+; }$line"
	read -ra words <<<"$line"
	[ ${#words[@]} -gt 0 ] || continue
	one "${words[@]}" && continue
	echo "Command failed -:$n" >&2
	rc=1
	[ -n "$force" ] || break
done
echo "$all" >>"$FAKE/batches"
exit $rc
EOF
# The stub ip: devices are the fake sysfs's; namespaces exist if listed in
# $T/netns; `ip netns exec NS CMD` runs CMD with FAKE_NETNS=NS, which
# `ip netns identify` prints.
cat >"$T/bin/ip" <<'EOF'
#!/bin/bash
echo "ip $*" >>"$FAKE/procs"
case "$1 $2" in
"link show") [ -d "$SRFF_QDISC_SYSFS/$4" ] ;;
"netns identify") [ -z "${FAKE_NETNS:-}" ] || echo "$FAKE_NETNS" ;;
"netns exec")
	while read -r ns; do [ "$ns" != "$3" ] || break; done <"$FAKE/netns"
	[ "$ns" = "$3" ] || { echo "Cannot open network namespace \"$3\"" >&2; exit 1; }
	FAKE_NETNS=$3; export FAKE_NETNS; shift 3; exec "$@" ;;
*) echo "stub ip: $*" >&2; exit 1 ;;
esac
EOF
chmod +x "$T/bin/tc" "$T/bin/ip"
echo web >"$T/netns"

# tree NAME QDISC-LINES [CLASS-LINES]: the fixture NAME ("a" or "b").
tree() { printf '%s\n' "$2" >"$T/tree/qdisc.$1"; printf '%s' "${3:-}" >"$T/tree/class.$1"; }
reset() { rm -rf "$T/state" "$T/log" "$T/tree"/*; : >"$T/log"; : >"$T/batches"; echo a >"$T/tree/cur"; }
# Each run of srff-qdisc starts from the tree as it is, not restoring.
Q0=$Q
q() { rm -f "$T/tree/restoring"; "$Q0" "$@"; }
log() { cat "$T/log"; }

FQ_CODEL0="qdisc fq_codel 0: root refcnt 2 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 "
fake_dev v0 1
fake_dev m0 4

# --- help and usage ---------------------------------------------------------
out=$(q --help 2>/dev/null); rc=$?
check "--help: exit 0 ($rc), usage on stdout" test "$rc" = 0 -a -n "$out"
check "  it lists the setups and options" grep -q -- "install prio-fq DEV" <<<"$out"
check "  and -n, --force, exit 4" has "$out" "-n, --netns NETNS" "--force" "4 refused"
out=$(q -h 2>&1 >/dev/null); rc=$?
check "-h: exit 0 ($rc), nothing on stderr" test "$rc" = 0 -a -z "$out"
for bad in "" "--bogus" "frobnicate v0" "install" "install fair v0" "install prio v0 40" \
	"install shaped v0 fast" "install shaped v0 0mbit" "install shaped-prio-fq v0" \
	"install mqprio v0 3" "install prio nosuchdev" "show" "-n" "-n nosuchns show v0"; do
	# shellcheck disable=SC2086
	out=$(q $bad 2>"$T/err"); rc=$?
	check "usage error '$bad': exit 2 ($rc), on stderr: $(head -n1 "$T/err")" \
		test "$rc" = 2 -a -z "$out" -a -s "$T/err"
done

# --- the setups' commands (--dry-run) ---------------------------------------
reset
tree a "$FQ_CODEL0"
MAP="1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1"
dry() { q --dry-run install "$@" 2>&1; }
same "dry run prio-fq: prio 10: and fq_codel 101:-103:" "tc qdisc replace dev v0 root handle 10: prio bands 3 priomap $MAP
tc qdisc replace dev v0 parent 10:1 handle 101: fq_codel
tc qdisc replace dev v0 parent 10:2 handle 102: fq_codel
tc qdisc replace dev v0 parent 10:3 handle 103: fq_codel" "$(dry prio-fq v0)"
same "dry run ets 5: quanta 27:9:3:1 MTUs" \
	"tc qdisc replace dev v0 root handle 10: ets bands 5 strict 1 quanta 40878 13626 4542 1514 priomap $MAP" \
	"$(dry ets v0 5 | head -n1)"
# 8 bands: 3^6 MTUs would pass the cap; the ratio shrinks to 81^(1/6), so
# band 1 has 81 MTUs and every band more than the one below.
same "dry run ets 8: quanta from 81 MTUs down to 1, ratio 2.08" \
	"tc qdisc replace dev v0 root handle 10: ets bands 8 strict 1 quanta 122634 58956 28343 13626 6551 3149 1514 priomap $MAP" \
	"$(dry ets v0 8 | head -n1)"
# Other band counts (tests/kernel/tc_scripts.sh installs each setup's
# default, and N only where the kernel's tree shows more than these lines).
same "dry run prio 5: 5 bands, the same priomap" \
	"tc qdisc replace dev v0 root handle 10: prio bands 5 priomap $MAP" "$(dry prio v0 5)"
same "dry run prio-fq 5: an fq_codel in each of 5 bands, 101:-105:" \
	"prio bands 5 101: 102: 103: 104: 105:" \
	"$(dry prio-fq v0 5 | awk '/ prio / { printf "prio bands %s", $11 } / fq_codel/ { printf " %s", $9 }')"
same "dry run shaped 6: prio 6 bands under tbf" \
	"tc qdisc replace dev v0 parent 1:1 handle 10: prio bands 6 priomap $MAP" "$(dry shaped v0 50mbit 6 | sed -n 2p)"
same "dry run shaped-prio-fq 4: tbf, prio 4 bands, 4 fq_codel" "tbf prio 4 4" \
	"$(dry shaped-prio-fq v0 50mbit 4 | awk '/ tbf / { t = "tbf" } / prio bands / { p = $12 } / fq_codel/ { n++ } END { print t, "prio", p, n }')"
same "dry run shaped-ets 5: ets 5 bands (27:9:3:1) under tbf, 5 fq_codel" \
	"tc qdisc replace dev v0 parent 1:1 handle 10: ets bands 5 strict 1 quanta 40878 13626 4542 1514 priomap $MAP 5" \
	"$(dry shaped-ets v0 50mbit 5 | awk '/ ets / { e = $0 } / fq_codel/ { n++ } END { print e, n }')"
same "dry run shaped-fq: tbf, fq_codel under it" "tc qdisc replace dev v0 root handle 1: tbf rate 20mbit burst 256kb latency 1s
tc qdisc replace dev v0 parent 1:1 handle 10: fq_codel" "$(dry shaped-fq v0 20mbit)"
# shaped-htb: 10 % of 20 Mbit/s assured over 4 bands, 500 kbit/s each.
want="tc qdisc replace dev v0 root handle 10: htb default 2
tc class replace dev v0 parent 10: classid 10:100 htb rate 20mbit ceil 20mbit burst 256kb cburst 256kb quantum 1514"
for b in 1 2 3 4; do
	want+=$'\n'"tc class replace dev v0 parent 10:100 classid 10:$b htb rate 500000bit ceil 20mbit cburst 256kb prio $((b - 1)) quantum 1514"
done
for b in 1 2 3 4; do want+=$'\n'"tc qdisc replace dev v0 parent 10:$b handle 10$b: fq_codel"; done
same "dry run shaped-htb 4 bands: htb 10:, a class per band assured 500kbit, fq_codel leaves" "$want" "$(dry shaped-htb v0 20mbit 4)"
same "  the rate in tc's other units: 2.5mbps (bytes) is 20 Mbit/s, 8 bands 250kbit each" \
	"tc class replace dev v0 parent 10:100 classid 10:8 htb rate 250000bit ceil 2.5mbps cburst 256kb prio 7 quantum 1514" \
	"$(dry shaped-htb v0 2.5mbps 8 | grep 'classid 10:8 ')"
out=$(q --dry-run install shaped-htb v0 20mbit 9 2>&1); rc=$?
check "shaped-htb with 9 bands: exit 2 ($rc), htb has 8 priorities" test "$rc" = 2
check "  and says so" has "$out" "2 to 8"
same "dry run mqprio on 4 TX queues: queues 1@0 1@1 2@2" \
	"tc qdisc replace dev m0 root handle 1: mqprio num_tc 3 map $MAP queues 1@0 1@1 2@2 hw 0" \
	"$(dry mqprio m0 | head -n1)"
# mq: on each TX queue what ets gives one queue, its own handles.
want="tc qdisc replace dev m0 root handle 1: mq"
for i in 1 2 3 4; do
	want+=$'\n'"tc qdisc replace dev m0 parent 1:$i handle 1$i: ets bands 3 strict 1 quanta 4542 1514 priomap $MAP"
	for b in 1 2 3; do
		want+=$'\n'"tc qdisc replace dev m0 parent 1$i:$b handle 10$((i - 1))$b: fq_codel"
	done
done
same "dry run mq on 4 TX queues: an ets 11:-14: and 3 fq_codel leaves on each" "$want" "$(dry mq m0)"
same "  with 5 bands: the identity priomap, 4 quanta" \
	"tc qdisc replace dev m0 parent 1:1 handle 11: ets bands 5 strict 1 quanta 40878 13626 4542 1514 priomap 0 1 2 3 4 4 4 4 4 4 4 4 4 4 4 4" \
	"$(dry mq m0 5 | sed -n 2p)"
# shaped-mq: mq's tree with a tbf of RATE / 4 between each queue and its ets.
want="tc qdisc replace dev m0 root handle 1: mq"
for i in 1 2 3 4; do
	want+=$'\n'"tc qdisc replace dev m0 parent 1:$i handle 40$i: tbf rate 5000000bit burst 256kb latency 1s"
	want+=$'\n'"tc qdisc replace dev m0 parent 40$i:1 handle 1$i: ets bands 3 strict 1 quanta 4542 1514 priomap $MAP"
	for b in 1 2 3; do
		want+=$'\n'"tc qdisc replace dev m0 parent 1$i:$b handle 10$((i - 1))$b: fq_codel"
	done
done
same "dry run shaped-mq 20mbit on 4 TX queues: a tbf of 5 Mbit/s over each queue's ets" "$want" "$(dry shaped-mq m0 20mbit)"
same "  the rate in bytes (2.5mbps), 4 bands" \
	"tc qdisc replace dev m0 parent 401:1 handle 11: ets bands 4 strict 1 quanta 13626 4542 1514 priomap 0 1 2 3 3 3 3 3 3 3 3 3 3 3 3 3" \
	"$(dry shaped-mq m0 2.5mbps 4 | sed -n 3p)"
out=$(q --dry-run install shaped-mq m0 2>&1); rc=$?
check "shaped-mq without a rate: usage error, exit 2 ($rc)" test "$rc" = 2
# install DEV: the recommended setup for DEV, said.
out=$(q --dry-run install m0 2>&1)
same "install m0 (4 TX queues) is install mq m0" "$(dry mq m0)" "$(grep '^tc ' <<<"$out")"
check "  and says why" has "$out" "m0 has 4 TX queues: installing mq"
out=$(q --dry-run install v0 2>&1)
same "install v0 (one TX queue) is install ets v0" "$(dry ets v0)" "$(grep '^tc ' <<<"$out")"
check "  and says why" has "$out" "v0 has one TX queue: installing ets"
out=$(q install nosuchdev 2>&1); rc=$?
check "install NAME that is neither a setup nor a device: usage error, exit 2 ($rc)" test "$rc" = 2
check "dry run changes nothing: no tc command run, no state" test ! -s "$T/log" -a ! -e "$T/state/qdisc"
out=$(q --dry-run install mqprio v0 2>&1); rc=$?
check "mqprio on one TX queue: exit 3 ($rc)" test "$rc" = 3
out=$(q install fq-bands v0 2>&1); rc=$?
check "fq-bands with a tc that has no fq priomap: exit 3 ($rc), nothing run" test "$rc" = 3 -a ! -s "$T/log"

# --- multiqueue guard ---------------------------------------------------------
reset
tree a "qdisc mq 0: root 
qdisc fq_codel 0: parent :4 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 
qdisc fq_codel 0: parent :3 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 
qdisc fq_codel 0: parent :2 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 
qdisc fq_codel 0: parent :1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 "
for setup in "prio-fq" "ets" "pfifo-fast" "shaped 10mbit"; do
	# shellcheck disable=SC2046,SC2086
	out=$(q install ${setup%% *} m0 $( [ "$setup" != "${setup#* }" ] && echo ${setup#* } ) 2>&1); rc=$?
	check "$setup over mq on 4 TX queues refused: exit 4 ($rc), nothing run" test "$rc" = 4 -a ! -s "$T/log"
done
check "  the refusal says why and what instead" has "$out" "one lock" "install mqprio m0" "--force"
check "  no state saved" test ! -e "$T/state/qdisc/m0"
out=$(q install mq m0 2>&1); rc=$?
check "the mq setup over mq: no guard (exit $rc)" test "$rc" = 0
reset
tree a "$(cat "$T/tree/qdisc.a" 2>/dev/null || true)qdisc mqprio 1: root tc 3 map $MAP
             queues:(0:0) (1:1) (2:3) "
out=$(q install prio m0 2>&1); rc=$?
check "prio over mqprio: exit 4 ($rc)" test "$rc" = 4
out=$(q -f install prio m0 2>&1); rc=$?
check "-f: installed (exit $rc)" test "$rc" = 0
check "  prio at the root" grep -q "qdisc replace dev m0 root handle 10: prio" "$T/log"
reset
tree a "qdisc mq 0: root "
out=$(q install ets m0 --force 2>&1); rc=$?
check "--force after the arguments too (exit $rc)" test "$rc" = 0
tree a "qdisc mq 0: root "
out=$(q install ets v0 2>&1); rc=$?
check "mq on a one-queue device: no guard (exit $rc)" test "$rc" = 0

# --- rollback -------------------------------------------------------------------
# The operator's tree: tbf 5: with fq_codel 50: under it. The install fails
# at its 3rd change; the rollback deletes the root and re-creates tbf, then
# fq_codel under it, with the options tc printed.
reset
A_Q="qdisc tbf 5: root refcnt 2 rate 7Mbit burst 20Kb lat 50ms 
qdisc fq_codel 50: parent 5:1 limit 1000p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 "
A_C="class tbf 5:1 parent 5: leaf 50: "
tree a "$A_Q" "$A_C"
tree b "qdisc tbf 1: root refcnt 2 rate 50Mbit burst 256Kb lat 1s " "class tbf 1:1 parent 1: "
out=$(SRFF_QDISC_TEST_FAIL_AT=3 q install shaped-prio-fq v0 50mbit 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   /'
check "install failing at its 3rd change: exit 1 ($rc)" test "$rc" = 1
same "  changes 1-2 run, then the rollback rebuilds the tree, parents first" \
"qdisc replace dev v0 root handle 1: tbf rate 50mbit burst 256kb latency 1s
qdisc replace dev v0 parent 1:1 handle 10: prio bands 3 priomap $MAP
qdisc del dev v0 root
qdisc replace dev v0 root handle 5: tbf rate 7Mbit burst 20Kb lat 50ms
qdisc replace dev v0 parent 5:1 handle 50: fq_codel limit 1000 flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64" "$(log)"
check "  it says so" grep -q "rolled back: v0 has the tree it had before" <<<"$out"
check "  and forgets the save it made" test ! -e "$T/state/qdisc/v0"
reset
tree a "$A_Q" "$A_C"
out=$(FAKE_FAIL=" ets " q install shaped-ets v0 50mbit 2>&1); rc=$?
check "the kernel lacks ets: exit 3 ($rc), rolled back" \
	has "$rc $out" "3 " "kind is unknown" "rolled back"
check "  the tbf it had made is gone: the root deleted, tbf 5: re-created" \
	has "$(tail -n3 "$T/log" | head -n2 | tr '\n' '|')" "qdisc del dev v0 root|qdisc replace dev v0 root handle 5: tbf "
reset
tree a "$A_Q" "$A_C"
out=$(SRFF_QDISC_TEST_FAIL_AT=1 q install prio v0 2>&1); rc=$?
check "failing at the first change: exit 1 ($rc), nothing to roll back, nothing run" \
	test "$rc" = 1 -a ! -s "$T/log"
# A failure on a re-install goes back to the setup there, and keeps the
# first install's save.
reset
tree a "$A_Q" "$A_C"
q install prio v0 >/dev/null 2>&1
saved=$(cat "$T/state/qdisc/v0/qdisc")
tree a "qdisc prio 10: root refcnt 2 bands 3 priomap $MAP" "class prio 10:1 parent 10: "
echo a >"$T/tree/cur"
: >"$T/log"
out=$(SRFF_QDISC_TEST_FAIL_AT=2 q install shaped v0 10mbit 2>&1); rc=$?
check "re-install failing: exit 1 ($rc), back to prio 10:" \
	sh -c "test $rc = 1 && grep -qx 'qdisc replace dev v0 root handle 10: prio bands 3 priomap $MAP' '$T/log'"
same "  the first save is kept" "$saved" "$(cat "$T/state/qdisc/v0/qdisc")"

# --- revert: how a saved tree is rebuilt -------------------------------------
reset
mkdir -p "$T/state/qdisc/v0"
cat >"$T/state/qdisc/v0/qdisc" <<'EOF'
qdisc htb 1: root refcnt 2 r2q 10 default 0x20 direct_packets_stat 3 direct_qlen 1000
qdisc pfifo 30: parent 10:1 limit 50p
qdisc tbf 10: parent 1:10 rate 30Mbit burst 32Kb lat 20ms
qdisc bfifo 20: parent 1:20 limit 100Kb
EOF
cat >"$T/state/qdisc/v0/class" <<'EOF'
class htb 1:10 parent 1:1 leaf 10: prio 0 rate 40Mbit ceil 100Mbit burst 1600b cburst 1600b
class htb 1:1 root rate 100Mbit ceil 100Mbit burst 1600b cburst 1600b
class htb 1:20 parent 1:1 leaf 20: prio 1 rate 60Mbit ceil 100Mbit burst 1590b cburst 1600b
class tbf 10:1 parent 10: leaf 30:
EOF
: >"$T/state/qdisc/v0/filter"
plan=$(q --dry-run revert v0 2>&1)
same "revert plan of an htb tree: the options as tc reads them (no direct_packets_stat, leaf; 50 not 50p)" \
"tc qdisc del dev v0 root
tc qdisc replace dev v0 root handle 1: htb r2q 10 default 0x20 direct_qlen 1000
tc class add dev v0 parent 1: classid 1:1 htb rate 100Mbit ceil 100Mbit burst 1600 cburst 1600
tc class add dev v0 parent 1:1 classid 1:10 htb prio 0 rate 40Mbit ceil 100Mbit burst 1600 cburst 1600
tc class add dev v0 parent 1:1 classid 1:20 htb prio 1 rate 60Mbit ceil 100Mbit burst 1590 cburst 1600
tc qdisc replace dev v0 parent 10:1 handle 30: pfifo limit 50
tc qdisc replace dev v0 parent 1:10 handle 10: tbf rate 30Mbit burst 32Kb lat 20ms
tc qdisc replace dev v0 parent 1:20 handle 20: bfifo limit 100Kb" \
	"$(sed -n 1,2p <<<"$plan"; sed 1,2d <<<"$plan" | LC_ALL=C sort)"
# ... and in an order where every parent comes first:
pos() { grep -n -F -- "$1" <<<"$plan" | head -n1 | cut -d: -f1; }
check "  htb 1: before class 1:1 before class 1:10 before tbf 10: before pfifo 30:" \
	test "$(pos 'handle 1: htb')" -lt "$(pos 'classid 1:1 htb')" -a \
	"$(pos 'classid 1:1 htb')" -lt "$(pos 'classid 1:10 htb')" -a \
	"$(pos 'classid 1:10 htb')" -lt "$(pos 'handle 10: tbf')" -a \
	"$(pos 'handle 10: tbf')" -lt "$(pos 'handle 30: pfifo')"
check "  class 1:20 before bfifo 20:" test "$(pos 'classid 1:20 htb')" -lt "$(pos 'handle 20: bfifo')"
check "  no tbf class re-created (tbf makes its own)" test -z "$(pos 'classid 10:1')"
check "  dry run: the save is kept" test -e "$T/state/qdisc/v0/qdisc"

printf '%s\n' "qdisc mqprio 1: root tc 3 map $MAP queues:(0:0) (1:1) (2:3) mode:channel shaper:bw_rlimit min_rate:1Gbit 1Gbit 2Gbit max_rate:5Gbit 5Gbit 10Gbit" \
	"qdisc fq 8001: parent 1:1 limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 quantum 3028b initial_quantum 15140b low_rate_threshold 550Kbit refill_delay 40ms" \
	"qdisc pfifo_fast 0: parent 1:2 bands 3 priomap $MAP" >"$T/state/qdisc/v0/qdisc"
: >"$T/state/qdisc/v0/class"
same "revert plan of an offloaded mqprio: num_tc, queues, mode, shaper, rates, hw 1; kernel defaults left out" \
"tc qdisc del dev v0 root
tc qdisc replace dev v0 root handle 1: mqprio num_tc 3 map $MAP queues 1@0 1@1 2@2 mode channel shaper bw_rlimit min_rate 1Gbit 1Gbit 2Gbit max_rate 5Gbit 5Gbit 10Gbit hw 1
tc qdisc replace dev v0 parent 1:1 handle 8001: fq limit 10000 flow_limit 100 buckets 1024 orphan_mask 1023 quantum 3028 initial_quantum 15140 low_rate_threshold 550Kbit refill_delay 40ms" \
	"$(q --dry-run revert v0 2>&1)"
printf '%s\n' "qdisc cake 8001: root refcnt 2 bandwidth unlimited diffserv3 triple-isolate nonat nowash no-ack-filter split-gso rtt 100ms raw overhead 0 " \
	"qdisc fq_pie 8002: parent 8001:1 limit 10240p flows 1024 target 15ms tupdate 16ms alpha 2 beta 20 quantum 1514b memory_limit 32Mb ecn_prob 10% " >"$T/state/qdisc/v0/qdisc"
same "revert plan of cake, fq_pie: \"bandwidth unlimited\" as \"unlimited\", \"10%\" as \"10\"" \
"tc qdisc del dev v0 root
tc qdisc replace dev v0 root handle 8001: cake unlimited diffserv3 triple-isolate nonat nowash no-ack-filter split-gso rtt 100ms raw overhead 0
tc qdisc replace dev v0 parent 8001:1 handle 8002: fq_pie limit 10240 flows 1024 target 15ms tupdate 16ms alpha 2 beta 20 quantum 1514 memory_limit 32Mb ecn_prob 10" \
	"$(q --dry-run revert v0 2>&1)"
printf '%s\n' "$FQ_CODEL0" >"$T/state/qdisc/v0/qdisc"
same "revert plan of a kernel default root: only the delete" "tc qdisc del dev v0 root" "$(q --dry-run revert v0 2>&1)"

# revert for real (with the stub): re-created, checked, forgotten.
reset
tree a "$A_Q" "$A_C"
q install prio v0 >/dev/null 2>&1
: >"$T/log"
out=$(q revert v0 2>&1); rc=$?
check "revert: exit 0 ($rc), tbf 5: and fq_codel 50: re-created" \
	sh -c "test $rc = 0 && grep -q 'handle 5: tbf' '$T/log' && grep -q 'handle 50: fq_codel' '$T/log'"
check "  the save is forgotten" test ! -e "$T/state/qdisc/v0"
check "  show after it has no saved tree" sh -c '! grep -q "^# saved"' <<<"$out"
# A tree that does not come back as saved: exit 1, the differences said.
reset
tree a "$A_Q" "$A_C"
q install prio v0 >/dev/null 2>&1
tree a "qdisc tbf 5: root refcnt 2 rate 7Mbit burst 20Kb lat 51ms " "$A_C"
out=$(q revert v0 2>&1); rc=$?
check "revert that comes back different: exit 1 ($rc), says what differs" has "$rc $out" "1 " \
	"saved: qdisc tbf 5: root rate 7Mbit burst 20Kb lat 50ms" "now:   qdisc tbf 5: root rate 7Mbit burst 20Kb lat 51ms"

# Nothing saved (never installed, or a refused install): the tree is not
# srff-qdisc's, left as it is; --force deletes the root.
reset
tree a "$A_Q" "$A_C"
out=$(q revert v0 2>&1); rc=$?
check "revert with nothing saved: exit 0 ($rc), says so" grep -q "nothing saved for v0" <<<"$out"
same "  and changes nothing" "" "$(log)"
reset
tree a "$A_Q" "$A_C"
out=$(q --force revert v0 2>&1); rc=$?
check "revert --force with nothing saved: exit 0 ($rc), says so" grep -q "nothing saved for v0.*--force" <<<"$out"
same "  and deletes the root qdisc" "qdisc del dev v0 root" "$(log)"
same "  --dry-run --force: the delete, printed" "tc qdisc del dev v0 root" \
	"$(reset; tree a "$A_Q" "$A_C"; q --dry-run --force revert v0 2>/dev/null)"

# A save by the older srff-qdisc ($STATE/qdisc-NS-DEV, the root line).
reset
tree a "$A_Q" "$A_C"
mkdir -p "$T/state"
echo "qdisc tbf 5: root refcnt 2 rate 7Mbit burst 20Kb lat 50ms " >"$T/state/qdisc-root-v0"
tree a "qdisc prio 10: root refcnt 2 bands 3 priomap $MAP" ""
out=$(q revert v0 2>&1); rc=$?
check "an older srff-qdisc's save is restored (exit $rc)" grep -qx "qdisc replace dev v0 root handle 5: tbf rate 7Mbit burst 20Kb lat 50ms" "$T/log"
check "  and forgotten" test ! -e "$T/state/qdisc-root-v0"

# --- a failed batch -------------------------------------------------------------
# An install's changes run in one `tc -batch -`, a rollback's or revert's
# in `tc -force -batch -` (cut after a tbf, an htb class, an mqprio).
PRIOFQ_Q="qdisc prio 10: root refcnt 2 bands 3 priomap $MAP 
qdisc fq_codel 101: parent 10:1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 
qdisc fq_codel 102: parent 10:2 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 
qdisc fq_codel 103: parent 10:3 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 "
PRIOFQ_C="class prio 10:1 parent 10: leaf 101: 
class prio 10:2 parent 10: leaf 102: 
class prio 10:3 parent 10: leaf 103: "
LEAF_ARGS="limit 10240 flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64"
REBUILD_PRIOFQ="qdisc del dev v0 root
qdisc replace dev v0 root handle 10: prio bands 3 priomap $MAP
qdisc replace dev v0 parent 10:1 handle 101: fq_codel $LEAF_ARGS
qdisc replace dev v0 parent 10:2 handle 102: fq_codel $LEAF_ARGS
qdisc replace dev v0 parent 10:3 handle 103: fq_codel $LEAF_ARGS"
ETS3="ets bands 3 strict 1 quanta 4542 1514 priomap $MAP"
reset
tree a "$PRIOFQ_Q" "$PRIOFQ_C"
tree b "qdisc tbf 1: root refcnt 2 rate 30Mbit burst 256Kb lat 1s " "class tbf 1:1 parent 1: "
out=$(FAKE_FAIL=" ets " q install shaped-ets v0 30mbit 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   /'
check "the batch fails at its 2nd line (no ets): exit 3 ($rc), that line and tc's error said" \
	has "$rc $out" "3 " "tc qdisc replace dev v0 parent 1:1 handle 10: $ETS3: Error: Specified qdisc kind is unknown." "rolled back"
same "  the 1st line run, the 2nd tried, then the tree rebuilt" \
"qdisc replace dev v0 root handle 1: tbf rate 30mbit burst 256kb latency 1s
qdisc replace dev v0 parent 1:1 handle 10: $ETS3
$REBUILD_PRIOFQ" "$(log)"
check "  the install's changes in one tc -batch, the rebuild in another" \
	grep -qxF -e "qdisc replace dev v0 root handle 1: tbf rate 30mbit burst 256kb latency 1s; qdisc replace dev v0 parent 1:1 handle 10: $ETS3" \
	-e "${REBUILD_PRIOFQ//$'\n'/; }" "$T/batches"
check "  (both)" test "$(grep -c "handle" "$T/batches")" = 2
check "  no save left" test ! -e "$T/state/qdisc/v0"
reset
tree a "$PRIOFQ_Q" "$PRIOFQ_C"
out=$(FAKE_FAIL=" tbf " q install shaped-ets v0 30mbit 2>&1); rc=$?
check "the batch fails at its 1st line: exit 3 ($rc), nothing to roll back" \
	test "$rc" = 3 -a "${out/rolled back/}" = "$out" -a \
	"$(log)" = "qdisc replace dev v0 root handle 1: tbf rate 30mbit burst 256kb latency 1s"
reset
tree a "$PRIOFQ_Q" "$PRIOFQ_C"
tree b "qdisc tbf 1: root refcnt 2 rate 30Mbit burst 256Kb lat 1s " "class tbf 1:1 parent 1: "
out=$(FAKE_DIE=" 10: ets " q install shaped-ets v0 30mbit 2>&1); rc=$?
check "tc exits at the 2nd line without naming it: exit 1 ($rc), what tc said, rolled back" \
	has "$rc $out" "1 " "tc -batch: stub tc: exits at: qdisc replace dev v0 parent 1:1 handle 10: ets" "rolled back"
same "  the tree rebuilt" "qdisc replace dev v0 root handle 1: tbf rate 30mbit burst 256kb latency 1s
$REBUILD_PRIOFQ" "$(log)"
# A revert whose batch tc leaves at its 4th line: the lines from the first
# on (tc named none) again one by one; the one that fails is said.
reset
tree a "$PRIOFQ_Q" "$PRIOFQ_C"
q install prio v0 >/dev/null 2>&1
: >"$T/log"
out=$(FAKE_DIE="handle 102:" q revert v0 2>&1); rc=$?
check "revert, tc exiting at a line: that line could not be re-created (exit $rc: the stub shows the saved tree)" \
	has "$rc $out" "0 " "could not re-create: tc qdisc replace dev v0 parent 10:2 handle 102: fq_codel $LEAF_ARGS: stub tc: exits at"
same "  the lines before it ran, then all again one by one" \
"$(sed -n 1,3p <<<"$REBUILD_PRIOFQ")
$(grep -v 'handle 102:' <<<"$REBUILD_PRIOFQ")" "$(log)"
# A device name tc's batch would read otherwise: one tc per command.
fake_dev 'e#0' 1
reset
tree a "$FQ_CODEL0"
: >"$T/procs"
out=$(q install prio-fq 'e#0' 2>&1); rc=$?
check "a device named e#0: exit 0 ($rc), no tc -batch, a tc per change" \
	sh -c "test $rc = 0 && ! grep -q -e -batch '$T/procs' && test \$(grep -c '^tc qdisc replace dev e#0' '$T/procs') = 4"

# --- --dry-run prints what install runs -----------------------------------------
# dry_is_run DESCRIPTION ARGS...: `srff-qdisc --dry-run install ARGS`
# prints the commands `srff-qdisc install ARGS` runs (the tree: a, and b
# after a change).
dry_is_run() {
	local what=$1 want
	shift
	rm -rf "$T/state" "$T/tree/restoring"
	echo a >"$T/tree/cur"
	want=$(q --dry-run install "$@" 2>/dev/null | sed 's/^tc //')
	: >"$T/log"
	q install "$@" >/dev/null 2>&1
	same "$what" "$want" "$(log)"
}
reset
tree a "$FQ_CODEL0"
for setup in pfifo-fast "prio 5" prio-fq "ets 4" "shaped 10mbit" "shaped-prio-fq 10mbit" "shaped-ets 10mbit 5" "shaped-fq 10mbit" mq; do
	case $setup in	# b: the root the first change makes
	pfifo-fast) tree b "qdisc pfifo_fast 8001: root refcnt 2 bands 3 priomap $MAP " ;;
	prio*) tree b "qdisc prio 10: root refcnt 2 bands 5 priomap $MAP " ;;
	ets*) tree b "qdisc ets 10: root refcnt 2 bands 4 strict 1 quanta 13626 4542 1514 priomap $MAP " ;;
	shaped*) tree b "qdisc tbf 1: root refcnt 2 rate 10Mbit burst 256Kb lat 1s " "class tbf 1:1 parent 1: " ;;
	mq) tree b "qdisc mq 1: root " ;;
	esac
	# shellcheck disable=SC2086
	dry_is_run "--dry-run install $setup over fq_codel: what install runs" ${setup%% *} v0 ${setup#"${setup%% *}"}
done
reset
tree a "$PRIOFQ_Q" "$PRIOFQ_C"
tree b "qdisc tbf 1: root refcnt 2 rate 30Mbit burst 256Kb lat 1s " "class tbf 1:1 parent 1: "
dry_is_run "--dry-run install shaped-ets over prio-fq: no delete of 10: (gone with the root)" shaped-ets v0 30mbit
dry_is_run "--dry-run install shaped-prio-fq over prio-fq" shaped-prio-fq v0 30mbit 4
dry_is_run "--dry-run install ets over prio-fq: 10: deleted first (another kind)" ets v0
tree a "qdisc tbf 1: root refcnt 2 rate 30Mbit burst 256Kb lat 1s 
qdisc prio 10: parent 1:1 bands 3 priomap $MAP 
qdisc fq_codel 101: parent 10:1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 " "class tbf 1:1 parent 1: "
dry_is_run "--dry-run install prio-fq over shaped-prio-fq: 10: deleted under the tbf" prio-fq v0
reset
tree a "qdisc mqprio 1: root tc 3 map $MAP
             queues:(0:0) (1:1) (2:3) 
qdisc fq_codel 201: parent 1:1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 "
dry_is_run "--dry-run install mqprio over the same: the fq_codel leaves only" mqprio m0
dry_is_run "--dry-run install mq over mqprio" mq m0 4

# --- processes -------------------------------------------------------------------
# What each call costs: every process srff-qdisc starts is counted (the
# stubs count their runs in $T/procs; every other command runs through a
# wrapper that counts it, on a PATH of nothing else, so a command not
# wrapped is not found and the run fails). Before srff-qdisc read the tree
# once and ran its changes in one tc -batch, an install of prio-fq started
# 54 commands (89 processes with its subshells), a revert 35, a dry run 20.
mkdir -p "$T/count"
for c in awk sed sort diff uname cat mkdir mv rm rmdir readlink flock mktemp head tail grep tr find wc seq cp cut; do
	real=$(command -v "$c") || continue
	{ echo "#!/bin/sh"; echo "echo $c >>\"\$FAKE/procs\""; echo "exec $real \"\$@\""; } >"$T/count/$c"
	chmod +x "$T/count/$c"
done
ln -s "$T/bin/tc" "$T/bin/ip" "$T/count/"
has_strace=
strace -f -qq -o /dev/null true 2>/dev/null && has_strace=1
# procs MAX ARGS...: srff-qdisc ARGS starts at most MAX processes; and,
# where strace runs, forks at most MAX times (subshells too), run under it
# first from the same state.
procs() {
	local max=$1 n
	shift
	if [ -n "$has_strace" ]; then
		rm -rf "$T/before"
		mkdir "$T/before"
		cp -a "$T/state" "$T/tree" "$T/before/" 2>/dev/null
		rm -f "$T/tree/restoring"
		strace -f -qq -e trace=clone,clone3,fork,vfork -o "$T/strace" "$BASH" "$Q0" "$@" >/dev/null 2>&1
		n=$(grep -cE '(clone|fork).*= [0-9]+$' "$T/strace")
		check "srff-qdisc $*: $n forks, subshells included (at most $max; strace)" test "$n" -le "$max"
		rm -rf "$T/state" "$T/tree"
		cp -a "$T/before/"* "$T/"
	fi
	rm -f "$T/tree/restoring"
	: >"$T/procs"
	PATH=$T/count "$BASH" "$Q0" "$@" >/dev/null 2>&1 || { check "srff-qdisc $* (exit $?)" false; return; }
	n=$(wc -l <"$T/procs")
	check "srff-qdisc $*: $n processes (at most $max)" test "$n" -le "$max"
}
for setup in "prio-fq v0" "shaped-ets v0 50mbit 5" "mqprio m0"; do
	dev=${setup#* }; dev=${dev%% *}
	reset
	if [ "$dev" = m0 ]; then tree a "qdisc mq 0: root "; else tree a "$FQ_CODEL0"; fi
	tree b "qdisc prio 10: root refcnt 2 bands 3 priomap $MAP "
	# shellcheck disable=SC2086
	procs 6 --dry-run install $setup
	# shellcheck disable=SC2086
	procs 12 install $setup	# the first: makes the save
	# shellcheck disable=SC2086
	procs 10 install $setup	# again
	procs 10 revert "$dev"
done

# --- -n NETNS -------------------------------------------------------------------
reset
tree a "$A_Q" "$A_C"
out=$(q -n web install prio v0 2>&1); rc=$?
check "-n web install: exit 0 ($rc), state in qdisc/netns:web/v0" \
	test "$rc" = 0 -a -e "$T/state/qdisc/netns:web/v0/qdisc" -a ! -e "$T/state/qdisc/v0"
check "  show -n web lists the saved tree" sh -c "'$Q' -n web show v0 | grep -q '^#   qdisc tbf 5: root'"
check "  show without -n has none (another namespace)" sh -c "! '$Q' show v0 | grep -q '^# saved'"
check "  ip netns exec web srff-qdisc: the same state" sh -c "ip netns exec web '$Q' show v0 | grep -q '^#   qdisc tbf 5: root'"
out=$(q --netns web revert v0 2>&1); rc=$?
check "--netns web revert: exit 0 ($rc), state forgotten" test "$rc" = 0 -a ! -e "$T/state/qdisc/netns:web"

echo "srff-qdisc: $pass passed, $failed failed"
[ "$failed" = 0 ]
