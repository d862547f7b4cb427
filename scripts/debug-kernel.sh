#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/debug-kernel.sh [--print-tree|--print-image]
#   -- build (or reuse) a DEBUG build of Debian's own 6.1 kernel.
#
# Debian's production kernel, which `make test` boots, has no KASAN, lockdep
# or kmemleak: a use-after-free or a lock-order bug in srff passes there
# unless it happens to crash. tests/run-debug boots this kernel instead. It
# is built from Debian's linux-source-6.1 package (the same source as the
# production image, so only the debug options differ), with a minimal
# configuration: `vng --kconfig` (x86_64 defconfig plus what virtme-ng
# needs), merged with tests/debug-kernel.config (netfilter, qdiscs,
# tunnels, all built in, and the debugging options). Every line of that
# fragment must survive `make olddefconfig`, or the build stops: a silently
# dropped option (an unmet dependency) would give a kernel that checks less
# than it claims.
#
# The built tree is kept in ${SRFF_CACHE:-~/.cache/srff}/debug-kernel/KEY/,
# KEY a hash of the source package version, the fragment and the virtme-ng
# version; a tree is only ever renamed into place complete, so an
# interrupted build is never mistaken for a cached one. A second run with
# the same key prints the path at once. The build takes 12-25 min on 2
# cores; its full log is kept next to the tree (KEY.log).
#
# The last line on stdout is the tree's path (srff builds against it with
# `make -C TREE M=...`; the kernel is TREE/arch/x86/boot/bzImage). With
# --print-tree or --print-image only that line is printed, and nothing is
# built: it fails if the tree is not cached yet.
# Environment: SRFF_CACHE, SRFF_VENV (virtme-ng venv), JOBS (default nproc).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
mode=build
case ${1:-} in
'') ;;
--print-tree) mode=tree ;;
--print-image) mode=image ;;
*) echo "usage: scripts/debug-kernel.sh [--print-tree|--print-image]" >&2; exit 2 ;;
esac

pkg=linux-source-6.1
tarball=/usr/src/$pkg.tar.xz
frag=$top/tests/debug-kernel.config
venv=${SRFF_VENV:-$HOME/.cache/srff/venv}
vng=$venv/bin/vng
cache=${SRFF_CACHE:-$HOME/.cache/srff}/debug-kernel
jobs=${JOBS:-$(nproc)}

say() { printf '[debug-kernel %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ -r "$tarball" ] || die "$tarball missing (apt-get install $pkg, or make deps)"
[ -x "$vng" ] || die "virtme-ng not found at $vng (make deps)"
pkgver=$(dpkg-query -W -f='${Version}' "$pkg")
vngver=$("$vng" --version 2>&1)

# The key names everything that decides what gets built. The fragment is
# hashed as committed (comments included: cheap, and never stale).
key=$( { printf '%s %s\n%s\n' "$pkg" "$pkgver" "$vngver"; cat "$frag"; } |
	sha256sum | cut -c1-16)
tree=$cache/$key
image=$tree/arch/x86/boot/bzImage

if [ "$mode" != build ]; then
	[ -f "$image" ] || die "no cached debug kernel for key $key (run scripts/debug-kernel.sh)"
	[ "$mode" = tree ] && echo "$tree" || echo "$image"
	exit 0
fi

mkdir -p "$cache"
# One build per key at a time: a second caller waits, then finds it cached.
exec 9>"$cache/.lock-$key"
if ! flock -n 9; then
	say "another build of $key is running; waiting for it"
	flock 9
fi
if [ -f "$image" ]; then
	say "cached: $pkg $pkgver, $vngver, key $key"
	echo "$tree"
	exit 0
fi

log=$cache/$key.log
work=$cache/.build-$key.$$
: >"$log"
cleanup() {
	local rc=$?
	[ -n "${ticker:-}" ] && kill "$ticker" 2>/dev/null
	if [ "$rc" -ne 0 ]; then
		say "FAILED (exit $rc); last lines of $log:"
		tail -n 40 "$log" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT
# A previous build of this key that was killed leaves its work dir behind.
rm -rf "$cache"/.build-"$key".*
mkdir -p "$work"
start=$(date +%s)
say "building $pkg $pkgver ($vngver) as key $key in $work; log: $log"

# step NAME COMMAND...: run COMMAND with its output in the log.
step() {
	local name=$1; shift
	say "$name"
	echo "=== $name: $*" >>"$log"
	"$@" >>"$log" 2>&1
}

step "extracting $tarball" tar -C "$work" -xf "$tarball"
src=$work/$pkg
[ -f "$src/Makefile" ] || die "unexpected tarball layout: no $pkg/Makefile"
cd "$src"

# vng runs virtme-configkernel from its venv: put it on PATH.
step "configuring: vng --kconfig" env PATH="$venv/bin:$PATH" "$vng" --kconfig
step "merging tests/debug-kernel.config" scripts/kconfig/merge_config.sh -m .config "$frag"
step "make olddefconfig" make olddefconfig

# Every line of the fragment, as written, must be in the final .config.
say "verifying every option of the fragment"
bad=0
while IFS= read -r line; do
	if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
		opt=${BASH_REMATCH[1]}
		grep -qxF -- "$line" .config && continue
	elif [[ $line =~ ^\#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
		opt=${BASH_REMATCH[1]}
		# Unset, or hidden by a dependency: both are "not set".
		grep -q "^$opt=" .config || continue
	else
		continue
	fi
	have=$(grep -E "^$opt=|^# $opt is not set" .config || echo "(absent: unmet dependency?)")
	say "  wanted '$line', got '$have'"
	bad=$((bad + 1))
done <"$frag"
[ "$bad" -eq 0 ] || die "$bad option(s) of tests/debug-kernel.config did not survive olddefconfig"
say "  $(grep -c '=y$' .config) options =y, $(grep -c '=m$' .config) =m; fragment intact"
cp .config "$cache/$key.config"

# The long part. A ticker says how far it got, since make is quiet here.
say "make -j$jobs bzImage modules (12-25 min on 2 cores)"
echo "=== make -j$jobs bzImage modules" >>"$log"
(
	while sleep 60; do
		n=$(grep -cE '^  (CC|AS|LD|AR)' "$log" || true)
		say "  ... $(( ($(date +%s) - start) / 60 )) min, $n objects, at: $(grep -E '^  (CC|LD)' "$log" | tail -n1 | awk '{print $2}')"
	done
) &
ticker=$!
# Module.symvers (from `modules`) lets modpost resolve srff's imports; the
# config has (almost) no =m, so `modules` costs little.
make -j"$jobs" bzImage modules >>"$log" 2>&1
kill "$ticker" 2>/dev/null; ticker=
step "make modules_prepare" make modules_prepare
[ -f arch/x86/boot/bzImage ] && [ -f Module.symvers ] || die "bzImage or Module.symvers missing after the build"
echo "$pkg $pkgver; virtme-ng $vngver; built $(date -u +%FT%TZ) in $(( $(date +%s) - start )) s" >.srff-debug-kernel

# Atomically into place (same filesystem): a tree at $tree is complete.
# (One without a bzImage was damaged by hand: replace it.)
[ -e "$tree" ] && rm -rf "$tree"
mv -T "$src" "$tree"
say "done in $(( ($(date +%s) - start) / 60 )) min $(( ($(date +%s) - start) % 60 )) s: $tree/arch/x86/boot/bzImage"
echo "$tree"
