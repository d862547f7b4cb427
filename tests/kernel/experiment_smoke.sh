#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiment_smoke.sh: the FTP experiment end to end at 1/20 scale, one
# trial per policy, after a short warm-up: vsftpd serves, curl fetches,
# tcpdump captures, and experiments/analyze.py finds every file's response
# time for every policy, then makes the same report again from the tables
# it commits, without the captures.
. "$(dirname "$0")/../lib.sh"

out=$(mktemp -d)
# The warm-up ends when srff has learnt, or after FTP_WARMUP seconds: 15 in
# Debian's kernel, as much longer as the tests' waits on a slow one (the
# debug kernel's 15 s gave 16 flows, not the 20 and more checked below).
# The policies are named here, not taken from ftp-guest.sh's default, so
# that the counts below follow this list: four of its seven, which take
# each kind of step the others do (a qdisc alone, srff neutral, srff's
# defaults, thresholds set for 8 bands steered by class id into a shaper's
# classes); a trial is 10 s in the emulated guest. fq_codel, srff-orig and
# srff-8 are `make demo`'s (class ids over prio's bands: bands_classid).
POLICIES="alone unmarked srff srff-8-htb"
npol=$(wc -w <<<"$POLICIES")
FTP_POLICIES=$POLICIES FTP_WARMUP=$((15 * ${SRFF_TIMEOUT_SCALE:-1})) \
	run "$TOP/experiments/ftp-guest.sh" "$out" 1 0.05 || fail "ftp-guest.sh"
# No plots: matplotlib's import alone is 24 s of emulated CPU, and the plots
# are drawn from the same tables natively (test_analyze.py).
run $PY "$TOP/experiments/analyze.py" --no-plots "$out" || fail "analyze.py"
r=$out/results.json
for p in ${POLICIES#alone }; do
	for f in F1 F2 F3; do
		t=$(jq ".response_s[\"$p\"][\"$f\"][0]" "$r")
		check "$p $f: response time $t s" awk -v t="$t" 'BEGIN { exit !(t > 0 && t < 120) }'
	done
done
t=$(jq '.response_s.alone.F1[0]' "$r")
check "alone F1: response time $t s" awk -v t="$t" 'BEGIN { exit !(t > 0 && t < 120) }'
check "alone fetched F1 only" test "$(jq -c '.response_s.alone | keys' "$r")" = '["F1"]'

# The warm-up's downloads ended as flows srff learnt from.
check "the warm-up's flows reached srff's histogram" \
	test "$(jq '.auto_flows' "$out/warmup.srff.json")" -gt 20

# What srff did under each policy (srff/POLICY-1.json: show, stats).
j() { jq -c "$2" "$out/srff/$1-1.json"; }
check "unmarked: srff neutral (priorities 0, no class ids, sockets' own kept)" \
	test "$(j unmarked '[.show.priorities, .show.classid, .show.app_priority]')" = '[[0,0,0],null,"keep"]'
check "srff: overrides the sockets' priorities, its default" \
	test "$(j srff .show.app_priority)" = '"override"'
check "srff: the defaults, learnt, 3 bands" \
	test "$(j srff '[(.show.thresholds | length), .show.auto_thresholds]')" = "[2,true]"
check "srff moved F1 bytes into band 0" test "$(j srff '.stats.bands[0].bytes')" -gt 0
# srff's band N went to htb's class 10:N+1 (its fq_codel 10N+1:): band 3
# (1-8 MB, F3 and F2) to 10:4.
check "srff-8-htb: learnt thresholds for 8 bands, steered by class id" \
	test "$(j srff-8-htb '[(.show.thresholds | length), .show.auto_thresholds, .show.classid]')" = '[7,true,"10:"]'
b3=$(grep -A1 'parent 10:4 ' "$out/srff/srff-8-htb-1.tc.txt" | sed -n 's/^ Sent \([0-9]*\) bytes.*/\1/p')
check "srff-8-htb: htb's class 10:4 carried srff's band 3 ($b3 bytes)" test "${b3:-0}" -gt 100000

for f in md:table md:report csv:transfers csv.gz:series json:meta; do
	check "${f#*:}.${f%%:*} written" test -s "$out/${f#*:}.${f%%:*}"
done
check "meta.json records the module's hash" test "$(jq -r '.srff_ko.sha256 | length' "$out/meta.json")" = 64

# Every capture ended on its own sentinel (capture.sh: one sender for the
# run, a tag per capture), after all the frames of its trial.
n=0 tagged=0
for pc in "$out"/pcap/*.pcap; do
	n=$((n + 1))
	tcpdump -r "$pc" -nn -c 1 -x 'ether proto 0x88b5' 2>/dev/null | grep -q . && tagged=$((tagged + 1))
done
check "every capture ($n) holds its sentinel ($tagged)" test "$n" = "$npol" -a "$tagged" = "$npol"
check "no two captures' sentinels share a tag" \
	test "$(cat "$out"/pcap/*.pcap | grep -ao 'srff-sentinel stop-[0-9]*-[0-9]*' | sort -u | wc -l)" = "$npol"

# The committed tables alone make the same table again.
cp "$out/table.md" "$out/table.first"
rm -rf "$out/pcap"
run $PY "$TOP/experiments/analyze.py" --tables --no-plots "$out" >/dev/null || fail "analyze.py --tables"
check "the report made from the tables is the same" cmp "$out/table.first" "$out/table.md"
rm -rf "$out"
exit $ksft_pass
