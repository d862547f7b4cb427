#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing srff needs on a Debian 12 machine:
# Debian's kernel image and headers (the guest kernel and what the module
# builds against), QEMU and busybox for virtme-ng, the tools the tests and
# experiments drive, libnl for srffctl, clang for the fuzzer, DKMS (and
# openssl, which it signs modules with) for `make install`, debhelper and
# dh-dkms for `make deb`, Debian's kernel source and its build tools for
# `make test-debug`, and virtme-ng in a venv.
# Quick and quiet when everything is already there.
set -euo pipefail

PKGS=(
	linux-image-amd64 linux-headers-amd64
	qemu-system-x86 busybox-static kmod
	build-essential pkg-config clang libclang-rt-14-dev dkms openssl
	libnl-3-dev libnl-genl-3-dev
	# make deb and tests/packaging.sh: Debian's packaging tools
	debhelper dh-dkms
	iproute2 nftables conntrack tcpdump ethtool iputils-ping iperf3 jq procps
	wireguard-tools
	vsftpd nginx-light curl
	python3 python3-venv python3-dpkt python3-matplotlib python3-pytest
	# make test-debug: Debian's kernel source and what building it needs
	# (scripts/debug-kernel.sh; no BTF or DWARF, so no pahole)
	linux-source-6.1 flex bison bc libelf-dev libssl-dev xz-utils
)
VENV=${SRFF_VENV:-$HOME/.cache/srff/venv}
VIRTME_NG_VERSION=1.42
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# vsftpd and nginx are started by the experiments inside namespaces, not
# as system services. Debian starts a service when its package is installed:
# stop and disable only what this run just installed. A server that already
# ran nginx or vsftpd keeps them as they were (the experiments run their own
# instances in namespaces, on their own ports, and do not need them stopped).
for s in vsftpd nginx; do
	case " ${missing[*]} " in
	*" $s "*|*" $s-light "*) $SUDO systemctl disable --now "$s" >/dev/null 2>&1 || true ;;
	esac
done

if [ ! -x "$VENV/bin/vng" ] ||
   [ "$("$VENV/bin/pip" show virtme-ng 2>/dev/null | sed -n 's/^Version: //p')" != "$VIRTME_NG_VERSION" ]; then
	echo "deps: installing virtme-ng into $VENV" >&2
	python3 -m venv "$VENV"
	# Pinned: a new release must not change how every guest boots
	# overnight. Raise it on purpose, after a full `make test`.
	"$VENV/bin/pip" install -q "virtme-ng==$VIRTME_NG_VERSION"
fi
