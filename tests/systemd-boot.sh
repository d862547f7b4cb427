#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/systemd-boot.sh KVER...: boot each kernel with systemd as init, the
# way a server boots, and check that srff came up from its files:
#
#   - srff.service ran (enabled by the caller) and left the module loaded,
#     with the parameters of /etc/modprobe.d/ (given in units: 64k, 3s);
#   - the initial namespace's configuration is /etc/srff/srff.conf applied
#     to those defaults: `srffctl save` is what `srffctl setconf` of the same
#     file gives in a fresh namespace, and not what the defaults give;
#   - srff.service was done before network-pre.target (the first flows of
#     the boot are marked with the configured bands);
#   - srff-qdisc@eth0.service put srff-qdisc's ets tree (the default) on eth0.
#
# tests/packaging.sh (step 7, scratch machines only) calls this while both
# packages are installed on this machine, with srff.service and
# srff-qdisc@eth0.service enabled and the two files written: a guest of
# virtme-ng sees this machine's root file system, so it boots with what
# dpkg, DKMS and systemctl enable put there.
#
# Why the root is an overlay: virtme-ng's guest mounts this machine's root,
# and when that is a container's (it has /.dockerenv), systemd in the guest
# believes it runs in a container. It then ignores the kernel command line
# (udev too: eth0 gets renamed, virtme-ng's console service is never
# started) and boots as no server does. The guest's root is therefore an
# overlay of / with /.dockerenv and /run/.containerenv hidden (private
# mount, tmpfs upper layer: nothing is written to this machine).
#
# Prints TAP-style lines ("ok - ...", "not ok - ...") for the caller to
# count (the guest's console is in tests/out/systemd-boot-KVER.log); exits
# 0 if all passed, 1 if one failed, 3 if it could not boot a
# guest here (the reason on the "# SKIP" line). Needs root.
# Environment: SRFF_VENV, SRFF_VM_KVM, SRFF_TIMEOUT_SCALE.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
scale=${SRFF_TIMEOUT_SCALE:-1}

###############################################################################
# In the guest: tests/systemd-boot.sh --guest
###############################################################################
if [ "${1:-}" = --guest ]; then
	failed=0
	check() {	# check DESCRIPTION COMMAND...
		local what=$1; shift
		if "$@"; then echo "ok - $what"; else echo "not ok - $what"; failed=1; fi
	}
	state() { systemctl show -P ActiveState "$1" 2>/dev/null; }
	# settled UNIT SECONDS: wait until UNIT is neither starting nor waiting
	# to start (this runs from a getty, which does not wait for either):
	# active or failed, or no job of the boot left for it.
	settled() {
		local deadline=$((SECONDS + $2 * scale)) s
		while :; do
			s=$(state "$1")
			case $s in active|failed) return 0 ;; esac
			if [ "$s" = inactive ] && ! systemctl list-jobs --no-legend --plain 2>/dev/null | grep -qF " $1 "; then
				case $(systemctl is-system-running 2>/dev/null) in
				running|degraded) return 0 ;;
				esac
			fi
			[ $SECONDS -lt $deadline ] || { echo "# $1 still '$s' after $(($2 * scale)) s"; return 1; }
			sleep 0.5
		done
	}
	srffctl() { /usr/sbin/srffctl "$@"; }	# the package's
	kver=$(uname -r)
	echo "# guest: $kver, PID 1 is $(readlink /proc/1/exe)," \
		"systemd-detect-virt: $(systemd-detect-virt 2>&1)"
	check "$kver: PID 1 is systemd" test "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd -o \
		"$(readlink /proc/1/exe)" = /lib/systemd/systemd
	check "$kver: systemd sees a VM, not a container" test "$(systemd-detect-virt -c 2>/dev/null)" = none

	settled srff.service 300
	check "$kver: srff.service is active ($(state srff.service), result $(systemctl show -P Result srff.service))" \
		test "$(state srff.service)" = active
	journalctl -b -u srff.service --no-pager -o cat 2>/dev/null | tail -n 5 | sed 's/^/#   /'
	check "$kver: srff is loaded" test -d /sys/module/srff
	ver=$(cat /sys/module/srff/version 2>/dev/null)
	path=$(modinfo -n srff 2>/dev/null)
	check "$kver: from DKMS's $path (version $ver)" \
		test "${path#/lib/modules/$kver/updates/dkms/}" != "$path" -a "$(modinfo -F version srff)" = "$ver"
	p=/sys/module/srff/parameters
	check "$kver: /etc/modprobe.d's max_flows=64k is $(cat $p/max_flows 2>/dev/null)" \
		test "$(cat $p/max_flows 2>/dev/null)" = 65536
	check "$kver: and gc_interval_ms=3s is $(cat $p/gc_interval_ms 2>/dev/null)" \
		test "$(cat $p/gc_interval_ms 2>/dev/null)" = 3000

	booted=$(srffctl save 2>&1) && applied=$(unshare -n sh -c \
		'/usr/sbin/srffctl setconf /etc/srff/srff.conf && /usr/sbin/srffctl save' 2>&1) &&
		defaults=$(unshare -n /usr/sbin/srffctl save 2>&1)
	rc=$?
	echo "# srffctl save after boot: $(tr '\n' ';' <<<"$booted")"
	check "$kver: srffctl save, and setconf + save in a new namespace (exit $rc)" test $rc = 0
	check "$kver: the boot applied /etc/srff/srff.conf (save = setconf of it in a new namespace)" \
		test $rc = 0 -a -n "$booted" -a "$booted" = "${applied:-}"
	check "$kver: which is not the defaults" test $rc = 0 -a "$booted" != "${defaults:-}"
	check "$kver: idle-reset 250ms from the file" grep -qx 'idle-reset 250ms' <<<"$booted"

	t_srff=$(systemctl show -P ActiveEnterTimestampMonotonic srff.service)
	t_pre=$(systemctl show -P ActiveEnterTimestampMonotonic network-pre.target)
	echo "# srff.service active at ${t_srff:-?} us, network-pre.target at ${t_pre:-?} us"
	check "$kver: srff.service was done before network-pre.target" \
		test "${t_srff:-0}" -gt 0 -a "${t_pre:-0}" -ge "${t_srff:-0}"

	settled srff-qdisc@eth0.service 300
	check "$kver: srff-qdisc@eth0.service is active ($(state srff-qdisc@eth0.service))" \
		test "$(state srff-qdisc@eth0.service)" = active
	tree=$(tc qdisc show dev eth0 2>&1)
	sed 's/^/#   /' <<<"$tree"
	check "$kver: eth0 has ets 10: at the root, fq_codel in its bands" \
		eval 'grep -q "^qdisc ets 10: root" <<<"$tree" && grep -q "^qdisc fq_codel .* parent 10:1" <<<"$tree"'
	systemctl --failed --no-legend --plain 2>/dev/null | grep srff | sed 's/^/# failed: /'
	exit $failed
