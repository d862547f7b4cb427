#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check_version.sh TOP VERSION: the release is set in one place, dkms.conf's
# PACKAGE_VERSION, and what else names it agrees: the module's
# MODULE_VERSION, the man page's title line, and VERSION, the string the
# Makefile builds into srffctl -V (a packager's 0.1-2 too). Prints "ok - ..." or "not ok - ...".
top=$1 version=$2
rel=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
check() {	# check DESCRIPTION COMMAND...
	what=$1; shift
	if "$@"; then echo "ok - $what"; else echo "not ok - $what"; fi
}
check "dkms.conf sets PACKAGE_VERSION ($rel)" test -n "$rel"
check "srff_nf/main.c: MODULE_VERSION(\"$rel\")" \
	grep -q "^MODULE_VERSION(\"$rel\");" "$top/srff_nf/main.c"
check "docs/srffctl.8: .TH ... \"srff $rel\"" \
	grep -q "^\.TH SRFFCTL 8 \"[^\"]*\" \"srff $rel\"" "$top/docs/srffctl.8"
case $version in
"$rel"|"$rel "*|"$rel"[-+~]*) ok=true ;;	# 0.1, 0.1 (git ...), 0.1-2
*) ok=false ;;
esac
check "srffctl -V says $rel ($version)" $ok
