#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/run-all.sh (make experiments): the three-file FTP experiment
# (demo.sh), then experiment 3, open-loop web load (openloop.sh: web search
# sizes with the bottleneck on the server, then downstream of it), each in
# its own boot. Experiment 2 (web-demo.sh, closed loop) is not rerun: the
# open loop supersedes it. Results under experiments/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
experiments/demo.sh "${FTP_TRIALS:-3}"
experiments/openloop.sh "${WEB_ROUNDS:-3}" "${WEB_SECONDS:-20}"
WEB_BOTTLENECK=downstream experiments/openloop.sh "${WEB_ROUNDS:-3}" "${WEB_SECONDS:-20}"
