# SPDX-License-Identifier: GPL-2.0
#
# experiments/guest-lib.sh: what the experiments' guest scripts share
# (sourced by ftp-guest.sh, openloop-guest.sh and web-guest.sh;
# experiments/test_guest_lib.py runs it natively).
#
#   rotate K WORD...     the words starting from the K-th (0-based, modulo
#                        their number), wrapping round: the order policies
#                        run in, moved on by one every trial or round so that
#                        drift of the shared host hits them all alike
#   shuffle SEED WORD... the words in an order drawn from SEED (Fisher-Yates
#                        over xorshift32, in bash: the same order for the
#                        same seed on any machine): the order policies run
#                        in, drawn anew every round, so that no policy is
#                        always first after a warm-up or always next to
#                        the same neighbour
#   srff_learnt CTL NS   true once srff in namespace NS has learnt its
#                        thresholds: it changed them at least once, or it
#                        has seen auto_min_flows finished flows (a warm-up's
#                        stop condition); SRFF_PARAMS is where the module's
#                        parameters are (/sys/module/srff/parameters)
#   srff_eight_bands CTL NS [SETTING...]
#                        srff in NS steering 8 bands by class id (10:1 to
#                        10:8; the qdisc's priomap is pfifo_fast's, for
#                        priorities 6/0/2), with SETTINGs on the same
#                        srffctl set: seven thresholds 8 times apart from
#                        16 KB, then learnt (auto keeps their number)
#   nginx_start NS ADDR DIR
#                        nginx in namespace NS on ADDR port 80, serving
#                        DIR/www, its configuration, pid, log and temporary
#                        files in DIR (DIR/tmp must exist); NGINX is its
#                        pid. Returns once it listens; fails, saying why
#                        (the caller's say), if it does not.
#   srff_sixteen_bands CTL NS [SETTING...]
#                        srff in NS steering 16 bands by class id (10:1 to
#                        10:16), with SETTINGs on the same srffctl set:
#                        fifteen thresholds fixed, twice apart from 16 KiB
#                        to 256 MiB (experiments/band_study.py's ladder)

# SRFF_XTRACE=FILE (the tests' knob): the sourcing script's trace.
# shellcheck source=scripts/xtrace.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/xtrace.sh"

rotate() {
	local k=$1; shift
	local n=$# i j
	for ((i = 0; i < n; i++)); do
		j=$(( (i + k) % n + 1 ))
		printf '%s ' "${!j}"
	done
}

