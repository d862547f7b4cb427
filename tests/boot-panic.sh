#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/boot-panic.sh: scripts/boot-panic, which lets scripts/vm and
# tests/systemd-boot.sh boot a guest once more, says yes only to a kernel
# panic in a boot that never loaded srff. Consoles made up from the lines
# real guests print. Ends in "boot-panic: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
pass=0 failed=0
tmp=$(mktemp -d /tmp/srff-boot-panic.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

case_() {	# case_ WANT DESCRIPTION LINE...: WANT is retry or fail
	local want=$1 what=$2; shift 2
	printf '%s\n' "$@" > "$tmp/log"
	local got=fail
	scripts/boot-panic "$tmp/log" && got=retry
	if [ "$got" = "$want" ]; then echo "ok - $what: $want"; pass=$((pass + 1))
	else echo "not ok - $what: $got, want $want"; failed=$((failed + 1)); fi
}

cmdline='[    0.000000] Command line: virtme_initmount0=home/u/srff init=/root/.cache/srff/venv/bin/virtme-ng-init'
early=('[    2.979177]  devtmpfs_create_node+0xb0/0xe0'
	'[    2.979208]  device_add+0x62e/0x890'
	'[    2.979408] Kernel panic - not syncing: Fatal exception in interrupt')

case_ retry "6.12's early panic in device_add, no module loaded" "$cmdline" "${early[@]}"
case_ retry "  with the console's CRLF line ends" "$(printf '%s\r' "${early[2]}")"
case_ retry "  with a systemd unit named srff started before it" \
	'[    9.1] systemd[1]: Starting srff.service - srff flow-size prioritiser: load the module...' "${early[@]}"
case_ fail "srff loaded earlier in the boot (its taint message)" \
	'[   19.204296] srff: loading out-of-tree module taints kernel.' "${early[@]}"
case_ fail "srff in the oops's module list" \
	'[   30.1] Modules linked in: srff(OE) sch_prio' "${early[@]}"
case_ fail "srff the module last unloaded" \
	'[   30.1] Modules linked in: sch_prio [last unloaded: srff]' "${early[@]}"
case_ fail "a stack through srff's code" \
	'[   30.1]  srff_hook+0x1c/0x300 [srff]' "${early[@]}"
case_ fail "no panic (a guest that timed out)" "$cmdline" '[    2.9] serial8250: ttyS0 at I/O 0x3f8'
case_ fail "a panic only in the test's own output, not the console" \
	'# Kernel panic - not syncing: quoted by a test'
: > "$tmp/empty"
scripts/boot-panic "$tmp/empty"; rc=$?
if [ "$rc" = 1 ]; then echo "ok - an empty log: fail"; pass=$((pass + 1))
else echo "not ok - an empty log: exit $rc"; failed=$((failed + 1)); fi

echo "boot-panic: $pass passed, $failed failed"
exit $((failed > 0))
