#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# table.sh resize: the flow table grows with its flows and shrinks when GC
# empties it, under traffic.
#  - A namespace's table starts at 256 buckets (2 KiB).
#  - Four senders create 12 000 flows at once (one datagram each) while a
#    busy flow sends every 50 ms: the table grows (more than two flows per
#    bucket asks for it) while new flows are linked, to 8192 buckets or
#    16384 (the count when a resize starts sizes it), and
#    every flow is counted once: flows == created == the dump's length.
#  - The busy flow keeps its byte count across every resize.
#  - A short idle timeout then lets GC free the 12 000: the table shrinks
#    back to 256 buckets, and the busy flow is still tracked.
# table.sh memcg: what srff's workers allocate for a namespace (the grown
# bucket array, the size histogram) is charged to the memory cgroup of
# whoever turned srff on there, as the table itself is, not to nobody: a
# process in a cgroup of its own turns srff on in a namespace, traffic
# from outside the cgroup grows the table to 8192 buckets or more (64 KiB
# of bucket heads at least), and the kernel memory charged to the cgroup
# grows by at least that much. Then the module is loaded again from a
# cgroup that is removed at once: the initial namespace's srff and that of
# the namespaces that existed at load hold no reference on it, so it is
# freed while srff stays on (nr_dying_descendants back to 0).
. "$(dirname "$0")/../lib.sh"

mode=${1:?resize|memcg}
PAIR_IPV4_ONLY=1 setup_pair
SRFF_NS=$SND

buckets_at_least() { [ "$(stat buckets)" -ge "$1" ]; }
buckets_are() { [ "$(stat buckets)" = "$1" ]; }
busy_bytes() { srffctl -j flows port 6100 | jq '[.[].bytes] | max // 0'; }
busy_tracked() { [ "$(srffctl -j flows port 6100 | jq length)" = 1 ]; }
busy_above() { [ "$(busy_bytes)" -gt "$1" ]; }

case $mode in
resize)
	# max_flows 65536: at most 32768 buckets. No GC before the shrink.
	srff_load max_flows=65536 idle_timeout_ms=600000 gc_interval_ms=250 idle_reset_ms=0
	check "a new table has 256 buckets ($(stat buckets))" buckets_are 256
	ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-send $RCV_IP4 6100 100000 100 --interval 0.05 &
	BG_PIDS+=($!)
	wait_for 20 busy_tracked || fail "busy flow tracked"
	pids=()
	for base in 20000 23000 26000 29000; do
		ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 3000 --base-port $base &
		pids+=($!)
	done
	b0=$(busy_bytes)
	for p in "${pids[@]}"; do wait "$p" || fail "udp-flows"; done
	wait_for 20 buckets_at_least 8192 ||
		fail "table did not grow to 8192 buckets or more: $(srffctl -j stats | jq -c '{flows, buckets, grown}')"
	st=$(srffctl -j stats)
	log "$(jq -c '{flows, created, buckets, grown, shrunk, gc_last_chain}' <<<"$st")"
	check "grew (grown $(jq .grown <<<"$st") >= 1), 2 flows per bucket at most" \
		jq -e '.grown >= 1 and .shrunk == 0 and .buckets * 2 >= .flows' <<<"$st"
	check "12 001 flows, each created once ($(jq -c '{flows, created}' <<<"$st"))" \
		jq -e '.flows == 12001 and .created == 12001' <<<"$st"
	flows=$(srffctl -j flows)
	n=$(jq length <<<"$flows")
	check "the dump lists each once ($n)" test "$n" = 12001
	n=$(jq '[.[] | "\(.sport) \(.dport)"] | unique | length' <<<"$flows")
	check "no flow twice ($n distinct)" test "$n" = 12001
	wait_for 10 busy_above "$b0" || fail "busy flow's count did not go on"
	b1=$(busy_bytes)
	check "busy flow kept counting across the resizes ($b0 -> $b1 bytes)" test "$b1" -gt "$b0"

	# GC frees the 12 000 (idle for 1 s); the busy flow stays.
	run srffctl set idle-timeout 1s || fail "set idle-timeout"
	wait_for 30 buckets_are 256 ||
		fail "table did not shrink: $(srffctl -j stats | jq -c '{flows, buckets, shrunk}')"
	st=$(srffctl -j stats)
	log "$(jq -c '{flows, gc_freed, buckets, grown, shrunk}' <<<"$st")"
	check "shrank ($(jq .shrunk <<<"$st") >= 1), GC freed the idle flows" \
		jq -e '.shrunk >= 1 and .gc_freed >= 12000 and .flows <= 2' <<<"$st"
	b2=$(busy_bytes)
	check "busy flow still tracked with its count ($b2 >= $b1)" test "$b2" -ge "$b1"
	;;
