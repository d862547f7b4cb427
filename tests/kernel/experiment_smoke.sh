#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiment_smoke.sh: the FTP experiment end to end at 1/20 scale, one
# trial per policy: vsftpd serves, curl fetches, tcpdump captures, and
# experiments/analyze.py finds every file's response time for every policy.
. "$(dirname "$0")/../lib.sh"

out=$(mktemp -d)
run "$TOP/experiments/ftp-guest.sh" "$out" 1 0.05 || fail "ftp-guest.sh"
run $PY "$TOP/experiments/analyze.py" "$out" || fail "analyze.py"
r=$out/results.json
for p in unmarked fq_codel srff-orig srff-default; do
	for f in F1 F2 F3; do
		t=$(jq ".response_s[\"$p\"][\"$f\"][0]" "$r")
		check "$p $f: response time $t s" awk -v t="$t" 'BEGIN { exit !(t > 0 && t < 120) }'
	done
done
n=$(jq '.response_s["srff-default"]["F1"][0]' "$r")
check "srff's stats were recorded with the captures" test -s "$out/pcap/srff-default-1.srff.json"
check "srff moved F1 bytes into band 0" \
	test "$(jq '.bands[0].bytes' "$out/pcap/srff-default-1.srff.json")" -gt 0
for png in response_times throughput; do
	check "$png.png written" test -s "$out/$png.png"
done
rm -rf "$out"
exit $ksft_pass
