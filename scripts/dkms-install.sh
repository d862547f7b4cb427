#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/dkms-install.sh [--build-only [--tree DIR]]: register srff with
# DKMS, build it for KVER (default: the running kernel if its headers are
# installed, else scripts/kver.sh's) and install it; DKMS's AUTOINSTALL
# then builds srff.ko for every kernel installed later.
#   --build-only  stop after the build
#   --tree DIR    use DIR/src and DIR/dkms as DKMS's source and module
#                 trees instead of /usr/src and /var/lib/dkms, so nothing
#                 is registered on the machine (tests/dkms.sh uses it)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# For the running kernel when its headers are there (a server); DKMS then
# builds for every kernel installed later (AUTOINSTALL). Else the test kernel.
if [ -z "${KVER:-}" ] && [ -d "/lib/modules/$(uname -r)/build" ]; then
	KVER=$(uname -r)
fi
. "$top/scripts/kver.sh"
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
mkdir -p "$src/srff_nf" "$src/include/uapi/linux"
cp "$top/dkms.conf" "$src/"
# The module's sources only, not what a build left beside them.
for f in "$top"/srff_nf/{Kbuild,Makefile,*.c,*.h}; do
	case $f in *.mod.c) continue ;; esac
	cp "$f" "$src/srff_nf/"
done
cp "$top/include/uapi/linux/srff.h" "$src/include/uapi/linux/"
dkms add "srff/$ver" "${trees[@]}"
dkms build "srff/$ver" -k "$KVER" "${trees[@]}"
$build_only && exit 0
dkms install "srff/$ver" -k "$KVER"
echo "srff $ver installed for $KVER: modprobe srff"
