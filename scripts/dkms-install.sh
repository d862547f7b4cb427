#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/dkms-install.sh [--build-only [--tree DIR]]: register srff with
# DKMS, build it for every installed kernel that has its headers (or only
# for KVER, when set) and install it; DKMS's AUTOINSTALL then builds srff.ko
# for every kernel installed later.
#   --build-only  stop after the builds
#   --tree DIR    use DIR/src and DIR/dkms as DKMS's source and module
#                 trees instead of /usr/src and /var/lib/dkms, so nothing
#                 is registered on the machine (tests/dkms.sh uses it)
# A kernel whose build fails is named and the others are still built and
# installed; the exit status is then 1.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${KVER:-}" ]; then
	kernels=("$KVER")
else
	mapfile -t kernels < <(ls -d /lib/modules/*/build 2>/dev/null |
		sed 's|/lib/modules/||; s|/build$||' | sort -V)
	[ ${#kernels[@]} -gt 0 ] || {
		echo "dkms-install: no kernel headers installed (apt-get install linux-headers-$(uname -r))" >&2
		exit 1
	}
fi
usage() { echo "usage: dkms-install.sh [--build-only [--tree DIR]]" >&2; exit 2; }
build_only=false tree=
while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=true ;;
	--tree) [ $# -ge 2 ] || usage; tree=$2; shift ;;
	*) usage ;;
	esac
	shift
done
[ -z "$tree" ] || $build_only || { echo "dkms-install: --tree needs --build-only" >&2; exit 2; }
command -v dkms >/dev/null || { echo "dkms-install: apt-get install dkms" >&2; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
trees=() srcroot=/usr/src
if [ -n "$tree" ]; then
	srcroot=$tree/src
	trees=(--sourcetree "$srcroot" --dkmstree "$tree/dkms")
	mkdir -p "$srcroot" "$tree/dkms"
fi
src=$srcroot/srff-$ver

dkms remove "srff/$ver" --all "${trees[@]}" >/dev/null 2>&1 || true
rm -rf "$src"
mkdir -p "$src/srff_nf" "$src/include/uapi/linux" "$src/include/srff"
cp "$top/dkms.conf" "$src/"
# The module's sources only, not what a build left beside them.
for f in "$top"/srff_nf/{Kbuild,Makefile,*.c,*.h}; do
	case $f in *.mod.c) continue ;; esac
	cp "$f" "$src/srff_nf/"
done
cp "$top/include/uapi/linux/srff.h" "$src/include/uapi/linux/"
cp "$top/include/srff/units.h" "$src/include/srff/"
dkms add "srff/$ver" "${trees[@]}"
failed=()
for k in "${kernels[@]}"; do
	dkms build "srff/$ver" -k "$k" "${trees[@]}" || failed+=("$k")
done
if ! $build_only; then
	for k in "${kernels[@]}"; do
		case " ${failed[*]} " in *" $k "*) continue ;; esac
		dkms install "srff/$ver" -k "$k" || failed+=("$k")
	done
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "dkms-install: srff $ver did not build or install for: ${failed[*]}" >&2
	exit 1
fi
$build_only && exit 0
echo "srff $ver installed for ${kernels[*]}: modprobe srff"
