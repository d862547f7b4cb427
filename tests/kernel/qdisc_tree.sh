#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# qdisc_tree.sh rollback|revert|netns|mq: tc-scripts/srff-qdisc keeps the
# device's tree whole.
#
#   rollback  an install that fails part-way leaves the device's tree
#             exactly as it was: made to fail at each of its changes in turn
#             (SRFF_QDISC_TEST_FAIL_AT=N, N = 1, 2, ... until it succeeds),
#             from an operator's tree (tbf with fq_codel under it) and from
#             another srff setup; and for real: tc refusing a rate after
#             srff-qdisc has deleted the mq there. Nothing saved after.
#   revert    revert re-creates the whole tree the operator had, exactly
#             (tc qdisc show and tc class show): tbf + fq_codel; an htb
#             tree with classes and leaves; mq with a leaf of its own;
#             mqprio; veth's default noqueue; after several setups in turn.
#             Without a save it deletes the root and says so.
#   netns     -n NS from outside the namespace: the namespace's device, its
#             /sys (ets quanta from its MTU, mqprio from its TX queues), its
#             state (qdisc/netns:NS/DEV, the same as under ip netns exec).
#   mq        over mq or mqprio on a multiqueue device a one-root setup is
#             refused (exit 4, why and what instead on stderr, nothing
#             changed) unless --force; mq and mqprio setups are not.
#
# Trees are compared as tc prints them, without refcnt and htb's
# direct_packets_stat (counters).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

what=${1:?rollback|revert|netns|mq}
Q=$TOP/tc-scripts/srff-qdisc
SRFF_QDISC_STATE=$(mktemp -d)
export SRFF_QDISC_STATE
setup_ns NS
# v0: one TX queue (MTU 9000 for netns); m0: four.
ip -n "$NS" link add v0 type veth peer name v1
ip -n "$NS" link add m0 numtxqueues 4 numrxqueues 4 type veth peer name m1 numtxqueues 4 numrxqueues 4
for d in v0 v1 m0 m1; do ip -n "$NS" link set "$d" up; done
q() { ip netns exec "$NS" "$Q" "$@"; }

# tree DEV: DEV's qdiscs and classes, sorted, counters out (and the
# classes fq_codel and fq list for their flows with packets queued).
tree() {
	{ tc -n "$NS" qdisc show dev "$1"; tc -n "$NS" class show dev "$1"; } |
		sed -E 's/ (refcnt|direct_packets_stat) [0-9]+//g; s/ +$//' |
		grep -Ev '^class (fq_codel|fq|sfq|cake|fq_pie) ' | sort
}
saved() { test -e "$SRFF_QDISC_STATE/qdisc/netns:$NS/$1/qdisc"; }
# shellcheck disable=SC2317 # called through check
has() {		# has TEXT STRING...: TEXT has every STRING
	local text=$1 s
	shift
	for s in "$@"; do grep -q -F -- "$s" <<<"$text" || return 1; done
}
# same_tree WHAT DEV BEFORE: DEV's tree is BEFORE, else show the difference.
same_tree() {
	local now
	now=$(tree "$2")
	[ "$now" = "$3" ] || diff <(echo "$3") <(echo "$now") | sed 's/^/#   /'
	check "$1" test "$now" = "$3"
}
# operator_tbf DEV: the operator's tree: tbf 5: with fq_codel 50: under it.
operator_tbf() {
	tc -n "$NS" qdisc replace dev "$1" root handle 5: tbf rate 7mbit burst 20kb latency 50ms
	tc -n "$NS" qdisc replace dev "$1" parent 5:1 handle 50: fq_codel limit 1000 target 3ms
}
no_mqprio=
[ -e /sys/module/sch_mqprio ] || modprobe -q sch_mqprio || no_mqprio=1

