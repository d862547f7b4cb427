#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/debug-uaf.sh: the uaf canary. Runs in the debug guest (tests/run-
# debug runs it after the suite; `tests/run-debug uaf` runs it alone).
#
# Proves that the debug kernel catches srff's old teardown use-after-free
# every time, so that a clean debug run means something. srff.ko built with
# SRFF_TEST=1 has two test-only parameters:
#   test_hook_delay_us=N    the packet hook busy-waits N us while holding
#                           pointers to its namespace's config and table,
#                           then reads them: the race window, made wide;
#   test_unsafe_teardown=1  the namespace teardown unregisters the hooks in
#                           .exit, as the buggy version did, not .pre_exit;
#                           and `srffctl set enabled off` frees the
#                           namespace's tracker without waiting for the
#                           packets in its hook (no synchronize_net).
#
#   A: senders (raw IP, GRE), several pinned to each CPU --> d0 (dummy)
#
# Each round loads srff with a 20 ms hook delay while the senders run, so
# that the senders are in A's POST_ROUTING hook, and unloads it (rmmod)
# under them; the round "catches" the bug if a KASAN report appears.
# Expected: every round with the unsafe teardown, no round with the safe
# one. Why every round and not most: with one sender per CPU, the teardown
# only races if it unhooks while a sender happens to be inside (measured
# under emulation: about half of the rounds). So the canary switches the
# kernel to full preemption (the guest boots with preempt=full; Debian's
# kernel is PREEMPT_DYNAMIC) and runs several senders per CPU: a sender is
# then also preempted *inside* the hook, holding its pointers, and at any
# moment some are. They run at nice 19, so that rmmod and the kernel's
# threads are not slowed down by them (a round takes ~20 s, not ~60 s).
#
# SRFF_UAF_KINDS=disable (tests/run-debug runs "rmmod disable", which
# alternates) switches srff off in A (`srffctl set enabled off`) under the
# senders instead of unloading it: the runtime teardown of one namespace.
#
# SRFF_UAF_KINDS=enable (tests/run-debug runs "rmmod disable enable")
# fails `srffctl set enabled on` in a namespace E whose nftables fill ip6
# postrouting (IPv6's registration fails with -E2BIG after IPv4's
# succeeded, and IPv4's is unregistered again) while senders flood IPv4
# from E: a packet in that window queues the resize worker, and the test
# build's test_worker_delay_ms keeps that worker asleep past the refusal.
# The unsafe order frees the tracker without cancelling it (the worker then
# reads freed memory); the real one cancels it first. No hook delay: the
# window is microseconds, the senders must be fast.
#
# SRFF_UAF_KINDS=netns (or "rmmod netns") tears down by deleting a
# namespace C instead: a raw-frame flood from A over a veth makes C's
# kernel answer through C's hook, and C is deleted under it. On 6.1 that
# cannot race, unsafe or not: cleanup_net unregisters C's devices (with a
# grace period) before any subsystem's .exit runs, so no packet can be in
# C's hook by then (measured: 0 of 2 unsafe rounds). It is there to show
# that, not in the default run.
#
# Needs kasan_multi_shot (else KASAN reports once a boot), no panic_on_warn
# (set here) and 2 CPUs. Environment: SRFF_UAF_ROUNDS (10),
# SRFF_UAF_DELAY_US (20000), SRFF_UAF_SENDERS (senders per CPU, 3),
# SRFF_UAF_KINDS (rmmod), SRFF_TEST_OUT (each round's kernel log goes to
# its uaf/; tests/out).
# Exit: 0 if caught in every unsafe round and in no safe round, 1 if not,
# 4 (skip) if this is not a KASAN kernel.
. "$(dirname "$0")/lib.sh"

rounds=${SRFF_UAF_ROUNDS:-10}
delay=${SRFF_UAF_DELAY_US:-20000}
per_cpu=${SRFF_UAF_SENDERS:-3}
kinds=${SRFF_UAF_KINDS:-rmmod}
dir=${SRFF_TEST_OUT:-$TOP/tests/out}/uaf
mkdir -p "$dir"
KASAN_RE='BUG: KASAN:'

kasan_kernel || skip "not a KASAN kernel"
grep -qw kasan_multi_shot /proc/cmdline || skip "boot with kasan_multi_shot (tests/run-debug does)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (SRFF_VM_CPUS)"
for p in test_hook_delay_us test_unsafe_teardown test_worker_delay_ms; do
	/sbin/modinfo -F parm "$SRFF_KO" | grep -q "^$p:" ||
		fail "$SRFF_KO has no $p: build it with SRFF_TEST=1"
