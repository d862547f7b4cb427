#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# experiments/run-all.sh (make experiments): both experiments, each in its
# own boot: the three-file FTP experiment (demo.sh) and the busy web
# server (web-demo.sh). Results under experiments/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
experiments/demo.sh "${FTP_TRIALS:-3}"
if [ -x experiments/web-demo.sh ]; then
	experiments/web-demo.sh "${WEB_ROUNDS:-3}" "${WEB_SECONDS:-20}"
fi