case $what in
rollback)
	# fail_each DEV SETUP...: SETUP fails at change 1, 2, ... and each
	# time leaves DEV exactly as it was; then it succeeds.
	fail_each() {
		local dev=$1 setup=$2 before n rc out had_save
		shift 2
		before=$(tree "$dev")
		had_save=; saved "$dev" && had_save=1
		for ((n = 1; n <= 40; n++)); do
			out=$(SRFF_QDISC_TEST_FAIL_AT=$n q install "$setup" "$dev" "$@" 2>&1 >/dev/null); rc=$?
			[ $rc = 0 ] && break
			printf '%s\n' "$out" | sed 's/^/#   /'
			check "install $setup $dev $* failing at change $n: exit 1 ($rc)" test $rc = 1
			same_tree "  $dev's tree exactly as before" "$dev" "$before"
			if [ -z "$had_save" ]; then
				check "  nothing saved" sh -c "! test -e '$SRFF_QDISC_STATE/qdisc/netns:$NS/$dev'"
			fi
		done
		check "install $setup $dev $* succeeds once nothing fails (after $((n - 1)) changes)" test $rc = 0 -a $n -gt 2
	}
	operator_tbf v0
	op=$(tree v0)
	fail_each v0 shaped-prio-fq 50mbit
	# Over another srff setup (ets 4): back to it, and the operator's tree
	# is still the one revert restores. (Each fail_each is a dozen
	# srff-qdisc runs; one from each kind of tree is enough.)
	run q install ets v0 4 >/dev/null || fail "install ets v0 4"
	fail_each v0 shaped-ets 30mbit
	run q revert v0 >/dev/null || fail "revert"
	same_tree "revert after it all: the operator's tbf + fq_codel" v0 "$op"

	# For real: mq 1: is the operator's; shaped's first change deletes it
	# (another kind with tbf's handle), then tc refuses the rate (1bit is
	# 0 bytes a second).
	tc -n "$NS" qdisc replace dev m0 root handle 1: mq
	tc -n "$NS" qdisc replace dev m0 parent 1:2 handle 30: fq_codel
	before=$(tree m0)
	expect_rc 1 "install --force shaped m0 1bit: tc refuses the rate" q --force install shaped m0 1bit
	check "  it says it rolled back" has "$LAST_OUT" "rolled back"
	same_tree "  m0's tree exactly as before: mq 1: with fq_codel 30: on queue 2" m0 "$before"
	check "  nothing saved" sh -c "! test -e '$SRFF_QDISC_STATE/qdisc/netns:$NS/m0'"
	expect_rc 0 "revert after the refusal" q revert m0
	same_tree "  mq left as it was (not noqueue)" m0 "$before"
	;;

revert)
	# cycle DEV NAME SETUP...: every SETUP ("name args") in turn, then
	# revert: DEV's tree is the one before the first.
	cycle() {
		local dev=$1 name=$2 before s out
		shift 2
		before=$(tree "$dev")
		for s in "$@"; do
			# shellcheck disable=SC2086
			q --force install $s >/dev/null 2>&1 || fail "install $s over $name"
		done
		out=$(q show "$dev")
		check "show lists the saved tree ($name)" grep -q "^# saved before srff-qdisc's first install" <<<"$out"
		out=$(q revert "$dev" 2>&1); rc=$?
		[ $rc = 0 ] || log "$out"
		check "revert $name after $*: exit 0 ($rc)" test $rc = 0
		same_tree "  the tree is exactly the operator's: $name" "$dev" "$before"
		check "  the save is forgotten" sh -c "! test -e '$SRFF_QDISC_STATE/qdisc/netns:$NS/$dev'"
	}
	operator_tbf v0
	cycle v0 "tbf + fq_codel" "prio-fq v0" "shaped-ets v0 20mbit 5" "pfifo-fast v0"

	# htb with classes, a tbf and an fq_codel under them, a pfifo under
	# the tbf; class bursts and the tbf's latency as tc computed them.
	tc -n "$NS" qdisc del dev v0 root
	tc -n "$NS" qdisc add dev v0 root handle 1: htb default 20
	tc -n "$NS" class add dev v0 parent 1: classid 1:1 htb rate 100mbit
	tc -n "$NS" class add dev v0 parent 1:1 classid 1:10 htb rate 40mbit ceil 100mbit
	tc -n "$NS" class add dev v0 parent 1:1 classid 1:20 htb rate 60mbit ceil 333mbit prio 1
	tc -n "$NS" qdisc add dev v0 parent 1:10 handle 10: tbf rate 60mbit burst 10000 limit 30000
	tc -n "$NS" qdisc add dev v0 parent 10:1 handle 30: pfifo limit 50
	tc -n "$NS" qdisc add dev v0 parent 1:20 handle 20: fq_codel
	tc -n "$NS" qdisc show dev v0 | sed 's/^/# /'
	cycle v0 "htb tree" "ets v0" "shaped-fq v0 10mbit"

	# veth's default: noqueue, handle 0:.
	tc -n "$NS" qdisc del dev v0 root
	cycle v0 "noqueue (the kernel's default)" "prio v0" "shaped v0 10mbit"

	# mq 1: with the kernel's leaves and one of the operator's (fq_codel 30:).
	tc -n "$NS" qdisc replace dev m0 root handle 1: mq
	tc -n "$NS" qdisc replace dev m0 parent 1:3 handle 30: fq_codel limit 500
	cycle m0 "mq with a leaf of its own" "mq m0 4" "prio-fq m0" "mq m0"

	if [ -z "$no_mqprio" ]; then
		tc -n "$NS" qdisc del dev m0 root
		tc -n "$NS" qdisc replace dev m0 root handle 7: mqprio num_tc 2 map 0 0 0 0 1 1 1 1 0 0 0 0 0 0 0 0 \
			queues 2@0 2@2 hw 0
		cycle m0 "mqprio 2 classes" "mq m0" "ets m0"
	else
		log "no sch_mqprio in this kernel: the mqprio tree left out"
	fi

	# Nothing saved: not srff-qdisc's tree, left alone; --force deletes
	# the root. Both say so.
	operator_tbf v0
	before=$(tree v0)
	expect_rc 0 "revert with nothing saved" q revert v0
	check "  says so" has "$LAST_OUT" "nothing saved for v0"
	same_tree "  the operator's tree left as it was" v0 "$before"
	expect_rc 0 "revert --force with nothing saved" q --force revert v0
	check "  says so" has "$LAST_OUT" "nothing saved for v0" "--force"
	check "  the root deleted: veth's noqueue is back" \
		sh -c "tc -n $NS qdisc show dev v0 root | grep -q '^qdisc noqueue 0: root'"
	;;

