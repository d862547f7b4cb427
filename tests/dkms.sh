#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/dkms.sh: `make install`'s DKMS packaging builds the same module as
# `make`, for every installed kernel. scripts/dkms-install.sh --build-only
# --tree builds srff through DKMS in a private tree (nothing is registered on
# the machine) for each kernel with headers (6.1 and 6.12 here); each result
# has its kernel's vermagic, and the default kernel's must match
# srff_nf/srff.ko: same sources (srcversion), same parameters. Ends in
# "dkms: N passed, N failed". First, which kernel plain `make` picks.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/kver.sh
pass=0 failed=0
check() {	# check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok - $what"; pass=$((pass + 1))
	else echo "not ok - $what"; failed=$((failed + 1)); fi
}
done_() { echo "dkms: $pass passed, $failed failed"; exit $((failed > 0)); }

# Which kernel plain `make` builds for, on made-up machines (make -n: the
# sub-make's KVER=): the running kernel whenever it is installed, headers or
# not (without them, srff_nf's message names the package); the tests'
# kernel only where the running one is not installed at all.
mods=$(mktemp -d /tmp/srff-kver.XXXXXX)
mkdir -p "$mods/5.0.0-run/build" "$mods/5.0.0-nohdr/kernel" "$mods/9.9.9-test/build"
chose() {	# chose RUNNING TEST_KVER: the KVER make passes to srff_nf
	env -u KVER -u KDIR make -n module RUNNING_KVER="$1" TEST_KVER="$2" MODULES_DIR="$mods" 2>/dev/null |
		sed -n 's/.*make -C srff_nf KVER=\([^ ]*\) .*/\1/p' | head -n1
}
check "make: the running kernel, with headers: builds for it" test "$(chose 5.0.0-run 9.9.9-test)" = 5.0.0-run
check "make: the running kernel installed without headers: still it, not the tests' kernel" \
	test "$(chose 5.0.0-nohdr 9.9.9-test)" = 5.0.0-nohdr
out=$(make -C srff_nf KVER=5.0.0-nohdr KDIR="$mods/5.0.0-nohdr/build" 2>&1)
check "  and srff_nf names the package (apt-get install linux-headers-5.0.0-nohdr)" \
	grep -q 'apt-get install linux-headers-5.0.0-nohdr' <<<"$out"
check "make: a running kernel not installed here (sandbox): the tests' kernel" \
	test "$(chose 6.99-sandbox 9.9.9-test)" = 9.9.9-test
out=$(env -u KVER -u KDIR make -n module RUNNING_KVER=6.99-sandbox TEST_KVER= MODULES_DIR="$mods" 2>&1)
check "  and with no tests' kernel either, it says what to install" \
	grep -q 'install the headers of the kernel srff will run on' <<<"$out"
rm -rf "$mods"

ko=srff_nf/srff.ko
[ -f "$ko" ] || { echo "not ok - $ko not built (make module)"; failed=1; done_; }
command -v dkms >/dev/null || { echo "not ok - dkms not installed"; failed=1; done_; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
registered_before=$(dkms status srff 2>/dev/null)
tree=$(mktemp -d /tmp/srff-dkms.XXXXXX)
trap 'rm -rf "$tree"' EXIT

# Without KVER, as on a server: every kernel with headers.
env -u KVER scripts/dkms-install.sh --build-only --tree "$tree" > "$tree.log" 2>&1
rc=$?
sed 's/^/#   /' "$tree.log" | tail -5
rm -f "$tree.log"
check "dkms add + build in a private tree (exit $rc)" test "$rc" = 0
mapfile -t kernels < <(ls -d /lib/modules/*/build | sed 's|/lib/modules/||; s|/build$||' | sort -V)
mi() { modinfo -F "$1" "$2" 2>/dev/null; }
for k in "${kernels[@]}"; do
	built=$(find "$tree/dkms/srff/$ver/$k" -name 'srff.ko*' 2>/dev/null | head -n1)
	check "DKMS built srff.ko for $k (${built#"$tree"/})" test -n "$built"
	[ -n "$built" ] || continue
	check "  its vermagic is $k's ($(mi vermagic "$built" | cut -d' ' -f1))" \
		test "$(mi vermagic "$built" | cut -d' ' -f1)" = "$k"
	[ "$k" = "$KVER" ] || continue
	check "  same sources as srff_nf/srff.ko (srcversion $(mi srcversion "$built"))" \
		test "$(mi srcversion "$built")" = "$(mi srcversion "$ko")"
	check "  same parameters ($(mi parm "$built" | wc -l))" \
		test "$(mi parm "$built" | cut -d: -f1)" = "$(mi parm "$ko" | cut -d: -f1)"
done
case " ${kernels[*]} " in
*" $KVER "*) ;;
*) check "the default kernel $KVER has headers" false ;;
esac
check "nothing registered with the machine's DKMS" \
	test "$(dkms status srff 2>/dev/null)" = "$registered_before"
scripts/dkms-install.sh --tree "$tree" >/dev/null 2>&1
rc=$?
check "--tree without --build-only is refused (exit $rc)" test "$rc" = 2
done_
