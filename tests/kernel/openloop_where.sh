#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# openloop_where.sh: experiment 3 where the queue is not the server's one
# TX queue, as short as it goes (one 4 s round of one srff policy each):
#  - WEB_BOTTLENECK=mq: the server's s0 has 4 TX queues under srff-qdisc's
#    shaped-mq; the flows spread over more than one queue, and srff's
#    bands reach each queue's ets (band 0 and the lowest band both sent);
#    the run records each CPU's time.
#  - WEB_BOTTLENECK=downstream, srff-dscp-ets: the capture on the router
#    (r1) holds srff's code points, and dscp.py reads them off it: a
#    connection's first bytes carried CS3 (band 0), its bytes past 1 MiB
#    CS1 (band 2), by srff's initial thresholds (no warm-up: 16/128 KiB).
# It proves the chains work, not any result.
. "$(dirname "$0")/../lib.sh"

out=$(mktemp -d)
holds() { jq -e "$1" "$2" >/dev/null; }
# The bytes a qdisc or class showed at most over the run's samples.
sent_q() {
	jq -R "fromjson? | [.q[] | select(.handle == \"$2\") | .bytes] | max // 0" \
		"$1" | sort -n | tail -1
}

# --- a multiqueue server NIC ---------------------------------------------
mkdir "$out/mq"
# (No capture: openloop_smoke.sh checks it, and this one's downstream.)
WEB_BOTTLENECK=mq WEB_DIST=websearch WEB_POLICIES=srff-mq WEB_LOADS=0.5 WEB_WARMUP=0 \
	WEB_CAPTURE=0 WEB_BURNIN=0 WEB_IDLE_REPS=0 WEB_DRAIN=15 run "$TOP/experiments/openloop-guest.sh" "$out/mq" 1 4 ||
	fail "openloop-guest.sh, WEB_BOTTLENECK=mq"
q=$out/mq/qlog/srff-mq@0.5-1.jsonl
check "mq: meta.json says 4 TX queues" holds '.params.txqueues == 4' "$out/mq/meta.json"
busy=0
for i in 1 2 3 4; do
	[ "$(sent_q "$q" "40$i:")" -gt 0 ] && busy=$((busy + 1))
done
check "mq: the flows spread over $busy of the 4 queues' tbfs (2 or more)" test "$busy" -ge 2
b0=0 b2=0
for i in 1 2 3 4; do
	b0=$((b0 + $(sent_q "$q" "10$((i - 1))1:"))) b2=$((b2 + $(sent_q "$q" "10$((i - 1))3:")))
done
check "mq: band 0 of the queues' ets sent ($b0 B), and band 2 ($b2 B)" test "$b0" -gt 0 -a "$b2" -gt 0
check "mq: each CPU's time recorded before and after" \
	holds '(.cpu_before | length) > 0 and (.cpu_after | keys) == (.cpu_before | keys)' \
	"$out/mq/srff/srff-mq@0.5-1.json"

# --- the queue downstream, srff's code points on the wire -----------------
# With cake at the router too: cake's rate is matched to what tbf carries
# (openloop-guest.sh's cake_match, short here: one run of each).
mkdir "$out/ds"
WEB_BOTTLENECK=downstream WEB_DIST=websearch WEB_POLICIES="srff-dscp-ets cake" WEB_LOADS=0.5 \
	WEB_WARMUP=0 WEB_BURNIN=0 WEB_IDLE_REPS=0 WEB_DRAIN=15 WEB_CAKE_MATCH_S=3 \
	WEB_CAKE_MATCH_ORDER="fq_codel cake" \
	run "$TOP/experiments/openloop-guest.sh" "$out/ds" 1 4 ||
	fail "openloop-guest.sh, WEB_BOTTLENECK=downstream"
check "downstream: the run was captured" test -s "$out/ds/pcap/srff-dscp-ets@0.5-1.pcap"
m=$out/ds/meta.json
check "downstream: cake's match measured ($(jq -c .params.cake_match "$m"))" \
	holds '.params.cake_match | (.tbf_share | length) == 1 and (.cake_share_at_rate | length) == 1
		and all(.tbf_share[], .cake_share_at_rate[]; . > 0.5)
		and .factor >= 1 and .factor <= 1.25' "$m"
# tc prints cake's bandwidth in bytes a second.
bw=$(jq -R 'fromjson? | [.q[] | select(.kind == "cake") | .options.bandwidth] | max // 0' \
	"$out/ds/qlog/cake@0.5-1.jsonl" | sort -n | tail -1)
want=$(jq .params.cake_match.cake_rate_bps "$m")
check "downstream: cake ran at the matched rate (${bw} B/s, $want bit/s)" \
	awk -v b="$bw" -v w="$want" 'BEGIN { d = b * 8 - w; exit !(b > 0 && d < 16 && d > -16) }'
run $PY "$TOP/experiments/dscp.py" table "$out/ds" || fail "dscp.py table"
run $PY "$TOP/experiments/dscp.py" report "$out/ds" --out "$out/ds" || fail "dscp.py report"
sed 's/^/# /' "$out/ds/dscp.md"
# share CODEPOINT BIN: that code point's share of the bytes at that offset.
share() {
	PYTHONPATH=$TOP/experiments $PY - "$out/ds" "$1" "$2" <<-'PYEOF'
	import collections, sys
	import dscp
	by = collections.Counter()
	for r in dscp.read_rows(sys.argv[1]):
	    if r["policy"] == "srff-dscp-ets" and int(r["bin"]) == int(sys.argv[3]):
	        by[int(r["dscp"])] += int(r["bytes"])
	print("%.3f" % (by[int(sys.argv[2])] / sum(by.values()) if by else 0))
	PYEOF
}
s0=$(share 24 0)
s1=$(share 8 6)
check "downstream: bytes < 4 KiB into a connection carried CS3 (share $s0)" \
	awk -v s="$s0" 'BEGIN { exit !(s > 0.9) }'
check "downstream: bytes 1-4 MiB into it carried CS1 (share $s1)" \
	awk -v s="$s1" 'BEGIN { exit !(s > 0.9) }'
rm -rf "$out"
exit $ksft_pass
