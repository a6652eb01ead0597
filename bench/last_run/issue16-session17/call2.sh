#!/usr/bin/env bash
# Session 17, device call 2 (H200): a whole bench/run.sh (default budget, 570
# s, with its recheck part) with the warp-a-row kernel on by default for short
# aligned rows (main at 534bc9e's code).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
bash bench/run.sh
