#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest kernel (see tests/run): every test in tests/kernel/
# TESTS, each in its own namespaces, then the kernel log is scanned. Any
# BUG, WARNING, Oops, RCU stall or soft lockup fails the test that was
# running. Output is KTAP, ending in "srff-kernel: N passed, N failed".
#
#   tests/run-guest.sh [NAME-PATTERN]
#
# SRFF_TEST_EXCLUDE, a regular expression, leaves out the tests whose names
# it matches (tests/run-debug: those that never load srff; CI's second
# kernel: see tests/run); they are named on a comment line.
# SRFF_TEST_OUT (default tests/out) is where each test's .log and .dmesg go:
# tests/run-debug gives it a directory of its own, whose *.dmesg files are
# then the whole kernel log of its run (this script clears the ring buffer).
set -u
cd "$(dirname "$0")/.."
pattern=${1:-}
out=${SRFF_TEST_OUT:-tests/out}
mkdir -p "$out"
BAD='BUG|WARNING|Oops|RCU stall|rcu_.*stall|soft lockup|hung task|general protection|kmem_cache_destroy|Slab cache still has objects|refcount_t'

# The tests' own JSON queries run in gojq where it is installed
# (scripts/deps.sh): jq 1.6 compiles its builtins at every start, 0.7 s of
# emulated CPU a call (natively 38 ms against gojq's 3), and the tests call
# it from hundreds of places, many in loops and waits. Tools under test
# that users run with Debian's jq (srff-check) get that back: SRFF_JQ_PATH
# (tests/kernel/check.sh, setups.sh).
export SRFF_JQ_PATH=$PATH
if command -v gojq >/dev/null; then
	mkdir -p /tmp/srff-gojq && ln -sf "$(command -v gojq)" /tmp/srff-gojq/jq &&
		export PATH=/tmp/srff-gojq:$PATH
fi

# The boot's first memory cgroup turns memcg's kmem static key on, which
# patches the page allocator's hot paths on every CPU. Under QEMU's
# emulation that once left both vCPUs spinning in free_pcp_prepare for good
# (soft lockups in table_memcg's mkdir and in khugepaged, seen in a CI run):
# make that first cgroup here, while the guest is quiet.
memcg_warm() {
	local cg
	cg=$(mktemp -d) || return 0
	if mount -t cgroup2 none "$cg" 2>/dev/null; then
		grep -qw memory "$cg/cgroup.controllers" &&
			echo +memory >"$cg/cgroup.subtree_control" 2>/dev/null &&
			mkdir "$cg/srff-warm" && rmdir "$cg/srff-warm"
		umount "$cg"
	fi
	rmdir "$cg"
}
memcg_warm

mapfile -t tests < <(grep -v '^#' tests/kernel/TESTS | grep . | { [ -n "$pattern" ] && grep -E -- "$pattern" || cat; })
echo "TAP version 13"
if [ -n "${SRFF_TEST_EXCLUDE:-}" ]; then
	mapfile -t left < <(printf '%s\n' "${tests[@]}" | awk '{print $1}' | grep -E -- "$SRFF_TEST_EXCLUDE")
	mapfile -t tests < <(printf '%s\n' "${tests[@]}" | awk -v re="$SRFF_TEST_EXCLUDE" '$1 !~ re')
	[ ${#left[@]} -eq 0 ] || echo "# not run here (SRFF_TEST_EXCLUDE=$SRFF_TEST_EXCLUDE): ${left[*]}"
fi
echo "1..${#tests[@]}"
dmesg -C
pass=0 failn=0 skipn=0 n=0
for line in "${tests[@]}"; do
	n=$((n + 1))
	read -r name cmd <<<"$line"
	start=$(date +%s)
	bash -c "tests/kernel/$cmd" >"$out/$name.log" 2>&1
	rc=$?
	dmesg -c >"$out/$name.dmesg"
	sed 's/^/    /' "$out/$name.log"
	if grep -Eq "$BAD" "$out/$name.dmesg"; then
		echo "    # kernel log:"
		grep -E -B2 -A20 "$BAD" "$out/$name.dmesg" | sed 's/^/    # /' | head -60
		rc=1
	fi
	dur=$(( $(date +%s) - start ))
	case $rc in
	0) echo "ok $n $name # ${dur}s"; pass=$((pass + 1)) ;;
	4) echo "ok $n $name # SKIP"; skipn=$((skipn + 1)) ;;
	*) echo "not ok $n $name # exit $rc, ${dur}s"; failn=$((failn + 1)) ;;
	esac
	# A test that left the module in is unloaded here, and that must work.
	if grep -q '^srff ' /proc/modules && ! rmmod srff; then
		echo "# srff could not be unloaded after $name"
		failn=$((failn + 1))
	fi
done
echo "# totals: pass:$pass fail:$failn skip:$skipn"
echo "srff-kernel: $pass passed, $failn failed, $skipn skipped"
[ "$failn" -eq 0 ]
