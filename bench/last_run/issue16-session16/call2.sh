#!/usr/bin/env bash
# Session 16, device call 2 (H200): a whole bench/run.sh with the changes of
# session 15 (the online pair's group fold in whole-array reductions,
# ir/bounds.c) and session 16 (the mapped out-of-bounds record), main at
# 0b4b449's code.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
bash bench/run.sh --budget 530
