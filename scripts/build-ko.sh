#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/build-ko.sh KDIR OUTDIR [MAKE-ARGS...]
#   -- build srff.ko against the kernel tree KDIR in a private copy under
#      OUTDIR, and leave it at OUTDIR/srff.ko.
#
# srff_nf/ holds the module `make` builds for the default kernel; the tests
# that boot another kernel (tests/run's second kernel, tests/run-debug's
# debug build) build their own copy here, so one never overwrites the other.
# The copy's vermagic must be KDIR's release, or this fails. Warnings are
# errors (W=1 SRFF_WERROR=1), as in every build of the project's own; extra
# MAKE-ARGS (SRFF_TEST=1) are passed to Kbuild. The build log is
# OUTDIR/build.log; its tail is printed on failure.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: scripts/build-ko.sh KDIR OUTDIR [MAKE-ARGS...]" >&2; exit 2; }
kdir=$1 out=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
case $out in /*) ;; *) out=$PWD/$out ;; esac

[ -f "$kdir/Makefile" ] || { echo "build-ko: no kernel build tree at $kdir" >&2; exit 1; }
# The release a module's vermagic carries is UTS_RELEASE. Debian's 6.1
# headers' include/config/kernel.release says "6.1.192", not the
# "6.1.0-56-amd64" the kernel and its modules go by: read the header.
krel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
[ -n "$krel" ] ||
	{ echo "build-ko: $kdir has no include/generated/utsrelease.h" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/srff_nf"
cp -a "$top/include" "$out/"
cp -a "$top"/srff_nf/Kbuild "$top"/srff_nf/*.c "$top"/srff_nf/*.h "$out/srff_nf/"
if ! make -C "$kdir" M="$out/srff_nf" W=1 SRFF_WERROR=1 "$@" modules >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "build-ko: srff.ko did not build against $kdir ($krel)" >&2
	exit 1
fi
cp "$out/srff_nf/srff.ko" "$out/srff.ko"
vermagic=$(/sbin/modinfo -F vermagic "$out/srff.ko")
[ "${vermagic%% *}" = "$krel" ] ||
	{ echo "build-ko: srff.ko is for '$vermagic', the kernel is $krel" >&2; exit 1; }
echo "$out/srff.ko"
