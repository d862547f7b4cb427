# SPDX-License-Identifier: GPL-2.0
# Shared helpers for srff's kernel-side tests (sourced). Modelled on the
# kernel's tools/testing/selftests/net/lib.sh: namespaces with random
# suffixes, cleanup on exit, waiting for conditions instead of sleeping.
# Exit codes: 0 pass, 1 fail, 4 skip.

set -u
# SRFF_XTRACE=FILE: a timestamped trace of every command (where a test's
# time goes).
# shellcheck source=scripts/xtrace.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/xtrace.sh"
ksft_pass=0
ksft_fail=1
ksft_skip=4

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SRFF_KO=${SRFF_KO:-$TOP/srff_nf/srff.ko}
SRFFCTL=${SRFFCTL:-$TOP/srffctl/srffctl}
TOOLS=$TOP/tests/tools
PY=${PY:-/usr/bin/python3}
# matplotlib's font cache, built once per checkout: the guest's home is
# read-only, and a cache rebuilt at every import costs 8-14 s of emulated CPU.
export MPLCONFIGDIR=${MPLCONFIGDIR:-$TOP/tests/out/matplotlib}

NS_LIST=()
BG_PIDS=()

log() { printf '# %s\n' "$*"; }

# Print a command, then run it (WireGuard netns.sh style).
run() { printf '# + %s\n' "$*"; "$@"; }

fail() {
	printf '# FAIL: %s\n' "$*"
	exit $ksft_fail
}

skip() {
	printf '# SKIP: %s\n' "$*"
	exit $ksft_skip
}

check() {	# check DESCRIPTION COMMAND...: fail unless COMMAND succeeds
	local what=$1; shift
	if "$@"; then
		printf '# ok: %s\n' "$what"
	else
		fail "$what"
	fi
}

# expect_rc RC WHAT COMMAND...: run COMMAND, show the start of its output,
# require exit status RC; the output is left in LAST_OUT.
expect_rc() {	# expect_rc RC WHAT COMMAND...: run, show output, require RC
	local want=$1 what=$2; shift 2
	local out rc
	out=$("$@" 2>&1); rc=$?
	printf '#   %s\n' "$out" | head -3
	check "$what (exit $rc)" test "$rc" = "$want"
	LAST_OUT=$out
}

# setup_ns VAR...: create namespaces with random suffixes, lo up.
setup_ns() {
	local var name
	for var in "$@"; do
		name="$var-$(mktemp -u XXXXXX)"
		ip netns add "$name" || fail "ip netns add $name"
		ip -n "$name" link set lo up
		NS_LIST+=("$name")
		eval "$var=\$name"
	done
}

# setup_container_host: a container's namespace behind a forwarding host,
#   CTR 10.80.0.2 c0 --veth-- hin HOST 10.80.0.1 | 10.81.0.1 hout --veth-- p0 PEER 10.81.0.2
# CTR's default route through HOST, which forwards IPv4; PEER has no route
# back to 10.80.0.0/24 (the caller adds one, or masquerades at HOST).
setup_container_host() {
	local l
	setup_ns CTR HOST PEER
	ip link add c0 netns "$CTR" type veth peer name hin netns "$HOST" || fail "veth"
	ip link add hout netns "$HOST" type veth peer name p0 netns "$PEER" || fail "veth"
	ip -n "$CTR" addr add 10.80.0.2/24 dev c0
	ip -n "$HOST" addr add 10.80.0.1/24 dev hin
	ip -n "$HOST" addr add 10.81.0.1/24 dev hout
	ip -n "$PEER" addr add 10.81.0.2/24 dev p0
	for l in "$CTR c0" "$HOST hin" "$HOST hout" "$PEER p0"; do
		set -- $l; ip -n "$1" link set "$2" up
	done
	ip -n "$CTR" route add default via 10.80.0.1
	ip netns exec "$HOST" sysctl -qw net.ipv4.ip_forward=1
}

cleanup_ns() {
	local ns
	for ns in "${NS_LIST[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	NS_LIST=()
}

kill_bg() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	BG_PIDS=()
}

srff_unload() {
	if grep -q '^srff ' /proc/modules; then
		rmmod srff || return 1
	fi
}

