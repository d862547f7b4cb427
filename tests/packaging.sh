#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/packaging.sh: the Debian packages, the boot units and make
# install/uninstall's extra files. Ends in "packaging: N passed, N failed".
#
#  1. Versions: debian/changelog, dkms.conf and the module's MODULE_VERSION
#     agree (a package and `make install` register the same srff/VERSION).
#  2. packaging/build-deb.sh (what `make deb` runs) builds srff-dkms and
#     srffctl into a temporary directory; the checkout stays as it was.
#  3. Their control fields, contents, conffiles and maintainer scripts
#     (dpkg-deb -I/-c/-e/-x): the DKMS tree is the module's sources and
#     dkms.conf with the package's version, the modprobe.d file is a
#     conffile of comments naming every module parameter, srffctl has the
#     tools, the man pages (srff-dkms: srff(8)), the units and the samples, its shared libraries
#     in Depends, and the sample srff.conf parses.
#  4. systemd-analyze verify on the units as packaged (--root: the extracted
#     packages), and the settings the boot path depends on.
#  5. packaging/local.sh install/uninstall into a DESTDIR: everything that
#     install puts down, uninstall removes.
#  6. lintian on the packages, if it is installed (skipped otherwise).
#  7. Only on a scratch machine (SRFF_SCRATCH=1 or CI=true), as root, with
#     neither package nor a DKMS srff registered already, and no VM
#     running (virtme-ng guests mount this machine's root file system
#     through an overlay: DKMS's depmod rewriting modules.dep under a
#     booting guest can make its modprobe fail): README's apt-get install
#     of both packages, DKMS must have built and installed srff.ko for
#     every kernel with headers, the installed units verify, none is
#     enabled; enabled with an /etc/srff/srff.conf and a modprobe.d line,
#     each kernel boots with systemd as init and comes up configured from
#     them, then, back to the packages alone, walks README's quickstart and
#     way off as printed (tests/systemd-boot.sh --readme); then README's own
#     purge line, and nothing of srff may be left (dkms status, /usr/src,
#     /lib/modules, /etc, units).
# shellcheck disable=SC2016,SC2317  # eval'd checks; functions run by check
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
pass=0 failed=0
check() {	# check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok - $what"; pass=$((pass + 1))
	else echo "not ok - $what"; failed=$((failed + 1)); fi
}
skip() { echo "ok - $1 # SKIP $2"; }
done_() { echo "packaging: $pass passed, $failed failed"; exit $((failed > 0)); }
indent() { sed 's/^/#   /'; }

for t in dpkg-buildpackage dpkg-deb dpkg-parsechangelog dh dh_dkms; do
	command -v "$t" >/dev/null ||
		{ echo "not ok - $t not installed (debhelper, dh-dkms, dpkg-dev)"; failed=1; done_; }
done

