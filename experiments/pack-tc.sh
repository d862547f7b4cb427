#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/pack-tc.sh RUN...: the FTP runs' per-trial records of the
# bottleneck (srff/POLICY-TRIAL.tc.txt, `tc -s qdisc show` after each
# trial, which no analysis reads) packed into one srff/tc.tar.xz, the
# same bytes for the same files (sorted, no owners or times), and the
# files removed. A run without them is left as it is.
set -euo pipefail
for run in "$@"; do
	d=$run/srff
	[ -d "$d" ] || { echo "pack-tc: $run has no srff/" >&2; exit 1; }
	mapfile -t files < <(cd "$d" && ls -- *.tc.txt 2>/dev/null | LC_ALL=C sort)
	[ "${#files[@]}" -gt 0 ] || continue
	[ ! -e "$d/tc.tar.xz" ] || { echo "pack-tc: $d/tc.tar.xz exists" >&2; exit 1; }
	tar -C "$d" --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=a+r,u+w,go-w \
		-cf - -- "${files[@]}" | xz -9 >"$d/tc.tar.xz.new"
	mv "$d/tc.tar.xz.new" "$d/tc.tar.xz"
	(cd "$d" && rm -f -- "${files[@]}")
	echo "pack-tc: $d: ${#files[@]} files in tc.tar.xz ($(stat -c %s "$d/tc.tar.xz") bytes)" >&2
done