shuffle() {
	local seed=$1; shift
	local a=("$@") i j k t x
	# Spread nearby seeds (a round's is base * 1000 + round * 10 + load)
	# over the state, then stir 8 steps: xorshift's first outputs from a
	# small state are poorly mixed.
	x=$(( (seed * 2654435761 + 0x9e3779b9) & 0xffffffff ))
	[ "$x" -ne 0 ] || x=2463534242
	_shuffle_step() {	# (bash: defined globally)
		x=$(( (x ^ (x << 13)) & 0xffffffff ))
		x=$(( x ^ (x >> 17) ))
		x=$(( (x ^ (x << 5)) & 0xffffffff ))
	}
	for ((i = 0; i < 8; i++)); do _shuffle_step; done
	for ((j = $# - 1; j > 0; j--)); do
		_shuffle_step
		k=$(( x % (j + 1) ))
		t=${a[j]}; a[j]=${a[k]}; a[k]=$t
	done
	printf '%s ' "${a[@]}"
}

# (Read by bash alone: a warm-up asks every second, and python's start
# costs about a second of guest CPU under emulation, taken from the
# warm-up's own clients.)
srff_learnt() {
	local min s flows changes
	read -r min <"${SRFF_PARAMS:-/sys/module/srff/parameters}/auto_min_flows" || return
	s=$("$1" -n "$2" -j stats) || return
	[[ $s =~ \"auto_flows\":[[:space:]]*([0-9]+) ]] || return
	flows=${BASH_REMATCH[1]}
	[[ $s =~ \"auto_changes\":[[:space:]]*([0-9]+) ]] || return
	changes=${BASH_REMATCH[1]}
	[ "$changes" -gt 0 ] || [ "$flows" -ge "$min" ]
}

srff_eight_bands() {
	local ctl=$1 ns=$2
	shift 2
	"$ctl" -n "$ns" set thresholds 16k,128k,1m,8m,64m,512m,4g classid 10: "$@" &&
		"$ctl" -n "$ns" set thresholds auto
}

# pct_policy NAME PREFIX [SUFFIX]: NAME is PREFIX, a percent P (1-99; 10
# where there is none), SUFFIX, then -lax or not: srff-htb40-8-lax is
# srff-htb, 40, -8, lax; srff-8-floor is srff-8-floor, 10. Prints "P lax"
# or "P -"; fails for any other NAME.
pct_policy() {
	local name=$1 pre=$2 suf=${3:-} lax=- p
	case $name in *-lax) lax=lax; name=${name%-lax} ;; esac
	case $name in "$pre"*"$suf") ;; *) return 1 ;; esac
	p=${name#"$pre"}; p=${p%"$suf"}
	case $p in '') p=10 ;; [1-9]|[1-9][0-9]) ;; *) return 1 ;; esac
	echo "$p $lax"
}

# codel_lax NS DEV [BANDS]: CoDel at target 50 ms, interval 500 ms in the
# fq_codel leaves of bands 1 to BANDS-1 (8 by default) of srff-qdisc's
# shaped-htb or (shaped-)ets: classes 10:2-10:BANDS, leaves 102:-10N:.
# Such a band waits behind the bands above it: does CoDel's dropping there
# cost the timeouts and the stalls?
codel_lax() {
	local b n=${3:-8}
	for ((b = 2; b <= n; b++)); do
		tc -n "$1" qdisc change dev "$2" parent "10:$(printf %x "$b")" \
			handle "$(printf %x $((0x100 + b))):" \
			fq_codel target 50ms interval 500ms || return
	done
}

# floor_tree NS DEV PCT [lax]: srff's 8 class-id bands as 4 queues: bands
# 0-2 (flows under the third threshold) in strict order, and bands 3-7 (the
# large flows and the bulk downloads) sharing one fq_codel that keeps PCT %
# of the link while it has packets. Over srff-qdisc's shaped-fq (tbf 1:,
# its child at 1:1): ets 2: with two DRR bands, quanta (100 - PCT):PCT of
# a full-sized frame; 2:1 is prio 10: with 3 bands (classes 10:1-10:3,
# fq_codel 101:-103:), 2:2 is fq_codel 20:, where a basic meta filter
# sends class ids above 10:3. Unclassified packets (priority 0) go to 10:2,
# as under shaped-htb. Work-conserving and rate-free: the floor takes all
# the others leave. lax: CoDel at target 50 ms, interval 500 ms in every
# queue but 10:1 (as codel_lax, srff-htbA-8-lax).
floor_tree() {
	local ns=$1 dev=$2 pct=$3 lax=${4:-} mtu b codel=()
	mtu=$(ip -n "$ns" -o link show dev "$dev" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
	mtu=$((mtu + 14))
	[ "$lax" = lax ] && codel=(target 50ms interval 500ms)
	tc -n "$ns" qdisc replace dev "$dev" parent 1:1 handle 2: ets bands 2 \
		quanta $((mtu * (100 - pct) / pct)) "$mtu" priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
	tc -n "$ns" qdisc add dev "$dev" parent 2:1 handle 10: prio bands 3 \
		priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 &&
	tc -n "$ns" qdisc add dev "$dev" parent 10:1 handle 101: fq_codel || return
	for b in 2 3; do
		tc -n "$ns" qdisc add dev "$dev" parent 10:$b handle 10$b: fq_codel "${codel[@]}" || return
	done
	tc -n "$ns" qdisc add dev "$dev" parent 2:2 handle 20: fq_codel "${codel[@]}" &&
	tc -n "$ns" filter add dev "$dev" parent 2: prio 1 basic \
		match "meta(priority gt $((0x100003)))" classid 2:2
}

srff_sixteen_bands() {
	local ctl=$1 ns=$2 k t=''
	shift 2
	for ((k = 0; k < 15; k++)); do t+=${t:+,}$((16384 << k)); done
	"$ctl" -n "$ns" set thresholds "$t" classid 10: "$@"
}

nginx_start() {
	local ns=$1 addr=$2 dir=$3 i
	cat > "$dir/nginx.conf" <<EOF
daemon off;
worker_processes 2;
worker_rlimit_nofile 16384;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_timeout 120s;
	keepalive_requests 100000;
	client_body_temp_path $dir/tmp;
	proxy_temp_path $dir/tmp;
	fastcgi_temp_path $dir/tmp;
	uwsgi_temp_path $dir/tmp;
	scgi_temp_path $dir/tmp;
	default_type application/octet-stream;
	server {
		listen $addr:80 backlog=4096;
		root $dir/www;
	}
}
EOF
	ip netns exec "$ns" nginx -c "$dir/nginx.conf" -e "$dir/nginx-error.log" &
	NGINX=$!
	for i in $(seq 100); do
		ip netns exec "$ns" ss -Hltn 'sport = :80' | grep -q . && return 0
		sleep 0.1
	done
	say "nginx did not start: $(cat "$dir/nginx-error.log")"
	return 1
}