tmp=$(mktemp -d /tmp/srff-packaging.XXXXXX)
installed=false
cleanup() {
	if $installed; then
		echo "# cleanup: dpkg --purge srffctl srff-dkms"
		dpkg --purge srffctl srff-dkms >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. versions ---------------------------------------------------------
ver=$(dpkg-parsechangelog -S Version)
up=${ver%-*}
conf_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
mod_ver=$(sed -n 's/^MODULE_VERSION("\(.*\)");/\1/p' srff_nf/*.c)
check "debian/changelog's version $up is dkms.conf's PACKAGE_VERSION ($conf_ver)" \
	test "$up" = "$conf_ver"
check "  and srff_nf's MODULE_VERSION ($mod_ver)" test "$up" = "$mod_ver"

# The module parameters a server may set (test builds' test_* left out).
params=$(grep -ohE 'module_param(_array|_named)?\([a-z_0-9]+' srff_nf/*.c |
	sed 's/.*(//' | grep -v '^test_' | sort -u)

# --- 2. build --------------------------------------------------------------
git_before=$(git status --porcelain 2>/dev/null)
beside() { find .. -maxdepth 1 \( -name 'srff*.deb' -o -name 'srff*.changes' -o -name 'srff*.buildinfo' \) | sort; }
beside_before=$(beside)
packaging/build-deb.sh "$tmp/deb" > "$tmp/build.out" 2>&1
rc=$?
grep -v ' passed, ' "$tmp/build.out" | tail -n 6 | indent
check "make deb (packaging/build-deb.sh) builds (exit $rc)" test "$rc" = 0
arch=$(dpkg --print-architecture)
ddeb=$tmp/deb/srff-dkms_${ver}_all.deb
cdeb=$tmp/deb/srffctl_${ver}_${arch}.deb
check "  srff-dkms_${ver}_all.deb" test -s "$ddeb"
check "  srffctl_${ver}_${arch}.deb" test -s "$cdeb"
check "  the checkout is as it was (git status)" \
	test "$(git status --porcelain 2>/dev/null)" = "$git_before"
check "  nothing left beside it (../srff*.deb, .changes, .buildinfo)" test "$(beside)" = "$beside_before"
if [ ! -s "$ddeb" ] || [ ! -s "$cdeb" ]; then done_; fi

field() { dpkg-deb -f "$1" "$2"; }
files() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|; s|/$||'; }
has() { grep -qxF -- "$2" <<<"$1"; }
has_all() {	# has_all LIST ITEM...
	local l=$1 i; shift
	for i; do has "$l" "$i" || { echo "#   missing: $i"; return 1; }; done
}
mkdir -p "$tmp/x-dkms" "$tmp/x-ctl" "$tmp/c-dkms" "$tmp/c-ctl"
dpkg-deb -x "$ddeb" "$tmp/x-dkms"; dpkg-deb -e "$ddeb" "$tmp/c-dkms"
dpkg-deb -x "$cdeb" "$tmp/x-ctl"; dpkg-deb -e "$cdeb" "$tmp/c-ctl"

# --- 3a. srff-dkms ---------------------------------------------------------
src=/usr/src/srff-$up
dfiles=$(files "$ddeb")
want=("$src/dkms.conf" "$src/include/uapi/linux/srff.h" "$src/include/srff/units.h" /etc/modprobe.d/srff.conf)
for f in srff_nf/Kbuild srff_nf/Makefile srff_nf/*.c srff_nf/*.h; do
	case $f in *.mod.c) continue ;; esac
	want+=("$src/$f")
done
check "srff-dkms: Architecture all" test "$(field "$ddeb" Architecture)" = all
check "srff-dkms: holds srff(8)" has_all "$dfiles" /usr/share/man/man8/srff.8.gz
check "srff-dkms: Depends on dkms ($(field "$ddeb" Depends))" \
	grep -qE '(^|, )dkms( |,|$)' <<<"$(field "$ddeb" Depends)"
check "srff-dkms: holds the module's ${#want[@]} source and config files" has_all "$dfiles" "${want[@]}"
got=$(cd "$tmp/x-dkms" && find ".$src" -type f | sed 's|^\.||' | sort)
check "srff-dkms: nothing else under $src (no srff_nf/user, no build products)" \
	test "$got" = "$(printf '%s\n' "${want[@]}" | grep "^$src/" | sort)"
same_src=true
for f in srff_nf/Kbuild srff_nf/Makefile srff_nf/*.c srff_nf/*.h include/uapi/linux/srff.h include/srff/units.h; do
	case $f in *.mod.c) continue ;; esac
	cmp -s "$f" "$tmp/x-dkms$src/$f" || { echo "#   differs: $f"; same_src=false; }
done
check "srff-dkms: the sources are the tree's" $same_src
pkgconf=$tmp/x-dkms$src/dkms.conf
check "srff-dkms: dkms.conf has PACKAGE_VERSION=\"$up\" (the package's)" \
	grep -qx "PACKAGE_VERSION=\"$up\"" "$pkgconf"
check "srff-dkms: and is the top-level dkms.conf otherwise" \
	diff <(grep -v '^PACKAGE_VERSION=' dkms.conf) <(grep -v '^PACKAGE_VERSION=' "$pkgconf")
check "srff-dkms: conffiles: /etc/modprobe.d/srff.conf" \
	test "$(cat "$tmp/c-dkms/conffiles" 2>/dev/null)" = /etc/modprobe.d/srff.conf
mp=$tmp/x-dkms/etc/modprobe.d/srff.conf
check "srff-dkms: /etc/modprobe.d/srff.conf is all comments (sets nothing)" \
	test -z "$(grep -vE '^[[:space:]]*(#|$)' "$mp")"
missing=()
for p in $params; do grep -qE "^#options srff $p=" "$mp" || missing+=("$p"); done
check "srff-dkms: it names every module parameter ($(wc -w <<<"$params"))${missing:+, not: ${missing[*]}}" \
	test ${#missing[@]} -eq 0
all_in() {	# all_in FILE PATTERN...: every extended regex matches a line
	local f=$1 r; shift
	for r; do grep -qE -- "$r" "$f" || { echo "#   ${f##*/}: nothing matches /$r/"; return 1; }; done
}
check "srff-dkms: postinst registers and builds srff $up with DKMS (common.postinst)" \
	all_in "$tmp/c-dkms/postinst" '^DKMS_NAME=srff$' "^DKMS_VERSION=$up\$" 'common\.postinst'