# trace_instance NETNS_FILE: a trace instance with srff's events on, for
# the namespace of NETNS_FILE alone (its inode, as the events print it);
# sets TRACE_DIR (its trace is $TRACE_DIR/trace). Without comm recording:
# enabling the first event otherwise hooks the scheduler's sched_switch and
# sched_wakeup tracepoints, and live-patching those (int3, every wakeup)
# oopsed the 6.12 guest once under emulation, in ttwu_do_activate, with
# nothing of srff's on the stack. (An instance copies record-cmd from the
# top level when created.) Removed by default_cleanup.
TRACE_DIR=
trace_instance() {
	local tr=/sys/kernel/tracing ino rc0
	[ -e $tr/trace ] || mount -t tracefs nodev $tr 2>/dev/null || skip "no tracefs here"
	[ -d $tr/events/srff/srff_flow_create ] && [ -d $tr/events/srff/srff_flow_retire ] ||
		fail "srff's events are not in $tr/events"
	ino=$(command stat -L -c %i "$1")
	TRACE_DIR=$tr/instances/srff-test-$$
	rc0=$(cat $tr/options/record-cmd)
	echo 0 >$tr/options/record-cmd || fail "record-cmd off"
	mkdir "$TRACE_DIR" || fail "trace instance"
	echo "$rc0" >$tr/options/record-cmd
	echo "netns == $ino" >"$TRACE_DIR/events/srff/filter" || fail "event filter"
	echo 1 >"$TRACE_DIR/events/srff/enable" || fail "enable srff's events"
}

# nft_fill_postrouting NS DIR: ip6 postrouting base chains in NS until the
# kernel refuses one more (MAX_HOOK_COUNT, 1024, counts every hook there:
# 1000 in one transaction, then one at a time); the nft file goes to DIR.
# Sets FILLED to how many NS then has.
nft_fill_postrouting() {
	local i
	{
		echo "add table ip6 fill"
		for i in $(seq 1 1000); do
			echo "add chain ip6 fill c$i { type filter hook postrouting priority $i; }"
		done
	} >"$2/fill.nft"
	ip netns exec "$1" nft -f "$2/fill.nft" || fail "1000 base chains in $1"
	i=1000
	while [ "$i" -lt 1100 ] &&
	      ip netns exec "$1" nft add chain ip6 fill c$((i + 1)) \
		"{ type filter hook postrouting priority $((i + 1)); }" 2>/dev/null; do
		i=$((i + 1))
	done
	[ "$i" -lt 1100 ] || fail "the kernel took 1100 hooks at ip6 postrouting"
	FILLED=$i
}

default_cleanup() {
	kill_bg
	[ -z "$TRACE_DIR" ] || rmdir "$TRACE_DIR" 2>/dev/null
	cleanup_ns
	srff_unload
}
trap default_cleanup EXIT

# srff_load [param=value...]: with netns=all unless a netns= is given, as
# the tests send from namespaces of their own (srff's default, netns=ask,
# is on in the initial namespace only: tests/kernel/netns.sh tests it).
srff_load() {
	local p ns=netns=all
	for p in "$@"; do [[ $p == netns=* ]] && ns=; done
	srff_unload || fail "srff still loaded and cannot be removed"
	run insmod "$SRFF_KO" $ns "$@" || fail "insmod srff.ko $ns $*"
}

# wait_for TIMEOUT_S COMMAND...: poll COMMAND every 0.1 s until it succeeds.
# SRFF_TIMEOUT_SCALE (an integer, default 1) stretches every TIMEOUT: under
# the debug kernel (tests/run-debug) everything is several times slower.
wait_for() {
	local timeout=$(( $1 * ${SRFF_TIMEOUT_SCALE:-1} )); shift
	local deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
	while ! "$@"; do
		if [ "$(date +%s%N)" -gt "$deadline" ]; then
			return 1
		fi
		sleep 0.1
	done
}

