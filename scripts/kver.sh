# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced: sets KVER to the Debian kernel we build against and boot, unless
# the caller set it, and SRFF_KERNELS_INSTALLED to every supported kernel
# that is installed (image and headers), oldest series first.
#
# The supported kernels are named by series, not picked as "the newest
# headers": with 6.1 and 6.12 both installed, the newest would silently move
# every test to 6.12. SRFF_KERNEL_SERIES (default: the first of
# SRFF_KERNEL_SERIES_ALL, Debian 12's 6.1) chooses the one KVER defaults to;
# within a series the newest installed ABI wins. The running kernel (uname -r)
# is deliberately not used: on the build machines it has no headers and
# loads no modules (a real server's build uses it: see the Makefile).
SRFF_KERNEL_SERIES_ALL=${SRFF_KERNEL_SERIES_ALL:-"6.1 6.12"}

# srff_kver_of SERIES: the newest installed Debian amd64 kernel of that
# series that has both its image and its headers, or nothing.
srff_kver_of() {
	local v
	for v in $(ls -d /lib/modules/"$1".*-amd64/build /lib/modules/"$1"-*-amd64/build \
			2>/dev/null | sed 's|/lib/modules/||; s|/build||' | sort -V -r); do
		[ -e "/boot/vmlinuz-$v" ] && { echo "$v"; return 0; }
	done
	return 1
}

SRFF_KERNELS_INSTALLED=
for _s in $SRFF_KERNEL_SERIES_ALL; do
	_v=$(srff_kver_of "$_s") && SRFF_KERNELS_INSTALLED="$SRFF_KERNELS_INSTALLED${SRFF_KERNELS_INSTALLED:+ }$_v"
done
unset _s _v
export SRFF_KERNELS_INSTALLED

if [ -z "${KVER:-}" ]; then
	_series=${SRFF_KERNEL_SERIES:-${SRFF_KERNEL_SERIES_ALL%% *}}
	KVER=$(srff_kver_of "$_series") || KVER=
	unset _series
fi
if [ -z "$KVER" ] || [ ! -e "/boot/vmlinuz-$KVER" ]; then
	echo "no Debian amd64 kernel image with headers found for ${KVER:-series ${SRFF_KERNEL_SERIES:-${SRFF_KERNEL_SERIES_ALL%% *}}} (run 'make deps')" >&2
	return 4 2>/dev/null || exit 4
fi
export KVER

# srff_ko_for_kver: the srff.ko a guest booting KVER loads, in SRFF_KO
# (exported): srff_nf/srff.ko when it was built for KVER, else one built
# for KVER in tests/out/build-KVER (the experiments: SRFF_KERNEL_SERIES=6.12).
srff_ko_for_kver() {
	SRFF_KO=$PWD/srff_nf/srff.ko
	if [ "$(modinfo -F vermagic "$SRFF_KO" 2>/dev/null | cut -d' ' -f1)" != "$KVER" ]; then
		SRFF_KO=$(scripts/build-ko.sh "/lib/modules/$KVER/build" "tests/out/build-$KVER") ||
			return 1
	fi
	export SRFF_KO
}

# srff_guest_builds WHO: what a guest booting KVER runs from the host, built
# if missing: its srff.ko (srff_ko_for_kver) and srffctl (make experiments
# builds it; a script run on its own must not find it missing in the
# guest). WHO names the caller in the error.
srff_guest_builds() {
	srff_ko_for_kver || { echo "$1: srff.ko did not build for $KVER" >&2; return 1; }
	[ -x srffctl/srffctl ] || make -s -C srffctl >/dev/null ||
		{ echo "$1: srffctl did not build (make srffctl)" >&2; return 1; }
}

# A tc that can set sch_fq's bands (iproute2 6.7+, bookworm-backports'),
# which scripts/deps.sh unpacks and never installs: setup_fq_bands and the
# experiments' srff-fq-bands use it in the guest.
# (An if, not &&: this file's status is its last command's, and callers
# run under set -e or test it.)
if [ -x "$HOME/.cache/srff/iproute2/sbin/tc" ]; then
	export SRFF_NEWTC_DIR=$HOME/.cache/srff/iproute2/sbin
fi
