#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/openloop-guest.sh OUTDIR [ROUNDS] [SECONDS]: open-loop web
# load against every queueing policy, inside the guest kernel
# (experiments/openloop.sh boots it and analyses the results).
#
#   SRV [nginx, srff] s0 ---- r0 RTR r1 ---- c0 CLI [web_client.py --mode open]
#   10.92.1.1                 (forwards)           10.92.2.2, netem RTT on c0
#
# Where the queue forms (WEB_BOTTLENECK):
#   local       the server's own egress s0 is the bottleneck (a shaper at
#               WEB_RATE): the queue is on this host and srff can order it.
#   downstream  s0 is unshaped (a veth never queues) and the router's r1
#               is the bottleneck at WEB_RATE: the queue is on another box.
#               The comparators' qdiscs go there (fifo, fq_codel, cake);
#               srff's priorities alone change nothing there (srff-ets),
#               its DSCP marks can (srff-dscp-*).
#   mq          the server's s0 has WEB_TXQ (4) TX queues, a multiqueue NIC:
#               flows spread over them by the kernel's hash (a veth has no
#               XPS), each queue shaped to WEB_RATE / WEB_TXQ under mq (a
#               NIC's round robin between busy queues; not work-conserving:
#               a queue alone still gets its share only).
# Every run, and the idle baseline, is captured on the router's r1, the
# last hop before the client, after every queue of the path (tcpdump
# sees a packet leave once its qdisc has let it go), headers only: what
# the server sent, and the client's SYNs and requests once their netem
# has let them go (OUTDIR/pcap/RUN.pcap; WEB_CAPTURE=0 to not). fct.py
# times each response from it (clock "router": from the SYN or request's
# arrival to the response's last byte; one client-side delay less than
# the client sees), not by the client's Python clock in the emulated
# guest; and downstream the code points srff wrote are read off it
# (experiments/dscp.py).
# Either way the qdiscs and classes of the bottleneck are sampled every
# 250 ms (tc -s -j) to OUTDIR/qlog/RUN.jsonl: experiments/qlog.py turns that into each
# band's backlog and, by Little's law, its mean sojourn time.
#
# Requests arrive as a Poisson process at WEB_LOADS (fractions of WEB_RATE,
# the L2 bytes tbf counts), sizes from WEB_DIST scaled by WEB_SCALE, each on
# a new connection (WEB_CONN=pool: kept-alive ones), while WEB_BULK bulk
# clients download 8 MiB files back to back on top (experiments/web_client.py).
# Every policy of a round and load sees the same arrivals (same seed).
# Clients at several round trips in one run: WEB_RTTS="2ms 20ms 80ms" (it
# must hold WEB_RTT) gives the client an address per round trip, WEB_RTT's
# 10.92.2.2 and the others 10.92.2.3, .4, ... in their order, and c0 a prio
# whose band per address delays its packets by that RTT (a u32 match on
# the source); arrival i comes from address i mod n, the bulk download and
# the warm-up's ... from 10.92.2.2 (web_client.py --sources), and the idle
# baseline is measured from each (fct.py judges each response against its
# own round trip's).
# Seeds differ between boots (WEB_SEED, default drawn at random; meta.json
# records it), so that two boots are two samples, not one replayed.
#
# srff is loaded once, before the first run, and stays loaded: its
# automatic thresholds learn from all the traffic of the boot, as on a
# server that has been up for a while (a warm-up of up to WEB_WARMUP
# seconds at the middle load comes first, until srff has learnt, or says
# why not). Under the policies that are not srff's its priorities are all
# 0, what an unmarked socket has; the comparators' qdiscs then see what
# they would without srff. What srff had learnt is in OUTDIR/srff/RUN.json,
# with "t", the seconds since this script began (learnt.py). The warm-up
# can teach srff another mix than the runs', so that the runs show how
# the thresholds follow a change: WEB_WARMUP_DIST (default WEB_DIST) at
# WEB_WARMUP_SCALE (default: that mix's usual scale below, or WEB_SCALE
# when it is WEB_DIST).
#
# After the warm-up, a burn-in run (fq_codel at the middle load, with the
# bulk clients, for as long as a run) is thrown away: the first run after
# the warm-up was degraded in every boot (its bulk download carried a
# fraction of its usual share). Then each round and load runs every
# policy once, in an order drawn at random from the round's seed
# (guest-lib.sh shuffle), recorded in OUTDIR/order.jsonl.
#
# Then the idle baseline (WEB_IDLE_REPS times each of WEB_IDLE_SIZES sizes
# spread in log(size) over the distribution's range, one request at a
# time, as the rounds' connections are: web_client.py --mode idle, under
# fq_codel, no bulk download; requests/idle-1.jsonl): what each size takes
# alone on this link, which fct.py subtracts to give each response's delay
# in excess of the idle link's. WEB_IDLE_REPS=0: none.
#
# Policies (WEB_POLICIES):
#   fifo          tbf + pfifo of WEB_FIFO_LIMIT packets (a FIFO that drops)
#   fq_codel      tbf + fq_codel (Debian's default qdisc)
#   fq            tbf + sch_fq (no bands on 6.1)
#   cake          cake bandwidth WEB_RATE (its own shaper, no tbf), matched
#                 to carry what tbf does (cake_match, below)
#   nft           nftables `ct reply bytes` thresholds (srff's first two
#                 as they are when the run starts: learnt, or 16 KiB and
#                 128 KiB) setting `meta priority`, over the recommended
#                 setup (ets): what a sysadmin writes today without srff
#   srff-pfifo    srff over tbf + prio with pfifo leaves (`shaped`)
#   srff-prio-fq  srff over tbf + prio with fq_codel leaves
#   srff-ets      srff over tbf + ETS (band 0 strict, 3:1, fq_codel leaves):
#                 srff as shipped, over the recommended setup
#   srff-ets-fixed  the same with srff's initial thresholds (16 KiB,
#                 128 KiB) fixed by hand instead of learnt: what the
#                 learning adds
#   srff-ets-8    srff with 8 bands (learnt thresholds, class ids 10:1 to
#                 10:8) over tbf + ETS with 8 bands (band 0 strict, the
#                 others by DRR, each 2.08 times the quantum of the one
#                 below: srff-qdisc's ets_quanta)
#   srff-ets-lax, srff-ets-8-lax  srff-ets and srff-ets-8 with CoDel at
#                 target 50 ms, interval 500 ms in every band but band 0
#                 (guest-lib.sh's codel_lax): the relaxation of
#                 srff-htbA-8-lax under ETS, the order a multiqueue NIC
#                 can have per TX queue (no rate)
#   srff-pias, srff-pias-htbA-8[-lax]  srff-ets and srff-htbA-8[-lax]
#                 with srff's thresholds fixed at PIAS's for the boot's sizes
#                 and the run's load (experiments/rule.py pias: the M/G/1
#                 multi-level model's optimum, as PIAS sets them from a
#                 workload known in advance) instead of learnt
#   srff-span-htbA-8[-lax]  srff-htbA-8[-lax] with the thresholds fixed at
#                 what the `span` rule converges to for the boot's sizes
#                 (experiments/rule.py span: bands spread evenly in
#                 log(size) over the flows above the first threshold): a
#                 rule measured before it is learnt
#   srff-prio-fq-8  srff with 8 bands (learnt thresholds, class ids 10:1 to
#                 10:8) over tbf + prio with 8 bands of fq_codel; not among
#                 the defaults: WEB_POLICIES="... srff-prio-fq-8"
#   srff-...+KEY=VALUE[+KEY=VALUE...]  an srff policy with srffctl settings
#                 on top of srff's, for that policy's runs only (the
#                 module's values come back after it): e.g.
#                 srff-prio-fq+idle-reset=25ms, the time a kept-alive
#                 connection must be idle before its next response starts
#                 in band 0 again
#   POLICY+capture=0  any policy, its runs not captured (timed by the
#                 client's clock only, as client-clock/ times every run):
#                 beside POLICY in one boot, what the capture does to the
#                 runs it times
#   srff-htb-8    srff with 8 bands (learnt, class ids) over shaped-htb
#                 with 8 bands: htb classes each assured 1/80 of WEB_RATE,
#                 the rest borrowed in band order (near-strict), fq_codel
#                 in every band; not among the defaults. srff-htbA-8: the
#                 bands assured A % of WEB_RATE together (A/8 % each).
#                 srff-htb-8-lax, srff-htbA-8-lax: CoDel in bands 1-7 at
#                 target 50 ms, interval 500 ms (such a band waits behind
#                 the bands above it: does CoDel's dropping there cost the
#                 timeouts and the stalls?)
#   srff-floor-8  srff with 8 bands (learnt, class ids) over tbf: bands 0-2
#                 in strict order, bands 3-7 (the large flows and the bulk
#                 download) in one fq_codel assured 10 % of the link
#                 against them (ets, DRR 9:1; guest-lib.sh's floor_tree);
#                 not among the defaults. srff-floorP-8: P % assured.
#                 srff-floor-8-lax, srff-floorP-8-lax: CoDel at target
#                 50 ms, interval 500 ms but in band 0
#   srff-prio-fq-16, srff-ets-16  srff with 16 bands (fixed thresholds
#                 twice apart from 16 KiB, class ids 10:1 to 10:16) over tbf
#                 + prio (strict) or ETS with 16 bands of fq_codel; not among
#                 the defaults
# Multiqueue (WEB_BOTTLENECK=mq), the same workload on a 4-queue s0:
#   fq_codel-mq   mq with, on every TX queue, tbf WEB_RATE/WEB_TXQ over
#                 fq_codel: what Debian gives a multiqueue NIC (mq and an
#                 fq_codel per queue), shaped as the queues are here
#   srff-mq       srff over srff-qdisc's shaped-mq: the same tbf per queue,
#                 mq's ets (band 0 strict, 3:1, fq_codel leaves) under it:
#                 srff's recommended setup for a multiqueue device
#   fq_codel, srff-ets  one tbf WEB_RATE + fq_codel, or srff's shaped-ets,
#                 at the root over all queues (srff-qdisc --force): the
#                 single-queue comparison, in the same boot
# Downstream (WEB_BOTTLENECK=downstream), the qdisc is the router's, and
# fifo, fq_codel and cake mean that qdisc at r1 with no marks; the server's
# s0 runs srff-qdisc's unshaped ets under the srff policies:
#   srff-ets      srff's priorities only, the router a FIFO: nothing to see
#   srff-dscp-cake  srff with `mark dscp` and its default map (the lowest
#                 band LE, the others keep DSCP 0); the router runs cake
#                 (diffserv3, its default: LE in the bulk tin), as a home
#                 router with OpenWrt's SQM does
#   srff-dscp-ets srff with `mark dscp` and a code point per band (cs3,
#                 cs2, cs1); the router runs the recommended setup
#                 (shaped-ets) fed by u32 dsfield filters, as a switch's
#                 priority queues per code point (PIAS)
#   srff-fq-bands srff over tbf + sch_fq with its 3 bands (9:3:1 weighted
#                 round robin, per-flow fairness inside each): Linux 6.7+
#                 (SRFF_KERNEL_SERIES=6.12 experiments/openloop.sh), with
#                 bookworm-backports' tc (iproute2 6.15, Debian 13's), which
#                 the guest then uses for every policy; among the defaults
#                 where it can run
# Files per run (RUN = POLICY@LOAD-ROUND): requests/RUN.jsonl and
# requests/RUN.load.json (web_client.py), qlog/RUN.jsonl, srff/RUN.json.
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
OUT=$(cd "$1" && pwd)
ROUNDS=${2:-10}
SECONDS_PER=${3:-15}
RATE=${WEB_RATE:-20mbit}
SEED=${WEB_SEED:-$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 + 1 ))}
BURNIN=${WEB_BURNIN:-1}
DIST=${WEB_DIST:-fb_hadoop}
LOADS=${WEB_LOADS:-"0.6 0.8"}
RTT=${WEB_RTT:-20ms}
RTTS=${WEB_RTTS:-}
BULK=${WEB_BULK:-1}
CONN=${WEB_CONN:-new}
BOTTLENECK=${WEB_BOTTLENECK:-local}
TXQ=${WEB_TXQ:-4}
WARMUP=${WEB_WARMUP:-120}
FIFO_LIMIT=${WEB_FIFO_LIMIT:-100}
CAPTURE=${WEB_CAPTURE:-1}
DRAIN=${WEB_DRAIN:-30}
IDLE_REPS=${WEB_IDLE_REPS:-3}
IDLE_SIZES=${WEB_IDLE_SIZES:-40}
CAKE_MATCH=${WEB_CAKE_MATCH:-1}
CAKE_MATCH_S=${WEB_CAKE_MATCH_S:-8}
CAKE_MATCH_ORDER=${WEB_CAKE_MATCH_ORDER:-"fq_codel cake cake fq_codel"}
# default_scale DIST: the scale that fits DIST to a 20 Mbit/s link.
default_scale() {
	case $1 in
	websearch) echo 0.0625 ;;	# mean 104 KB, max 1.8 MB
	datamining) echo 0.01 ;;	# mean 75 KB, max 10 MB
	*) echo 1 ;;			# fb_hadoop: mean 128 KB, max 10 MB
	esac
}
SCALE=${WEB_SCALE:-$(default_scale "$DIST")}
WARMUP_DIST=${WEB_WARMUP_DIST:-$DIST}
if [ "$WARMUP_DIST" = "$DIST" ]; then
	WARMUP_SCALE=${WEB_WARMUP_SCALE:-$SCALE}
