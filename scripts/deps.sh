#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing srff needs on a Debian 12 machine:
# Debian's kernel images and headers (the guest kernels and what the module
# builds against: Debian 12's 6.1, and Debian 13's 6.12 from
# bookworm-backports), QEMU (Debian 13's, from bookworm-backports too) and
# busybox for virtme-ng, the tools the tests
# and experiments drive, libnl for srffctl, clang for the fuzzer, DKMS (and
# openssl, which it signs modules with) for `make install`, debhelper and
# dh-dkms for `make deb`, Debian's kernel source and its build tools for
# `make test-debug`, and virtme-ng in a venv.
# Quick and quiet when everything is already there.
#
# It is for test machines. It adds an apt source (bookworm-backports, pinned
# low as Debian pins backports: only the 6.12 kernel packages and QEMU are
# taken from it), installs two kernels that a machine booting with GRUB would offer,
# the newest by default, and test servers (nginx, vsftpd). So when anything
# is missing it says what it will do and asks, unless told this is a
# scratch machine (CI=true, as CI sets, or SRFF_DEPS=yes); with no terminal
# to ask on, it refuses. SRFF_DEPS=no refuses always (nothing is changed).
set -euo pipefail

PKGS=(
	linux-image-amd64 linux-headers-amd64	# 6.1, Debian 12's
	busybox-static kmod
	build-essential pkg-config clang libclang-rt-14-dev dkms openssl
	libnl-3-dev libnl-genl-3-dev
	# make deb and tests/packaging.sh: Debian's packaging tools
	debhelper dh-dkms
	iproute2 nftables conntrack tcpdump ethtool iputils-ping iperf3 jq procps
	# the kernel tests' own JSON queries (tests/run-guest.sh: jq 1.6 starts slowly)
	gojq
	wireguard-tools ipvsadm
	vsftpd nginx-light curl
	python3 python3-venv python3-dpkt python3-matplotlib python3-pytest
	# make test-debug: Debian's kernel source and what building it needs
	# (scripts/debug-kernel.sh; no BTF or DWARF, so no pahole)
	linux-source-6.1 flex bison bc libelf-dev libssl-dev xz-utils
)
top=$(cd "$(dirname "$0")/.." && pwd)
VENV=${SRFF_VENV:-$HOME/.cache/srff/venv}
VIRTME_NG_VERSION=1.42
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# The second kernel: Debian 13's 6.12 from bookworm-backports, by its
# versioned package names (the metapackages stay 6.1's, and nothing else,
# linux-libc-dev included, comes from backports).
BPO_SOURCE=/etc/apt/sources.list.d/srff-bookworm-backports.sources
bpo_pkgs() {	# the versioned image and headers backports' metapackages name
	local p
	for p in linux-image-amd64 linux-headers-amd64; do
		apt-cache show "$p/bookworm-backports" 2>/dev/null |
			sed -n 's/^Depends: \([^ ,]*\).*/\1/p' | head -n1
	done
}
have_612() { ls -d /lib/modules/6.12.*-amd64/build >/dev/null 2>&1 && ls /boot/vmlinuz-6.12.*-amd64 >/dev/null 2>&1; }
# QEMU 10 (bookworm-backports'), not Debian 12's 7.2: the guests run under
# its software emulation, which 10 does faster (docs/testing.md).
QEMU_MIN=10
have_qemu() {
	local v
	v=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
	[ "${v:-0}" -ge "$QEMU_MIN" ]
}

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
need_612=0
have_612 || need_612=1
need_qemu=0
have_qemu || need_qemu=1

if [ ${#missing[@]} -gt 0 ] || [ "$need_612" = 1 ] || [ "$need_qemu" = 1 ]; then
	echo "deps: this machine lacks: ${missing[*]}${missing[*]:+ }$([ "$need_612" = 1 ] && echo "the 6.12 kernel (bookworm-backports) ")$([ "$need_qemu" = 1 ] && echo "QEMU $QEMU_MIN+ (bookworm-backports)")" >&2
	ok=${SRFF_DEPS:-}
	[ "${CI:-}" = true ] && [ -z "$ok" ] && ok=yes
	if [ -z "$ok" ] && [ -t 0 ]; then
		cat >&2 <<-EOF
		deps: srff's tests need them. Installing them is meant for a test machine:
		  - apt-get install of the packages above (nginx and vsftpd are stopped
		    and disabled again if this installs them),
		  - an apt source for bookworm-backports ($BPO_SOURCE), Debian's
		    6.12 kernel image and headers from it (with GRUB, the newest
		    kernel becomes the default at the next boot) and its QEMU.
		EOF
		read -r -p "deps: go ahead? [y/N] " ans
		case $ans in [yY]*) ok=yes ;; *) ok=no ;; esac
	fi
	if [ "$ok" != yes ]; then
		echo "deps: not installing anything. On a scratch test machine run again with SRFF_DEPS=yes (CI sets CI=true)." >&2
		exit 1
	fi
