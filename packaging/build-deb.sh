#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# packaging/build-deb.sh [OUTDIR]: what `make deb` runs. Builds the binary
# packages srff-dkms and srffctl with Debian's tools (dpkg-buildpackage -b
# -us -uc) in a temporary copy of this tree, so that the checkout stays
# clean and dpkg-buildpackage's files beside the source tree land nowhere
# but the temporary directory; then copies the .debs, .buildinfo and
# .changes to OUTDIR (default build/deb/, emptied first) and lists them.
# The copy is the working tree as git sees it: tracked files as they are
# now and untracked ones not ignored (no build products); outside a git
# checkout, the whole tree but build/ and tests/out/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$top"

command -v dpkg-buildpackage >/dev/null ||
	{ echo "build-deb: needs dpkg-dev, debhelper, dh-dkms (apt-get install dpkg-dev debhelper dh-dkms)" >&2; exit 1; }
ver=$(dpkg-parsechangelog -S Version)
tmp=$(mktemp -d /tmp/srff-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/srff-$ver
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Deleted but not yet committed files are listed and absent: skip them.
	git ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do
			if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
		done | tar -c --null -T - -f - | tar -x -C "$src" -f -
else
	tar -c --exclude=./build --exclude=./tests/out -f - . | tar -x -C "$src" -f -
fi

echo "build-deb: dpkg-buildpackage -b -us -uc in $src"
(cd "$src" && dpkg-buildpackage -b -us -uc -j"$(nproc)") > "$tmp/build.log" 2>&1 || {
	tail -n 40 "$tmp/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (last 40 lines above)" >&2
	exit 1
}
mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
cp "$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes "$out/"
cp "$tmp/build.log" "$out/build.log"
echo "build-deb: in ${out#"$top"/}/:"
for f in "$out"/*.deb; do
	printf '  %s  %s bytes\n' "${f##*/}" "$(stat -c %s "$f")"
done