else
	WARMUP_SCALE=${WEB_WARMUP_SCALE:-$(default_scale "$WARMUP_DIST")}
fi
# sch_fq's bands: Linux 6.7+, and a tc that sets them (Debian 12's cannot).
# srff-qdisc knows what they need: its dry run exits 3 where they cannot be.
fq_bands=0
if [ -n "${SRFF_NEWTC_DIR:-}" ] && [ -x "$SRFF_NEWTC_DIR/tc" ] &&
   PATH="$SRFF_NEWTC_DIR:$PATH" "$TOP/tc-scripts/srff-qdisc" --dry-run \
	install shaped-fq-bands lo "$RATE" >/dev/null 2>&1; then
	export PATH="$SRFF_NEWTC_DIR:$PATH"
	fq_bands=1
fi
case $BOTTLENECK in
local)
	POLICIES="fifo fq_codel fq cake nft srff-ets srff-ets-fixed srff-ets-8"
	[ $fq_bands = 0 ] || POLICIES="$POLICIES srff-fq-bands"
	POLICIES=${WEB_POLICIES:-$POLICIES} ;;
downstream) POLICIES=${WEB_POLICIES:-"fifo fq_codel cake srff-ets srff-dscp-cake srff-dscp-ets"} ;;
mq)
	[[ $TXQ =~ ^[1-9][0-9]*$ ]] && [ "$TXQ" -ge 2 ] ||
		{ echo "openloop: WEB_TXQ is 2 or more TX queues, not $TXQ" >&2; exit 2; }
	POLICIES=${WEB_POLICIES:-"fq_codel-mq srff-mq fq_codel srff-ets"} ;;
