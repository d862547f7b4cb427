#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing srff needs on a Debian 12 machine:
# Debian's kernel image and headers (the guest kernel and what the module
# builds against), QEMU and busybox for virtme-ng, the tools the tests and
# experiments drive, libnl for srffctl, clang for the fuzzer, DKMS (and
# openssl, which it signs modules with) for `make install`, and virtme-ng in
# a venv. Quick and quiet when everything is already there.
set -euo pipefail

PKGS=(
	linux-image-amd64 linux-headers-amd64
	qemu-system-x86 busybox-static kmod
	build-essential pkg-config clang libclang-rt-14-dev dkms openssl
	libnl-3-dev libnl-genl-3-dev
	iproute2 nftables conntrack tcpdump ethtool iputils-ping iperf3 jq procps
	vsftpd nginx-light curl
	python3 python3-venv python3-dpkt python3-matplotlib python3-pytest
)
VENV=${SRFF_VENV:-$HOME/.cache/srff/venv}
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
# as system services.
for s in vsftpd nginx; do
	$SUDO systemctl disable --now "$s" >/dev/null 2>&1 || true
done

if [ ! -x "$VENV/bin/vng" ]; then
	echo "deps: installing virtme-ng into $VENV" >&2
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q virtme-ng
fi
