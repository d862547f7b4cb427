#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# packaging/local.sh {check|install|uninstall}: the parts of `make install`
# and `make uninstall` beyond the module and srffctl, for machines that do
# not use the packages (make deb). PREFIX (default /usr/local) as make's.
#
#   check      refuse (exit 1) when the packages srff-dkms or srffctl are
#              installed: `make install` would take over the package's DKMS
#              registration (same srff/VERSION) and shadow its units, and
#              `make uninstall` would remove them under dpkg's feet.
#   install    srff-qdisc and srff-check in PREFIX/sbin (man pages from their
#              headers in PREFIX/share/man/man8), the man pages srff(8) and
#              srff.conf(5) (srffctl(8) is srffctl's make install's);
#              srff.service and
#              srff-qdisc@.service (paths rewritten to PREFIX) in UNITDIR;
#              the samples and docs/operations.md in PREFIX/share/doc/srff;
#              /etc/modprobe.d/srff.conf (all comments) unless one exists;
#              /etc/srff/qdisc/. Enables nothing.
#   uninstall  everything `make install` put down: disables and stops the
#              units (stopping srff-qdisc@IFACE reverts IFACE's qdisc),
#              removes the files, `dkms remove srff/VERSION --all` and
#              /usr/src/srff-VERSION. Kept: /etc/modprobe.d/srff.conf if it
#              was edited, /etc/srff/ if it holds the administrator's files,
#              and the loaded module (modprobe -r srff unloads it; that
#              forgets every flow).
#
# UNITDIR: /usr/local/lib/systemd/system for PREFIX=/usr/local (systemd
# reads it), /lib/systemd/system for /usr, else /etc/systemd/system.
# DESTDIR: put everything under it (staging, tests/packaging.sh); the
# package check, systemctl and DKMS are then left out.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${PREFIX:-/usr/local}
SBINDIR=${SBINDIR:-$PREFIX/sbin}
MANDIR=${MANDIR:-$PREFIX/share/man}
DOCDIR=${DOCDIR:-$PREFIX/share/doc/srff}
case $PREFIX in
/usr/local) unitdir=/usr/local/lib/systemd/system ;;
/usr) unitdir=/lib/systemd/system ;;
*) unitdir=/etc/systemd/system ;;
esac
UNITDIR=${UNITDIR:-$unitdir}
D=${DESTDIR:-}
SBINDIR=$D$SBINDIR MANDIR=$D$MANDIR DOCDIR_D=$D$DOCDIR UNITDIR_D=$D$UNITDIR
MODPROBE_CONF=$D/etc/modprobe.d/srff.conf
ETC=$D/etc/srff
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
prog=local.sh
systemd_up() { [ -z "$D" ] && [ -d /run/systemd/system ]; }
systemctl_() { [ -n "$D" ] || systemctl "$@"; }