*) echo "openloop: WEB_BOTTLENECK is local, mq or downstream, not $BOTTLENECK" >&2; exit 2 ;;
esac
Q=$TOP/tc-scripts/srff-qdisc
CTL=$TOP/srffctl/srffctl
. "$TOP/experiments/guest-lib.sh"	# shuffle, srff_learnt, srff_*_bands, pct_policy, nginx_start
. "$TOP/experiments/capture.sh"	# capture_start, capture_stop, capture_end
export SRFF_QDISC_STATE=$OUT/.qdisc-state

say() { printf '[web] %4ds %s\n' "$SECONDS" "$*" >&2; }	# with the seconds since the guest script began

work=$(mktemp -d /tmp/srff-open.XXXXXX)
SRV=osrv-$$ RTR=ortr-$$ CLI=ocli-$$
QLOG_PID=
cleanup() {
	set +e
	[ -n "$QLOG_PID" ] && kill "$QLOG_PID" 2>/dev/null
	[ -n "${CAP_RUN:-}" ] && kill "$CAPTURE_PID" 2>/dev/null
	capture_end
	[ -n "${NGINX:-}" ] && kill "$NGINX" 2>/dev/null && wait "$NGINX" 2>/dev/null
	nft delete table inet srffexp 2>/dev/null
	grep -q '^srff ' /proc/modules && rmmod srff
	for ns in "$SRV" "$RTR" "$CLI"; do ip netns del "$ns" 2>/dev/null; done
	umount "$work/www" 2>/dev/null
	rto_trace_stop
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/www/bulk" "$work/tmp" "$OUT/requests" "$OUT/qlog" "$OUT/srff"
chmod 755 "$work"	# nginx workers drop root
mount -t tmpfs -o size=400m none "$work/www"
mkdir -p "$work/www/bulk"
# One blob serves every size by Range; it must hold the largest, of the
# runs' mix and the warm-up's.
maxsize=$(python3 -c 'import sys; sys.path.insert(0, "experiments"); import sizes
print(max(sizes.load(d, float(s)).quantile(1.0) for d, s in zip(sys.argv[1::2], sys.argv[2::2])))' \
	"$DIST" "$SCALE" "$WARMUP_DIST" "$WARMUP_SCALE")
head -c "$maxsize" /dev/urandom > "$work/www/blob"
for i in 0 1; do head -c $((8 << 20)) /dev/urandom > "$work/www/bulk/b$i"; done
{ echo "/bulk/b0 $((8 << 20))"; echo "/bulk/b1 $((8 << 20))"; } > "$OUT/manifest.txt"
chmod -R a+rX "$work/www"

for ns in "$SRV" "$RTR" "$CLI"; do
	ip netns add "$ns"
	ip -n "$ns" link set lo up
done
txq=()
[ "$BOTTLENECK" != mq ] || txq=(numtxqueues "$TXQ" numrxqueues "$TXQ")
ip link add s0 netns "$SRV" "${txq[@]}" type veth peer name r0 netns "$RTR" "${txq[@]}"
ip link add r1 netns "$RTR" type veth peer name c0 netns "$CLI"
ip -n "$SRV" addr add 10.92.1.1/24 dev s0
ip -n "$RTR" addr add 10.92.1.2/24 dev r0
ip -n "$RTR" addr add 10.92.2.1/24 dev r1
ip -n "$CLI" addr add 10.92.2.2/24 dev c0
for l in "$SRV s0" "$RTR r0" "$RTR r1" "$CLI c0"; do
	read -r ns dev <<<"$l"
	ip -n "$ns" link set "$dev" up
done
ip -n "$SRV" route add default via 10.92.1.2
ip -n "$CLI" route add default via 10.92.2.1
ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1
# The round trip: the client's packets (requests, ACKs) wait RTT in netem.
# Several (WEB_RTTS): a band of a prio per client address, each band a
# netem; unmatched packets (ARP) take band 0, WEB_RTT's.
SOURCES=
if [ -z "$RTTS" ]; then
	tc -n "$CLI" qdisc replace dev c0 root netem delay "$RTT" limit 100000
else
	read -ra rtts <<<"$RTTS"
	[ "${#rtts[@]}" -ge 2 ] && [ "${#rtts[@]}" -le 16 ] ||
		{ echo "openloop: WEB_RTTS is 2 to 16 round trips, not '$RTTS'" >&2; exit 2; }
	grep -qw -- "$RTT" <<<"$RTTS" ||
		{ echo "openloop: WEB_RTTS ($RTTS) must hold WEB_RTT ($RTT)" >&2; exit 2; }
	tc -n "$CLI" qdisc replace dev c0 root handle 1: prio bands "${#rtts[@]}" \
		priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
	band=1 host=2
	for d in "$RTT" "${rtts[@]}"; do
		if [ "$band" -gt 1 ] && [ "$d" = "$RTT" ]; then continue; fi
		a=10.92.2.$host
		[ "$host" = 2 ] || ip -n "$CLI" addr add "$a/24" dev c0
		tc -n "$CLI" qdisc replace dev c0 parent "1:$band" handle "$((band + 10)):" \
			netem delay "$d" limit 100000
		tc -n "$CLI" filter add dev c0 parent 1: protocol ip prio 1 u32 \
			match ip src "$a/32" flowid "1:$band"
		SOURCES+=${SOURCES:+,}$a=$d
		band=$((band + 1)) host=$((host + 1))
	done
fi
if [ "$BOTTLENECK" != downstream ]; then
	BNS=$SRV BDEV=s0
else
	BNS=$RTR BDEV=r1
fi
# rtr_bottleneck fifo|fq_codel|cake|ets: the router's r1 under
# WEB_BOTTLENECK=downstream: tbf at WEB_RATE over a FIFO or fq_codel, cake
# alone (its own shaper, diffserv3), or srff-qdisc's shaped-ets with u32
# filters that pick the band by DSCP (cs3, cs2, cs1; anything else band 0).
rtr_bottleneck() {
	ip netns exec "$RTR" env SRFF_QDISC_STATE="$OUT/.qdisc-state-rtr" "$Q" revert r1 >/dev/null 2>&1 || true
	tc -n "$RTR" qdisc del dev r1 root 2>/dev/null || true
	case $1 in
	fifo|fq_codel)
		tc -n "$RTR" qdisc replace dev r1 root handle 1: tbf rate "$RATE" burst 256kb latency 1s
		if [ "$1" = fifo ]; then
			tc -n "$RTR" qdisc replace dev r1 parent 1:1 handle 10: pfifo limit "$FIFO_LIMIT"
		else
			tc -n "$RTR" qdisc replace dev r1 parent 1:1 handle 10: fq_codel
		fi ;;
	cake) tc -n "$RTR" qdisc replace dev r1 root cake bandwidth "$CAKE_RATE" diffserv3 ;;
	ets)
		ip netns exec "$RTR" env SRFF_QDISC_STATE="$OUT/.qdisc-state-rtr" \
			"$Q" install shaped-ets r1 "$RATE" >/dev/null
		local d c=0
		for d in 0x60 0x40 0x20; do
			c=$((c + 1))
			tc -n "$RTR" filter add dev r1 parent 10: protocol ip prio "$c" u32 \
				match ip dsfield "$d" 0xfc classid "10:$c"
		done
		tc -n "$RTR" filter add dev r1 parent 10: protocol ip prio 9 u32 \
			match u32 0 0 classid 10:1 ;;
	esac
}
[ "$BOTTLENECK" != downstream ] || rtr_bottleneck fifo

