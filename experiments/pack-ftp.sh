#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/pack-ftp.sh RUN...: an FTP run's per-trial records, srff/
# (POLICY-TRIAL.json: srffctl show and stats after the trial;
# POLICY-TRIAL.tc.txt: tc -s of the bottleneck), which no analysis reads,
# packed into one RUN/srff.tar.xz (the same bytes for the same files:
# sorted, no owners or times) and srff/ removed. `tar xJf srff.tar.xz`
# gives srff/ back. A run without srff/ is left as it is.
set -euo pipefail
for run in "$@"; do
	d=$run/srff
	[ -d "$d" ] || continue
	[ ! -e "$run/srff.tar.xz" ] || { echo "pack-ftp: $run/srff.tar.xz exists" >&2; exit 1; }
	mapfile -t files < <(cd "$run" && find srff -type f | LC_ALL=C sort)
	tar -C "$run" --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=a+r,u+w,go-w \
		--no-recursion -cf - -- srff "${files[@]}" | xz -9 >"$run/srff.tar.xz.new"
	mv "$run/srff.tar.xz.new" "$run/srff.tar.xz"
	rm -r -- "$d"
	echo "pack-ftp: $run: ${#files[@]} files in srff.tar.xz ($(stat -c %s "$run/srff.tar.xz") bytes)" >&2
done