memcg)
	CG=$(mktemp -d)
	cg_cleanup() {
		[ -d "$CG/srff" ] && rmdir "$CG/srff"
		mountpoint -q "$CG" && umount "$CG"
		rmdir "$CG"
	}
	trap 'default_cleanup; cg_cleanup' EXIT
	mount -t cgroup2 none "$CG" || skip "cannot mount cgroup2"
	grep -qw memory "$CG/cgroup.controllers" ||
		skip "no memory controller on cgroup2 (a kernel without CONFIG_MEMCG, as the debug kernel, or one bound to a v1 hierarchy)"
	echo +memory >"$CG/cgroup.subtree_control" || fail "enable the memory controller"
	mkdir "$CG/srff"
	srff_load netns=ask max_flows=65536 idle_timeout_ms=600000 gc_interval_ms=250 idle_reset_ms=0
	# memory.stat's "kernel": every kernel page charged to the cgroup
	# (slab, large kmallocs, which 6.1 counts as slab too, vmalloc,
	# percpu), flushed from per-CPU counters at least every 2 s.
	# memory.current moves in 256 KiB batches: too coarse. What srffctl's
	# process charges besides is some 20-40 KiB of slab: less than the
	# array by far.
	kmem() { awk '$1 == "kernel" { print $2 }' "$CG/srff/memory.stat"; }
	k0=$(kmem)
	# srffctl, alone in the cgroup, turns srff on in SND; it then exits.
	run sh -c "echo \$\$ >$CG/srff/cgroup.procs && exec ip netns exec $SND $SRFFCTL set enabled on" ||
		fail "set enabled on from the cgroup"
	check "a new table has 256 buckets ($(stat buckets))" buckets_are 256
	pids=()
	for base in 20000 23000 26000 29000; do
		ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 3000 --base-port $base &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fail "udp-flows"; done
	wait_for 20 buckets_at_least 8192 ||
		fail "table did not grow to 8192 buckets or more: $(srffctl -j stats | jq -c '{flows, buckets, grown}')"
	b=$(stat buckets)
	charged() { [ $(($(kmem) - k0)) -ge $((b * 8)) ]; }
	wait_for 10 charged
	log "memory.stat: kernel $k0 -> $(kmem) bytes, the table at $b buckets; $(grep -E '^(kernel|percpu|slab|vmalloc|kernel_stack|pagetables) ' "$CG/srff/memory.stat" | tr '\n' ' ')"
	check "the grown array ($b x 8 B) is charged to the cgroup: +$(( ($(kmem) - k0) / 1024 )) KiB" charged

	# Loaded from a cgroup that then goes (an admin's session ending): the
	# initial namespace's srff, and that of every namespace that existed
	# at load, is the host's and holds no reference on it, so the removed
	# cgroup is freed while srff stays loaded and on. (A page cache page
	# the loader faulted in would hold it too: dropped, to see srff's.)
	mkdir "$CG/loader"
	srff_unload || fail "rmmod"
	run sh -c "echo \$\$ >$CG/loader/cgroup.procs && exec insmod $SRFF_KO netns=all" ||
		fail "insmod from the cgroup"
	run ip netns exec "$SND" $PY "$TOOLS/traffic.py" udp-flows $RCV_IP4 100 || fail "udp-flows"
	check "srff on in SND, loaded from the cgroup ($(srffctl -j stats | jq .flows) flows)" \
		test "$(srffctl -j stats | jq .flows)" -ge 100
	rmdir "$CG/loader" || fail "rmdir the loader's cgroup"
	dying() { awk '$1 == "nr_dying_descendants" { print $2 }' "$CG/cgroup.stat"; }
	freed() { echo 1 >/proc/sys/vm/drop_caches; [ "$(dying)" = 0 ]; }
	check "the loader's removed cgroup is freed with srff loaded (dying: $(dying))" wait_for 20 freed
	;;
*)
	fail "unknown mode $mode"
	;;
esac
exit $ksft_pass