nginx_start "$SRV" 10.92.1.1 "$work" || exit 1

# srff, loaded once, and switched on in the server's namespace (on by
# default in the initial one only); DEFAULT_PRIOS are the module's own
# priorities. WEB_SRFF_PARAMS="NAME=VALUE ...": module parameters at load
# (e.g. auto_min_flows=250: the guest's link ends flows a hundred times
# slower than a server's, and the learning's memory is counted in flows);
# recorded in meta.json.
read -ra ko_params <<<"${WEB_SRFF_PARAMS:-}"
for kv in "${ko_params[@]}"; do
	[[ $kv =~ ^[a-z_]+=[^[:space:]]+$ ]] || { say "WEB_SRFF_PARAMS: '$kv' is not NAME=VALUE"; exit 2; }
done
insmod "${SRFF_KO:-srff_nf/srff.ko}" "${ko_params[@]}" ||
	{ say "WEB_SRFF_PARAMS: insmod refused '${WEB_SRFF_PARAMS:-}'"; exit 2; }
"$CTL" -n "$SRV" set enabled on
DEFAULT_PRIOS=$("$CTL" -n "$SRV" -j show |
	python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["priorities"])))')
# WEB_SRFF_SET="KEY VALUE ...": srffctl settings for the whole boot, before
# anything is learnt (e.g. "idle-reset 25ms"); recorded in meta.json.
if [ -n "${WEB_SRFF_SET:-}" ]; then
	read -ra l <<<"$WEB_SRFF_SET"
	"$CTL" -n "$SRV" set "${l[@]}" || { say "WEB_SRFF_SET: srffctl set $WEB_SRFF_SET refused"; exit 2; }
