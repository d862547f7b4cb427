#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tc_scripts.sh: tc-scripts/srff-qdisc installs each setup, is idempotent,
# replaces one setup by another leaving nothing of it, reverts to what was
# there before (the default fq_codel, or a custom root), refuses unknown
# devices, bad rates and bad band counts with exit 2, and what this kernel,
# tc or device cannot do (fq-bands before 6.7, mqprio on one TX queue) with
# exit 3. --help prints the usage on stdout, exit 0. (Rollback, whole
# trees, reverts from each kind of tree, -n and the multiqueue guard in
# depth: qdisc_tree.sh.)
#
# tc_scripts.sh [main|fq-bands]: two tests (TESTS). fq-bands is the part that
# differs by kernel where setups.sh does not look, so CI runs that part alone
# on its second kernel (docs/testing.md, "CI").
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

Q=$TOP/tc-scripts/srff-qdisc
SRFF_QDISC_STATE=$(mktemp -d)
export SRFF_QDISC_STATE
part=${1:-main}
case $part in main|fq-bands) ;; *) fail "usage: tc_scripts.sh [main|fq-bands]" ;; esac
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

# kinds: the qdisc at the root, and the one at 1:1 under a shaper.
kinds() { tc -n "$NS" qdisc show dev v0 | awk '$4 == "root" { r = $2 } $4 == "parent" && $5 == "1:1" { c = "/" $2 } END { print r c }'; }

if [ "$part" = main ]; then
# fq_codel leaves of 10:'s bands (handles 101:, 102:, ...)
leaves() { tc -n "$NS" qdisc show dev v0 | grep -c '^qdisc fq_codel 1[0-9a-f][0-9a-f]: parent 10:'; }
# ets quanta for v0 (MTU 1500: 1514 bytes a quantum), band 0 strict:
# 3:1 for 3 bands, 27:9:3:1 for 5.
ETS3="bands 3 strict 1 quanta 4542 1514 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1"
ETS5="bands 5 strict 1 quanta 40878 13626 4542 1514 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1"

# The debug kernel (tests/run-debug) may lack sch_mqprio: its setups are
# then left out, and said so.
no_mqprio=
[ -e /sys/module/sch_mqprio ] || modprobe -q sch_mqprio || { no_mqprio=1; log "no sch_mqprio in this kernel: mqprio left out"; }

