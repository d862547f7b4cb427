#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/run-all.sh (make experiments): the three-file FTP experiment
# (demo.sh), then experiment 3, open-loop web load (openloop.sh: WEB_DIST's
# sizes, Facebook Hadoop's by default, with the bottleneck on the server,
# then downstream of it), each in its own boot. Experiment 2 (web-demo.sh,
# closed loop) is not rerun: the open loop supersedes it. Results under
# experiments/results/.
# WEB_QUICK=1 (make experiments WEB_QUICK=1): the quick mode, to see that
# the whole chain works: one FTP trial, and openloop.sh's smoke (1 round,
# 8 s, one load, two policies) for each bottleneck.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${WEB_QUICK:-0}" = 1 ] && : "${FTP_TRIALS:=1}"
experiments/demo.sh "${FTP_TRIALS:-3}"
experiments/openloop.sh "${WEB_ROUNDS:-10}" "${WEB_SECONDS:-15}"
WEB_BOTTLENECK=downstream experiments/openloop.sh "${WEB_ROUNDS:-10}" "${WEB_SECONDS:-15}"