fi
# The configuration as an apply file: a policy's +KEY=VALUE settings are
# put back from it.
DEFAULT_CONF=$("$CTL" -n "$SRV" save)
VARIANT_KEYS=()
srff_neutral() {
	"$CTL" -n "$SRV" set classid none priorities 0,0,0 thresholds auto \
		mark none dscp-map keep,keep,le
	if [ ${#VARIANT_KEYS[@]} -gt 0 ]; then
		grep -E "^($(IFS='|'; echo "${VARIANT_KEYS[*]}"))( |$)" <<<"$DEFAULT_CONF" |
			"$CTL" -n "$SRV" apply -
		VARIANT_KEYS=()
	fi
}
srff_active() { "$CTL" -n "$SRV" set priorities "$DEFAULT_PRIOS"; }
# rule_set RULE BANDS [SRFFCTL ARGS...]: srff's thresholds fixed at RULE's
# for this boot's sizes and the run's load (experiments/rule.py), and ARGS.
rule_set() {
	local rule=$1 n=$2 t
	shift 2
	t=$(python3 experiments/rule.py "$rule" "$DIST" "$SCALE" "$load" "$n") ||
		{ say "rule.py $rule $DIST $SCALE $load $n failed"; exit 2; }
	"$CTL" -n "$SRV" set thresholds "$t" "$@" ||
		{ say "srffctl refused $rule's thresholds $t"; exit 2; }
}
# policy_parse POLICY: POLICY's +KEY=VALUE settings, checked once (by
# policy_on): srffctl's, which only srff's policies take, into POLICY_SET
# as KEY VALUE pairs (variant_on applies them), and this script's
# capture=0|1, which any policy takes, into POLICY_CAPTURE (WEB_CAPTURE
# where not given; capture_run reads it).
POLICY_SET=() POLICY_CAPTURE=$CAPTURE
policy_parse() {
	local kv settings=()
	POLICY_SET=() POLICY_CAPTURE=$CAPTURE
	[[ $1 != *+* ]] || IFS=+ read -ra settings <<<"${1#*+}"
	for kv in "${settings[@]}"; do
		case $kv in
		capture=0|capture=1) POLICY_CAPTURE=${kv#capture=} ;;
		capture=*) say "policy $1: capture=0 or capture=1, not $kv"; exit 2 ;;
		?*=?*)
			[[ $1 == srff-* ]] ||
				{ say "policy $1: only srff's policies take +KEY=VALUE (any takes +capture=0)"; exit 2; }
			POLICY_SET+=("${kv%%=*}" "${kv#*=}") ;;
		*) say "policy $1: '$kv' is not KEY=VALUE"; exit 2 ;;
		esac
	done
}
# variant_on POLICY: apply POLICY_SET (policy_parse), if any.
variant_on() {
	local i
	[ ${#POLICY_SET[@]} -gt 0 ] || return 0
	for ((i = 0; i < ${#POLICY_SET[@]}; i += 2)); do
		VARIANT_KEYS+=("${POLICY_SET[i]}")
	done
	"$CTL" -n "$SRV" set "${POLICY_SET[@]}" ||
		{ say "policy $1: srffctl set ${POLICY_SET[*]} refused"; exit 2; }
}
for p in $POLICIES; do	# every policy's settings checked before any run
	policy_parse "$p"
done
srff_neutral

# shaped_leaf NS DEV KIND [ARGS]: tbf WEB_RATE with KIND under it.
shaped_leaf() {
	local ns=$1 dev=$2
	shift 2
	tc -n "$ns" qdisc replace dev "$dev" root handle 1: tbf rate "$RATE" burst 256kb latency 1s
	tc -n "$ns" qdisc replace dev "$dev" parent 1:1 handle 10: "$@"
}

# setup NAME [BANDS]: install the srff-qdisc setup NAME at the server
# (shaped when the bottleneck is local or mq, else unshaped: the queue is
# downstream), with BANDS bands if given. Under mq, one qdisc at the root
# over all TX queues needs --force (srff-qdisc refuses it over mq).
setup() {
	if [ "$BOTTLENECK" = local ]; then
		ip netns exec "$SRV" "$Q" install "shaped${1:+-$1}" s0 "$RATE" ${2:+"$2"} >/dev/null
	elif [ "$BOTTLENECK" = mq ]; then
		ip netns exec "$SRV" "$Q" --force install "shaped${1:+-$1}" s0 "$RATE" ${2:+"$2"} >/dev/null
	else
		ip netns exec "$SRV" "$Q" install "${1:-prio}" s0 ${2:+"$2"} >/dev/null
	fi
}

# mq_fq_codel: mq at s0's root and, on each of its TXQ queues, a tbf of
# WEB_RATE / TXQ over an fq_codel (the handles of srff-qdisc's shaped-mq).
mq_fq_codel() {
	local bits i
	bits=$(awk -v r="$RATE" 'BEGIN {
		u = tolower(r); sub(/^[0-9.]+/, "", u); v = substr(r, 1, length(r) - length(u))
		m = 1
		if (u ~ /bps$/) { m = 8; sub(/bps$/, "", u) } else sub(/bit$/, "", u)
		p = index("kmgt", substr(u, 1, 1))
		printf "%.0f", v * m * ((u ~ /i$/) ? 1024 : 1000) ^ p }')
	tc -n "$SRV" qdisc replace dev s0 root handle 1: mq
	for ((i = 1; i <= TXQ; i++)); do
		tc -n "$SRV" qdisc replace dev s0 parent "1:$(printf %x "$i")" \
			handle "$(printf %x $((0x400 + i))):" tbf rate "$((bits / TXQ))bit" burst 256kb latency 1s
		tc -n "$SRV" qdisc replace dev s0 parent "$(printf %x $((0x400 + i))):1" fq_codel
	done
}

policy_on() {
	policy_parse "$1"
	if [ "$BOTTLENECK" = downstream ]; then
		case ${1%%+*} in
		fifo|fq_codel|cake) rtr_bottleneck "${1%%+*}"; return 0 ;;
		srff-ets) setup ets; srff_active ;;
		srff-dscp-cake)
			setup ets; srff_active
			"$CTL" -n "$SRV" set mark dscp
			rtr_bottleneck cake ;;
		srff-dscp-ets)
			setup ets; srff_active
			"$CTL" -n "$SRV" set mark dscp dscp-map cs3,cs2,cs1
			rtr_bottleneck ets ;;
		*) say "policy $1: not one for WEB_BOTTLENECK=downstream"; exit 2 ;;
		esac
		variant_on "$1"
		return 0
	fi
	if [ "$BOTTLENECK" = mq ]; then
		case ${1%%+*} in
		fq_codel-mq) mq_fq_codel ;;
		srff-mq) setup mq; srff_active ;;
		fq_codel) ip netns exec "$SRV" "$Q" --force install shaped-fq s0 "$RATE" >/dev/null ;;
		srff-ets) setup ets; srff_active ;;
		*) say "policy $1: not one for WEB_BOTTLENECK=mq"; exit 2 ;;
		esac
		variant_on "$1"
		return 0
	fi
	case ${1%%+*} in
	fifo|fq)
		if [ "${1%%+*}" = fifo ]; then shaped_leaf "$SRV" s0 pfifo limit "$FIFO_LIMIT"
		else shaped_leaf "$SRV" s0 fq; fi ;;
	fq_codel) ip netns exec "$SRV" "$Q" install shaped-fq s0 "$RATE" >/dev/null ;;
	cake) tc -n "$SRV" qdisc replace dev s0 root cake bandwidth "$CAKE_RATE" ;;
	nft)
		setup ets
		# The thresholds srff uses now (learnt, or its initial ones):
		# the baseline is matched to srff, not to a guess.
		local t
		t=($("$CTL" -n "$SRV" -j show | jq -r '.thresholds[0:2] | "\(.[0]) \(.[1])"'))
		[ "${#t[@]}" = 2 ] || { say "nft: srff's thresholds unreadable"; exit 2; }
		# After srff's hook (NAT_SRC + 1): its neutral 0 is overwritten.
		ip netns exec "$SRV" nft -f - <<-EOF
		table inet srffexp {
			chain post {
				type filter hook postrouting priority srcnat + 2; policy accept;
				ct direction reply ct reply bytes < ${t[0]} meta priority set 10:1
				ct direction reply ct reply bytes >= ${t[0]} ct reply bytes < ${t[1]} meta priority set 10:2
				ct direction reply ct reply bytes >= ${t[1]} meta priority set 10:3
			}
		}
		EOF
		# The table's ct expressions have loaded conntrack; count bytes.
		ip netns exec "$SRV" sysctl -qw net.netfilter.nf_conntrack_acct=1 ;;
	srff-pfifo) setup; srff_active ;;
	srff-prio-fq) setup prio-fq; srff_active ;;
	srff-ets) setup ets; srff_active ;;
	srff-ets-fixed)
		# srff_neutral's `thresholds auto` gives the learnt ones back.
		setup ets; srff_active
		"$CTL" -n "$SRV" set thresholds 16k,128k ;;
	# 8 bands (srff_neutral goes back to 3).
	srff-ets-8) setup ets 8; srff_eight_bands "$CTL" "$SRV" ;;
	srff-ets-lax)
		setup ets
		codel_lax "$SRV" s0 3 || { say "policy $1: tc refused CoDel's change"; exit 1; }
		srff_active ;;
	srff-ets-8-lax)
		setup ets 8
		codel_lax "$SRV" s0 8 || { say "policy $1: tc refused CoDel's change"; exit 1; }
		srff_eight_bands "$CTL" "$SRV" ;;
	# PIAS's thresholds for the workload, fixed, under srff-ets's order or
	# the htb candidate's (srff-pias-htbA-8[-lax]); span's under the latter.
	srff-pias) setup ets; srff_active; rule_set pias 3 ;;
	srff-htb*-8|srff-htb*-8-lax|srff-pias-htb*-8|srff-pias-htb*-8-lax|srff-span-htb*-8|srff-span-htb*-8-lax)
		read -r a lax < <(pct_policy "${1%%+*}" "${1%%htb*}htb" -8) ||
			{ say "unknown policy $1"; exit 2; }
		SRFF_QDISC_HTB_ASSURED_PCT=$a setup htb 8
		[ "$lax" = - ] || codel_lax "$SRV" s0 || { say "policy $1: tc refused CoDel's change"; exit 1; }
		case $1 in
		srff-pias-*|srff-span-*) local rule=${1#srff-}; rule_set "${rule%%-*}" 8 classid 10: ;;
		*) srff_eight_bands "$CTL" "$SRV" ;;
		esac ;;
	srff-floor*-8|srff-floor*-8-lax)
		read -r a lax < <(pct_policy "${1%%+*}" srff-floor -8) ||
			{ say "unknown policy $1"; exit 2; }
		setup fq
		floor_tree "$SRV" s0 "$a" "$lax" || { say "policy $1: tc refused the tree"; exit 1; }
		srff_eight_bands "$CTL" "$SRV" ;;
	srff-prio-fq-16) setup prio-fq 16; srff_sixteen_bands "$CTL" "$SRV" ;;
	srff-ets-16) setup ets 16; srff_sixteen_bands "$CTL" "$SRV" ;;
	srff-fq-bands)
		[ $fq_bands = 1 ] || { say "srff-fq-bands needs Linux 6.7+ and SRFF_NEWTC_DIR ($(uname -r))"; exit 2; }
		setup fq-bands; srff_active ;;
	*) say "unknown policy $1"; exit 2 ;;
	esac
	variant_on "$1"
}