# Two namespaces joined by veth, sender SND (egress shaped) and receiver RCV.
#   SND: veth0 10.77.0.1/24 fd77::1/64  <---->  RCV: veth1 10.77.0.2/24 fd77::2/64
# Neighbours are static and IPv6 autoconfiguration is off. With
# PAIR_IPV4_ONLY=1 IPv6 is disabled too (its MLD reports at link-up would
# be flows of their own), so no packet leaves veth0 that the test did not
# send.
SND_IP4=10.77.0.1
RCV_IP4=10.77.0.2
SND_IP6=fd77::1
RCV_IP6=fd77::2
setup_pair() {
	setup_ns SND RCV
	local ns
	for ns in "$SND" "$RCV"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_ra=0 \
			net.ipv6.conf.default.accept_ra=0 \
			net.ipv6.conf.default.router_solicitations=0 \
			net.ipv6.conf.default.dad_transmits=0 \
			net.ipv6.conf.all.force_mld_version=2 \
			net.ipv6.conf.default.mldv2_unsolicited_report_interval=0 \
			net.ipv6.conf.default.addr_gen_mode=1
		if [ "${PAIR_IPV4_ONLY:-0}" = 1 ]; then
			ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
				net.ipv6.conf.default.disable_ipv6=1
		fi
	done
	# PAIR_TXQUEUES=N gives both ends N TX and RX queues (mqprio, mq).
	local q=()
	[ -n "${PAIR_TXQUEUES:-}" ] &&
		q=(numtxqueues "$PAIR_TXQUEUES" numrxqueues "$PAIR_TXQUEUES")
	# Fixed, locally administered MACs for the static neighbours (reading
	# them back took two jq runs, 0.9 s in the guest).
	local mac0=02:00:0a:4d:00:01 mac1=02:00:0a:4d:00:02
	ip link add veth0 netns "$SND" address "$mac0" "${q[@]}" type veth \
		peer name veth1 netns "$RCV" address "$mac1" "${q[@]}" || fail "veth"
	ip -n "$SND" addr add $SND_IP4/24 dev veth0
	ip -n "$RCV" addr add $RCV_IP4/24 dev veth1
	if [ "${PAIR_IPV4_ONLY:-0}" != 1 ]; then
		ip -n "$SND" addr add $SND_IP6/64 dev veth0 nodad
		ip -n "$RCV" addr add $RCV_IP6/64 dev veth1 nodad
	fi
	ip -n "$SND" neigh add $RCV_IP4 lladdr "$mac1" dev veth0 nud permanent
	ip -n "$RCV" neigh add $SND_IP4 lladdr "$mac0" dev veth1 nud permanent
	if [ "${PAIR_IPV4_ONLY:-0}" != 1 ]; then
		ip -n "$SND" neigh add $RCV_IP6 lladdr "$mac1" dev veth0 nud permanent
		ip -n "$RCV" neigh add $SND_IP6 lladdr "$mac0" dev veth1 nud permanent
	fi
	ip -n "$SND" link set veth0 up
	ip -n "$RCV" link set veth1 up
}

# bulk_and_churn MIN: over setup_pair, a sink on RCV's port 5001, and from
# SND a 1 GB transfer and short connections churning for 600 s (both
# stopped by cleanup); returns once SND's srff has created MIN flows.
bulk_and_churn() {
	ip netns exec "$RCV" $PY "$TOOLS/traffic.py" tcp-sink 5001 & BG_PIDS+=($!)
	wait_for 20 sh -c "ip netns exec $RCV ss -Hltn 'sport = :5001' | grep -q ." || fail "sink"
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-send $RCV_IP4 5001 1000000000 & BG_PIDS+=($!)
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" tcp-churn $RCV_IP4 5001 600 --on 0.5 --off 0.5 &
	BG_PIDS+=($!)
	wait_for 30 sh -c "[ \$(ip netns exec $SND $SRFFCTL -j stats | jq .created) -ge $1 ]" ||
		fail "no traffic"
}

# shaped_prio NS DEV RATE [BANDS]: tbf at the root, prio 10: under it.
shaped_prio() {
	local ns=$1 dev=$2 rate=$3 bands=${4:-3}
	# burst above the largest GSO skb: tbf would otherwise split super-
	# packets (tbf_segment) and the wire would no longer show what srff saw.
	tc -n "$ns" qdisc replace dev "$dev" root handle 1: tbf rate "$rate" \
		burst 128k latency 400ms || fail "tbf"
	tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: prio \
		bands "$bands" || fail "prio"
}

