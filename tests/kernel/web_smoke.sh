#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# web_smoke.sh: the busy-web-server experiment end to end, one short round
# of two policies: nginx serves, web_client.py fetches, tcpdump captures,
# and experiments/web_analyze.py times the responses from the captures.
. "$(dirname "$0")/../lib.sh"

out=$(mktemp -d)
WEB_POLICIES="unmarked srff-tuned" run "$TOP/experiments/web-guest.sh" "$out" 1 4 ||
	fail "web-guest.sh"
# No plot: matplotlib's import alone is 24 s of emulated CPU, and the plot
# is drawn from the same tables natively (test_web_analyze.py).
run $PY "$TOP/experiments/web_analyze.py" --no-plots "$out" || fail "web_analyze.py"
r=$out/results.json
for p in unmarked srff-tuned; do
	n=$(jq ".completion_s[\"$p\"].small.n" "$r")
	check "$p: $n small responses timed" test "$n" -gt 0
	got=$(jq ".params.timing[\"$p\"].pcap" "$r")
	all=$(jq ".params.timing[\"$p\"] | .pcap + .client" "$r")
	check "$p: $got of $all requests timed from the capture (>= 95 %)" \
		test $((got * 100)) -ge $((all * 95))
	check "  and the capture lost no frame" grep -q "^0 packets dropped by kernel" "$out/pcap/$p-1.pcap.log"
done
check "srff-tuned's stats recorded, band 0 used" \
	test "$(jq '.bands[0].bytes' "$out/requests/srff-tuned-1.srff.json")" -gt 0
rm -rf "$out"
exit $ksft_pass