twice=
# The fq_codel leaves under 10: (prio-fq's; none in prio's default leaves).
fq_leaves() { tc -n "$NS" qdisc show dev v0 | grep -c '^qdisc fq_codel 10[0-9a-f]: parent 10:'; }
# One chain: each setup installed over the one before it (srff-qdisc
# deletes first: the kernel changes no qdisc into another kind), so each
# tree below is also what a replacement leaves, with nothing of the one
# before it (the leaf counts are exact); revert once after the one-root
# setups and once after mq and mqprio. Each setup once, and with another
# band count where the tree's shape depends on it in ways srff-qdisc.sh's
# stub tc cannot show (ets's quanta, htb's rates and classes, mq's
# queues); the others' N is srff-qdisc.sh's. Reverts from each kind of
# tree, the multiqueue guard and --force in depth: qdisc_tree.sh.
for setup in "pfifo-fast" "prio 3" "prio-fq" "prio" "ets" "ets 5" "shaped 50mbit" \
	"shaped-fq 10mbit" "shaped-prio-fq 50mbit" "shaped-ets 50mbit" "shaped-htb 50mbit 8" \
	"shaped-htb 50mbit 4" "shaped-htb 50mbit" "prio-fq 4" revert \
	"mqprio" "mq" "mq 4" "mqprio" "ets" revert; do
	if [ "$setup" = revert ]; then
		run q revert v0 >/dev/null || fail "revert after $(kinds)"
		check "revert restores $orig" test "$(root)" = "$orig"
		continue
	fi
	[ -n "$no_mqprio" ] && [ "$setup" = mqprio ] && continue
	# A one-root setup over mq or mqprio on 4 TX queues needs --force.
	force=
	case $(kinds):${setup%% *} in
	mq*:mq|mq*:mqprio) ;;
	mq*) force=--force ;;
	esac
	# shellcheck disable=SC2046,SC2086
	run q $force install ${setup%% *} v0 $( [ "$setup" != "${setup#* }" ] && echo ${setup#* } ) >/dev/null ||
		fail "install $setup over $(kinds)"
	# Installed twice, the first time a setup comes: a second install is
	# one more srff-qdisc run of seconds under emulation.
	case " $twice " in
	*" ${setup%% *} "*) ;;
	*)
		twice+=" ${setup%% *}"
		first=$(tc -n "$NS" qdisc show dev v0)
		# shellcheck disable=SC2046,SC2086
		q install ${setup%% *} v0 $( [ "$setup" != "${setup#* }" ] && echo ${setup#* } ) >/dev/null ||
			fail "install $setup again"
		check "install $setup is idempotent" test "$(tc -n "$NS" qdisc show dev v0)" = "$first"
		;;
	esac
	log "$setup: $(kinds)"
	case $setup in
	pfifo-fast) check "  pfifo_fast at the root" test "$(root | cut -d' ' -f1)" = pfifo_fast ;;
	prio-fq*)
		n=${setup#prio-fq}; n=${n:-3}; n=${n# }
		check "  prio $n bands at the root" sh -c "tc -n $NS qdisc show dev v0 root | grep -q 'prio 10: root .*bands $n '"
		check "  an fq_codel in each of its $n bands" test "$(leaves)" = "$n"
		;;
	prio*)
		n=${setup#prio}; n=${n:-3}; n=${n# }
		check "  prio $n bands" sh -c "tc -n $NS qdisc show dev v0 root | grep -q 'prio 10: root .*bands $n '"
		check "  and pfifo leaves, no fq_codel ($(fq_leaves))" test "$(fq_leaves)" = 0
		;;
	ets*)
		n=${setup#ets}; n=${n:-3}; n=${n# }
		want=$ETS3; [ "$n" = 5 ] && want=$ETS5
		check "  ets at the root: $want" sh -c "tc -n $NS qdisc show dev v0 root | grep -q 'ets 10: root .*$want'"
		check "  an fq_codel in each of its $n bands" test "$(leaves)" = "$n"
		;;
	shaped-fq*) check "  tbf with fq_codel under it" sh -c "tc -n $NS qdisc show dev v0 | grep -q 'fq_codel 10: parent 1:1'" ;;
	shaped-prio-fq*)
		n=${setup#shaped-prio-fq 50mbit}; n=${n:-3}; n=${n# }
		check "  tbf with prio $n bands under it" sh -c "tc -n $NS qdisc show dev v0 | grep -q '^qdisc tbf 1: root' && tc -n $NS qdisc show dev v0 | grep -q 'prio 10: parent 1:1 bands $n '"
		check "  an fq_codel in each of its $n bands" test "$(leaves)" = "$n"
		;;
	shaped-ets*)
		n=${setup#shaped-ets 50mbit}; n=${n:-3}; n=${n# }
		want=$ETS3; [ "$n" = 5 ] && want=$ETS5
		check "  tbf with ets under it: $want" sh -c "tc -n $NS qdisc show dev v0 | grep -q '^qdisc tbf 1: root' && tc -n $NS qdisc show dev v0 | grep -q 'ets 10: parent 1:1 $want'"
		check "  an fq_codel in each of its $n bands" test "$(leaves)" = "$n"
		;;
	shaped-htb*)
		n=${setup#shaped-htb 50mbit}; n=${n:-3}; n=${n# }
		check "  htb 10: at the root, unclassified to 10:2" sh -c "tc -n $NS qdisc show dev v0 root | grep -q '^qdisc htb 10: root .*default 0x2 '"
		check "  its class 10:100 shapes to 50Mbit" sh -c "tc -n $NS class show dev v0 | grep -q '^class htb 10:100 root rate 50Mbit ceil 50Mbit '"
		# 10 % of 50 Mbit/s assured over the bands, each at its htb prio;
		# the rate as tc prints it (the kernel keeps bytes/s; tc 6.1's
		# print_rate: K, M, ... while the rest divides, else 4 digits).
		a=$(awk -v r=$(( 5000000 / n / 8 * 8 )) 'BEGIN { split("K M G T", u, " ")
			for (i = 0; i < 4 && r >= 1000 && !(r % 1000 && r < 1000000); i++) r = int(r / 1000)
			printf "%d%sbit", r, i ? u[i] : "" }')
		for ((b = 1; b <= n; b++)); do
			check "  band $((b - 1)): class 10:$b at prio $((b - 1)), assured $a, ceil 50Mbit" sh -c \
				"tc -n $NS class show dev v0 | grep -q '^class htb 10:$b parent 10:100 leaf 10$b: prio $((b - 1)) rate $a ceil 50Mbit '"
		done
		check "  no class beyond band $((n - 1))" test "$(tc -n "$NS" class show dev v0 | grep -c '^class htb 10:[0-9a-f] parent 10:100 ')" = "$n"
		check "  an fq_codel in each of its $n bands" test "$(leaves)" = "$n"
		;;
	shaped*)
		check "  tbf with prio under it" sh -c "tc -n $NS qdisc show dev v0 | grep -q 'prio 10: parent 1:1'"
		check "  and pfifo leaves, no fq_codel ($(fq_leaves))" test "$(fq_leaves)" = 0
		;;
	mqprio)
		log "$(tc -n "$NS" qdisc show dev v0 root | tr -s ' \n' '  ')"
		check "  mqprio: 3 traffic classes on queues 1, 2 and 3-4" sh -c "tc -n $NS qdisc show dev v0 root | tr -s ' \n' '  ' | grep -q 'mqprio 1: root .*tc 3 map 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 queues:(0:0) (1:1) (2:3)'"
		check "  an fq_codel on each of 4 TX queues, nothing else" test "$(tc -n "$NS" qdisc show dev v0 | grep -c '^qdisc fq_codel 20[1-4]: parent 1:[1-4] ')/$(tc -n "$NS" qdisc show dev v0 | grep -c '^qdisc ')" = 4/5
		;;
	mq*)
		n=${setup#mq}; n=${n:-3}; n=${n# }
		check "  an ets $n bands on each of 4 TX queues" test "$(tc -n "$NS" qdisc show dev v0 | grep -c "^qdisc ets 1[1-4]: parent 1:[1-4] bands $n strict 1 ")" = 4
		check "  and an fq_codel in each band of each: $((4 * n))" \
			test "$(tc -n "$NS" qdisc show dev v0 | grep -c '^qdisc fq_codel 10[0-9a-f][0-9a-f]: parent 1[1-4]:')" = $((4 * n))
		;;
	esac
done

fi

if [ "$part" = fq-bands ]; then
# fq-bands: Linux 6.7+ and iproute2 6.7+; elsewhere exit 3, nothing changed.
before=$(tc -n "$NS" qdisc show dev v0)
out=$(q install fq-bands v0 2>&1); rc=$?
if [ $rc = 3 ]; then
	check "fq-bands not supported here, exit 3: $out" test "$(tc -n "$NS" qdisc show dev v0)" = "$before"
	out=$(q install shaped-fq-bands v0 20mbit 2>&1); rc=$?
	check "shaped-fq-bands likewise, exit 3 ($rc), nothing changed" \
		test $rc = 3 -a "$(tc -n "$NS" qdisc show dev v0)" = "$before"
else
	check "fq-bands installed (exit $rc): $out" test $rc = 0
	check "  fq 10: with bands 3, the default priomap, weights 9:3:1" sh -c \
		"tc -n $NS qdisc show dev v0 root | grep -q 'fq 10: root .*bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 weights 589824 196608 65536'"
	first=$(tc -n "$NS" qdisc show dev v0)
	q install fq-bands v0 >/dev/null
	check "  idempotent" test "$(tc -n "$NS" qdisc show dev v0)" = "$first"
	q install shaped-fq-bands v0 20mbit >/dev/null
	check "  shaped-fq-bands: tbf with fq under it" test "$(kinds)" = tbf/fq
	q revert v0 >/dev/null
	check "  revert restores $orig" test "$(root)" = "$orig"
fi

rm -rf "$SRFF_QDISC_STATE"
exit "$ksft_pass"
fi

# mqprio needs a TX queue per band: a one-queue device is refused, exit 3.
ip -n "$NS" link add v2 type veth peer name v3
ip -n "$NS" link set v2 up
one=$(tc -n "$NS" qdisc show dev v2)
out=$(q install mqprio v2 2>&1); rc=$?
check "mqprio on a 1-queue device refused, exit 3 ($rc): $out" \
	test $rc = 3 -a "$(tc -n "$NS" qdisc show dev v2)" = "$one"

# A custom root is re-created on revert, with its parameters.
tc -n "$NS" qdisc replace dev v0 root handle 5: tbf rate 7mbit burst 20kb latency 50ms
custom=$(tc -n "$NS" qdisc show dev v0 root)
q install prio v0 >/dev/null
q revert v0 >/dev/null
check "custom root re-created: $custom" test "$(tc -n "$NS" qdisc show dev v0 root)" = "$custom"

out=$(q --help 2>"$SRFF_QDISC_STATE/err"); rc=$?
check "--help: exit 0 ($rc), the usage on stdout, nothing on stderr" \
	test $rc = 0 -a -n "$out" -a ! -s "$SRFF_QDISC_STATE/err"
check "  it lists the setups" grep -q "srff-qdisc install prio-fq DEV" <<<"$out"
out=$(q -h 2>/dev/null); rc=$?
check "-h: exit 0 ($rc)" test $rc = 0 -a -n "$out"
out=$(q --bogus 2>&1 >/dev/null); rc=$?
check "unknown option: exit 2 ($rc), usage on stderr" test $rc = 2 -a -n "$out"
out=$(q install shaped nosuchdev 50mbit 2>&1); rc=$?
check "unknown device refused, exit 2: $out" test $rc = 2
out=$(q install shaped v0 fast 2>&1); rc=$?
check "bad rate refused, exit 2: $out" test $rc = 2
out=$(q install shaped v0 0mbit 2>&1); rc=$?
check "zero rate refused, exit 2" test $rc = 2
out=$(q install prio v0 40 2>&1); rc=$?
check "40 bands refused, exit 2" test $rc = 2
for bad in "ets v0 1" "ets v0 17" "prio-fq v0 many" "shaped-ets v0 fast" "shaped-prio-fq v0" \
	"shaped-ets nosuchdev 10mbit" "fq-bands v0 3" "shaped-fq-bands v0 0mbit" "mqprio v0 3" "fair v0"; do
	# shellcheck disable=SC2086 # the words of $bad
	out=$(q install $bad 2>&1); rc=$?
	check "install $bad refused, exit 2 ($rc): $(echo "$out" | head -n1)" test $rc = 2
done
check "nothing changed by the refusals" test "$(tc -n "$NS" qdisc show dev v0 root)" = "$custom"
rm -rf "$SRFF_QDISC_STATE"
exit "$ksft_pass"
