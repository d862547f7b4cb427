#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/table-ab.sh [BASE [ROUNDS]]: the per-packet benchmark ("bench -p")
# of this checkout's table against BASE's (a commit, default the one before
# the resizable table), built side by side and run in alternating order,
# ROUNDS times each (default 3). Prints each row's median over rounds and
# the ratio this/BASE: the "no regression" figure of docs/performance.md.
# Run it on an idle machine; it takes about a minute per run.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-84661aa~1}
rounds=${2:-3}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/base" "$base"
echo "# building BASE ($(git rev-parse --short "$base")) and this checkout ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- srff_nf || echo ', dirty'))"
make -s -C "$work/base/srff_nf/user" build/bench >/dev/null
make -s -C srff_nf/user build/bench >/dev/null
cp "$work/base/srff_nf/user/build/bench" "$work/bench-base"
cp srff_nf/user/build/bench "$work/bench-this"
for r in $(seq 1 "$rounds"); do
	# Rotate: odd rounds run BASE first, even ones this checkout first.
	if [ $((r % 2)) = 1 ]; then order="base this"; else order="this base"; fi
	for w in $order; do
		echo "# round $r/$rounds: $w"
		"$work/bench-$w" -p > "$work/$w-$r.txt"
	done
done
/usr/bin/python3 - "$work" "$rounds" <<'EOF'
import re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def rows(path):
    """flows -> {hash, train, floor} ns/packet medians of one run."""
    out, section = {}, "hash"
    for line in open(path):
        if "With trains" in line:
            section = "train"
        elif "The floor" in line:
            section = "floor"
        elif "The chained floor" in line:
            section = "chained"     # newer builds only: not compared
        m = re.match(r"\s+(\d+)\s+\d+\s+[\d.]+ \|\s+[\d.]+\s+\|\s+([\d.]+)", line)
        if section == "hash" and m:
            out.setdefault(int(m[1]), {})["hash"] = float(m[2])
            continue
        m = re.match(r"\s+(\d+)\s+([\d.]+) \[", line)
        if m and section in ("train", "floor"):
            out.setdefault(int(m[1]), {})[section] = float(m[2])
    return out

runs = {w: [rows(f"{work}/{w}-{r}.txt") for r in range(1, rounds + 1)] for w in ("base", "this")}
print(f"ns/packet, median of {rounds} runs each [min-max]; ratio this/base")
print(f"{'flows':>8} {'what':>6} {'base':>22} {'this':>22} {'ratio':>7}")
for n in sorted(runs["base"][0]):
    for what in ("hash", "train", "floor"):
        b = [r[n][what] for r in runs["base"]]
        t = [r[n][what] for r in runs["this"]]
        fmt = lambda v: f"{statistics.median(v):7.1f} [{min(v):6.1f}-{max(v):6.1f}]"
        print(f"{n:>8} {what:>6} {fmt(b):>22} {fmt(t):>22} {statistics.median(t) / statistics.median(b):6.3f}x")
    h = statistics.median(r[n]["hash"] for r in runs["this"])
    f = statistics.median(r[n]["floor"] for r in runs["this"])
    print(f"{n:>8} this checkout's hash table / floor: {h / f:.2f}x")
EOF