policy_off() {
	srff_neutral
	ip netns exec "$SRV" nft delete table inet srffexp 2>/dev/null || true
	ip netns exec "$SRV" "$Q" revert s0 >/dev/null 2>&1
	tc -n "$SRV" qdisc del dev s0 root 2>/dev/null || true
	[ "$BOTTLENECK" != downstream ] || rtr_bottleneck fifo
}

qlog_start() {
	(
		while :; do
			# tc 6.1 has no JSON for classes: their text, as a string.
			printf '{"t":%s,"q":%s,"ct":%s}\n' "$(date +%s.%N)" \
				"$(tc -n "$BNS" -s -j qdisc show dev "$BDEV")" \
				"$(tc -n "$BNS" -s class show dev "$BDEV" | jq -Rs .)"
			sleep 0.25
		done
	) > "$1" &
	QLOG_PID=$!
}
qlog_stop() { kill "$QLOG_PID"; wait "$QLOG_PID" 2>/dev/null || true; QLOG_PID=; }

# capture_run RUN / capture_done: tcpdump on the router's r1, headers
# only, to OUTDIR/pcap/RUN.pcap, if the policy's runs are captured
# (POLICY_CAPTURE: WEB_CAPTURE or its +capture=0|1): what the server sends
# (TCP from port 80), and of what the client sends its SYNs and the
# packets with payload (its requests; not the bulk download's ACKs, half
# the packets and nothing fct.py reads). capture.sh's capture_start
# returns once tcpdump listens, and its capture_stop once the sentinel
# c0 sends after the run is in the file: stopped at once, tcpdump lost
# what it had not read yet, the last seconds of a run at high load
# (their responses, up to 30 % of a 0.8 run's, timed by the client's
# clock instead). capture_done sets CAP_CPU (tcpdump's CPU seconds,
# what the capture cost the guest besides its filter in the packet
# path) and CAP_NOTE.
CAP_DEV=r1
CAP_FILTER='tcp src port 80 or (tcp dst port 80 and (tcp[tcpflags] & tcp-syn != 0 or ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2) > 0))'
CAP_RUN= CAP_CPU= CAP_NOTE=
capture_run() {	# capture_run RUN: under the policy policy_on set up last
	CAP_RUN= CAP_CPU= CAP_NOTE=
	[ "$POLICY_CAPTURE" = 1 ] || return 0
	mkdir -p "$OUT/pcap"
	capture_start "$RTR" "$CAP_DEV" "$OUT/pcap/$1.pcap" "$CAP_FILTER" || exit 1
	CAP_RUN=$1
}
capture_done() {
	[ -n "$CAP_RUN" ] || return 0
	capture_stop "$CLI" c0 "$OUT/pcap/$CAP_RUN.pcap"
	CAP_RUN= CAP_CPU=$CAPTURE_CPU
	CAP_NOTE="; $CAPTURE_STATS, tcpdump ${CAP_CPU:-?} s CPU"
}

# tcp_counters: the server namespace's TCP retransmission counters, as
# JSON (experiments/tcpstats.py tabulates their growth per run). A timeout
# the sender later finds spurious (the original segment had only waited:
# F-RTO, or the timestamps of tcp_may_undo) is undone, and TcpExt
# TCPLossUndo counts it (6.1's tcp_input.c, tcp_try_undo_loss and
# tcp_try_undo_recovery in the Loss state), TCPSpuriousRTOs those F-RTO found.
# TCPSpuriousRtxHostQueues: retransmissions (after a timeout or a loss probe)
# not sent because the original was still in this host's qdisc (6.1's
# tcp_output.c, skb_still_in_host_queue): the segment had only waited here.
tcp_counters() {
	ip netns exec "$SRV" awk '
		$1 == "TcpExt:" || $1 == "Tcp:" {
			if (!(($1) in head)) { head[$1] = 1; for (i = 2; i <= NF; i++) name[$1, i] = $i }
			else for (i = 2; i <= NF; i++) v[name[$1, i]] = $i
		}
		END { printf "{\"TCPTimeouts\":%d,\"RetransSegs\":%d,\"TCPLossProbes\":%d," \
				"\"TCPLossUndo\":%d,\"TCPSpuriousRTOs\":%d,\"TCPSpuriousRtxHostQueues\":%d}",
			v["TCPTimeouts"], v["RetransSegs"], v["TCPLossProbes"],
			v["TCPLossUndo"], v["TCPSpuriousRTOs"], v["TCPSpuriousRtxHostQueues"] }' /proc/net/netstat /proc/net/snmp
}

# Which connections timed out: kprobes on tcp_enter_loss (a retransmission
# timeout of an established socket: tcp_retransmit_timer counts TcpExt
# TCPTimeouts, then calls it) and tcp_syn_ack_timeout (the other half of
# TCPTimeouts: a SYN-ACK's), in a trace instance of their own, on the
# server's port 80, with CLOCK_MONOTONIC timestamps (the client's clock).
# Both take the socket (a request sock for the SYN-ACK) first, whose
# struct sock_common holds skc_dport (network order) at 12 and skc_num at
# 14 in both kernels (include/net/sock.h). tcpstats.py attributes each
# event to the bulk download or a response's size from the client's port.
# No kprobes here (no tracefs, CONFIG_KPROBE_EVENTS off): the runs go on
# without the attribution.
RTO_TR=
rto_trace_start() {
	local tr=/sys/kernel/tracing e
	[ -e $tr/kprobe_events ] || mount -t tracefs nodev $tr 2>/dev/null || true
	[ -w $tr/kprobe_events ] || { say "no kprobe events: RTOs are not attributed"; return 0; }
	rto_trace_stop
	echo 'p:srffexp/rto tcp_enter_loss lport=+14(%di):u16 rport=+12(%di):u16' >> $tr/kprobe_events &&
	echo 'p:srffexp/synack_rto tcp_syn_ack_timeout lport=+14(%di):u16 rport=+12(%di):u16' >> $tr/kprobe_events &&
	mkdir $tr/instances/srffexp-$$ || { say "kprobes refused: RTOs are not attributed"; rto_trace_stop; return 0; }
	RTO_TR=$tr/instances/srffexp-$$
	echo mono > $RTO_TR/trace_clock
	for e in rto synack_rto; do
		echo 'lport == 80' > $RTO_TR/events/srffexp/$e/filter
		echo 1 > $RTO_TR/events/srffexp/$e/enable
	done
}
rto_trace_stop() {
	local tr=/sys/kernel/tracing
	[ -z "$RTO_TR" ] || rmdir "$RTO_TR" 2>/dev/null || true
	RTO_TR=
	[ -w $tr/kprobe_events ] || return 0
	# Not defined (the first start): tracefs says ENOENT.
	echo '-:srffexp/rto' >> $tr/kprobe_events 2>/dev/null || true
	echo '-:srffexp/synack_rto' >> $tr/kprobe_events 2>/dev/null || true
}
# rto_events: the trace since the last call, then cleared.
rto_events() {
	[ -n "$RTO_TR" ] || return 0
	cat "$RTO_TR/trace"
	: > "$RTO_TR/trace"
}

