#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/shipped-ko.sh: the test scaffolding stays out of a module that can
# be installed. A test build (SRFF_TEST=1 on make's command line, as
# tests/run-debug builds it) has the test-only parameters and the functions
# behind them; a build with SRFF_TEST=1 left in the environment (a DKMS
# build, make install, the .deb) must have none of them: no symbol of
# theirs in `nm`, no parameter in `modinfo`. Builds against the tests'
# kernel headers in a private copy (scripts/build-ko.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/kver.sh >/dev/null 2>&1 || { echo "shipped-ko: no kernel headers (make deps)"; echo "shipped-ko: 0 passed, 0 failed, 1 skipped"; exit 0; }
out=tests/out/shipped-ko
pass=0 failn=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; failn=$((failn + 1)); }
# What only a test build may contain (main.c, hook.c, config.c).
SYMS='srff_test_hook_delay|test_hook_delay_us|test_unsafe_teardown|test_unhook_delay|test_worker_delay'
PARAMS='^(test_hook_delay_us|test_unsafe_teardown|test_worker_delay_ms):'

check_ko() {	# check_ko WHAT KO WANT(yes|no)
	local what=$1 ko=$2 want=$3 syms params
	syms=$(nm "$ko" | grep -cE "$SYMS")
	params=$(/sbin/modinfo -F parm "$ko" | grep -cE "$PARAMS")
	if [ "$want" = no ]; then
		[ "$syms" = 0 ] && ok "$what: no test symbol in nm" || notok "$what: $syms test symbols: $(nm "$ko" | grep -E "$SYMS" | tr '\n' ' ')"
		[ "$params" = 0 ] && ok "$what: no test parameter" || notok "$what: $params test parameters"
	else
		[ "$syms" -gt 0 ] && ok "$what: test symbols there ($syms)" || notok "$what: no test symbols: the check sees nothing"
		[ "$params" = 3 ] && ok "$what: its 3 test parameters" || notok "$what: $params test parameters, not 3"
	fi
}

kdir=/lib/modules/$KVER/build
if SRFF_TEST=1 scripts/build-ko.sh "$kdir" "$out/env" >/dev/null; then
	check_ko "SRFF_TEST=1 in the environment" "$out/env/srff.ko" no
else
	notok "build with SRFF_TEST=1 in the environment"
fi
if scripts/build-ko.sh "$kdir" "$out/cmd" SRFF_TEST=1 >/dev/null; then
	check_ko "SRFF_TEST=1 on the command line" "$out/cmd/srff.ko" yes
else
	notok "build with SRFF_TEST=1 on the command line"
fi
if [ -f srff_nf/srff.ko ]; then
	check_ko "srff_nf/srff.ko (make)" srff_nf/srff.ko no
fi
echo "shipped-ko: $pass passed, $failn failed"
[ "$failn" = 0 ]
