#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/dkms.sh: `make install`'s DKMS packaging builds the same module as
# `make`, for every installed kernel. scripts/dkms-install.sh --build-only
# --tree builds srff through DKMS in a private tree (nothing is registered on
# the machine) for each kernel with headers (6.1 and 6.12 here); each result
# has its kernel's vermagic, and the default kernel's must match
# srff_nf/srff.ko: same sources (srcversion), same parameters. Ends in
# "dkms: N passed, N failed".
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
