# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/lib.sh and experiments/guest-lib.sh. SRFF_XTRACE=FILE
# appends a timestamped trace of every command of the sourcing script, from
# here on, to FILE: tests/tools/xtrace-profile FILE adds the time up per
# source line (docs/testing.md).
if [ -n "${SRFF_XTRACE:-}" ]; then
	exec {SRFF_XTRACE_FD}>>"$SRFF_XTRACE"
	BASH_XTRACEFD=$SRFF_XTRACE_FD
	PS4='+ ${EPOCHREALTIME} ${BASH_SOURCE[0]+${BASH_SOURCE[0]##*/}}:${LINENO} '
	set -x
fi
