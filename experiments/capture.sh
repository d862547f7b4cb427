# SPDX-License-Identifier: GPL-2.0
#
# experiments/capture.sh: the experiments' tcpdump, on a client's device or
# the router's (sourced by the guest scripts; they define say and TOP).
#
#   capture_start NS DEV PCAP FILTER   start tcpdump, wait until it listens
#                                      (fails if it does not); its pid is
#                                      left in CAPTURE_PID
#   capture_stop PEER_NS PEER_DEV PCAP stop it with nothing lost, then warn
#                                      if the kernel dropped frames; sets
#                                      CAPTURE_CPU (the seconds of CPU
#                                      tcpdump took, user and system) and
#                                      CAPTURE_STATS ("captured N, D
#                                      dropped by the kernel")
#   capture_end                        stop the sentinel sender (below):
#                                      for the script's cleanup
#
# Headers only (-s 96: the analyses read lengths from the IP header, so
# GSO super-packets count in full). Not in immediate mode and not -U: the
# kernel stamps each frame as it takes it, however late tcpdump reads it,
# and tcpdump then reads the ring a block at a time and writes the file a
# buffer at a time; in immediate mode, with a write per frame, it took
# 4-5.5 s of the guest's CPU in a 20 s run of the open-loop experiment at
# 0.8 load, and that changed the results it timed. -B 16384 (16 MiB) holds
# seconds of frames.

SENTINEL=0x88b5

capture_start() {
	local i
	ip netns exec "$1" tcpdump -i "$2" -n -s 96 -B 16384 \
		-w "$3" "$4 or ether proto $SENTINEL" 2>"$3.log" &
	CAPTURE_PID=$!
	for i in $(seq 100); do
		grep -q 'listening on' "$3.log" && return 0
		kill -0 "$CAPTURE_PID" 2>/dev/null || break
		sleep 0.1
	done
	say "tcpdump did not start: $(cat "$3.log")"
	return 1
}

# SIGINT alone loses the frames tcpdump has not read yet (the last ones of
# each transfer). A sentinel frame, sent by the capture device's peer after
# them, past netfilter and the qdisc (tests/tools/traffic.py), is in the
# file only once they are, and once tcpdump has flushed its buffer (which
# SIGUSR2 asks of it); then tcpdump may stop. One sender serves all of
# a script's captures (a coprocess: python starts once, not per trial),
# and every sentinel carries a tag of its own, looked for in the file.
SENTINEL_AT='' SENTINEL_N=0

sentinel_send() {	# sentinel_send NS DEV TAG
	local ack
	if [ "$SENTINEL_AT" != "$1 $2" ]; then
		capture_end
		coproc SENTINEL_CO { exec ip netns exec "$1" python3 "$TOP/tests/tools/traffic.py" sentinel "$2" -; }
		SENTINEL_AT="$1 $2"
	fi
	printf '%s\n' "$3" >&"${SENTINEL_CO[1]}" && read -r -t 60 ack <&"${SENTINEL_CO[0]}" &&
		[ "$ack" = "sent $3" ]
}

capture_end() {
	if [ -n "${SENTINEL_CO_PID:-}" ]; then
		kill "$SENTINEL_CO_PID" 2>/dev/null
		wait "$SENTINEL_CO_PID" 2>/dev/null
	fi
	SENTINEL_AT=''
	return 0
}

capture_stop() {
	local i drops tag seen=
	CAPTURE_CPU= CAPTURE_STATS=
	SENTINEL_N=$((SENTINEL_N + 1))
	tag=stop-$$-$SENTINEL_N
	if sentinel_send "$1" "$2" "$tag"; then
		# tcpdump sees a frame when its ring block is handed over (a
		# timeout of 1 s when not in immediate mode): a try every 0.25 s
		# (each a tail and a grep, 0.1 s of the guest's CPU) is enough.
		for i in $(seq 80); do
			kill -USR2 "$CAPTURE_PID" 2>/dev/null
			if tail -c 1048576 "$3" | grep -qaF "srff-sentinel $tag"; then
				seen=1
				break
			fi
			sleep 0.25
		done
	else
		SENTINEL_AT=''
		say "  could not send the capture sentinel through $1 $2"
	fi
	[ -n "$seen" ] || say "  the capture sentinel never reached $3: the capture may be short"
	# (ip netns exec execs tcpdump in place: /proc/PID is tcpdump's.)
	CAPTURE_CPU=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
		"/proc/$CAPTURE_PID/stat" 2>/dev/null || true)
	kill -INT "$CAPTURE_PID"
	wait "$CAPTURE_PID" 2>/dev/null || true
	drops=$(sed -n 's/^\([0-9]*\) packets* dropped by kernel/\1/p' "$3.log")
	CAPTURE_STATS="captured $(sed -n 's/ packets* captured//p' "$3.log"), ${drops:-?} dropped by the kernel"
	[ "${drops:-0}" = 0 ] || say "  tcpdump dropped $drops packets (the analysis copes; see $3.log)"
}