fi

# Which of the services this machine had before (a server's nginx comes from
# the package nginx, not nginx-light: the unit file is what tells).
has_unit() { [ -e "/lib/systemd/system/$1.service" ] || [ -e "/usr/lib/systemd/system/$1.service" ]; }
had_service=" "
for s in vsftpd nginx; do
	{ has_unit "$s" || [ -e "/etc/init.d/$s" ]; } && had_service+="$s "
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bpo_source() {	# add the bookworm-backports source, once
	[ -z "${bpo_ready:-}" ] || return 0
	if [ ! -e "$BPO_SOURCE" ]; then
		# The mirror the machine already uses for bookworm.
		uris=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
		[ -n "$uris" ] || uris=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' \
			/etc/apt/sources.list 2>/dev/null | head -n1)
		[ -n "$uris" ] || { echo "deps: no bookworm apt source found to add bookworm-backports beside" >&2; exit 1; }
		$SUDO tee "$BPO_SOURCE" >/dev/null <<-EOF
		Types: deb
		URIs: $uris
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
	fi
	$SUDO apt-get update -qq
	bpo_ready=1
}
if [ "$need_612" = 1 ]; then
	bpo_source
	mapfile -t bpo < <(bpo_pkgs)
	[ ${#bpo[@]} -eq 2 ] || { echo "deps: bookworm-backports offers no linux-image-amd64/linux-headers-amd64" >&2; exit 1; }
	echo "deps: installing ${bpo[*]} (bookworm-backports)" >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${bpo[@]}" >/dev/null
	have_612 || { echo "deps: ${bpo[*]} installed, but no 6.12 image with headers found" >&2; exit 1; }
fi
if [ "$need_qemu" = 1 ]; then
	bpo_source
	echo "deps: installing qemu-system-x86 (bookworm-backports)" >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -t bookworm-backports qemu-system-x86 >/dev/null
	have_qemu || { echo "deps: qemu-system-x86 installed from bookworm-backports, but not QEMU $QEMU_MIN+" >&2; exit 1; }
fi
# vsftpd and nginx are started by the experiments inside namespaces, not
# as system services. Debian starts a service when its package is installed:
# stop and disable only a service this run brought (no unit file before). A
# server that already had nginx or vsftpd, from whichever package, keeps
# them as they were (the experiments run their own instances in namespaces,
# on their own ports, and do not need them stopped).
for s in vsftpd nginx; do
	case $had_service in *" $s "*) continue ;; esac
	has_unit "$s" || continue
	$SUDO systemctl disable --now "$s" >/dev/null 2>&1 || true
done

# sch_fq's bands (Linux 6.7+) need a tc of iproute2 6.7+ to set them up;
# Debian 12's is 6.1. The tests of the fq-bands setup (tests/kernel/
# setups.sh, on 6.12) use bookworm-backports' tc, unpacked here and never
# installed: the machine's own ip and tc stay Debian 12's.
NEWTC=$HOME/.cache/srff/iproute2
if [ ! -x "$NEWTC/sbin/tc" ] && [ -e "$BPO_SOURCE" ]; then
	echo "deps: unpacking bookworm-backports' iproute2 into $NEWTC (tc for sch_fq's bands)" >&2
	tmp=$(mktemp -d)
	if (cd "$tmp" && apt-get download -q iproute2/bookworm-backports >/dev/null 2>&1) &&
	   dpkg-deb -x "$tmp"/iproute2_*.deb "$tmp/root" && [ -x "$tmp/root/sbin/tc" ]; then
		rm -rf "$NEWTC" && mkdir -p "$NEWTC" && cp -a "$tmp/root/sbin" "$NEWTC/"
	else
		echo "deps: could not unpack iproute2 from bookworm-backports; setup_fq_bands will skip" >&2
	fi
	rm -rf "$tmp"
fi

if [ ! -x "$VENV/bin/vng" ] ||
   [ "$("$VENV/bin/pip" show virtme-ng 2>/dev/null | sed -n 's/^Version: //p')" != "$VIRTME_NG_VERSION" ]; then
	echo "deps: installing virtme-ng into $VENV" >&2
	python3 -m venv "$VENV"
	# Pinned, with its dependencies (scripts/virtme-ng.constraints): a new
	# release must not change how every guest boots overnight. Raise them
	# on purpose, after a full `make test`.
	"$VENV/bin/pip" install -q -c "$top/scripts/virtme-ng.constraints" "virtme-ng==$VIRTME_NG_VERSION"
fi