fi

###############################################################################
# On the host
###############################################################################
[ $# -gt 0 ] || { echo "usage: tests/systemd-boot.sh KVER..." >&2; exit 2; }
skip() { echo "ok - systemd boot # SKIP $1"; exit 3; }
[ "$(id -u)" = 0 ] || skip "needs root"
venv=${SRFF_VENV:-$HOME/.cache/srff/venv}
[ -x "$venv/bin/vng" ] || skip "no virtme-ng in $venv (make deps)"
"$venv/bin/vng" --help 2>/dev/null | grep -q -- --systemd || skip "this virtme-ng has no --systemd"

base=$(mktemp -d /tmp/srff-systemd-boot.XXXXXX)
root=$base/root
cleanup() {
	umount "$root" 2>/dev/null
	umount "$base/layer" 2>/dev/null
	rm -rf "$base"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$base/layer" "$root"
mount -t tmpfs srff-boot "$base/layer" && mkdir "$base/layer/upper" "$base/layer/work" ||
	skip "cannot mount a tmpfs here"
for f in .dockerenv run/.containerenv; do
	[ -e "/$f" ] || continue
	mkdir -p "$base/layer/upper/$(dirname "$f")"
	mknod "$base/layer/upper/$f" c 0 0 || skip "cannot make an overlay whiteout (mknod)"
done
mount -t overlay srff-boot -o "lowerdir=/,upperdir=$base/layer/upper,workdir=$base/layer/work" "$root" ||
	skip "cannot mount an overlay of / (the guest's root)"
mkdir -p "$root$top"	# the checkout is exported on its own (it may be a mount)

accel=(--disable-kvm)
[ "${SRFF_VM_KVM:-0}" = 1 ] && accel=()
mkdir -p "$top/tests/out"
rc=0
for k in "$@"; do
	log=$top/tests/out/systemd-boot-$k.log	# the guest's console and the checks
	[ -f "/boot/vmlinuz-$k" ] || { echo "not ok - $k: no /boot/vmlinuz-$k"; rc=1; continue; }
	for attempt in 1 2; do
		echo "# booting $k with systemd as init (1-3 min under emulation)"
		start=$SECONDS
		PATH=$venv/bin:$PATH timeout $((480 * scale)) "$venv/bin/vng" --run "/boot/vmlinuz-$k" \
			--root "$root" "${accel[@]}" --systemd --verbose --memory 2G --cpus "${SRFF_VM_CPUS:-2}" --network user \
			--rwdir "$top=$top" --cwd "$root$top" \
			--exec "SRFF_TIMEOUT_SCALE=$scale tests/systemd-boot.sh --guest" \
			< /dev/null > "$log" 2>&1
		vrc=$?
		[ "$attempt" = 1 ] && ! grep -q '^ok - ' "$log" && "$top/scripts/boot-panic" "$log" || break
		echo "# $k panicked in a boot that never loaded srff (scripts/boot-panic); its last words:"
		grep -aE '^\[ *[0-9.]+\]' "$log" | tail -n 12 | cut -c1-160 | sed 's/^/#   /'
		echo "# booting $k once more"
		cp "$log" "$log.panic"
	done
	grep -E '^(ok|not ok|#)' "$log"
	echo "# $k: guest exit $vrc after $((SECONDS - start)) s"
	if ! grep -q '^ok - ' "$log"; then
		echo "not ok - $k: the guest ran no check (exit $vrc); the last lines of $log:"
		tail -n 30 "$log" | cut -c1-160 | sed 's/^/#   /'
		rc=1
	elif [ "$vrc" != 0 ]; then
		rc=1
	fi
done
exit $rc
