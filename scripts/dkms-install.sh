#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/dkms-install.sh [--build-only]: register srff with DKMS, build it
# for KVER (default: scripts/kver.sh) and install it, so every new kernel
# gets its own srff.ko. --build-only stops after the build (used in tests).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/kver.sh"
command -v dkms >/dev/null || { echo "dkms-install: apt-get install dkms" >&2; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
src=/usr/src/srff-$ver

dkms remove "srff/$ver" --all >/dev/null 2>&1 || true
rm -rf "$src"
mkdir -p "$src/srff_nf" "$src/include/uapi/linux"
cp "$top/dkms.conf" "$src/"
cp "$top"/srff_nf/{Kbuild,Makefile,*.c,*.h} "$src/srff_nf/"
cp "$top/include/uapi/linux/srff.h" "$src/include/uapi/linux/"
dkms add "srff/$ver"
dkms build "srff/$ver" -k "$KVER"
[ "${1:-}" = --build-only ] && exit 0
dkms install "srff/$ver" -k "$KVER"
echo "srff $ver installed for $KVER: modprobe srff"
