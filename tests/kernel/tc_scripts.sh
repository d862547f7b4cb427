#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tc_scripts.sh: tc-scripts/srff-qdisc installs each setup, is idempotent,
# reverts to what was there before (the default fq_codel, or a custom root),
# and refuses unknown devices and bad rates with exit 2.
. "$(dirname "$0")/../lib.sh"

Q=$TOP/tc-scripts/srff-qdisc
export SRFF_QDISC_STATE=$(mktemp -d)
setup_ns NS
ip -n "$NS" link add v0 numtxqueues 4 numrxqueues 4 type veth peer name v1 numtxqueues 4 numrxqueues 4
ip -n "$NS" link set v0 up
ip -n "$NS" link set v1 up
q() { ip netns exec "$NS" "$Q" "$@"; }
root() { tc -n "$NS" qdisc show dev v0 root | awk '{print $2, $3}' | head -1; }
# veth's default root is noqueue; make it Debian's usual fq_codel first.
tc -n "$NS" qdisc replace dev v0 root fq_codel
orig=$(root)
check "starts at fq_codel ($orig)" test "$(root | cut -d' ' -f1)" = fq_codel

for setup in "pfifo-fast" "prio 3" "prio 5" "shaped 50mbit" "shaped 50mbit 6" "shaped-fq 10mbit" "mq" "mq 4"; do
	# shellcheck disable=SC2086
	run q install ${setup%% *} v0 $( [ "$setup" != "${setup#* }" ] && echo ${setup#* } ) >/dev/null ||
		fail "install $setup"
	first=$(tc -n "$NS" qdisc show dev v0)
	# shellcheck disable=SC2086
	q install ${setup%% *} v0 $( [ "$setup" != "${setup#* }" ] && echo ${setup#* } ) >/dev/null ||
		fail "install $setup again"
	check "install $setup is idempotent" test "$(tc -n "$NS" qdisc show dev v0)" = "$first"
	case $setup in
	pfifo-fast) check "  pfifo_fast at the root" test "$(root | cut -d' ' -f1)" = pfifo_fast ;;
	prio*) check "  prio ${setup#prio } bands" tc -n "$NS" qdisc show dev v0 root | grep -q "prio 10: root bands ${setup#prio }" ;;
	shaped-fq*) check "  tbf with fq_codel under it" sh -c "tc -n $NS qdisc show dev v0 | grep -q 'fq_codel 10: parent 1:1'" ;;
	shaped*) check "  tbf with prio under it" sh -c "tc -n $NS qdisc show dev v0 | grep -q 'prio 10: parent 1:1'" ;;
	mq*) check "  a prio for each of 4 TX queues" test "$(tc -n "$NS" qdisc show dev v0 | grep -c '^qdisc prio')" = 4 ;;
	esac
	run q revert v0 >/dev/null || fail "revert $setup"
	check "  revert restores $orig" test "$(root)" = "$orig"
done

# A custom root is re-created on revert, with its parameters.
tc -n "$NS" qdisc replace dev v0 root handle 5: tbf rate 7mbit burst 20kb latency 50ms
custom=$(tc -n "$NS" qdisc show dev v0 root)
q install prio v0 >/dev/null
q revert v0 >/dev/null
check "custom root re-created: $custom" test "$(tc -n "$NS" qdisc show dev v0 root)" = "$custom"

out=$(q install shaped nosuchdev 50mbit 2>&1); rc=$?
check "unknown device refused, exit 2: $out" test $rc = 2
out=$(q install shaped v0 fast 2>&1); rc=$?
check "bad rate refused, exit 2: $out" test $rc = 2
out=$(q install shaped v0 0mbit 2>&1); rc=$?
check "zero rate refused, exit 2" test $rc = 2
out=$(q install prio v0 40 2>&1); rc=$?
check "40 bands refused, exit 2" test $rc = 2
check "nothing changed by the refusals" test "$(tc -n "$NS" qdisc show dev v0 root)" = "$custom"
rm -rf "$SRFF_QDISC_STATE"
exit $ksft_pass