done
# Every round, not most, needs full preemption (above): without it this is
# luck, so it is a failure, not a warning. The mode in force, not the
# command line: PREEMPT_DYNAMIC's debugfs file marks it "(full)" where
# the kernel has SCHED_DEBUG; elsewhere (the debug kernel) it can only be
# set at boot, and the kernel logs it ("Dynamic Preempt: full"), in the
# boot log tests/run-debug keeps before it clears the ring buffer.
[ -e /sys/kernel/debug/sched ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
preempt=$(cat /sys/kernel/debug/sched/preempt 2>/dev/null)
if [ -z "$preempt" ]; then
	preempt=$({ cat "${SRFF_TEST_OUT:-/nonexistent}/boot.dmesg" 2>/dev/null; dmesg; } |
		grep -o 'Dynamic Preempt: [a-z]*' | tail -n1)
	[ "${preempt##* }" = full ] && preempt="$preempt (full)"
fi
[[ $preempt == *'(full)'* ]] ||
	fail "preemption is not full (${preempt:-no /sys/kernel/debug/sched/preempt, no 'Dynamic Preempt' in the boot log}): boot with preempt=full, as tests/run-debug does"
log "preemption: $preempt"
sysctl -qw kernel.panic_on_warn=0

# sender.py DST: IP packets of protocol GRE (a raw socket: srff takes them
# for a tunnel's outer header), as fast as it goes. Not UDP or TCP: after
# the delay, srff_hook would go on into the freed table, take its freed
# bucket locks and insert flows into it, and a few unsafe rounds of that
# hung the guest. A tunnel's packet only reads the freed config, then
# leaves the hook: each round then costs only its KASAN reports.
cat >"$dir/sender.py" <<-'PY'
	import socket, sys
	s = socket.socket(socket.AF_INET, socket.SOCK_RAW, 47)
	while True:
	    try:
	        s.sendto(b'srff-uaf' * 4, (sys.argv[1], 0))
	    except OSError:
	        pass
	PY
# usender.py DST: UDP datagrams, each to a port of its own (a flow each), as
# fast as it goes: the enable rounds' senders, whose flows the trace sees.
cat >"$dir/usender.py" <<-'PY'
	import socket, sys
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	i = 0
	while True:
	    try:
	        s.sendto(b'srff-uaf', (sys.argv[1], 1024 + i % 60000))
	    except OSError:
	        pass
	    i += 1
	PY
# blaster.py DEV DST_MAC SRC_MAC SRC_IP DST_IP: ICMP echo requests as raw
# frames (AF_PACKET: no hook in the sender's namespace), in bursts faster
# than the peer can answer through a delayed hook.
cat >"$dir/blaster.py" <<-'PY'
	import socket, struct, sys, time
	dev, dmac, smac, sip, dip = sys.argv[1:6]
	def csum(b):
	    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
	    while s >> 16:
	        s = (s & 0xffff) + (s >> 16)
	    return ~s & 0xffff
	eth = bytes.fromhex(dmac.replace(':', '')) + bytes.fromhex(smac.replace(':', '')) + b'\x08\x00'
	frames = []
	for seq in range(20):
	    icmp = struct.pack('!BBHHH', 8, 0, 0, 0x5352, seq) + b'srff-uaf' * 4
	    icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
	    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(icmp), seq, 0, 64, 1, 0,
	                     socket.inet_aton(sip), socket.inet_aton(dip))
	    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
	    frames.append(eth + ip + icmp)
	s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
	s.bind((dev, 0))
	while True:
	    for f in frames:
	        try:
	            s.send(f)
	        except OSError:
	            pass
	    time.sleep(0.2)
	PY

# pair NS1 NS2 DEV1 DEV2 NET: veth DEV1 (NET.1/24) in NS1 to DEV2 (NET.2)
# in NS2, static neighbours; sets MAC1 and MAC2.
pair() {
	ip link add "$3" netns "$1" type veth peer name "$4" netns "$2"
	ip -n "$1" addr add "$5.1/24" dev "$3"
	ip -n "$2" addr add "$5.2/24" dev "$4"
	ip -n "$1" link set "$3" up
	ip -n "$2" link set "$4" up
	MAC1=$(ip -n "$1" -j link show "$3" | jq -r '.[0].address')
	MAC2=$(ip -n "$2" -j link show "$4" | jq -r '.[0].address')
	ip -n "$1" neigh replace "$5.2" dev "$3" lladdr "$MAC2" nud permanent
	ip -n "$2" neigh replace "$5.1" dev "$4" lladdr "$MAC1" nud permanent
}

