# SPDX-License-Identifier: GPL-2.0
# Sourced: sets KVER to the Debian kernel we build against and boot, unless
# the caller set it. The newest installed linux-headers-*-amd64 wins; the
# running kernel (uname -r) is deliberately not used: on the build machines
# it has no headers and loads no modules.
if [ -z "${KVER:-}" ]; then
	KVER=$(ls -d /lib/modules/*-amd64/build 2>/dev/null | sed 's|/lib/modules/||; s|/build||' | sort -V | tail -n1)
fi
if [ -z "$KVER" ] || [ ! -e "/boot/vmlinuz-$KVER" ]; then
	echo "no Debian amd64 kernel image with headers found (run 'make deps')" >&2
	return 4 2>/dev/null || exit 4
fi
export KVER
