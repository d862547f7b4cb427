#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check_completion.sh: srffctl's bash completion offers what srffctl
# takes. test_parse.c runs it with, in the environment, the lists srffctl
# itself holds: SRFF_KEYS (config_keys), SRFF_UDP, SRFF_APP and SRFF_MARK
# (the value names); the commands are read from main.c's command table. A key or
# command added to srffctl and not to the completion fails here.
# Prints "ok - ..." or "not ok - ..." per check.
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../completion/srffctl
. "$here/../completion/srffctl"

SRFF_COMMANDS=$(sed -n 's/^\t{ "\([a-z-]*\)", [a-z_A-Z]*, ".*/\1/p' "$here/../main.c" | tr '\n' ' ')
if [ "$(echo "$SRFF_COMMANDS" | wc -w)" -ge 10 ]; then echo "ok - main.c lists $SRFF_COMMANDS"
else echo "not ok - cannot read the commands from main.c: '$SRFF_COMMANDS'"; fi

# `ip netns list` as ip prints it: "NAME" or "NAME (id: N)".
ip() { [ "$*" = "netns list" ] && printf 'blue (id: 0)\nred\nweb (id: 3)\n'; }

# words WORD...: what completing the last word offers, sorted, one line.
words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_srffctl
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}

sorted() { printf '%s\n' "$@" | sort | tr '\n' ' ' | sed 's/ $//'; }

expect() {	# expect WANT WORD...
	local want=$1 got; shift
	got=$(words "$@")
	if [ "$got" = "$want" ]; then
		echo "ok - completion of '$*': $want"
	else
		echo "not ok - completion of '$*': '$got', want '$want'"
	fi
}

# shellcheck disable=SC2086
{
	expect "$(sorted $SRFF_COMMANDS)" srffctl ''
	expect "$(sorted $SRFF_COMMANDS)" srffctl -j ''
	expect "$(sorted $SRFF_COMMANDS)" srffctl -n blue -j ''
	expect "set set-thresholds setconf" srffctl se
	expect "blue red web" srffctl -n ''
	expect "red" srffctl --netns r
	expect "blue red web" srffctl -j -p --netns ''
	expect "--help --json --netns --pretty --version -V -h -j -n -p" srffctl -
	expect "$(sorted $SRFF_KEYS)" srffctl set ''
	expect "$(sorted $SRFF_KEYS)" srffctl -n blue set udp top ''
	expect "$(sorted $SRFF_UDP)" srffctl set udp ''
	expect "$(sorted $SRFF_APP)" srffctl set idle-reset 1s app-priority ''
	expect "top" srffctl set udp to
	expect "none" srffctl set classid ''
	expect "none" srffctl set top-ports ''
	expect "off" srffctl set idle-reset ''
	expect "$(sorted $SRFF_MARK)" srffctl set mark ''
	expect "dscp" srffctl set mark d
	expect "off on" srffctl set dscp-override ''
	expect "off on" srffctl set-thresholds 16k 128k dscp-override ''
	expect "" srffctl set dscp-map ''
	expect "dscp-map dscp-override" srffctl set dscp
	expect "auto" srffctl set thresholds ''
	expect "" srffctl set idle-timeout ''
	expect "auto" srffctl set-thresholds ''
	expect "$(sorted ${SRFF_KEYS/thresholds /})" srffctl set-thresholds 16k 128k ''
	expect "$(sorted ${SRFF_KEYS/thresholds /})" srffctl set-thresholds auto ''
	expect "$(sorted $SRFF_UDP)" srffctl set-thresholds 16k 128k priorities 6,0,2 udp ''
	expect "priorities" srffctl set-thresholds 16k 128k pri
	expect "age bytes idle" srffctl flows sort ''
	expect "icmp ipv6-icmp tcp udp udplite" srffctl flows proto ''
	expect "4 6" srffctl flows family ''
	expect "addr band family limit min-bytes port proto sort" srffctl flows sort bytes ''
	expect "" srffctl show ''
}

# Files for apply and setconf, and - for standard input.
dir=$(mktemp -d)
touch "$dir/srff.conf" "$dir/other"
(cd "$dir" && expect "srff.conf" srffctl setconf s && expect "srff.conf" srffctl apply srf &&
	expect "-" srffctl setconf - && expect "" srffctl setconf srff.conf '')
rm -rf "$dir"

# What srffctl parses, the completion offers, and nothing else: the flows
# options, both ways.
takes=$(sorted $(grep -o '!strcmp(k, "[a-z-]*")' "$here/../flows.c" | sed 's/.*"\(.*\)".*/\1/'))
offers=$(words srffctl flows '')
if [ "$takes" = "$offers" ]; then echo "ok - flows: flows.c takes and the completion offers: $takes"
else echo "not ok - flows: flows.c takes '$takes', the completion offers '$offers'"; fi