# kasan_after TAG: KASAN reports since the last call, kept in TAG.dmesg.
kasan_after() {
	dmesg -c >"$dir/$1.dmesg"
	grep -cE -- "$KASAN_RE" "$dir/$1.dmesg" || true
}

# round_rmmod TAG UNSAFE: the senders run while srff is loaded, then rmmod
# under them. round_disable: srff is switched off in A under them instead
# (srffctl set enabled off), and unloaded after. Set K.
SENDERS=() ESENDERS=()
# lib.sh's cleanup kills and waits for the background jobs: a stopped
# sender would never die of it.
trap '[ ${#SENDERS[@]} -eq 0 ] || kill -CONT "${SENDERS[@]}" 2>/dev/null
      [ ${#ESENDERS[@]} -eq 0 ] || kill -CONT "${ESENDERS[@]}" 2>/dev/null
      default_cleanup' EXIT
round_senders() {	# round_senders TAG UNSAFE rmmod|disable
	local tag=$1 unsafe=$2 how=$3
	dmesg -c >"$dir/$tag.before.dmesg"
	srff_load "${params[@]}" test_unsafe_teardown="$unsafe" >/dev/null
	kill -CONT "${SENDERS[@]}"
	# Long enough for every sender to be in the hook a few times.
	sleep 1
	if [ "$how" = disable ]; then
		ip netns exec "$A" "$SRFFCTL" set enabled off || fail "srffctl set enabled off"
	else
		rmmod srff || fail "rmmod srff"
	fi
	kill -STOP "${SENDERS[@]}"
	srff_unload || fail "rmmod srff"
	K=$(kasan_after "$tag")
}
round_rmmod() { round_senders "$1" "$2" rmmod; }
round_disable() { round_senders "$1" "$2" disable; }

# round_netns TAG UNSAFE: C answers the blaster in A through its hook, and
# is deleted under it; then srff is unloaded with no load. Sets K.
round_netns() {
	local tag=$1 unsafe=$2 blaster C
	dmesg -c >"$dir/$tag.before.dmesg"
	srff_load "${params[@]}" test_unsafe_teardown="$unsafe" >/dev/null
	setup_ns C
	pair "$A" "$C" wa wc 10.99.1
	taskset -c 0 ip netns exec "$A" $PY "$dir/blaster.py" wa "$MAC2" "$MAC1" 10.99.1.1 10.99.1.2 &
	blaster=$!
	wait_for 30 sh -c "[ \$(ip -n $C -j -s link show wc | jq '.[0].stats64.tx.packets') -gt 10 ]" ||
		log "$tag: $C does not answer"
	ip netns del "$C"
	# Its teardown (cleanup_net, in a kworker) is over once its veth, and
	# with it A's end, is gone.
	wait_for 60 sh -c "! ip -n $A link show wa >/dev/null 2>&1" ||
		log "$tag: $C was not torn down within 60 s"
	kill "$blaster"; wait "$blaster" 2>/dev/null
	srff_unload || fail "rmmod srff"
	K=$(kasan_after "$tag")
}

# round_enable TAG UNSAFE: refused enables in E under its senders, with
# the workers held asleep 300 ms, until one met packets (a flow of E's
# traced: each datagram goes to a port of its own) or ENABLE_TRIES; then
# 1 s for a worker the unsafe order left behind to wake. Under the debug
# kernel about one refusal in ten meets packets (the window is
# microseconds; seen: 3 of 40), so a fixed count of ten missed a round in
# four. A round whose refusals met no packet shows nothing either way: it
# fails the canary. Sets K.
ENABLE_TRIES=${SRFF_UAF_ENABLE_TRIES:-100}
round_enable() {
	local tag=$1 unsafe=$2 i
	dmesg -c >"$dir/$tag.before.dmesg"
	srff_load netns=ask test_worker_delay_ms=300 hash_buckets=64 test_unsafe_teardown="$unsafe" >/dev/null
	trace_instance "/run/netns/$E"
	kill -CONT "${ESENDERS[@]}"
	for ((i = 1; i <= ENABLE_TRIES; i++)); do
		ip netns exec "$E" "$SRFFCTL" set enabled on 2>/dev/null &&
			fail "$tag: srff was enabled in E: its postrouting is not full"
		grep -q srff_flow_create "$TRACE_DIR/trace" && break
	done
	sleep 1
	kill -STOP "${ESENDERS[@]}"
	rmdir "$TRACE_DIR" && TRACE_DIR=
	srff_unload || fail "rmmod srff"
	K=$(kasan_after "$tag")
	if [ "$i" -gt "$ENABLE_TRIES" ]; then
		log "$tag: none of $ENABLE_TRIES refusals met a packet"
		ROUND_VOID=1
	else
		log "$tag: refusal $i met packets"
	fi
}

# A small table: the teardown sweeps every bucket, in every namespace.
params=(test_hook_delay_us="$delay" hash_buckets=64)
setup_ns A
if [[ " $kinds " == *" rmmod "* || " $kinds " == *" disable "* ]]; then
	ip -n "$A" link add d0 type dummy
	ip -n "$A" addr add 10.99.0.1/24 dev d0
	ip -n "$A" link set d0 up
	for cpu in $(seq 0 $(( $(nproc) - 1 ))); do
		for i in $(seq "$per_cpu"); do
			nice -n 19 taskset -c "$cpu" ip netns exec "$A" $PY "$dir/sender.py" 10.99.0.2 &
			SENDERS+=($!)
			BG_PIDS+=($!)
		done
	done
	# Paused between rounds; started (python is slow to start under
	# emulation) before the first.
	wait_for 120 sh -c "[ \$(ip -n $A -j -s link show d0 | jq '.[0].stats64.tx.packets') -gt 2000 ]" ||
		fail "the senders did not start"
	kill -STOP "${SENDERS[@]}"
	log "${#SENDERS[@]} senders in $A, hook delay $delay us"
fi

if [[ " $kinds " == *" enable "* ]]; then
	setup_ns E
	ip -n "$E" link add d0 type dummy
	ip -n "$E" addr add 10.99.2.1/24 dev d0
	ip -n "$E" link set d0 up
	nft_fill_postrouting "$E" "$dir"
	i=$FILLED
	for cpu in $(seq 0 $(( $(nproc) - 1 ))); do
		taskset -c "$cpu" ip netns exec "$E" $PY "$dir/usender.py" 10.99.2.2 &
		ESENDERS+=($!)
		BG_PIDS+=($!)
	done
	wait_for 120 sh -c "[ \$(ip -n $E -j -s link show d0 | jq '.[0].stats64.tx.packets') -gt 2000 ]" ||
		fail "E's senders did not start"
	kill -STOP "${ESENDERS[@]}"
	log "${#ESENDERS[@]} senders in $E, $i hooks at its ip6 postrouting"
fi

shown=
unsafe_hit=0 safe_hit=0 void=0
# Safe rounds first: the unsafe ones leave freed memory written to and
# flows leaked, which must not be what a safe round reports.
for unsafe in 0 1; do
	what=$([ "$unsafe" = 1 ] && echo unsafe || echo safe)
	for n in $(seq 1 "$rounds"); do
		# SRFF_UAF_KINDS cycles: "rmmod netns" alternates.
		set -- $kinds
		shift $(( (n - 1) % $# ))
		kind=$1
		tag=$(printf '%s-%02d-%s' "$what" "$n" "$kind")
		start=$(date +%s)
		ROUND_VOID=
		"round_$kind" "$tag" "$unsafe"
		[ -z "$ROUND_VOID" ] || void=$((void + 1))
		printf '# %s teardown, round %d (%s): %s KASAN report(s), %d s\n' \
			"$what" "$n" "$kind" "$K" $(( $(date +%s) - start ))
		if [ "$K" -gt 0 ]; then
			if [ "$unsafe" = 1 ]; then unsafe_hit=$((unsafe_hit + 1)); else safe_hit=$((safe_hit + 1)); fi
			if [ -z "$shown" ]; then
				shown=1
				echo "# the first KASAN report ($tag):"
				grep -E -A14 -- "$KASAN_RE" "$dir/$tag.dmesg" | head -n 15 | sed 's/^/#   /'
			fi
		fi
	done
done
echo "uaf-canary: unsafe teardown caught in $unsafe_hit/$rounds rounds; safe teardown $safe_hit/$rounds; $void rounds void"
[ "$unsafe_hit" -eq "$rounds" ] && [ "$safe_hit" -eq 0 ] && [ "$void" -eq 0 ]