check "srff-dkms: prerm runs dkms remove --all" grep -q 'dkms remove .*--all' "$tmp/c-dkms/prerm"

# --- 3b. srffctl -----------------------------------------------------------
cfiles=$(files "$cdeb")
cdeps=$(field "$cdeb" Depends)
check "srffctl: Architecture $arch" test "$(field "$cdeb" Architecture)" = "$arch"
echo "$cdeps" | tr ',' '\n' | sed 's/^ *//' > "$tmp/deps"
check "srffctl: Depends on libnl-genl-3, libnl-3, libc6 through shlibs ($cdeps)" \
	all_in "$tmp/deps" '^libnl-genl-3-[0-9]+ ' '^libnl-3-[0-9]+ ' '^libc6 '
check "  no substitution variable left" eval '! grep -q "[$]{" "$tmp/deps"'
check "srffctl: Depends on iproute2 and kmod (tc, modprobe)" all_in "$tmp/deps" '^iproute2$' '^kmod$'
check "srffctl: Recommends srff-dkms ($(field "$cdeb" Recommends))" \
	grep -qw srff-dkms <<<"$(field "$cdeb" Recommends)"
check "srffctl: holds the tools, man pages, units and samples" has_all "$cfiles" \
	/usr/sbin/srffctl /usr/sbin/srff-qdisc /usr/sbin/srff-check \
	/usr/share/man/man8/srffctl.8.gz /usr/share/man/man8/srff-qdisc.8.gz \
	/usr/share/man/man8/srff-check.8.gz /usr/share/man/man5/srff.conf.5.gz /lib/systemd/system/srff.service "/lib/systemd/system/srff-qdisc@.service" \
	/usr/share/doc/srffctl/examples/srff.conf /usr/share/doc/srffctl/examples/qdisc-IFACE.conf \
	/usr/share/doc/srffctl/operations.md /etc/srff/qdisc
check "srffctl: the programs are executable" \
	test -x "$tmp/x-ctl/usr/sbin/srffctl" -a -x "$tmp/x-ctl/usr/sbin/srff-qdisc" -a -x "$tmp/x-ctl/usr/sbin/srff-check"
same=true
for p in tc-scripts/srff-qdisc:usr/sbin/srff-qdisc tc-scripts/srff-check:usr/sbin/srff-check \
	packaging/srff.service:lib/systemd/system/srff.service \
	"packaging/srff-qdisc@.service:lib/systemd/system/srff-qdisc@.service" \
	packaging/srff.conf:usr/share/doc/srffctl/examples/srff.conf \
	packaging/qdisc-IFACE.conf:usr/share/doc/srffctl/examples/qdisc-IFACE.conf; do
	cmp -s "${p%%:*}" "$tmp/x-ctl/${p#*:}" || { echo "#   differs: ${p%%:*}"; same=false; }
done
check "srffctl: scripts, units and samples are the tree's" $same
"$tmp/x-ctl/usr/sbin/srffctl" -V >/dev/null 2>&1
check "srffctl: the packaged srffctl runs (-V, exit $?)" test $? = 0
check "srffctl: no conffiles (/etc/srff/ is the administrator's)" test ! -e "$tmp/c-ctl/conffiles"
check "srffctl: postinst does not enable srff.service on install (--no-enable)" \
	grep -q "deb-systemd-helper debian-installed 'srff.service'" "$tmp/c-ctl/postinst"