check() {
	local p st bad=()
	[ -z "$D" ] || return 0
	command -v dpkg-query >/dev/null || return 0
	for p in srff-dkms srffctl; do
		st=$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null || true)
		case $st in '' | not-installed | config-files) ;; *) bad+=("$p") ;; esac
	done
	[ ${#bad[@]} -eq 0 ] && return 0
	echo "$prog: the package(s) ${bad[*]} are installed: use them (apt upgrade, dpkg -i)," >&2
	echo "$prog: or remove them first (apt purge ${bad[*]}); make install and the packages do not mix" >&2
	return 1
}

install_() {
	local u
	install -D -m 0755 "$top/tc-scripts/srff-qdisc" "$SBINDIR/srff-qdisc"
	install -D -m 0755 "$top/tc-scripts/srff-check" "$SBINDIR/srff-check"
	install -d "$MANDIR/man8"
	"$top/packaging/man-from-header.sh" "$top/tc-scripts/srff-qdisc" \
		"install, show and revert the queueing setups srff steers into" "$ver" > "$MANDIR/man8/srff-qdisc.8"
	"$top/packaging/man-from-header.sh" "$top/tc-scripts/srff-check" \
		"will srff help on this host?" "$ver" > "$MANDIR/man8/srff-check.8"
	install -m 0644 "$top/docs/srff.8" "$MANDIR/man8/srff.8"
	install -D -m 0644 "$top/docs/srff.conf.5" "$MANDIR/man5/srff.conf.5"
	install -d "$UNITDIR_D"
	for u in srff.service srff-qdisc@.service; do
		# The units name the programs where they are (no DESTDIR).
		sed -e "s|/usr/sbin/srff|${SBINDIR#"$D"}/srff|g" \
			-e "s|/usr/share/doc/srffctl/|$DOCDIR/|g" \
			"$top/packaging/$u" > "$UNITDIR_D/$u"
		chmod 0644 "$UNITDIR_D/$u"
	done
	install -D -m 0644 "$top/packaging/srff.conf" "$DOCDIR_D/examples/srff.conf"
	install -D -m 0644 "$top/packaging/qdisc-IFACE.conf" "$DOCDIR_D/examples/qdisc-IFACE.conf"
	install -D -m 0644 "$top/packaging/modprobe-srff.conf" "$DOCDIR_D/examples/modprobe-srff.conf"
	install -D -m 0644 "$top/docs/operations.md" "$DOCDIR_D/operations.md"
	if [ -e "$MODPROBE_CONF" ]; then
		echo "$prog: $MODPROBE_CONF exists, left as it is (the sample: $DOCDIR/examples/modprobe-srff.conf)"
	else
		install -D -m 0644 "$top/packaging/modprobe-srff.conf" "$MODPROBE_CONF"
	fi
	install -d "$ETC/qdisc"
	! systemd_up || systemctl daemon-reload
	echo "$prog: units in $UNITDIR, not enabled: systemctl enable --now srff srff-qdisc@IFACE (docs/operations.md)"
}

# The srff-qdisc@ instances that are enabled or loaded, as unit names.
qdisc_instances() {
	{
		if systemd_up; then
			systemctl list-units --all --plain --no-legend 'srff-qdisc@*.service' 2>/dev/null |
				awk '{print $1}'
		fi
		local l
		for l in "$D"/etc/systemd/system/*.wants/srff-qdisc@*.service; do
			[ -L "$l" ] && echo "${l##*/}"
		done
	} | sort -u
}

uninstall() {
	local u l
	# Stop the qdisc units while srff-qdisc is still there to revert them.
	for u in $(qdisc_instances); do
		if systemd_up; then systemctl disable --now "$u" || true
		else systemctl_ disable "$u" 2>/dev/null || true; fi
	done
	if [ -e "$UNITDIR_D/srff.service" ]; then
		systemctl_ disable srff.service 2>/dev/null || true
		! systemd_up || systemctl stop srff.service || true
	fi
	for l in "$D"/etc/systemd/system/*.wants/srff-qdisc@*.service "$D"/etc/systemd/system/*.wants/srff.service; do
		[ -L "$l" ] || continue
		rm -f "$l"
		rmdir "${l%/*}" 2>/dev/null || true
	done
	rm -f "$UNITDIR_D/srff.service" "$UNITDIR_D/srff-qdisc@.service"
	! systemd_up || systemctl daemon-reload

	if [ -z "$D" ] && command -v dkms >/dev/null && [ -n "$(dkms status "srff/$ver" 2>/dev/null)" ]; then
		dkms remove "srff/$ver" --all
	fi
	rm -rf "$D/usr/src/srff-$ver"

	rm -f "$SBINDIR/srffctl" "$SBINDIR/srff-qdisc" "$SBINDIR/srff-check" \
		"$MANDIR/man8/srffctl.8" "$MANDIR/man8/srff-qdisc.8" "$MANDIR/man8/srff-check.8" \
		"$MANDIR/man8/srff.8" "$MANDIR/man5/srff.conf.5"
	rm -rf "$DOCDIR_D"
	# The directories install made, if nothing else is in them.
	rmdir "$MANDIR/man8" "$MANDIR/man5" "${DOCDIR_D%/*}" "$UNITDIR_D" "${UNITDIR_D%/system}" 2>/dev/null || true
	if [ -e "$MODPROBE_CONF" ]; then
		if cmp -s "$MODPROBE_CONF" "$top/packaging/modprobe-srff.conf"; then
			rm -f "$MODPROBE_CONF"
		else
			echo "$prog: $MODPROBE_CONF was edited: kept"
		fi
	fi
	rmdir "$ETC/qdisc" "$ETC" 2>/dev/null || true
	[ ! -e "$ETC" ] || echo "$prog: $ETC holds your configuration: kept"
	[ -n "$D" ] || [ ! -d /sys/module/srff ] || echo "$prog: srff is still loaded; modprobe -r srff unloads it (forgets every flow)"
	echo "$prog: srff $ver uninstalled"
}

case ${1:-} in
check) check ;;
install) check && install_ ;;
uninstall) check && uninstall ;;
*) echo "usage: $prog {check|install|uninstall}" >&2; exit 2 ;;
esac