# wait_drained NS DEV: wait until DEV's root tbf holds nothing.  prio's
# class counters grow at dequeue, so a test reads them only after this.
# A KASAN build (make test-debug's kernel): checks of pace or slab counts
# that its slowness and quarantine make meaningless are logged, not made.
kasan_kernel() { grep -qw kasan_report /proc/kallsyms; }

wait_drained() {
	wait_for 20 sh -c "tc -n $1 -s qdisc show dev $2 | grep -A2 '^qdisc tbf' | grep -q 'backlog 0b 0p'" ||
		fail "qdisc on $2 did not drain"
}

# class_counters NS DEV: "band pkts bytes" lines for the band classes of
# 10:, a prio, an ets or an htb (10:1 to 10:ff: htb's 10:100 is the shaper
# above them).
# (iproute2 6.1's `tc -j class show` is not JSON for every class kind, so
# the text form is parsed; prio minors are hex.)
class_counters() {
	tc -n "$1" -s class show dev "$2" |
		awk 'function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(tolower(s), i, 1)) - 1; return v }
		     /^class (prio|ets|htb) 10:/ { split($3, id, ":"); if (hex(id[2]) < 256) band = hex(id[2]) - 1 }
		     /^ Sent/ && band != "" { print band, $4, $2; band = "" }' |
		sort -n
}

# offloads NS DEV on|off: TSO/GSO/GRO together.
offloads() {
	ip netns exec "$1" ethtool -K "$2" tso "$3" gso "$3" gro "$3" \
		>/dev/null 2>&1 || true
}

srffctl() { ip netns exec "${SRFF_NS:?}" "$SRFFCTL" "$@"; }

# stat NAME: one number from `srffctl -j stats` in $SRFF_NS.
stat() { srffctl -j stats | jq -r ".$1"; }

# tcpdump_start NS DEV FILE PEER_NS PEER_DEV: capture on DEV (a veth whose
# peer is PEER_DEV in PEER_NS) until tcpdump_stop, ready on return.
# --immediate-mode hands each frame to tcpdump at once (not when a ring block
# times out) and -U writes it at once. In immediate mode libpcap's ring has
# one slot per frame, sized by the snapshot length: with -s 0 (256 KiB) and
# the default 2 MiB buffer that is 8 slots, and a burst of small datagrams
# under emulation overflowed it (CI: "7 packets dropped by kernel"). A
# snapshot just over the largest GSO skb (64 KiB + headers) and a 64 MiB
# buffer give ~900 slots; tcpdump_stop fails if any frame was dropped.
tcpdump_start() {
	local ns=$1 dev=$2 file=$3
	TCPDUMP_PEER_NS=$4 TCPDUMP_PEER_DEV=$5
	ip netns exec "$ns" tcpdump -i "$dev" --immediate-mode -U -n -s 70000 -B 65536 \
		-w "$file" 2>"$file.log" &
	TCPDUMP_PID=$!
	TCPDUMP_FILE=$file
	BG_PIDS+=("$TCPDUMP_PID")
	wait_for 20 grep -q "listening on" "$file.log" ||
		fail "tcpdump did not start"
}

# tcpdump_stop: everything the device carried so far is in the file on
# return. SIGINT alone would drop the frames tcpdump has not read yet; so a
# sentinel frame comes in from the peer after them (tests/tools/traffic.py),
# and tcpdump stops once it has written it.
tcpdump_has_sentinel() {
	tcpdump -r "$TCPDUMP_FILE" -nn -c 1 'ether proto 0x88b5' 2>/dev/null | grep -q .
}

tcpdump_stop() {
	ip netns exec "$TCPDUMP_PEER_NS" $PY "$TOOLS/traffic.py" sentinel "$TCPDUMP_PEER_DEV" stop ||
		fail "sending the capture sentinel"
	wait_for 20 tcpdump_has_sentinel || fail "the capture sentinel never reached $TCPDUMP_FILE"
	kill -INT "$TCPDUMP_PID" 2>/dev/null
	wait "$TCPDUMP_PID" 2>/dev/null
	log "tcpdump: $(grep -E 'captured|received|dropped' "$TCPDUMP_FILE.log" | tr '\n' ' ')"
	grep -q '^0 packets dropped by kernel' "$TCPDUMP_FILE.log" ||
		fail "the capture is incomplete: $(grep 'dropped by kernel' "$TCPDUMP_FILE.log")"
}