check "srffctl: srff.service is not restarted on upgrade" \
	eval '! grep -q "restart .srff.service" "$tmp/c-ctl/postinst"'
check "srffctl: prerm stops the srff-qdisc@ instances on remove (no systemctl call)" \
	eval 'all_in "$tmp/c-ctl/prerm" "srff-qdisc@\\\$\(systemd-escape" "deb-systemd-invoke stop" &&
	      ! grep -q "^[^#]*systemctl " "$tmp/c-ctl/prerm"'
check "srffctl: postrm removes the enable links on purge" \
	grep -q 'wants/srff-qdisc@\*.service' "$tmp/c-ctl/postrm"
# The sample must parse: apply reads the whole file before it sends
# anything, and exits 2 for a bad file, 4 without the module. Where srff
# is loaded, apply in a throwaway network namespace, not the host's.
sample=$tmp/x-ctl/usr/share/doc/srffctl/examples/srff.conf
run_apply=("$tmp/x-ctl/usr/sbin/srffctl" apply "$sample")
if [ -d /sys/module/srff ]; then
	if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then run_apply=(unshare -n "${run_apply[@]}")
	else run_apply=(); fi
fi
if [ ${#run_apply[@]} -gt 0 ]; then
	"${run_apply[@]}" > "$tmp/apply.out" 2>&1
	rc=$?
	indent < "$tmp/apply.out"
	check "the sample srff.conf parses (srffctl apply: exit $rc, not 2)" test "$rc" != 2
else
	skip "the sample srff.conf parses" "srff is loaded here and no unshare as root"
fi

# --- 4. units --------------------------------------------------------------
u=$tmp/x-ctl/lib/systemd/system
unit_has() { grep -qxE -- "$2" "$u/$1" || { echo "#   $1: no line /$2/"; return 1; }; }
check "srff.service: oneshot, stays active" eval \
	'unit_has srff.service "Type=oneshot" && unit_has srff.service "RemainAfterExit=yes"'
check "srff.service: pulls in and runs before network-pre.target" eval \
	'unit_has srff.service "Wants=network-pre.target" && unit_has srff.service "Before=network-pre.target.*"'
check "srff.service: loads the module, applies /etc/srff/srff.conf if it exists" eval \
	'unit_has srff.service "ExecStart=.*/sbin/modprobe srff.*" &&
	 unit_has srff.service "ExecStart=.*test ! -e /etc/srff/srff.conf \|\| exec /usr/sbin/srffctl setconf /etc/srff/srff.conf.*"'
check "srff.service: no ExecStop (stopping must not unload srff)" \
	eval '! grep -q "^ExecStop" "$u/srff.service"'
check "srff-qdisc@.service: bound to and after its device" eval \
	'unit_has srff-qdisc@.service "BindsTo=sys-subsystem-net-devices-%i.device" &&
	 unit_has srff-qdisc@.service "After=sys-subsystem-net-devices-%i.device.*" &&
	 unit_has srff-qdisc@.service "WantedBy=sys-subsystem-net-devices-%i.device"'
check "srff-qdisc@.service: installs \$SETUP from /etc/srff/qdisc/%I.conf, reverts on stop" eval \
	'unit_has srff-qdisc@.service "EnvironmentFile=-/etc/srff/qdisc/%I.conf" &&
	 unit_has srff-qdisc@.service "ExecStart=/usr/sbin/srff-qdisc install \\\$SETUP %I \\\$ARGS" &&
	 unit_has srff-qdisc@.service "Environment=SETUP= ARGS=" &&
	 unit_has srff-qdisc@.service "ExecStop=-/usr/sbin/srff-qdisc revert %I"'
if command -v systemd-analyze >/dev/null; then
	# The packages' files as the root, and the system's commands the units
	# run (/bin/sh) copied in: verify checks that every command exists.
	root=$tmp/root
	mkdir -p "$root"
	dpkg-deb -x "$ddeb" "$root"; dpkg-deb -x "$cdeb" "$root"
	for c in $(sed -nE 's/^Exec[A-Za-z]*=[-@:+!]*(\/[^ ]+).*/\1/p' "$u"/*.service | sort -u); do
		[ -e "$root$c" ] || [ ! -e "$c" ] || install -D "$(readlink -f "$c")" "$root$c"
	done
	for unit in srff.service srff-qdisc@eth0.service 'srff-qdisc@veth\x2da.service'; do
		out=$(MANPATH=$root/usr/share/man systemd-analyze verify --root="$root" "$unit" 2>&1)
		rc=$?
		[ -z "$out" ] || indent <<<"$out"
		check "systemd-analyze verify $unit: exit $rc, no complaint" test "$rc" = 0 -a -z "$out"
	done
else
	skip "systemd-analyze verify" "systemd-analyze not installed"
fi

# --- 5. make install / uninstall's extra files, into a DESTDIR -------------
stage=$tmp/stage
DESTDIR=$stage packaging/local.sh install > "$tmp/local.out" 2>&1
rc=$?
check "local.sh install into a DESTDIR (exit $rc)" test "$rc" = 0
check "  programs, man pages, units, samples, modprobe.d file, /etc/srff/qdisc" has_all \
	"$(cd "$stage" && find . | sed 's|^\.||')" \
	/usr/local/sbin/srff-qdisc /usr/local/sbin/srff-check \
	/usr/local/share/man/man8/srff-qdisc.8 /usr/local/share/man/man8/srff-check.8 \
	/usr/local/share/man/man8/srff.8 /usr/local/share/man/man5/srff.conf.5 \
	/usr/local/lib/systemd/system/srff.service "/usr/local/lib/systemd/system/srff-qdisc@.service" \
	/usr/local/share/doc/srff/examples/srff.conf /usr/local/share/doc/srff/examples/qdisc-IFACE.conf \
	/usr/local/share/doc/srff/operations.md /etc/modprobe.d/srff.conf /etc/srff/qdisc
check "  the units run the programs from /usr/local/sbin" eval \
	'grep -q "/usr/local/sbin/srffctl setconf" "$stage/usr/local/lib/systemd/system/srff.service" &&
	 grep -q "^ExecStart=/usr/local/sbin/srff-qdisc install" "$stage/usr/local/lib/systemd/system/srff-qdisc@.service"'
mkdir -p "$stage/etc/systemd/system/sys-subsystem-net-devices-eth0.device.wants"
ln -s /usr/local/lib/systemd/system/srff-qdisc@.service \
	"$stage/etc/systemd/system/sys-subsystem-net-devices-eth0.device.wants/srff-qdisc@eth0.service"
DESTDIR=$stage packaging/local.sh uninstall >> "$tmp/local.out" 2>&1
rc=$?
left=$(cd "$stage" && find . \( -type f -o -type l \) | sed 's|^\.||')
[ -z "$left" ] || indent <<<"$left"
check "local.sh uninstall removes every file install put down, and enable links (exit $rc)" \
	test "$rc" = 0 -a -z "$left"

# --- 6. lintian ------------------------------------------------------------
if command -v lintian >/dev/null; then
	lintian --fail-on error "$ddeb" "$cdeb" > "$tmp/lintian.out" 2>&1
	rc=$?
	indent < "$tmp/lintian.out"
	check "lintian: no errors (exit $rc; warnings above)" test "$rc" = 0
else
	skip "lintian" "not installed (apt-get install lintian to lint the packages)"
fi

# --- 7. install round trip, scratch machines only ---------------------------
why_not=
if [ "${SRFF_SCRATCH:-}" != 1 ] && [ "${CI:-}" != true ]; then
	why_not="not a scratch machine: SRFF_SCRATCH=1 (or CI=true) allows dpkg -i here"
elif [ "$(id -u)" != 0 ]; then
	why_not="needs root"
elif ! command -v dkms >/dev/null; then
	why_not="dkms not installed"
elif dpkg-query -W -f '${db:Status-Status}\n' srff-dkms srffctl 2>/dev/null | grep -qvx 'not-installed'; then
	why_not="srff-dkms or srffctl is installed already: not touching it"
elif [ -n "$(dkms status srff 2>/dev/null)" ]; then
	why_not="srff is registered with DKMS already (make install?): not touching it"
elif pgrep -f 'virtme-run|qemu-system' >/dev/null 2>&1; then
	why_not="a VM is running (virtme-ng guests mount this root file system: depmod would rewrite their /lib/modules)"
fi
kernels=$(for b in /lib/modules/*/build; do [ -d "$b" ] && basename "$(dirname "$b")"; done)
[ -n "$why_not" ] || [ -n "$kernels" ] || why_not="no kernel headers installed"
if [ -n "$why_not" ]; then
	skip "dpkg -i / dpkg --purge round trip" "$why_not"
	done_
fi

snapshot() {
	find /etc/systemd/system /etc/modprobe.d /etc/srff /usr/src /var/lib/dkms \
		/lib/modules/*/updates -maxdepth 6 2>/dev/null | grep -v '^/var/lib/dkms/mok\.' | sort
}
dkms_installed() { [[ $1 == "srff/$up, $2, "*": installed"* ]]; }	# STATUS KVER
snap_before=$(snapshot)
mok_before=$(ls /var/lib/dkms/mok.* 2>/dev/null)
# README's own install line (its "Install" section), on the packages just
# built here rather than in the checkout's build/deb/.
inst=$(tests/systemd-boot.sh --readme-sh Install | grep 'apt-get install ./build/deb/')
check "README installs the packages with apt-get: '$inst'" test -n "$inst"
inst=${inst//.\/build\/deb\//$tmp/deb/}
echo "# ${inst:=dpkg -i $ddeb $cdeb} (DKMS builds for: ${kernels//$'\n'/ })"
installed=true
bash -c "$inst" < <(yes 2>/dev/null) > "$tmp/dpkg-i.out" 2>&1
rc=$?
grep -iE 'building|done|error|warn|skipped' "$tmp/dpkg-i.out" | grep -v "readelf: Warning: Section '.comment'" | indent
check "$inst (exit $rc)" test "$rc" = 0
for p in srff-dkms srffctl; do
	check "  $p is installed" test "$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null)" = installed
done
dkms status srff 2>&1 | grep -v "readelf: Warning: Section '.comment'" | indent
for k in $kernels; do
	check "dkms status: srff/$up installed for $k" \
		dkms_installed "$(dkms status srff -k "$k" 2>/dev/null)" "$k"
	ko=$(find "/lib/modules/$k/updates/dkms" -name 'srff.ko*' 2>/dev/null | head -n1)
	check "  /lib/modules/$k/updates/dkms/${ko##*/}" test -n "$ko"
	check "  modprobe finds it (modinfo -k $k srff: version $(modinfo -k "$k" -F version srff 2>/dev/null))" \
		test "$(modinfo -k "$k" -F version srff 2>/dev/null)" = "$up"
	check "  built for $k (vermagic)" \
		test "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$k"
done
check "/etc/modprobe.d/srff.conf is srff-dkms's conffile" \
	grep -q /etc/modprobe.d/srff.conf <<<"$(dpkg-query -W -f '${Conffiles}' srff-dkms)"
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify srff.service srff-qdisc@eth0.service 2>&1)
	rc=$?
	[ -z "$out" ] || indent <<<"$out"
	check "systemd-analyze verify on the installed units: exit $rc, no complaint" test "$rc" = 0 -a -z "$out"
fi
check "srff.service is not enabled by the package ($(systemctl is-enabled srff.service 2>&1))" \
	test "$(systemctl is-enabled srff.service 2>&1)" = disabled
packaging/local.sh check > "$tmp/check.out" 2>&1
rc=$?
check "make install and uninstall refuse beside the packages (local.sh check: exit $rc)" test "$rc" = 1
/usr/sbin/srffctl -V >/dev/null 2>&1
check "/usr/sbin/srffctl runs (-V, exit $?)" test $? = 0
# What an administrator does; purge must undo it.
systemctl enable srff.service srff-qdisc@eth0.service > "$tmp/enable.out" 2>&1
rc=$?
indent < "$tmp/enable.out"
check "systemctl enable srff srff-qdisc@eth0 (exit $rc)" test "$rc" = 0

# And boot with them, under a real systemd: what a server does at boot.
cat > /etc/srff/srff.conf <<'EOF'
# tests/packaging.sh: applied at boot by srff.service
thresholds 20k 300k
idle-reset 250ms
EOF
printf '# tests/packaging.sh\noptions srff max_flows=64k gc_interval_ms=3s\n' > /etc/modprobe.d/srff-test.conf
boot_kernels=$(for k in $kernels; do [ -f "/boot/vmlinuz-$k" ] && echo "$k"; done)
# SRFF_SYSTEMD_BOOT_KERNELS="KVER ...": boot only those of them (CI boots its
# first kernel: the units and systemd are the same user space for both).
if [ -n "${SRFF_SYSTEMD_BOOT_KERNELS:-}" ]; then
	boot_kernels=$(for k in $boot_kernels; do
		case " $SRFF_SYSTEMD_BOOT_KERNELS " in *" $k "*) echo "$k" ;; esac
	done)