netns)
	# ets quanta come from the MTU, mqprio's queues from the TX queues:
	# both read in /sys, which is the namespace's only under ip netns exec.
	ip -n "$NS" link set v0 mtu 9000
	tc -n "$NS" qdisc replace dev v0 root fq_codel
	before=$(tree v0)
	run "$Q" -n "$NS" install ets v0 >/dev/null || fail "-n $NS install ets v0"
	check "-n: ets in $NS with quanta for its MTU 9000 (3:1 of 9014)" \
		sh -c "tc -n $NS qdisc show dev v0 root | grep -q 'ets 10: root .*quanta 27042 9014 '"
	check "  saved as qdisc/netns:$NS/v0" saved v0
	check "  nothing saved for the initial namespace" test ! -e "$SRFF_QDISC_STATE/qdisc/v0"
	check "  ip netns exec $NS srff-qdisc show: the same save" \
		sh -c "ip netns exec $NS '$Q' show v0 | grep -q '^#   qdisc fq_codel'"
	check "  srff-qdisc --netns $NS show: the same" \
		sh -c "'$Q' --netns $NS show v0 | grep -q '^#   qdisc fq_codel'"
	run "$Q" -n "$NS" install prio-fq v0 >/dev/null || fail "-n $NS install prio-fq v0"
	run "$Q" -n "$NS" revert v0 >/dev/null || fail "-n $NS revert v0"
	same_tree "-n revert: v0's fq_codel back" v0 "$before"
	check "  the save is forgotten" sh -c "! test -e '$SRFF_QDISC_STATE/qdisc/netns:$NS'"
	if [ -z "$no_mqprio" ]; then
		run "$Q" -n "$NS" install mqprio m0 >/dev/null || fail "-n $NS install mqprio m0"
		check "-n: mqprio on m0's 4 TX queues" \
			sh -c "tc -n $NS qdisc show dev m0 root | tr -s ' \n' '  ' | grep -q 'mqprio 1: root .*queues:(0:0) (1:1) (2:3)'"
		"$Q" -n "$NS" revert m0 >/dev/null
	fi
	expect_rc 2 "-n with no such namespace: exit 2" "$Q" -n "nosuch-$NS" show v0
	expect_rc 2 "-n with no such device there: exit 2" "$Q" -n "$NS" show nosuchdev
	;;

mq)
	tc -n "$NS" qdisc replace dev m0 root handle 1: mq
	before=$(tree m0)
	for s in prio-fq "ets 3" pfifo-fast "shaped 10mbit" "shaped-prio-fq 10mbit"; do
		# shellcheck disable=SC2086
		expect_rc 4 "install $s over mq on 4 TX queues refused" q install ${s%% *} m0 ${s#"${s%% *}"}
	done
	check "  stderr says why: one lock" has "$LAST_OUT" "one lock"
	check "  and what instead: mqprio, mq, --force" has "$LAST_OUT" "install mqprio m0" "install mq m0" "--force"
	same_tree "  nothing changed" m0 "$before"
	check "  nothing saved" sh -c "! test -e '$SRFF_QDISC_STATE/qdisc/netns:$NS/m0'"
	expect_rc 0 "revert after the refusal" q revert m0
	same_tree "  mq left as it was (not noqueue)" m0 "$before"
	expect_rc 0 "the mq setup over mq: allowed" q install mq m0
	q revert m0 >/dev/null
	expect_rc 0 "--force: prio-fq over mq installed" q --force install prio-fq m0
	check "  prio at m0's root" sh -c "tc -n $NS qdisc show dev m0 root | grep -q '^qdisc prio 10: root'"
	q revert m0 >/dev/null
	same_tree "  revert: mq back" m0 "$before"
	expect_rc 0 "-f after the arguments too" q install ets m0 -f
	q revert m0 >/dev/null
	if [ -z "$no_mqprio" ]; then
		q install mqprio m0 >/dev/null || fail "install mqprio m0"
		expect_rc 4 "ets over srff's own mqprio refused too" q install ets m0
		expect_rc 0 "mq over mqprio: allowed" q install mq m0
		q revert m0 >/dev/null
	fi
	# One TX queue: no mq there, no guard.
	expect_rc 0 "prio-fq on a one-queue device: no guard" q install prio-fq v0
	;;
*) fail "unknown test $what" ;;
esac
rm -rf "$SRFF_QDISC_STATE"
exit $ksft_pass
