#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/netns-mem.sh [N]: what srff costs per network namespace, in the
# guest (scripts/vm bench/netns-mem.sh). srff runs where it is enabled
# (module parameter netns: by default the initial namespace, and another
# one once its admin turns it on); only there does a namespace pay for a
# flow table, statistics and GC.
#
#   1. N namespaces without srff: what a namespace costs by itself;
#   2. insmod srff (netns=ask, the default): on in the initial namespace,
#      off in the N;
#   3. N more namespaces with srff loaded: each costs what srff keeps for a
#      namespace where it is off (target: <= 16 KiB, whatever max_flows);
#   4. srff switched on in those N (srffctl -n NS set enabled on): each
#      now holds an idle table, which starts small whatever max_flows is
#      (target: <= 16 KiB).
# SRFF_PARAMS adds module parameters (e.g. max_flows=1m: step 3 must not
# grow with it). Kernel memory is Slab + VmallocUsed + Percpu from
# /proc/meminfo; MemFree is shown beside it as a cross-check. Nothing is
# deleted during a measurement, so no asynchronous namespace cleanup runs.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100}
KO=${SRFF_KO:-srff_nf/srff.ko}

kmem() { awk '/^(Slab|VmallocUsed|Percpu):/ { s += $2 } END { print s }' /proc/meminfo; }
free_kb() { awk '/^MemFree:/ { print $2 }' /proc/meminfo; }
settle() { sync; echo 3 > /proc/sys/vm/drop_caches; }

grep -q '^srff ' /proc/modules && rmmod srff
for i in $(seq "$N"); do ip netns del "memA$i" 2>/dev/null || true; done

settle; k0=$(kmem); f0=$(free_kb)
for i in $(seq "$N"); do ip netns add "memA$i"; done
settle; k1=$(kmem); f1=$(free_kb)
# shellcheck disable=SC2086 # SRFF_PARAMS: several parameters
insmod "$KO" ${SRFF_PARAMS:-}
settle; k2=$(kmem); f2=$(free_kb)
for i in $(seq "$N"); do ip netns add "memB$i"; done
settle; k3=$(kmem); f3=$(free_kb)
for i in $(seq "$N"); do srffctl/srffctl -n "memB$i" set enabled on; done
settle; k4=$(kmem); f4=$(free_kb)

max_flows=$(srffctl/srffctl -n memB1 -j stats | jq .max_flows)
buckets=$(srffctl/srffctl -n memB1 -j stats | jq .buckets)	# an idle table's
# With BENCH_OUT (bench/run), the report goes to BENCH_OUT/netns-mem.txt too.
exec > >(tee ${BENCH_OUT:+"$BENCH_OUT/netns-mem.txt"})
echo "guest: $(nproc) CPUs, $(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo) MiB;" \
	"srff's max_flows here: $max_flows; an idle table: $buckets buckets${SRFF_PARAMS:+ ($SRFF_PARAMS)}"
per() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
printf '%-60s %10s %10s\n' "KiB per namespace" "kernel" "MemFree"
printf '%-60s %10s %10s\n' "a namespace, no srff ($N)" "$(per $((k1 - k0)) "$N")" "$(per $((f0 - f1)) "$N")"
printf '%-60s %10s %10s\n' "insmod srff: on in the initial namespace, off in $N" \
	"$(per $((k2 - k1)) $((N + 1)))" "$(per $((f1 - f2)) $((N + 1)))"
printf '%-60s %10s %10s\n' "a namespace with srff loaded, off there ($N)" \
	"$(per $((k3 - k2)) "$N")" "$(per $((f2 - f3)) "$N")"
printf '%-60s %10s %10s\n' "  srff's share: that minus a namespace without srff" \
	"$(per $((k3 - k2 - (k1 - k0))) "$N")" "$(per $((f2 - f3 - (f0 - f1))) "$N")"
printf '%-60s %10s %10s\n' "srffctl set enabled on, in each of them ($N)" \
	"$(per $((k4 - k3)) "$N")" "$(per $((f3 - f4)) "$N")"
printf '%-60s %10s\n' "  of which the bucket array and its locks ($buckets x 8 B + 256 x 8 B)" \
	"$(per $((buckets * 8 + 2048)) 1024)"

rmmod srff
for i in $(seq "$N"); do ip netns del "memA$i"; ip netns del "memB$i"; done