fi
# Each boot then goes back to the packages alone and walks README's
# quickstart and its way off (--readme), but for the purge, run below.
# shellcheck disable=SC2086  # one argument a kernel
tests/systemd-boot.sh --readme $boot_kernels > "$tmp/boot.out" 2>&1
rc=$?
grep '^#' "$tmp/boot.out" | indent
while IFS= read -r line; do
	case $line in
	'not ok - '*) echo "$line"; failed=$((failed + 1)) ;;
	'ok - '*) echo "$line"; pass=$((pass + 1)) ;;
	esac
done < "$tmp/boot.out"
check "boot under systemd: $(echo $boot_kernels) (tests/systemd-boot.sh: exit $rc)" test "$rc" = 0 -o "$rc" = 3
rm -f /etc/srff/srff.conf /etc/modprobe.d/srff-test.conf

# README's own uninstall line (its "Turning it off" section: the guests of
# --readme ran the lines before it), answering its question as a reader does.
purge=$(tests/systemd-boot.sh --readme-sh "Turning it off" | grep 'apt-get purge')
check "README's way off ends in an apt-get purge: '$purge'" test -n "$purge"
bash -c "${purge:-dpkg --purge srffctl srff-dkms}" < <(yes 2>/dev/null) > "$tmp/purge.out" 2>&1
rc=$?
grep -iE 'error|warn|removing|deleting' "$tmp/purge.out" | grep -v "readelf: Warning: Section '.comment'" | indent
check "${purge:-dpkg --purge srffctl srff-dkms} (exit $rc)" test "$rc" = 0
installed=false
for p in srff-dkms srffctl; do
	st=$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null)
	check "  $p is gone (${st:-unknown})" test -z "$st" -o "$st" = not-installed