# cpu_ticks: the guest's CPU time per CPU (/proc/stat: user, nice, system,
# idle, iowait, irq, softirq, in USER_HZ ticks), as JSON: the packet path's
# cost per CPU is the growth of system + softirq over a run (tcpstats.py).
cpu_ticks() {
	awk 'BEGIN { printf "{" } /^cpu[0-9]/ { printf "%s\"%s\":[%s,%s,%s,%s,%s,%s,%s]", n++ ? "," : "", $1, $2, $3, $4, $5, $6, $7, $8 }
	     END { printf "}" }' /proc/stat
}

# web_client MODE SEED OUT SECONDS [ARGS...]: web_client.py in the client's
# namespace, with the boot's sizes and kind of connection.
web_client() {
	local mode=$1 seed=$2 out=$3 secs=$4
	shift 4
	ip netns exec "$CLI" python3 experiments/web_client.py 10.92.1.1 "$OUT/manifest.txt" "$out" \
		--mode "$mode" --seconds "$secs" --seed "$seed" \
		--dist "$DIST" --scale "$SCALE" --blob /blob --conn "$CONN" "$@"
}

client() { # LOAD SEED OUT SECONDS [ARGS...]: ARGS last, so they override
	local load=$1 seed=$2 out=$3 secs=$4
	shift 4
	web_client open "$seed" "$out" "$secs" --load "$load" --rate "$RATE" --bulk "$BULK" \
		--drain "$DRAIN" ${SOURCES:+--sources "$SOURCES"} "$@"
}

# The idle round trip, measured: fct.py's ideal completion times use it.
rtt_idle=$(ip netns exec "$CLI" ping -n -q -c 5 -i 0.2 10.92.1.1 |
	sed -n 's|^rtt min/avg/max/mdev = \([0-9.]*\)/.*|\1|p')
rtt_idle=$(python3 -c 'import sys; print("%.6f" % (float(sys.argv[1]) / 1000))' "${rtt_idle:-0}")
say "idle RTT ${rtt_idle}s (netem $RTT on the client's egress)"
python3 experiments/runmeta.py "$OUT/meta.json" --ko "${SRFF_KO:-srff_nf/srff.ko}" --pkg nginx-light \
	--set experiment=openloop --set rate="$RATE" --set rounds="$ROUNDS" \
	--set seconds="$SECONDS_PER" --set dist="$DIST" --set scale="$SCALE" \
	--set warmup_dist="$WARMUP_DIST" --set warmup_scale="$WARMUP_SCALE" \
	--set loads="[$(echo "$LOADS" | tr ' ' ,)]" --set rtt="$RTT" --set rtts="[$(for d in $RTTS; do printf '"%s",' "$d"; done | sed 's/,$//')]" \
	--set sources="\"$SOURCES\"" --set bulk="$BULK" \
	--set conn="$CONN" --set bottleneck="$BOTTLENECK" --set fifo_limit="$FIFO_LIMIT" \
	--set capture="$CAPTURE" --set capture_dev="\"$([ "$CAPTURE" = 1 ] && echo "$CAP_DEV")\"" \
	--set txqueues="$(ip netns exec "$SRV" sh -c "ls -d /sys/class/net/s0/queues/tx-*" | wc -l)" \
	--set policies="[$(read -ra l <<<"$POLICIES"; printf '"%s",' "${l[@]}" | sed 's/,$//')]" \
	--set rtt_idle_s="$rtt_idle" --set srff_default_priorities="\"$DEFAULT_PRIOS\"" \
	--set srff_set="\"${WEB_SRFF_SET:-}\"" --set srff_params="\"${WEB_SRFF_PARAMS:-}\"" \
	--set burn_in="$BURNIN" --set order=\"shuffled\" \
	--set idle_reps="$IDLE_REPS" --set idle_sizes="$IDLE_SIZES" \
	--seed base="$SEED" >/dev/null

rto_trace_start

