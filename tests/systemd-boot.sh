#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/systemd-boot.sh [--readme] KVER...: boot each kernel with systemd as
# init, the way a server boots, and check that srff came up from its files:
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
# With --readme, the guest then goes back to what the packages alone leave
# (units disabled and stopped, module unloaded, the two files removed: in
# the guest's overlay) and walks README.md's own commands, as a reader who
# installed the packages would type them, in the same boot: every line of the
# "Quickstart" section's shell blocks, then of "Turning it off, and
# uninstalling", read from README.md at run time and run as printed, on a
# multiqueue eth0 (the guest's own one-queue NIC is renamed, and a veth with
# 4 TX queues whose peer is a client namespace takes its name). Between the
# two, the checks a reader would make: mq with srff's ets on every TX queue,
# srff's bands counting a short and a long transfer, srff-check's verdicts
# under load, the units active; then the tree as it was and no module.
# The last line, the purge, tests/packaging.sh runs on the host (where it
# checks that nothing is left): in the guest DKMS's removal takes 4 min.
# The sample output README shows must be what these commands print (its
# lines with the numbers taken out).
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
# In the guest: both modes
###############################################################################
failed=0
check() {	# check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok - $what"; else echo "not ok - $what"; failed=1; fi
}
state() { systemctl show -P ActiveState "$1" 2>/dev/null; }
# readme_block HEADING LANG: the lines of the ```LANG blocks in README.md's
# section of that heading.
readme_block() {
	awk -v h="## $1" -v f="\`\`\`$2" '/^## /{sec = index($0, h) == 1} sec && $0 == f{blk = 1; next}
		blk && /^```$/{blk = 0} sec && blk' "$top/README.md"
}
# readme_sh HEADING: the commands of its shell blocks, one a line, comments
# dropped.
readme_sh() { readme_block "$1" sh | sed 's/[[:space:]]*#.*$//' | grep -v '^[[:space:]]*$'; }
# tests/systemd-boot.sh --readme-sh HEADING: print them (tests/packaging.sh).
[ "${1:-}" = --readme-sh ] && { readme_sh "$2"; exit; }

###############################################################################
# In the guest, after the boot's checks: README's walk (--readme)
###############################################################################
readme_walk() {
	kver=$(uname -r)
	# shape: a line with its numbers and runs of blanks made one token, so
	# that a sample line matches the line of another run.
	shape() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/[[:space:]]+/ /g; s/^ //; s/ $//'; }
	quick=$(readme_sh Quickstart)
	off=$(readme_sh "Turning it off")
	echo "# README's quickstart:"; sed 's/^/#   $ /' <<<"$quick"
	echo "# README's turning off:"; sed 's/^/#   $ /' <<<"$off"
	check "$kver: README has a quickstart ($(wc -l <<<"$quick") commands) and a way off ($(wc -l <<<"$off"))" \
		test "$(wc -l <<<"$quick")" -ge 4 -a "$(wc -l <<<"$off")" -ge 3
	check "$kver: srff is not loaded before the quickstart" test ! -d /sys/module/srff

	# The server's multiqueue eth0, and a client behind it.
	ip link set eth0 down && ip link set eth0 name ethv
	ip netns add client
	ip link add eth0 numtxqueues 4 numrxqueues 4 type veth peer name eth0 netns client \
		numtxqueues 4 numrxqueues 4
	ip addr add 192.0.2.1/24 dev eth0 && ip link set eth0 up
	ip -n client addr add 192.0.2.2/24 dev eth0 && ip -n client link set eth0 up
	ip -n client link set lo up
	tc qdisc replace dev eth0 root handle 1: mq	# what a multiqueue NIC has
	check "$kver: eth0 has 4 TX queues and mq at the root" \
		test "$(find /sys/class/net/eth0/queues -maxdepth 1 -name 'tx-*' | wc -l)" = 4
	before=$(tc qdisc show dev eth0)
	sed 's/^/#   before: /' <<<"$before"

	# The client reads whatever the server sends it; the server sends.
	traffic="python3 $top/tests/tools/traffic.py"
	ip netns exec client $traffic tcp-sink 5001 & sink=$!
	for _ in $(seq 100); do
		[ -n "$(ip netns exec client ss -Hltn 'sport = :5001')" ] && break
		sleep 0.1
	done

	# cmd LINE: run one README line as a reader would (answering yes),
	# its output in the log and in $out.
	cmd() {
		echo "# \$ $1"
		out=$(bash -c "$1" 2>&1 < <(yes 2>/dev/null))
		rc=$?
		sed 's/^/#   /' <<<"$out"
		outs+=$out$'\n'
		return $rc
	}
	outs=
	while IFS= read -r line; do
		case $line in
		srff-check*)
			# "Under load": a transfer runs while it watches, already
			# sending when it starts, and until it is stopped (400 MB
			# over the guest's veth had ended before the sample began
			# in two runs: srff-check saw 0 and 542 kbit/s).
			$traffic tcp-send 192.0.2.2 5001 1000000000000 & load=$!
			for _ in $(seq 300); do
				acked=$(ss -Htin state established 'dport = :5001' |
					grep -o 'bytes_acked:[0-9]*' | cut -d: -f2 | sort -n | tail -1)
				[ "${acked:-0}" -gt 4000000 ] && break
				sleep 0.1
			done
			check "$kver: a transfer to the client is under way (${acked:-0} B acknowledged)" \
				test "${acked:-0}" -gt 4000000
			cmd "$line"; rc=$?
			check "$kver: README: $line ran (exit $rc: 0 all ok, 1 an item warns)" test $rc -le 1
			check "$kver:   it finds srff loaded and enabled" grep -qE '^ *ok +srff ' <<<"$out"
			check "$kver:   and srff's bands landing in eth0's qdisc" grep -qE '^ *ok +qdisc ' <<<"$out"
			check "$kver:   and gives the backlog a verdict" grep -qE '^ *(ok|warn|fail) +backlog ' <<<"$out"
			kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
			;;
		srffctl\ stats*)
			# Traffic first: 20 short responses and one long transfer.
			$traffic tcp-mix 192.0.2.2 5001 20 3000 --parallel 1 &&
				$traffic tcp-send 192.0.2.2 5001 4000000
			check "$kver: traffic to the client through eth0 (exit $?)" test $? = 0
			cmd "$line"; rc=$?
			check "$kver: README: $line (exit $rc)" test $rc = 0
			stats=$(srffctl -j stats 2>/dev/null)
			b0=$(jq '.bands[0].pkts' <<<"$stats" 2>/dev/null)
			b2=$(jq '.bands[-1].pkts' <<<"$stats" 2>/dev/null)
			check "$kver:   srff put the short ones in band 0 ($b0 packets) and the long one's tail in the last ($b2)" \
				test "${b0:-0}" -gt 20 -a "${b2:-0}" -gt 0
			;;
		*)
			cmd "$line"; rc=$?
			check "$kver: README: $line (exit $rc)" test $rc = 0
			;;
		esac
		case $line in
		"modprobe srff")
			check "$kver:   srff is loaded" test -d /sys/module/srff ;;
		"srff-qdisc install eth0")
			tree=$(tc qdisc show dev eth0)
			check "$kver:   eth0: mq at the root, an ets under each of its 4 TX queues" \
				test "$(grep -c '^qdisc ets .* parent [0-9a-f]*:[1-4] ' <<<"$tree")" = 4 -a \
				"$(grep -c '^qdisc mq .* root' <<<"$tree")" = 1 ;;
		systemctl\ enable*)
			check "$kver:   srff.service active, enabled" test "$(state srff.service)" = active -a \
				"$(systemctl is-enabled srff.service)" = enabled
			check "$kver:   srff-qdisc@eth0.service active ($(state srff-qdisc@eth0.service))" \
				test "$(state srff-qdisc@eth0.service)" = active ;;
		esac
	done <<<"$quick"

	# The sample output README shows, against what was printed here.
	sample=$(readme_block Quickstart text)	# the sample output
	check "$kver: README's quickstart shows sample output" test -n "$sample"
	shapes=$(shape <<<"$outs")
	while IFS= read -r l; do
		case $l in ''|'$ '*) continue ;; esac	# the commands themselves
		check "$kver:   sample line is printed: $l" grep -qxF -- "$(shape <<<"$l")" <<<"$shapes"
	done <<<"$sample"

	while IFS= read -r line; do
		case $line in
		*apt-get\ purge*)
			# DKMS's removal reads dpkg's database and runs depmod for
			# every kernel, 4 min under emulation: the host runs this line.
			echo "# \$ $line: tests/packaging.sh runs it on the host, after the boots"
			continue ;;
		esac
		t0=$SECONDS
		cmd "$line"; rc=$?
		check "$kver: README: $line (exit $rc, $((SECONDS - t0)) s)" test $rc = 0
		case $line in
		srff-qdisc\ revert*)
			check "$kver:   eth0's tree is the one it had" test "$(tc qdisc show dev eth0)" = "$before" ;;
		systemctl\ disable*)
			for u in srff.service srff-qdisc@eth0.service; do
				check "$kver:   $u inactive ($(state $u)), not enabled" \
					test "$(state $u)" = inactive -a "$(systemctl is-enabled $u 2>/dev/null)" != enabled
			done
			check "$kver:   eth0's tree still the one it had" test "$(tc qdisc show dev eth0)" = "$before" ;;
		modprobe\ -r*)
			check "$kver:   srff is not loaded" test ! -d /sys/module/srff ;;
		esac
	done <<<"$off"
	kill "$sink" 2>/dev/null
}


###############################################################################
# In the guest: tests/systemd-boot.sh --guest
###############################################################################
if [ "${1:-}" = --guest ]; then
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
	if [ "${2:-}" = readme ]; then
		# Back to what the packages alone leave: nothing enabled, not
		# loaded, no configuration file (as tests/packaging.sh found it).
		systemctl disable --now srff-qdisc@eth0.service srff.service 2>&1 | sed 's/^/#   /'
		modprobe -r srff
		rm -f /etc/srff/srff.conf /etc/modprobe.d/srff-test.conf
		check "$kver: back to a fresh install: srff unloaded, units disabled, eth0's ets gone" \
			test ! -d /sys/module/srff -a "$(systemctl is-enabled srff.service)" = disabled -a \
			-z "$(tc qdisc show dev eth0 | grep '^qdisc ets')"
		readme_walk
	fi
	exit $failed
fi

###############################################################################
# On the host
###############################################################################
mode=--guest limit=480	# limit: seconds a boot may take
[ "${1:-}" = --readme ] && { mode="--guest readme" limit=720; shift; }
[ $# -gt 0 ] || { echo "usage: tests/systemd-boot.sh [--readme] KVER..." >&2; exit 2; }
skip() { echo "ok - systemd boot # SKIP $1"; exit 3; }
[ "$(id -u)" = 0 ] || skip "needs root"
venv=${SRFF_VENV:-$HOME/.cache/srff/venv}
[ -x "$venv/bin/vng" ] || skip "no virtme-ng in $venv (make deps)"
"$venv/bin/vng" --help 2>/dev/null | grep -q -- --systemd || skip "this virtme-ng has no --systemd"

base=$(mktemp -d /tmp/srff-systemd-boot.XXXXXX)
root=$base/root
unmount_root() {
	umount "$root" 2>/dev/null || umount -l "$root" 2>/dev/null
	umount "$base/layer" 2>/dev/null || umount -l "$base/layer" 2>/dev/null
}
cleanup() { unmount_root; rm -rf "$base"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# mount_root: $root, a fresh overlay of / (each boot starts from this
# machine's files, not from what the boot before wrote).
mount_root() {
	unmount_root
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
}

accel=(--disable-kvm)
[ "${SRFF_VM_KVM:-0}" = 1 ] && accel=()
mkdir -p "$top/tests/out"
rc=0
for k in "$@"; do
	log=$top/tests/out/systemd-boot-$k.log	# the guest's console and the checks
	[ -f "/boot/vmlinuz-$k" ] || { echo "not ok - $k: no /boot/vmlinuz-$k"; rc=1; continue; }
	for attempt in 1 2; do
		echo "# booting $k with systemd as init (1-3 min under emulation)"
		mount_root
		start=$SECONDS
		# (scripts/virtme first: the root over 9p with a cache, as scripts/vm.)
		PATH=$top/scripts/virtme:$venv/bin:$PATH timeout $((limit * scale)) "$venv/bin/vng" --run "/boot/vmlinuz-$k" \
			--root "$root" "${accel[@]}" --systemd --verbose --memory 2G --cpus "${SRFF_VM_CPUS:-2}" --network user \
			--rwdir "$top=$top" --cwd "$root$top" \
			--exec "SRFF_TIMEOUT_SCALE=$scale tests/systemd-boot.sh $mode" \
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
