#!/usr/bin/env bash
# Session 19, device call 4 (H200): a whole bench/run.sh (default budget,
# 570 s, with its recheck part), main at 49ff38b's code: the wide scan with
# one shape (tiles of 4096 items, 7 slots, lag 3) and a run of vectors a
# consumer lane.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
bash bench/run.sh