# Warm-up: srff learns from finished flows (auto_min_flows of them, or its
# thresholds changed); the warm-up's requests are not kept.
if [ "$WARMUP" -gt 0 ]; then
	read -ra l <<<"$LOADS"
	mid=${l[$(( (${#l[@]} - 1) / 2 ))]}
	say "warm-up: up to ${WARMUP}s at load $mid ($WARMUP_DIST x $WARMUP_SCALE), until srff has learnt its thresholds"
	setup prio-fq
	client "$mid" $((SEED * 1000)) "$work/warmup.jsonl" "$WARMUP" --bulk 0 --drain 5 \
		--dist "$WARMUP_DIST" --scale "$WARMUP_SCALE" >/dev/null 2>&1 &
	wpid=$!
	while kill -0 "$wpid" 2>/dev/null && ! srff_learnt "$CTL" "$SRV"; do sleep 1; done
	kill "$wpid" 2>/dev/null || true
	wait "$wpid" 2>/dev/null || true
	policy_off
	srff_learnt "$CTL" "$SRV" || say "  srff has not learnt in ${WARMUP}s: its initial thresholds stay"
	say "  srff: $("$CTL" -n "$SRV" show | grep -E '^thresholds' | tr -s ' ')"
fi

# The burn-in: a run like the others, thrown away.
if [ "$BURNIN" = 1 ]; then
	read -ra l <<<"$LOADS"
	mid=${l[$(( (${#l[@]} - 1) / 2 ))]}
	say "burn-in: ${SECONDS_PER}s at load $mid under fq_codel, not kept"
	policy_on fq_codel
	client "$mid" $((SEED * 1000 + 999)) "$work/burnin.jsonl" "$SECONDS_PER" >/dev/null 2>&1 ||
		say "  the burn-in's client reported failed requests"
	policy_off
fi

# The idle baseline: each size alone on the link.
if [ "$IDLE_REPS" -gt 0 ]; then
	say "idle baseline: $IDLE_SIZES sizes x $IDLE_REPS, one at a time, under fq_codel"
	policy_on fq_codel
	capture_run idle-1
	web_client idle "$SEED" "$OUT/requests/idle-1.jsonl" 600 \
		--sizes "$IDLE_SIZES" --reps "$IDLE_REPS" ${SOURCES:+--sources "$SOURCES"} ||
		say "  the idle baseline's client reported failed requests"
	capture_done
	policy_off
	say "  $(wc -l < "$OUT/requests/idle-1.jsonl") requests$CAP_NOTE"
fi

# cake_match: cake's shaper carried 3-5 % less than tbf at the same rate in
# the emulated guest (one bulk flow alone; 16 flows alone 3 %; both count
# skb->len: cake's default is `raw`, sch_cake.c cake_calc_overhead), as it
# has no burst to make up for a late timer. So that cake is judged on its
# order and not on its rate, it runs at the rate that carries what tbf
# carries: the bulk download alone, CAKE_MATCH_S seconds under tbf +
# fq_codel and under cake at WEB_RATE, in the order tbf, cake, cake, tbf
# (WEB_CAKE_MATCH_ORDER: "fq_codel cake cake fq_codel"; the tests' smoke
# runs one of each); cake then gets WEB_RATE x tbf's mean share / cake's,
# within [1, 1.25]. The shares and the rate go into meta.json
# (cake_match). WEB_CAKE_MATCH=0: not.
CAKE_RATE=$RATE
cake_match() {
	local p i share tbf=() cake=() out
	say "cake's rate matched to tbf's: the bulk download alone, ${CAKE_MATCH_S}s x $(wc -w <<<"$CAKE_MATCH_ORDER")"
	i=0
	for p in $CAKE_MATCH_ORDER; do
		case $p in fq_codel|cake) ;; *) say "WEB_CAKE_MATCH_ORDER: fq_codel or cake, not $p"; exit 2 ;; esac
		i=$((i + 1))
		policy_on "$p"
		out=$work/cake-match-$i.jsonl
		client 0.001 $((SEED * 1000 + 900 + i)) "$out" "$CAKE_MATCH_S" --bulk 1 --drain 2 >/dev/null 2>&1 || true
		policy_off
		share=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.4f" % (d["bulk_load"] + d["achieved_load"]))' \
			"${out%.jsonl}.load.json") || { say "  no load file for the match: cake stays at $RATE"; return 0; }
		if [ "$p" = cake ]; then cake+=("$share"); else tbf+=("$share"); fi
	done
	[ ${#tbf[@]} -gt 0 ] && [ ${#cake[@]} -gt 0 ] ||
		{ say "  WEB_CAKE_MATCH_ORDER names not both fq_codel and cake: cake stays at $RATE"; return 0; }
	read -r CAKE_RATE CAKE_MATCH_JSON < <(python3 -c '
import json, sys
sys.path.insert(0, "experiments")
import wire
rate, nt = sys.argv[1], int(sys.argv[2])
tbf, cake = [float(x) for x in sys.argv[3:3 + nt]], [float(x) for x in sys.argv[3 + nt:]]
f = min(1.25, max(1.0, (sum(tbf) / len(tbf)) / (sum(cake) / len(cake))))
bps = round(wire.parse_rate(rate) * f)
print("%dbit" % bps, json.dumps({"tbf_share": tbf, "cake_share_at_rate": cake, "factor": round(f, 4),
                                  "cake_rate_bps": bps}, separators=(",", ":")))' "$RATE" "${#tbf[@]}" "${tbf[@]}" "${cake[@]}")
	say "  carried alone: tbf ${tbf[*]}, cake ${cake[*]} of $RATE: cake runs at $CAKE_RATE"
	python3 -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); d["params"]["cake_match"]=json.loads(sys.argv[2])
json.dump(d, open(p, "w"), indent=1, sort_keys=True); open(p, "a").write("\n")' "$OUT/meta.json" "$CAKE_MATCH_JSON"
}
if [ "$CAKE_MATCH" = 1 ] && grep -qw cake <<<"$POLICIES"; then
	cake_match
fi

total=$(( ROUNDS * $(wc -w <<<"$LOADS") * $(wc -w <<<"$POLICIES") ))
n=0
: > "$OUT/order.jsonl"
for r in $(seq 1 "$ROUNDS"); do
	li=0
	for load in $LOADS; do
		li=$((li + 1))
		read -ra l <<<"$POLICIES"
		read -ra order <<<"$(shuffle $((SEED * 1000 + r * 10 + li)) "${l[@]}")"
		printf '{"round": %d, "load": %s, "order": [%s]}\n' "$r" "$load" \
			"$(printf '"%s",' "${order[@]}" | sed 's/,$//')" >> "$OUT/order.jsonl"
		for p in "${order[@]}"; do
			n=$((n + 1))
			run=$p@$load-$r
			say "[$n/$total] round $r, load $load, $p: ${SECONDS_PER}s of arrivals"
			policy_on "$p"
			qlog_start "$OUT/qlog/$run.jsonl"
			capture_run "$run"
			tcp0=$(tcp_counters) cpu0=$(cpu_ticks)
			rto_events > /dev/null
			# A failed request is in the log and .load.json; the
			# experiment goes on.
			client "$load" $((SEED * 1000 + r * 10 + li)) \
				"$OUT/requests/$run.jsonl" "$SECONDS_PER" ||
				say "  the client reported failed requests"
			cpu1=$(cpu_ticks)
			qlog_stop
			capture_done
			rto_events > "$work/rto.txt"
			{
				printf '{"show":'; "$CTL" -n "$SRV" -j show
				printf ',"stats":'; "$CTL" -n "$SRV" -j stats
				printf ',"tcp_before":%s,"tcp_after":%s' "$tcp0" "$(tcp_counters)"
				printf ',"cpu_before":%s,"cpu_after":%s' "$cpu0" "$cpu1"
				printf ',"t":%d' "$SECONDS"
				[ -z "$CAP_CPU" ] || printf ',"capture_cpu_s":%s' "$CAP_CPU"
				[ -z "$RTO_TR" ] || printf ',"rto":%s' "$(python3 experiments/tcpstats.py \
					--attribute "$work/rto.txt" "$OUT/requests/$run.jsonl")"
				printf '}\n'
			} > "$OUT/srff/$run.json"
			policy_off
			say "  $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=json.load(open(sys.argv[2]))
grew = lambda c: s["tcp_after"].get(c, 0) - s["tcp_before"].get(c, 0)
whose = ", ".join("%s %d" % kv for kv in s.get("rto", {}).items())
print("%d arrivals, %d completed; load offered %.2f, achieved %.2f, bulk %.2f; %d late; %d RTOs, %d undone%s" % (
 d["arrivals"], d["completed"], d["offered_load"], d["achieved_load"], d["bulk_load"], d["late"],
 grew("TCPTimeouts"), grew("TCPLossUndo"), " (%s)" % whose if whose else ""))' \
				"$OUT/requests/$run.load.json" "$OUT/srff/$run.json")$CAP_NOTE"
		done
	done
done
say "all $total runs done"