done
check "dkms status shows no srff" test -z "$(dkms status srff 2>/dev/null)"
check "no /usr/src/srff-$up, no /var/lib/dkms/srff" test ! -e "/usr/src/srff-$up" -a ! -e /var/lib/dkms/srff
left=$(find /lib/modules/*/updates -name 'srff.ko*' 2>/dev/null)
check "no srff.ko under /lib/modules/*/updates${left:+: $left}" test -z "$left"
left=$(grep -l srff /lib/modules/*/modules.dep 2>/dev/null)
check "no modules.dep names srff${left:+: $left}" test -z "$left"
check "no /etc/modprobe.d/srff.conf, no /etc/srff" test ! -e /etc/modprobe.d/srff.conf -a ! -e /etc/srff
left=$(find /etc/systemd/system /lib/systemd/system -name 'srff*' 2>/dev/null)
check "no srff unit or enable link${left:+: $left}" test -z "$left"
# DKMS makes its signing key on first use; not ours to keep if it was not here.
mok_after=$(ls /var/lib/dkms/mok.* 2>/dev/null)
if [ -z "$mok_before" ] && [ -n "$mok_after" ]; then
	echo "# DKMS made its signing key in this run: removed again"
	rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
fi
snap_after=$(snapshot)
[ "$snap_after" = "$snap_before" ] || diff <(echo "$snap_before") <(echo "$snap_after") | indent
check "/etc/systemd/system, /etc/modprobe.d, /usr/src, /var/lib/dkms, /lib/modules/*/updates as before" \
	test "$snap_after" = "$snap_before"
done_
